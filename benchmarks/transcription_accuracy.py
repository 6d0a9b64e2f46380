"""Does iGot keep every word the engine it wraps writes? Per recording, the words of
`igot.asr.transcribe` next to faster-whisper alone, as it runs by default
(`WhisperModel.transcribe(audio, vad_filter=True)`, no word timestamps), and next to the same call
with `word_timestamps=True` (which moves to the next 30 s window from the last word's time, the
way iGot decoded until 2026-11-26), the same loaded model, the same audio, in the same run, with
the speed of each and the seconds of speech iGot reports as untranscribed.

Sets: English with tiny.en and with base, Portuguese with base (language given), on one side of
tests/data/recordings/split.json ("transcription"; choose on tune, run check once). Each set is
the side's recordings one by one (2-12 s) plus three "conversations": all of them joined, in
three orders, with pauses of 0.3-3 s between them, because windows, VAD chunks and seeking only
come into play on audio longer than one 30 s window.

    python -m benchmarks.transcription_accuracy --side tune|check [--sets en-tiny,en-base,pt-base]
        [--batch 4,8] [--threads 2]

--batch adds iGot at each WhisperModel.batch_size: 1 is one 30 s window after the other
(faster-whisper's own transcribe, the CPU's default until 2026-11-28), more is faster-whisper's
BatchedInferencePipeline and iGot's repair of its dropped chunk ends (the CPU's default since, at
TranscriptionOptions.cpu_batch); --threads adds iGot with CTranslate2 on that many threads
(faster-whisper's cpu_threads; by default CTranslate2's own, 4). Those ways are also compared with
iGot as it runs by default (batch 1 the other way round: the default less it).

Prints per recording: WER of each way, the words iGot differs from the engine by (edit distance
between the two transcripts) and iGot's untranscribed seconds; then per set the pooled WER and
real-time factor; last, pooled WER differences against the engine alone with a 95 % bootstrap
interval over recordings.
"""

from __future__ import annotations

import argparse
import csv
import os
import tempfile
import time
import wave
from dataclasses import replace
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]

from igot.asr.transcribe import load_whisper, transcribe, untranscribed_seconds  # noqa: E402
from igot.asr.whisper_model import WhisperModel  # noqa: E402
from igot.media.audio import SAMPLE_RATE, convert_to_wav, load_audio  # noqa: E402
from igot_dev.conversations import SPLIT  # noqa: E402
from igot_dev.evaluate import normalize, word_error_rate, words_apart  # noqa: E402
from igot_dev.tables import table  # noqa: E402

# (order of the recordings, pauses between them in seconds, cycled)
CONVERSATIONS = [("joined", lambda xs: xs, (0.7, 1.5, 0.4, 2.5, 1.0)),
                 ("reversed", lambda xs: xs[::-1], (2.0, 0.5, 1.2)),
                 ("rotated", lambda xs: xs[3:] + xs[:3], (0.3, 3.0, 0.8))]


def english(dev: Path, side: str) -> list[tuple[Path, str]]:
    timit = (dev / "timit_ldc93s1/LDC93S1.txt").read_text().split()[2:]  # after the sample offsets
    items = [(dev / "openai_whisper/jfk.flac", (dev / "openai_whisper/jfk.reference.txt").read_text()),
             (dev / "librispeech_misc/2412-153948-0000.flac", (dev / "librispeech_misc/2412-153948-0000.txt").read_text()),
             (dev / "timit_ldc93s1/LDC93S1.flac", " ".join(timit))]
    with open(dev / "ljspeech/metadata.csv", encoding="utf-8") as f:
        items += [(dev / f"ljspeech/{r[0]}.flac", r[-1]) for r in csv.reader(f, delimiter="|")]
    return _on_side(items, dev, side)


def portuguese(dev: Path, side: str) -> list[tuple[Path, str]]:
    items = [(p, p.with_suffix(".txt").read_text(encoding="utf-8")) for p in sorted((dev / "falabrasil_pt").glob("*.flac"))]
    return _on_side(items, dev, side)


def _on_side(items, dev: Path, side: str):
    chosen = set(SPLIT[side]["transcription"])
    return [(p, text) for p, text in items if p.relative_to(dev).as_posix() in chosen]


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


def engine_alone(wav: Path, model, lang: str) -> str:
    segments, _ = model.model.transcribe(load_audio(wav), language=lang, vad_filter=True)
    return " ".join(s.text.strip() for s in segments)


def seeking_on_word_times(wav: Path, model, lang: str) -> str:
    segments, _ = model.model.transcribe(load_audio(wav), language=lang, vad_filter=True, word_timestamps=True)
    return " ".join(s.text.strip() for s in segments)


def igot(wav: Path, model, lang: str) -> tuple[str, float]:
    t = transcribe(wav, model, language=lang, progress=False)
    return " ".join(w.text for p in t.phrases for w in p.words), untranscribed_seconds(t)


def igot_batched(batch: int):
    """iGot with WhisperModel.batch_size `batch` (1: one window after the other)."""
    return lambda wav, model, lang: igot(wav, replace(model, batch_size=batch), lang)


def igot_on_threads(threads: int):
    """iGot with the same model loaded again for CTranslate2 on `threads` threads (loaded once)."""
    loaded: dict[str, WhisperModel] = {}

    def run(wav, model, lang):
        if model.name not in loaded:
            import faster_whisper

            from igot.runtime.bundled import whisper_model_dir

            path = str(whisper_model_dir(model.name.removeprefix("bundled:")))
            engine = faster_whisper.WhisperModel(path, device="cpu", compute_type=model.precision, cpu_threads=threads)
            loaded[model.name] = replace(model, model=engine)
        return igot(wav, loaded[model.name], lang)
    return run


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--devdata", type=Path, default=ROOT / "tests" / "data" / "recordings")
    parser.add_argument("--side", choices=("tune", "check"), required=True)
    parser.add_argument("--sets", default="en-tiny,en-base,pt-base")
    parser.add_argument("--batch", default="", help="WhisperModel.batch_size values to add, e.g. 1,4,8 (1: one window after the other)")
    parser.add_argument("--threads", type=int, help="also iGot with CTranslate2 on this many threads")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="igot-wer-"))
    tiny = load_whisper("bundled:tiny.en", "faster-whisper", "cpu")
    base = load_whisper("bundled:base", "faster-whisper", "cpu")
    sets = {"en-tiny": ("English, tiny.en", tiny, "en", english), "en-base": ("English, base", base, "en", english),
            "pt-base": ("Portuguese, base", base, "pt", portuguese)}
    ways = [("engine", engine_alone), ("word seek", seeking_on_word_times), ("igot", igot)]
    ways += [(f"igot batch {b}", igot_batched(int(b))) for b in args.batch.split(",") if b]
    ways += [(f"igot {args.threads} threads", igot_on_threads(args.threads))] if args.threads else []
    summary, per_file = [], []  # per_file: (set, {way: errors}, words)
    for key in args.sets.split(","):
        label, model, lang, items = sets[key]
        rows, totals = [], {way: [0.0, 0.0] for way, _ in ways}  # errors, seconds
        words = audio = 0.0
        for name, wav, reference in recordings(items(args.devdata, args.side), work, lang):
            n = len(normalize(reference))
            duration = len(load_audio(wav)) / SAMPLE_RATE
            row = {"recording": name, "audio s": f"{duration:.1f}", "words": n}
            errors, texts = {}, {}
            for way, run in ways:
                t0 = time.perf_counter()
                text = run(wav, model, lang)
                totals[way][1] += time.perf_counter() - t0
                if way.startswith("igot"):
                    text, missed = text
                    if way == "igot":
                        row["untranscribed s"] = f"{missed:.1f}"
                texts[way] = text
                wer = word_error_rate(reference, text)
                totals[way][0] += wer * n
                errors[way] = wer * n
                row[f"WER {way}"] = f"{wer:.3f}"
            row["igot vs engine, words"] = words_apart(normalize(texts["igot"]), normalize(texts["engine"]))
            per_file.append((key, errors, n))
            words, audio = words + n, audio + duration
            rows.append(row)
        table(rows, f"{label}, {args.side}: per recording")
        summary.append({"set": label, "recordings": len(rows), "words": int(words), "audio s": f"{audio:.0f}",
                        "files where igot differs from engine": sum(r["igot vs engine, words"] > 0 for r in rows),
                        **{f"WER {way}": f"{totals[way][0] / words:.4f}" for way, _ in ways},
                        **{f"RTF {way}": f"{totals[way][1] / audio:.3f}" for way, _ in ways}})
    table(summary, f"Pooled WER and real-time factor, {args.side} (same model, same run)")
    rng = np.random.default_rng(0)
    rows = []
    for key in args.sets.split(",") + ["all"]:
        chosen = [(e, n) for k, e, n in per_file if key in (k, "all")]
        extra = [("igot", w) if w == "igot batch 1" else (w, "igot") for w, _ in ways[3:]]
        for way, against in [("word seek", "engine"), ("igot", "engine")] + extra:
            diff = np.array([e[way] - e[against] for e, _ in chosen])
            n = np.array([n for _, n in chosen], dtype=float)
            draws = [diff[i].sum() / n[i].sum() for i in (rng.integers(0, len(n), len(n)) for _ in range(2000))]
            lo, hi = np.percentile(draws, [2.5, 97.5])
            rows.append({"set": key, "way": way, "against": against, "WER difference": f"{diff.sum() / n.sum():+.4f}",
                         "95 %": f"[{lo:+.4f}, {hi:+.4f}]"})
    table(rows, "Pooled WER of a way less that of the one it is set against (negative: fewer errors), 95 % bootstrap "
                "over recordings (joined ones included)")


if __name__ == "__main__":
    main()
