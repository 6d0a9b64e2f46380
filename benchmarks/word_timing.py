"""How close are the word times a laptop run gives to where the words really are? The engine's own
(faster-whisper's word timestamps, igot.asr.transcribe) against the same times mended from the VAD's
speech edges (igot.refine.mend), on speech with exact word times.

Sets:
- espeak: conversations of two espeak-ng voices built word by word (igot_dev.synth: every word's
  start and end exact to the sample), English through Whisper tiny.en and Portuguese through base
  (language given), each sentence its own stretch so pauses fall inside a speaker's turn too, with
  pauses between stretches of 0.7 s and of 2.5 s (a word stretched over a pause, the first word
  after a long silence), in digital silence and with white noise at about 20 dB below the speech,
  with 120 ms of silence after every word ("words apart": every word beside a pause the VAD can
  hear, which natural speech has not) and with none ("words joined").
  The espeak speech has no side in tests/data/recordings/split.json: it is split here by voice,
  before any tuning (TUNE_VOICES, CHECK_VOICES: no voice on both sides).
- timit: the one TIMIT sentence with hand-labelled word boundaries (tests/data/recordings,
  on split.json's check side), through tiny.en.

The mending's settings are chosen on tune (a grid over the VAD's pause and padding and the
shortest move), then the chosen ones and the engine's are run once on check. Printed per set:
the share of word starts and of word ends within 50, 100 and 200 ms of the truth (words matched
by their text; a word the engine wrote differently is not counted), then on check the pooled
difference in the share of edges (starts and ends) within 100 ms, mended minus engine, with a
95 % bootstrap interval over recordings.

    python -m benchmarks.word_timing [--work FOLDER]
    python -m benchmarks.word_timing --batches 1,4 [--work FOLDER]

The transcriptions are kept in FOLDER (default: a temporary one) so a second run only mends.
--batches A,B instead compares two ways of decoding on the CPU (WhisperModel.batch_size; 1: one 30 s
window after the other, the engine's own transcribe; 4: faster-whisper's batched pipeline): the
word times each gives, mended with iGot's MendOptions (chosen on tune), on check's recordings, the
pooled difference in edges within 100 ms B minus A with its 95 % bootstrap interval.
"""

from __future__ import annotations

import argparse
import difflib
import itertools
import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]

from igot.asr.transcribe import load_whisper, transcribe  # noqa: E402
from igot.media.audio import SAMPLE_RATE, convert_to_wav, load_audio  # noqa: E402
from igot.refine.mend import MendOptions, mend, speech  # noqa: E402
from igot.transcript import Transcript  # noqa: E402
from igot_dev.evaluate import normalize  # noqa: E402
from igot_dev.synth import ENGLISH_INTERVIEW, PORTUGUESE_INTERVIEW, synth_conversation  # noqa: E402
from igot_dev.tables import table  # noqa: E402

TOLERANCES = (0.05, 0.1, 0.2)
# Two voices a conversation, by language and side; split by voice before any tuning.
TUNE_VOICES = {"en": [("en-us", "en-us+f3"), ("en-gb", "en-gb+f4")], "pt": [("pt-br", "pt-br+f2")]}
CHECK_VOICES = {"en": [("en-us+m3", "en-us+f2"), ("en-gb-x-rp", "en-029+f1")], "pt": [("pt", "pt-br+f4")]}
PAUSES = (0.7, 2.5)  # seconds between stretches of speech
# Between the words of a stretch: 120 ms of silence (synth's default: a pause the VAD can hear
# after every word), or none (the words run into each other, as in natural speech).
WORD_GAPS = (0.12, 0.0)
NOISE_RMS = 0.01  # white noise: espeak's words have an RMS near 0.1
SCRIPTS = {"en": ENGLISH_INTERVIEW, "pt": PORTUGUESE_INTERVIEW}
MODELS = {"en": "bundled:tiny.en", "pt": "bundled:base"}
GRID = [MendOptions(min_silence_ms=s, pad_ms=p, shortest_move_s=m, meeting_s=g)
        for s, p, m, g in itertools.product((60, 100, 200), (0, 30, 60), (0.0, 0.05), (0.0, 0.15, 0.3, 0.5))]
KINDS = ("espeak, words apart", "espeak, words joined", "timit")


@dataclass
class Recording:
    name: str
    side: str
    kind: str  # one of KINDS
    language: str
    wav: str
    truth: list[tuple[str, float, float]]  # (word, start, end)


def sentences(script: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Each sentence its own stretch: a pause then falls inside a speaker's turn too."""
    out = []
    for speaker, text in script:
        for s in text.replace("? ", "?|").replace(". ", ".|").replace("! ", "!|").split("|"):
            out.append((speaker, s))
    return out


def espeak_recordings(folder: Path) -> list[Recording]:
    made = []
    for side, voices in (("tune", TUNE_VOICES), ("check", CHECK_VOICES)):
        for language, pairs in voices.items():
            for (a, b), pause, noisy, gap in itertools.product(pairs, PAUSES, (False, True), WORD_GAPS):
                name = f"{language}-{a}-{b}-{pause}s-{gap}s{'-noise' if noisy else ''}"
                wav = folder / f"{name}.wav"
                words = synth_conversation(sentences(SCRIPTS[language]), wav, {"A": a, "B": b}, word_gap=gap, turn_gap=pause)
                if noisy:
                    import soundfile as sf

                    audio = load_audio(wav)
                    noise = np.random.default_rng(len(made)).normal(0, NOISE_RMS, len(audio))
                    sf.write(str(wav), np.clip(audio + noise, -1, 1), SAMPLE_RATE, subtype="PCM_16")
                kind = "espeak, words apart" if gap else "espeak, words joined"
                made.append(Recording(name, side, kind, language, str(wav), [(w.text, w.start, w.end) for w in words]))
    return made


def timit(folder: Path) -> Recording:
    dev = ROOT / "tests/data/recordings/timit_ldc93s1"
    wav = folder / "timit.wav"
    convert_to_wav(dev / "LDC93S1.flac", wav, progress=False)
    truth = [(w, float(a), float(b)) for a, b, w in (line.split("\t") for line in (dev / "LDC93S1.words_seconds.tsv").read_text().splitlines())]
    return Recording("timit-LDC93S1", "check", "timit", "en", str(wav), truth)


def transcribed(recordings: list[Recording], folder: Path, batch: int = 0) -> dict[str, Transcript]:
    """Each recording's transcript, made once and kept in `folder` (batch: WhisperModel.batch_size)."""
    done, models = {}, {}
    for r in recordings:
        kept = folder / (f"{r.name}.transcript.json" if not batch else f"{r.name}.batch{batch}.transcript.json")
        if not kept.exists():
            name = MODELS[r.language]
            models[name] = models.get(name) or replace(load_whisper(name, "faster-whisper", "cpu"), batch_size=batch)
            transcribe(Path(r.wav), models[name], language=r.language, progress=False).save(kept)
        done[r.name] = Transcript.load(kept)
    return done


def matched(r: Recording, t: Transcript) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """(truth's (start, end), engine's (start, end)) of each word both wrote the same, in order."""
    said = [(" ".join(normalize(w)), a, b) for w, a, b in r.truth]
    heard = [(" ".join(normalize(w.text)), w.start, w.end) for w in t.words]
    said = [x for x in said if x[0]]
    heard = [x for x in heard if x[0]]
    blocks = difflib.SequenceMatcher(None, [x[0] for x in said], [x[0] for x in heard], autojunk=False).get_matching_blocks()
    return [((said[i + k][1], said[i + k][2]), (heard[j + k][1], heard[j + k][2])) for i, j, n in blocks for k in range(n)]


def counts(r: Recording, t: Transcript) -> np.ndarray:
    """[words matched, words in the truth, starts within each tolerance..., ends within each...]."""
    pairs = matched(r, t)
    row = [len(pairs), len(r.truth)]
    for edge in (0, 1):
        row += [sum(abs(truth[edge] - got[edge]) <= tol + 1e-9 for truth, got in pairs) for tol in TOLERANCES]
    return np.array(row, dtype=float)


def mended(r: Recording, t: Transcript, options: MendOptions, vad_cache: dict) -> Transcript:
    key = (r.name, options.min_silence_ms, options.pad_ms)
    if key not in vad_cache:
        vad_cache[key] = speech(load_audio(r.wav), options)
    return mend(t, vad_cache[key], options)


def edges_within(m: np.ndarray, tol_index: int = 1) -> float:
    """Share of word edges (starts and ends) within the tolerance, pooled over the rows of m."""
    return (m[:, 2 + tol_index].sum() + m[:, 5 + tol_index].sum()) / max(2 * m[:, 0].sum(), 1)


def bootstrap(a: np.ndarray, b: np.ndarray, draws: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """Pooled edges within 100 ms, a minus b, with a 95 % interval over recordings drawn with replacement."""
    rng = np.random.default_rng(seed)
    drawn = []
    for _ in range(draws):
        pick = rng.integers(0, len(a), len(a))
        drawn.append(edges_within(a[pick]) - edges_within(b[pick]))
    lo, hi = np.percentile(drawn, [2.5, 97.5])
    return edges_within(a) - edges_within(b), lo, hi


def row(set_name: str, way: str, m: np.ndarray) -> dict:
    words = m[:, 0].sum()
    shares = [m[:, 2 + k].sum() / max(words, 1) for k in range(6)]
    return {"set": set_name, "recordings": len(m), "words matched": f"{int(words)}/{int(m[:, 1].sum())}", "times": way,
            **{f"starts ≤{int(tol * 1000)} ms": f"{s:.3f}" for tol, s in zip(TOLERANCES, shares[:3])},
            **{f"ends ≤{int(tol * 1000)} ms": f"{s:.3f}" for tol, s in zip(TOLERANCES, shares[3:])}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, help="folder to keep the recordings and transcriptions in (default: a temporary one)")
    parser.add_argument("--batches", help="A,B: compare the mended word times of two WhisperModel.batch_size values")
    args = parser.parse_args()
    folder = args.work or Path(tempfile.mkdtemp(prefix="igot-word-timing-"))
    folder.mkdir(parents=True, exist_ok=True)
    listed = folder / "recordings.json"
    if listed.exists():
        recordings = [Recording(**r) for r in json.loads(listed.read_text())]
    else:
        recordings = espeak_recordings(folder) + [timit(folder)]
        listed.write_text(json.dumps([asdict(r) for r in recordings]))
    if args.batches:
        return compare_batches(recordings, folder, *[int(b) for b in args.batches.split(",")])
    transcripts = transcribed(recordings, folder)
    vad_cache: dict = {}

    tune = [r for r in recordings if r.side == "tune"]
    engine_tune = np.array([counts(r, transcripts[r.name]) for r in tune])
    scored = []
    for options in GRID:
        m = np.array([counts(r, mended(r, transcripts[r.name], options, vad_cache)) for r in tune])
        scored.append((edges_within(m), options, m))
    best_share, best, best_tune = max(scored, key=lambda s: s[0])
    print(f"Chosen on tune (edges within 100 ms {edges_within(engine_tune):.3f} -> {best_share:.3f}): {best}")
    rows = []
    for kind in KINDS[:2]:
        pick = np.array([r.kind == kind for r in tune])
        rows += [row(f"{kind}: tune", "engine", engine_tune[pick]), row(f"{kind}: tune", "engine, mended", best_tune[pick])]

    # check: the engine's and the chosen mending, once
    results = {}
    for kind in KINDS:
        chosen = [r for r in recordings if r.side == "check" and r.kind == kind]
        engine = np.array([counts(r, transcripts[r.name]) for r in chosen])
        mend_m = np.array([counts(r, mended(r, transcripts[r.name], best, vad_cache)) for r in chosen])
        results[kind] = (engine, mend_m)
        rows += [row(f"{kind}: check", "engine", engine), row(f"{kind}: check", "engine, mended", mend_m)]
    table(rows, "Share of word starts and ends within 50/100/200 ms of the exact times")

    differences = []
    for name, kinds in [(k, [k]) for k in KINDS[:2]] + [("all", list(KINDS))]:
        engine = np.concatenate([results[k][0] for k in kinds])
        mend_m = np.concatenate([results[k][1] for k in kinds])
        diff, lo, hi = bootstrap(mend_m, engine)
        verdict = "mended wins" if lo > 0 else ("mended loses" if hi < 0 else "within the noise")
        differences.append({"set": f"{name}: check", "recordings": len(engine), "edges ≤100 ms, mended − engine": f"{diff:+.3f}",
                            "95 % interval": f"[{lo:+.3f}, {hi:+.3f}]", "verdict": verdict})
    table(differences, "Pooled difference on check, 95 % bootstrap over recordings")

    # What the mending costs a run: the VAD's pass and the mending, against the recordings' length
    started, seconds = time.perf_counter(), 0.0
    for r in [r for r in recordings if r.side == "check"]:
        samples = load_audio(r.wav)
        seconds += len(samples) / SAMPLE_RATE
        mend(transcripts[r.name], speech(samples, best), best)
    print(f"\nMending on check: {time.perf_counter() - started:.2f} s for {seconds:.0f} s of recordings "
          f"({(time.perf_counter() - started) / seconds:.4f} of the recording)")


def compare_batches(recordings: list[Recording], folder: Path, a: int, b: int) -> None:
    """The mended word times of decoding with batch_size a and with b, on check's recordings."""
    recordings = [r for r in recordings if r.side == "check"]
    options, vad_cache, measured = MendOptions(), {}, {}
    for batch in (a, b):
        started = time.perf_counter()
        transcripts = transcribed(recordings, folder, batch)
        print(f"batch {batch}: transcribed (or read back) in {time.perf_counter() - started:.0f} s", flush=True)
        measured[batch] = np.array([counts(r, mended(r, transcripts[r.name], options, vad_cache)) for r in recordings])
    rows, differences = [], []
    for name, kinds in [(k, [k]) for k in KINDS] + [("all", list(KINDS))]:
        pick = np.array([r.kind in kinds for r in recordings])
        rows += [row(f"{name}: check", f"batch {batch}, mended", measured[batch][pick]) for batch in (a, b)]
        diff, lo, hi = bootstrap(measured[b][pick], measured[a][pick])
        differences.append({"set": f"{name}: check", "recordings": int(pick.sum()),
                            f"edges ≤100 ms, batch {b} − batch {a}": f"{diff:+.3f}", "95 % interval": f"[{lo:+.3f}, {hi:+.3f}]"})
    table(rows, "Share of word starts and ends within 50/100/200 ms of the exact times, mended (MendOptions())")
    table(differences, "Pooled difference, 95 % bootstrap over recordings")


if __name__ == "__main__":
    main()
