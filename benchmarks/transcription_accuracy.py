"""Is iGot's transcription as accurate as the engine it wraps? WER of `igot.transcribe` next to
plain faster-whisper (`WhisperModel.transcribe(audio, vad_filter=True, word_timestamps=True)`,
the same loaded model, the same audio), in the same run, with the speed of each.

Sets: English with tiny.en and with base, Portuguese with base (language given). Each set is the
dev recordings one by one (2-12 s) plus three "conversations": all of them joined, in three
orders, with pauses of 0.3-3 s between them (45-80 s), because iGot's batching, VAD chunks and
re-decoding of lost speech only come into play on audio longer than one 30 s window.

    python benchmarks/transcription_accuracy.py [--devdata tests/data/recordings] [--sets en-tiny,en-base,pt-base]

Prints per-recording WER of both, then per set: pooled WER (all errors / all reference words)
and the real-time factor (seconds of processing per second of audio, model loading excluded).
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
import time
import wave
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from igot.audio import SAMPLE_RATE, convert_to_wav, load_audio  # noqa: E402
from igot.evaluate import normalize, word_error_rate  # noqa: E402
from igot.transcribe import load_whisper, transcribe  # noqa: E402
from tables import table  # noqa: E402

# (order of the recordings, pauses between them in seconds, cycled)
CONVERSATIONS = [("joined", lambda xs: xs, (0.7, 1.5, 0.4, 2.5, 1.0)),
                 ("reversed", lambda xs: xs[::-1], (2.0, 0.5, 1.2)),
                 ("rotated", lambda xs: xs[3:] + xs[:3], (0.3, 3.0, 0.8))]


def english(dev: Path) -> list[tuple[Path, str]]:
    timit = (dev / "timit_ldc93s1/LDC93S1.txt").read_text().split()[2:]  # after the sample offsets
    items = [(dev / "openai_whisper/jfk.flac", (dev / "openai_whisper/jfk.reference.txt").read_text()),
             (dev / "librispeech_misc/2412-153948-0000.flac", (dev / "librispeech_misc/2412-153948-0000.txt").read_text()),
             (dev / "timit_ldc93s1/LDC93S1.flac", " ".join(timit))]
    with open(dev / "ljspeech/metadata.csv", encoding="utf-8") as f:
        items += [(dev / f"ljspeech/{r[0]}.flac", r[-1]) for r in csv.reader(f, delimiter="|")]
    return items


def portuguese(dev: Path) -> list[tuple[Path, str]]:
    return [(p, p.with_suffix(".txt").read_text(encoding="utf-8")) for p in sorted((dev / "falabrasil_pt").glob("*.flac"))]


def write_wav(path: Path, audio: np.ndarray) -> Path:
    with wave.open(str(path), "wb") as f:
        f.setnchannels(1), f.setsampwidth(2), f.setframerate(SAMPLE_RATE)
        f.writeframes((np.clip(audio, -1, 1) * 32767).astype(np.int16).tobytes())
    return path


def recordings(items: list[tuple[Path, str]], work: Path, lang: str) -> list[tuple[str, Path, str]]:
    """The recordings as 16 kHz WAVs with their references, then the joined conversations."""
    singles = []
    for path, reference in items:
        wav = work / f"{path.parent.name}-{path.stem}.wav"
        if not wav.exists():
            convert_to_wav(path, wav)
        singles.append((path.stem, wav, reference))
    joined = []
    for name, order, pauses in CONVERSATIONS:
        audio, text = [], []
        for i, (_, wav, reference) in enumerate(order(singles)):
            audio += [load_audio(wav), np.zeros(int(pauses[i % len(pauses)] * SAMPLE_RATE), np.float32)]
            text.append(reference)
        joined.append((f"{lang} {name}", write_wav(work / f"{lang}-{name}.wav", np.concatenate(audio)), " ".join(text)))
    return singles + joined


def plain_faster_whisper(wav: Path, model, lang: str) -> str:
    segments, _ = model.model.transcribe(load_audio(wav), language=lang, vad_filter=True, word_timestamps=True)
    return " ".join(s.text.strip() for s in segments)


def igot(wav: Path, model, lang: str) -> str:
    return " ".join(p.text for p in transcribe(wav, model, language=lang, progress=False).phrases)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--devdata", type=Path, default=ROOT / "tests" / "data" / "recordings")
    parser.add_argument("--sets", default="en-tiny,en-base,pt-base")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="igot-wer-"))
    tiny = load_whisper("bundled:tiny.en", "faster-whisper", "cpu")
    base = load_whisper("bundled:base", "faster-whisper", "cpu")
    sets = {"en-tiny": ("English, tiny.en", tiny, "en", english), "en-base": ("English, base", base, "en", english),
            "pt-base": ("Portuguese, base", base, "pt", portuguese)}
    summary = []
    for key in args.sets.split(","):
        label, model, lang, items = sets[key]
        rows, totals = [], {"igot": [0.0, 0.0], "plain": [0.0, 0.0]}  # errors, seconds
        words = audio = 0.0
        for name, wav, reference in recordings(items(args.devdata), work, lang):
            n = len(normalize(reference))
            duration = len(load_audio(wav)) / SAMPLE_RATE
            row = {"recording": name, "audio s": f"{duration:.1f}", "words": n}
            for way, run in [("plain", plain_faster_whisper), ("igot", igot)]:
                t0 = time.perf_counter()
                wer = word_error_rate(reference, run(wav, model, lang))
                totals[way][1] += time.perf_counter() - t0
                totals[way][0] += wer * n
                row[f"WER {way}"] = f"{wer:.3f}"
            words, audio = words + n, audio + duration
            rows.append(row)
        table(rows, f"{label}: WER per recording (plain = faster-whisper alone, vad_filter=True)")
        summary.append({"set": label, "recordings": len(rows), "words": int(words), "audio s": f"{audio:.0f}",
                        "WER plain": f"{totals['plain'][0] / words:.4f}", "WER iGot": f"{totals['igot'][0] / words:.4f}",
                        "iGot - plain": f"{(totals['igot'][0] - totals['plain'][0]) / words:+.4f}",
                        "RTF plain": f"{totals['plain'][1] / audio:.3f}", "RTF iGot": f"{totals['igot'][1] / audio:.3f}"})
    table(summary, "Pooled WER and real-time factor, iGot vs plain faster-whisper (same model, same run)")


if __name__ == "__main__":
    main()
