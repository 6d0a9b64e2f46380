"""Words to speakers under real turn-taking, given turns: true ones and ones with a diarizer's errors.

    PYTHONPATH=. python -m benchmarks.words_to_speakers [--seeds 10-29]

Two-person interviews simulated from real voices (igot_dev/conversations.py: overlaps, one-word
back-channels inside the other's turn, turns that start mid-sentence), English and
Portuguese, 40 s each. The words are the spoken ones, with their true speakers; the turns
are the true ones (they overlap), or those turns as a diarizer errs (coarse_turns): "fine",
boundaries off by up to 50 ms and a fifth of the back-channels missed; "coarse", boundaries
off by 0.1-0.3 s, half the back-channels missed, one person's turns < 0.5 s apart joined.

Per language and turns: the share of words on the right speaker (best one-to-one mapping,
pooled), the worst interview, back-channels said inside the other's sentence that stay their
own phrase on the right speaker without splitting it, and changes of speaker with no full stop
before them that start a phrase. "most overlap" is each word given to the speaker whose turns
cover most of it, nothing else (the simplest rule), for comparison.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from benchmarks.speakers_accuracy import words_by_overlap  # noqa: E402
from igot.asr.transcribe import load_whisper  # noqa: E402
from igot_dev.conversations import DIARIZER_ERRORS, coarse_turns, find_voices, pairs, simulate, turn_taking  # noqa: E402
from igot_dev.evaluate import right_speaker_share  # noqa: E402
from igot_dev.tables import table  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="10-29", help="first-last seed: one interview (and pair of people) each")
    args = parser.parse_args()
    first, last = (int(x) for x in args.seeds.split("-"))
    whisper = load_whisper("bundled:base", "faster-whisper", "cpu")
    work = Path(tempfile.mkdtemp(prefix="igot-words-"))
    rows = []
    for language in ("en", "pt"):
        voices = find_voices(whisper, language, work / language)
        talks = [(seed, simulate(pairs(voices, 1, seed=seed)[0], seed=seed, seconds=40)) for seed in range(first, last + 1)]
        for kind in ("true", "fine", "coarse"):
            total: dict[str, float] = {}
            worst, simple, words = 1.0, 0.0, 0
            for seed, c in talks:
                turns = c.turns if kind == "true" else coarse_turns(c.turns, seed, **DIARIZER_ERRORS[kind])
                counts = turn_taking(c, turns)
                worst = min(worst, counts["right"] / counts["words"])
                for key, value in counts.items():
                    total[key] = total.get(key, 0) + value
                truth = [w.speaker for w in c.words]
                simple += right_speaker_share([w.speaker for w in words_by_overlap(c.words, turns)], truth) * len(truth)
                words += len(truth)
            rows.append({"language": language, "turns": kind, "interviews": len(talks), "words": words,
                         "right words": f"{total['right'] / words:.1%}", "worst interview": f"{worst:.1%}",
                         "back-channels kept": f"{total['kept']}/{total['backchannels']}",
                         "changes kept": f"{total['changed']}/{total['changes']}",
                         "most overlap: right words": f"{simple / words:.1%}"})
    table(rows, "Words to speakers on simulated interviews")


if __name__ == "__main__":
    main()
