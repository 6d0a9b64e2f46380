"""Does the Review list bring the researcher the words the machine got wrong? Per side of
tests/data/recordings/split.json ("transcription": the recordings with a reference text), the
words iGot writes (igot.asr.transcribe, as a run makes them) are marked right or wrong against
the reference (word edit-distance alignment: a substituted or inserted word is wrong), and each
way of choosing the doubtful words lists 10 % of each recording's words (the Review list's
budget). Recall: of the wrong words, how many are listed; precision: of the listed, how many are
wrong. The baseline is the engine's word probability alone (the lowest first).

Sets: English with tiny.en (clean, in room noise at 5 dB, on a phone line with noise) and
Portuguese with base (clean, in noise), each recording alone and the side's recordings joined
into one conversation (Whisper's windows and the text before them only matter past 30 s).

    python -m benchmarks.review_quality --side tune|check [--ways probability,review]

Choose on tune, run check once per candidate. Prints per set: words, wrong words, and recall /
precision of each way; then the recall difference against the probability alone with a 95 %
bootstrap interval over recordings. The glossary (point 5 of issue 39) and the phrases on the
wrong speaker are measured in their own sections.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import tempfile
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]

from benchmarks.transcription_accuracy import english, portuguese, write_wav  # noqa: E402
from igot.asr.transcribe import load_whisper, transcribe  # noqa: E402
from igot.media.audio import SAMPLE_RATE, convert_to_wav, load_audio  # noqa: E402
from igot_dev.conversations import telephone  # noqa: E402
from igot_dev.evaluate import normalize  # noqa: E402
from igot_dev.tables import table  # noqa: E402

BUDGET = 0.10  # share of each recording's words the Review list shows


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
    """Each recording's written words with what the run keeps of them, and which are wrong;
    cached in `work` (the decoding is the slow part)."""
    cache = work / f"words-{side}.json"
    if cache.exists():
        return json.loads(cache.read_text())
    models = {"tiny.en": load_whisper("bundled:tiny.en", "faster-whisper", "cpu"),
              "base": load_whisper("bundled:base", "faster-whisper", "cpu")}
    rows = []
    for r in recordings(side, work):
        t = transcribe(r["wav"], models[r["model"]], language=r["language"], progress=False)
        words = [{"text": w.text, "start": w.start, "end": w.end, "p": w.probability if w.probability is not None else 1.0,
                  "phrase": k, "first": i == 0, "last": i == len(p.words) - 1}
                 for k, p in enumerate(t.phrases) for i, w in enumerate(p.words)]
        for w, wrong in zip(words, marked([w["text"] for w in words], r["reference"], r["language"])):
            w["wrong"] = wrong
        audio = load_audio(r["wav"])
        # second opinions: the same model decoding greedily, and (English) the smaller tiny.en
        greedy, _ = models[r["model"]].model.transcribe(audio, language=r["language"], vad_filter=True, beam_size=1)
        alt = {"greedy": " ".join(s.text.strip() for s in greedy)}
        if r["model"] == "base" and r["language"] == "en":
            small, _ = models["tiny.en"].model.transcribe(audio, language="en", vad_filter=True)
            alt["tiny.en"] = " ".join(s.text.strip() for s in small)
        rows.append({**{k: v for k, v in r.items() if k != "wav"}, "words": words, "alt": alt})
        print(f"{r['set']:24} {r['recording']:22} {sum(w['wrong'] for w in words):3d} wrong of {len(words)}", flush=True)
    cache.write_text(json.dumps(rows))
    return rows


def second_opinion(r: dict) -> np.ndarray:
    """1 where the smaller model's words (tiny.en beside base, English) disagree with the word."""
    text = r["alt"].get("tiny.en")
    words = [w["text"] for w in r["words"]]
    return np.array(marked(words, text, r["language"]) if text is not None else [False] * len(words), float)


# How each way ranks a recording's words, most doubtful first (higher: listed sooner).
WAYS = {
    "probability": lambda r, p: -p,
    "probability + second opinion": lambda r, p: second_opinion(r) - np.log(np.clip(p, 1e-4, 1)),
}


def listed(scores: np.ndarray, budget: float = BUDGET) -> np.ndarray:
    """The indices the Review list shows: the top `budget` of the words (at least one)."""
    return np.argsort(-scores, kind="stable")[: math.ceil(budget * len(scores))]


def score(rows: list[dict], ways: list[str]) -> list[dict]:
    """Per recording and way: wrong words, listed, listed and wrong."""
    out = []
    for r in rows:
        if not r["words"]:
            continue
        wrong = np.array([w["wrong"] for w in r["words"]])
        p = np.array([w["p"] for w in r["words"]])
        for way in ways:
            shown = listed(WAYS[way](r, p))
            out.append({"set": r["set"], "recording": r["recording"], "way": way, "wrong": int(wrong.sum()),
                        "listed": len(shown), "hit": int(wrong[shown].sum()), "words": len(wrong)})
    return out


def report(results: list[dict], ways: list[str], side: str) -> None:
    rows = []
    for s in list(dict.fromkeys(x["set"] for x in results)) + ["all"]:
        mine = [x for x in results if s in (x["set"], "all")]
        first = [x for x in mine if x["way"] == ways[0]]
        row = {"set": s, "words": sum(x["words"] for x in first), "wrong": sum(x["wrong"] for x in first)}
        row["error rate"] = f"{row['wrong'] / max(row['words'], 1):.3f}"
        for way in ways:
            v = [x for x in mine if x["way"] == way]
            hit, wrong, shown = (sum(x[k] for x in v) for k in ("hit", "wrong", "listed"))
            row[f"{way}: recall/precision"] = f"{hit / max(wrong, 1):.2f} / {hit / max(shown, 1):.2f}"
        rows.append(row)
    table(rows, f"Wrong words the Review list shows at {BUDGET:.0%} of the words, {side}")
    rng = np.random.default_rng(0)
    diffs = []
    for s in list(dict.fromkeys(x["set"] for x in results)) + ["all"]:
        base = [x for x in results if s in (x["set"], "all") and x["way"] == ways[0]]
        for way in ways[1:]:
            other = [x for x in results if s in (x["set"], "all") and x["way"] == way]
            hit0, hit1 = np.array([x["hit"] for x in base], float), np.array([x["hit"] for x in other], float)
            wrong = np.array([x["wrong"] for x in base], float)
            if not wrong.sum():
                continue
            draws = []
            for _ in range(2000):
                i = rng.integers(0, len(wrong), len(wrong))
                draws.append((hit1[i].sum() - hit0[i].sum()) / max(wrong[i].sum(), 1))
            lo, hi = np.percentile(draws, [2.5, 97.5])
            diffs.append({"set": s, "way": way, "recall - probability": f"{(hit1.sum() - hit0.sum()) / wrong.sum():+.3f}",
                          "95 %": f"[{lo:+.3f}, {hi:+.3f}]"})
    if diffs:
        table(diffs, "Recall against the probability alone, 95 % bootstrap over recordings")


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
    parser.add_argument("--ways", default=",".join(WAYS), help="the first is the baseline")
    parser.add_argument("--work", type=Path, default=None, help="keep the decoded words here (default: a new temp folder)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="igot-review-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = gather(args.side, work)
    table([{"set": s, "recordings": sum(r["set"] == s for r in rows),
            "words": sum(len(r["words"]) for r in rows if r["set"] == s),
            "wrong": sum(w["wrong"] for r in rows if r["set"] == s for w in r["words"])}
           for s in dict.fromkeys(r["set"] for r in rows)], f"Words written, {args.side}")
    ways = args.ways.split(",")
    report(score(rows, ways), ways, args.side)
    glossary_report(gather_glossary(args.side, work, rows), args.side)


if __name__ == "__main__":
    main()
