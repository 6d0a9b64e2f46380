"""How long the rest of a run will take: each stage's pace on a CPU, then a few pure functions.

A default CPU run on an hour takes tens of minutes, and each stage's progress bar knows only its
own stage. After each stage the run says how much is left of the whole, from the pace each stage
kept on the 2-core machine of `benchmarks/cpu_hour.py` (seconds of work per second of recording),
scaled by how fast this computer did the stages already done.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Optional

# Seconds per second of recording for each stage of a default CPU run, on 2 cores (the hour of
# Portuguese in benchmarks/README.md, "The hour on a laptop", 2026-11-28; model loading
# included). Only their ratios matter once a stage has run: a faster computer is faster at all of them.
CPU_PACE: Mapping[str, float] = {
    "transcription": 0.26,  # Whisper small, int8, one window after another: batched (the default) is about half with real weights
    "alignment": 0.32,  # wav2vec2 large (`--word-timing precise` only); English's base model is quicker
    "punctuation": 0.01,
    "diarization": 0.10,  # sherpa-onnx's recipe with the voices and phrase voices (10 minutes: 0.12)
    "summary": 0.09,  # Gemma 3 270M, every call writing all its room (the worst case)
    "meaning": 0.01,  # multilingual-e5-small: an hour's phrases in 28.7 s (benchmarks/search_quality.py), with loading
}
# The timed stages of a run after the audio, in the order it does them (igot.pipeline's plan
# lists a run's from here), as its lines name them.
STAGES = {"transcription": "transcription", "alignment": "word timing", "punctuation": "punctuation",
          "diarization": "speakers", "summary": "summary",
          "meaning": "meaning index"}
# A stage that took less than this share of its expected time was reused from an earlier run (or
# had nothing to do): it says nothing about this computer's speed.
REUSED = 0.1
SHOWN_FROM = 120.0  # seconds left below which no estimate is worth a line


def speed(done: Mapping[str, float], seconds: float, pace: Mapping[str, float] = CPU_PACE) -> float:
    """This computer's time against the pace's, over the stages done that really ran (1.0: none yet)."""
    expected = {stage: pace[stage] * seconds for stage in done if stage in pace}
    ran = [stage for stage, e in expected.items() if e > 0 and done[stage] >= REUSED * e]
    if not ran:
        return 1.0
    return sum(done[s] for s in ran) / sum(expected[s] for s in ran)


def time_left(done: Mapping[str, float], to_come: Iterable[str], seconds: float,
              pace: Mapping[str, float] = CPU_PACE) -> float:
    """Seconds the stages `to_come` will take on a recording of `seconds`, at this computer's speed so far."""
    return speed(done, seconds, pace) * sum(pace.get(stage, 0.0) * seconds for stage in to_come)


def say_minutes(seconds: float) -> str:
    """'about 25 min', 'about 1 h 10 min'."""
    minutes = max(1, round(seconds / 60))
    return f"about {minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"about {minutes} min"


def estimate_line(done: Mapping[str, float], to_come: list[str], seconds: float,
                  pace: Mapping[str, float] = CPU_PACE) -> Optional[str]:
    """The line a run says after a stage, or None when little is left."""
    left = time_left(done, to_come, seconds, pace)
    if not to_come or left < SHOWN_FROM:
        return None
    return f"Time left: {say_minutes(left)} ({', '.join(STAGES.get(s, s) for s in to_come)})"
