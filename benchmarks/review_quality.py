"""Does the Review list bring the researcher the words the machine got wrong? Per side of
tests/data/recordings/split.json ("transcription": the recordings with a reference text), the
words iGot writes (igot.asr.transcribe, as a run makes them) are marked right or wrong against
the reference (word edit-distance alignment: a substituted or inserted word is wrong). The side's
recordings, in every condition, are one library (each recording an interview). Recall: of the
wrong words, how many are listed; precision: of the listed, how many are wrong.

The rules: each interview's lowest tenth by the engine's word probability (before issue 53), the
library's lowest share, and the Review list as the product makes it (igot.outputs.review: a word
below ReviewOptions.below). Each is set against the library's lowest-probability words at the same
count (the plain list), with a 95 % bootstrap interval over recordings.

Sets: English with base and tiny.en (clean, in room noise at 10 and 5 dB, on a phone line with
noise) and Portuguese with base (clean, in noise), each recording alone and the side's recordings
joined into one conversation (Whisper's windows and the text before them only matter past 30 s).

    python -m benchmarks.review_quality --side tune|check [--glossary] [--work .bench/review_quality]

The decoded words are kept once per side under --work (gitignored .bench/): decode under the heavy
lock once, then every sweep reads the file. On tune it prints the candidates (thresholds, library
shares) to choose from; check runs once per candidate. The glossary (point 5 of issue 39) is
measured with --glossary (it decodes again).
"""

from __future__ import annotations

import argparse
import json
import math
import os
from dataclasses import replace
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]

from benchmarks.transcription_accuracy import english, portuguese, write_wav  # noqa: E402
from igot.asr.transcribe import load_whisper, transcribe  # noqa: E402
from igot.media.audio import SAMPLE_RATE, convert_to_wav, load_audio  # noqa: E402
from igot.outputs import review  # noqa: E402
from igot.transcript import Phrase, Source, Transcript, Word  # noqa: E402
from igot_dev.conversations import telephone  # noqa: E402
from igot_dev.evaluate import normalize  # noqa: E402
from igot_dev.tables import table  # noqa: E402

def noisy(audio: np.ndarray, snr_db: float, seed: int) -> np.ndarray:
    """Room noise (rumble and hiss) at `snr_db` below the speech's level."""
    from scipy.signal import butter, sosfilt

    rng = np.random.default_rng(seed)
    rumble = sosfilt(butter(2, 400, fs=SAMPLE_RATE, output="sos"), rng.standard_normal(len(audio)))
    noise = rumble / max(rumble.std(), 1e-9) + 0.5 * rng.standard_normal(len(audio))
    speech = audio[np.abs(audio) > 0.02 * np.abs(audio).max()] if audio.any() else audio
    level = float(np.sqrt(np.mean(speech ** 2))) if len(speech) else 0.0
    return (audio + noise / noise.std() * level * 10 ** (-snr_db / 20)).astype(np.float32)


CONDITIONS = {  # name: what happens to the clean recording
    "clean": lambda a, seed: a,
    "noise 10 dB": lambda a, seed: noisy(a, 10.0, seed),
    "noise 5 dB": lambda a, seed: noisy(a, 5.0, seed),
    "phone+noise": lambda a, seed: noisy(telephone(a), 10.0, seed),
}
# (language, model, conditions): the models bundled here; tiny.en is also base's second opinion
SETS = (("en", "base", ("clean", "noise 10 dB", "noise 5 dB", "phone+noise")),
        ("en", "tiny.en", ("clean", "noise 10 dB", "phone+noise")),
        ("pt", "base", ("clean", "noise 10 dB")))


def recordings(side: str, work: Path) -> list[dict]:
    """Every recording of the side in each condition (and the side's recordings joined), as WAVs."""
    dev = ROOT / "tests" / "data" / "recordings"
    out = []
    for lang, model, conditions in SETS:
        items = english(dev, side) if lang == "en" else portuguese(dev, side)
        clean = []
        for path, reference in items:
            wav = work / f"{path.parent.name}-{path.stem}.wav"
            if not wav.exists():
                convert_to_wav(path, wav)
            clean.append((path.stem, load_audio(wav), reference))
        pause = np.zeros(int(0.8 * SAMPLE_RATE), np.float32)
        joined = (f"joined-{side}", np.concatenate([x for _, a, _ in clean for x in (a, pause)]), " ".join(r for _, _, r in clean))
        for condition in conditions:
            for i, (name, audio, reference) in enumerate(clean + [joined]):
                wav = work / f"{lang}-{condition.replace(' ', '_').replace('+', '_')}-{name}.wav"
                if not wav.exists():
                    write_wav(wav, CONDITIONS[condition](audio, seed=100 * list(CONDITIONS).index(condition) + i))
                out.append({"set": f"{lang} {model} {condition}", "recording": name, "wav": wav, "reference": reference,
                            "model": model, "language": lang})
    return out


ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
ORDINAL = {"one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth", "nine": "ninth", "twelve": "twelfth"}


def spoken(n: int) -> list[str]:
    """An English number as said ("1455" as a year: fourteen fifty five)."""
    if n < 20:
        return [ONES[n]]
    if n < 100:
        return [TENS[n // 10]] + ([ONES[n % 10]] if n % 10 else [])
    if 1100 <= n < 2000 and n % 100:
        return spoken(n // 100) + spoken(n % 100)
    if n < 1000:
        return spoken(n // 100) + ["hundred"] + (spoken(n % 100) if n % 100 else [])
    return spoken(n // 1000) + ["thousand"] + (spoken(n % 1000) if n % 1000 else [])


def said(token: str, language: str) -> list[str]:
    """A written token as the reference spells it: English numerals and ordinals in words."""
    import re

    m = re.fullmatch(r"(\d{1,4})(st|nd|rd|th)?", token)
    if language != "en" or not m:
        return [token]
    words = spoken(int(m.group(1)))
    if m.group(2):
        last = words[-1]
        words[-1] = ORDINAL.get(last) or (last[:-1] + "ieth" if last.endswith("y") else last + "th")
    return words


def marked(words: list[str], reference: str, language: str = "en") -> list[bool]:
    """For each written word, whether it is wrong: substituted or inserted in the edit-distance
    alignment of the normalised words against the reference. Numerals are read as words, and two
    written tokens the reference writes as one ("wood cutters": woodcutters) are one; a word
    written as two counts as wrong when either part is."""
    ref = normalize(reference)
    one = set(ref)
    hyp: list[str] = []
    owners: list[list[int]] = []
    for i, w in enumerate(words):
        for token in (s for p in normalize(w) for s in said(p, language)):
            if hyp and hyp[-1] + token in one and hyp[-1] not in one | {token}:
                hyp[-1] += token
                owners[-1].append(i)
            else:
                hyp.append(token)
                owners.append([i])
    n, m = len(ref), len(hyp)
    cost = np.zeros((n + 1, m + 1), dtype=np.int64)
    cost[:, 0], cost[0, :] = np.arange(n + 1), np.arange(m + 1)
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            cost[i, j] = min(cost[i - 1, j - 1] + (ref[i - 1] != hyp[j - 1]), cost[i - 1, j] + 1, cost[i, j - 1] + 1)
    wrong = [True] * m
    i, j = n, m
    while i > 0 and j > 0:
        if cost[i, j] == cost[i - 1, j - 1] + (ref[i - 1] != hyp[j - 1]):
            wrong[j - 1] = ref[i - 1] != hyp[j - 1]
            i, j = i - 1, j - 1
        elif cost[i, j] == cost[i - 1, j] + 1:
            i -= 1
        else:
            j -= 1
    out = [False] * len(words)
    for j, w in enumerate(wrong):
        for i in owners[j]:
            out[i] |= w
    return out


def gather(side: str, work: Path) -> list[dict]:
    """Each recording's written words with what the run keeps of them (text, times, the engine's
    probability, the phrase), and which are wrong; cached in `work` once per side (the decoding is
    the slow part: run it under the heavy lock; every sweep after reads the file)."""
    cache = work / f"words-{side}.json"
    if cache.exists():
        return json.loads(cache.read_text())
    models = {"tiny.en": load_whisper("bundled:tiny.en", "faster-whisper", "cpu"),
              "base": load_whisper("bundled:base", "faster-whisper", "cpu")}
    rows = []
    for r in recordings(side, work):
        t = transcribe(r["wav"], models[r["model"]], language=r["language"], progress=False)
        words = [{"text": w.text, "start": w.start, "end": w.end, "p": w.probability,
                  "phrase": k, "first": i == 0, "last": i == len(p.words) - 1}
                 for k, p in enumerate(t.phrases) for i, w in enumerate(p.words)]
        for w, wrong in zip(words, marked([w["text"] for w in words], r["reference"], r["language"])):
            w["wrong"] = wrong
        rows.append({**{k: v for k, v in r.items() if k != "wav"}, "words": words})
        print(f"{r['set']:24} {r['recording']:22} {sum(w['wrong'] for w in words):3d} wrong of {len(words)}", flush=True)
    cache.write_text(json.dumps(rows))
    return rows


def as_transcript(r: dict) -> Transcript:
    """A recording's cached words as the interview a run saves (phrases of timed, scored words),
    for the Review list as the product makes it."""
    phrases: list[Phrase] = []
    for w in r["words"]:
        word = Word(w["text"], w["start"], w["end"], "S1", w["p"])
        if w["first"] or not phrases:
            phrases.append(Phrase("S1", w["start"], w["end"], "", words=[]))
        phrases[-1].words.append(word)
    phrases = [replace(p, end=p.words[-1].end, text=" ".join(w.text for w in p.words)) for p in phrases]
    return Transcript(Source(r["recording"]), r["language"], phrases=phrases)


def review_flags(r: dict, options: review.ReviewOptions = review.ReviewOptions()) -> np.ndarray:
    """Which of the recording's words the Review list (igot.outputs.review, as the workspace
    shows it) lists as doubtful."""
    t = as_transcript(r)
    at = {(k, i): n for n, (k, i) in enumerate((k, i) for k, p in enumerate(t.phrases) for i in range(len(p.words)))}
    out = np.zeros(len(r["words"]), bool)
    for item in review.items(t, options=options):
        if item.kind == "word":
            out[[at[(item.phrase, i)] for i in range(item.first, item.last + 1)]] = True
    return out


class Library:
    """A side's recordings (every set, every condition, the joined ones) as one library: each
    recording an interview. A rule maps the indices of some of its recordings (a bootstrap draw
    repeats some) to each one's listed words."""

    def __init__(self, rows: list[dict]) -> None:
        self.rows = [r for r in rows if r["words"]]
        # a word the engine gave no probability is not doubtful by it (as in igot.outputs.review)
        self.p = [np.array([1.0 if w["p"] is None else w["p"] for w in r["words"]]) for r in self.rows]
        self.wrong = [np.array([w["wrong"] for w in r["words"]]) for r in self.rows]
        self.everyone = list(range(len(self.rows)))

    def per_interview(self, share: float):
        def rule(idx):
            out = []
            for i in idx:
                flags = np.zeros(len(self.p[i]), bool)
                flags[np.argsort(self.p[i], kind="stable")[: math.ceil(share * len(self.p[i]))]] = True
                out.append(flags)
            return out
        return rule

    def lowest(self, idx, count: int) -> list[np.ndarray]:
        """The `count` lowest-probability words of the recordings `idx` together."""
        p = np.concatenate([self.p[i] for i in idx])
        flags = np.zeros(len(p), bool)
        flags[np.argsort(p, kind="stable")[:count]] = True
        return np.split(flags, np.cumsum([len(self.p[i]) for i in idx])[:-1])

    def library_share(self, share: float):
        return lambda idx: self.lowest(idx, math.ceil(share * sum(len(self.p[i]) for i in idx)))

    def threshold(self, below: float):
        return lambda idx: [self.p[i] < below for i in idx]

    def review_list(self, options: review.ReviewOptions = review.ReviewOptions()):
        made = [review_flags(r, options) for r in self.rows]
        return lambda idx: [made[i] for i in idx]

    def measure(self, rule, idx=None) -> dict:
        idx = self.everyone if idx is None else idx
        flags = np.concatenate(rule(idx))
        wrong = np.concatenate([self.wrong[i] for i in idx])
        hit, listed, bad = int((flags & wrong).sum()), int(flags.sum()), int(wrong.sum())
        recall, precision = hit / max(bad, 1), hit / max(listed, 1)
        return {"words": len(flags), "listed": listed, "wrong": bad, "hit": hit, "recall": recall, "precision": precision,
                "F1": 2 * recall * precision / max(recall + precision, 1e-9)}

    def against_lowest(self, rule, other, draws: int = 2000, seed: int = 0) -> dict:
        """The rule's recall against the library's lowest-probability words at the same count, and
        its F1 against the `other` rule's, each with a 95 % bootstrap interval over recordings (the
        library drawn again, the rules and the count made again on each draw)."""
        def gaps(idx):
            mine = self.measure(rule, idx)
            same = self.measure(lambda j: self.lowest(j, mine["listed"]), idx)
            return mine, same["recall"], mine["recall"] - same["recall"], mine["F1"] - self.measure(other, idx)["F1"]

        mine, base, diff, f1 = gaps(self.everyone)
        rng = np.random.default_rng(seed)
        n = len(self.rows)
        spread = np.array([gaps(list(rng.integers(0, n, n)))[2:] for _ in range(draws)])
        (lo, f1_lo), (hi, f1_hi) = np.percentile(spread, [2.5, 97.5], axis=0)
        return {**mine, "lowest": base, "diff": diff, "lo": lo, "hi": hi, "F1 diff": f1, "F1 lo": f1_lo, "F1 hi": f1_hi}


# Today's rule before issue 53: each interview's lowest tenth. The library's share below was
# chosen on tune by the same metric as the threshold (F1), over SHARES.
PER_INTERVIEW = 0.10
LIBRARY_SHARE = 0.14
THRESHOLDS = [round(x, 2) for x in np.arange(0.05, 0.96, 0.05)]
SHARES = [round(x, 2) for x in np.arange(0.02, 0.31, 0.02)]


def sweep(lib: Library, side: str) -> None:
    """The threshold and the library's share over their candidates: what each lists (choose on tune)."""
    rows = []
    for name, values, make in (("threshold", THRESHOLDS, lib.threshold), ("library share", SHARES, lib.library_share)):
        for v in values:
            m = lib.measure(make(v))
            rows.append({"rule": f"{name} {v:.2f}", "listed": f"{m['listed']} ({m['listed'] / m['words']:.1%})",
                         "recall": f"{m['recall']:.3f}", "precision": f"{m['precision']:.3f}", "F1": f"{m['F1']:.3f}"})
    table(rows, f"Candidates, {side} (words {lib.measure(lib.threshold(0))['words']}, wrong {lib.measure(lib.threshold(0))['wrong']})")


def report(lib: Library, side: str) -> None:
    """Each rule on the side's library: how many words it lists, its recall, precision and F1,
    and its recall against the library's lowest-probability words at the same count."""
    below = review.ReviewOptions().below
    rules = {f"per interview, lowest {PER_INTERVIEW:.0%} (before issue 53)": lib.per_interview(PER_INTERVIEW),
             f"library, lowest {LIBRARY_SHARE:.0%}": lib.library_share(LIBRARY_SHARE),
             f"the Review list: probability < {below:.2f}": lib.review_list()}
    rows = []
    product = rules[f"the Review list: probability < {below:.2f}"]
    for name, rule in rules.items():
        m = lib.against_lowest(rule, product)
        rows.append({"rule": name, "listed": f"{m['listed']} of {m['words']} ({m['listed'] / m['words']:.1%})",
                     "recall / precision / F1": f"{m['recall']:.3f} / {m['precision']:.3f} / {m['F1']:.3f}",
                     "lowest-probability list, same count: recall": f"{m['lowest']:.3f}",
                     "recall - lowest (95 %)": f"{m['diff']:+.3f} [{m['lo']:+.3f}, {m['hi']:+.3f}]",
                     "F1 - the Review list's (95 %)": f"{m['F1 diff']:+.3f} [{m['F1 lo']:+.3f}, {m['F1 hi']:+.3f}]"})
    table(rows, f"Wrong words listed, {side}: {len(lib.rows)} recordings as one library, {lib.measure(lib.threshold(0))['wrong']} wrong words")
    per_set = []
    today, now = lib.per_interview(PER_INTERVIEW), lib.review_list()
    for s in dict.fromkeys(r["set"] for r in lib.rows):
        idx = [i for i, r in enumerate(lib.rows) if r["set"] == s]
        a, b = lib.measure(today, idx), lib.measure(now, idx)
        per_set.append({"set": s, "words": a["words"], "wrong": a["wrong"],
                        f"per interview {PER_INTERVIEW:.0%}: listed / recall": f"{a['listed']} / {a['recall']:.2f}",
                        f"probability < {below:.2f}: listed / recall": f"{b['listed']} / {b['recall']:.2f}"})
    table(per_set, f"Where the flags go, {side}")


GLOSSARY_LETTERS = 9  # the side's reference words this long are its glossary: names and jargon-like words
GLOSSARY_CONDITIONS = ("clean", "noise 10 dB")


def glossary_of(rows: list[dict], language: str) -> list[str]:
    """The glossary a researcher of these recordings might keep: their references' long words, as
    the references spell them (fixed before any decoding: GLOSSARY_LETTERS)."""
    terms: dict[str, str] = {}
    for r in rows:
        if r["language"] == language and not r["recording"].startswith("joined"):
            for word in reference_words(r["reference"]):
                if len(word) >= GLOSSARY_LETTERS:  # an all-capitals reference (LibriSpeech) is no spelling
                    terms.setdefault(word.casefold(), word.lower() if word.isupper() else word)
    return sorted(terms.values(), key=str.casefold)


def reference_words(text: str) -> list[str]:
    import re

    return [w for w in re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)?", text)]


def gather_glossary(side: str, work: Path, rows: list[dict]) -> list[dict]:
    """Each recording of GLOSSARY_CONDITIONS decoded again with its language's glossary given
    (igot.asr.transcribe, glossary=...); cached in `work`."""
    cache = work / f"glossary-{side}.json"
    if cache.exists():
        return json.loads(cache.read_text())
    models = {"tiny.en": load_whisper("bundled:tiny.en", "faster-whisper", "cpu"),
              "base": load_whisper("bundled:base", "faster-whisper", "cpu")}
    wavs = {(r["set"], r["recording"]): r["wav"] for r in recordings(side, work)}
    out = []
    for r in rows:
        if not r["set"].endswith(GLOSSARY_CONDITIONS):
            continue
        terms = glossary_of(rows, r["language"])
        t = transcribe(wavs[(r["set"], r["recording"])], models[r["model"]], language=r["language"], progress=False, glossary=terms)
        out.append({"set": r["set"], "recording": r["recording"], "glossary": terms,
                    "with": " ".join(w.text for p in t.phrases for w in p.words),
                    "without": " ".join(w["text"] for w in r["words"]), "reference": r["reference"]})
        print(f"glossary: {r['set']:24} {r['recording']}", flush=True)
    cache.write_text(json.dumps(out))
    return out


def glossary_report(decoded: list[dict], side: str) -> None:
    """Glossary words written as spelled, with and without the glossary; and the words that
    changed elsewhere (not glossary words) between the two."""
    from igot_dev.evaluate import word_error_rate, words_apart

    rows = []
    for s in dict.fromkeys(d["set"] for d in decoded):
        mine = [d for d in decoded if d["set"] == s]
        said = kept = kept_before = elsewhere = words = 0
        wer = {"with": 0.0, "without": 0.0}
        for d in mine:
            terms = {t.casefold() for t in d["glossary"]}
            ref = [w.casefold() for w in reference_words(d["reference"])]
            for way in ("with", "without"):
                wer[way] += word_error_rate(d["reference"], d[way]) * len(normalize(d["reference"]))
            found = {way: [w.casefold() for w in reference_words(d[way])] for way in ("with", "without")}
            for term in terms:
                n = ref.count(term)
                said += n
                kept += min(n, found["with"].count(term))
                kept_before += min(n, found["without"].count(term))
            rest = {way: [w for w in normalize(d[way]) if w not in terms] for way in ("with", "without")}
            elsewhere += words_apart(rest["without"], rest["with"])
            words += len(rest["without"])
        n = sum(len(normalize(d["reference"])) for d in mine)
        rows.append({"set": s, "terms": len(mine[0]["glossary"]), "glossary words said": said,
                     "written as spelled, without": kept_before, "with": kept,
                     "other words changed": f"{elsewhere} of {words}",
                     "WER without": f"{wer['without'] / n:.3f}", "WER with": f"{wer['with'] / n:.3f}"})
    table(rows, f"The glossary given to Whisper (hotwords), {side}: the references' words of {GLOSSARY_LETTERS}+ letters")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--side", choices=("tune", "check"), required=True)
    parser.add_argument("--work", type=Path, default=ROOT / ".bench" / "review_quality",
                        help="where the decoded words are kept, once per side (default: .bench/review_quality)")
    parser.add_argument("--glossary", action="store_true", help="also measure the glossary (decodes every recording again)")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    rows = gather(args.side, args.work)
    table([{"set": s, "recordings": sum(r["set"] == s for r in rows),
            "words": sum(len(r["words"]) for r in rows if r["set"] == s),
            "wrong": sum(w["wrong"] for r in rows if r["set"] == s for w in r["words"])}
           for s in dict.fromkeys(r["set"] for r in rows)], f"Words written, {args.side}")
    lib = Library(rows)
    if args.side == "tune":
        sweep(lib, args.side)  # chosen here, never on check
    report(lib, args.side)
    if args.glossary:
        glossary_report(gather_glossary(args.side, args.work, rows), args.side)


if __name__ == "__main__":
    main()
