"""Words heard one by one: right-speaker words with and without `hear_words`, simulated interviews.

    PYTHONPATH=. python benchmarks/word_voices.py [--seeds 20-29]

Two-person interviews simulated from real voices (tests/conversations.py: back-channels inside
the other's turn, overlaps where the next person starts early, turns starting mid-sentence),
English and Portuguese, clean and through a phone line with room noise at 30 dB SNR, 40 s each.
Seeds 10-19 are the set WORD_WINDOW and OTHER_VOICE were chosen on; 20-29 (the default) check
them. Each interview is diarized once with `diarize` and its spoken words given speakers by
iGot's rules (tests/conversations.py turn_taking) with the diarizer's turns as they come and
with `hear_words`' one-word turns added. Per language and line: interviews where two speakers
were found, right-speaker words pooled over them, back-channels kept on the right speaker as
their own phrase, and the words `hear_words` made right and made wrong.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.tables import table  # noqa: E402
from igot.diarize import diarize, hear_words, load_diarizer  # noqa: E402
from igot.transcribe import load_whisper  # noqa: E402
from igot.transcript import Word  # noqa: E402
from tests.conversations import interviews, phrases_of, speaker_mapping, turn_taking  # noqa: E402


def right_or_wrong(c, turns) -> list[bool]:
    """For each spoken word of interview `c`, whether iGot gives it its true speaker."""
    found = [w.speaker for _, w in phrases_of(c.words, turns)]
    mapping = speaker_mapping(found, [w.speaker for w in c.words])
    return [mapping.get(f) == w.speaker for f, w in zip(found, c.words)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="20-29", help="first-last seed: one interview (and pair of people) each")
    args = parser.parse_args()
    first, last = (int(x) for x in args.seeds.split("-"))
    diarizer = load_diarizer("cpu")
    whisper = load_whisper("bundled:base", "faster-whisper", "cpu")
    work = Path(tempfile.mkdtemp(prefix="igot-word-voices-"))
    rows = []
    for language, phone, made in interviews(whisper, range(first, last + 1), work):
        total = {k: 0 for k in ("two", "words", "before", "after", "backchannels", "kept before", "kept after", "moved right", "moved wrong")}
        seconds = hearing = 0.0
        for seed, c, wav in made:
            turns = diarize(wav, diarizer)
            if len({t.speaker for t in turns}) != 2:
                continue
            started = time.perf_counter()
            heard = hear_words([Word(w.text, w.start, w.end) for w in c.words], turns, wav, diarizer)
            hearing += time.perf_counter() - started
            seconds += len(c.audio) / 16000
            before, after = turn_taking(c, turns), turn_taking(c, heard)
            total["two"] += 1
            total["words"] += before["words"]
            for side, counts in (("before", before), ("after", after)):
                total[side] += round(counts["right"])
                total[f"kept {side}"] += counts["kept"]
            total["backchannels"] += before["backchannels"]
            # Words whose speaker `hear_words` made right or wrong (each side mapped to the
            # true people on its own: the numbering may differ between the two).
            was, now = right_or_wrong(c, turns), right_or_wrong(c, heard)
            total["moved right"] += sum(1 for a, b in zip(was, now) if b and not a)
            total["moved wrong"] += sum(1 for a, b in zip(was, now) if a and not b)
            print(f"  {language} {'phone' if phone else 'clean'} {seed}: {before['right']:.0f} -> {after['right']:.0f} of "
                  f"{before['words']} words", file=sys.stderr, flush=True)
        rows.append({
            "language": language, "line": "phone" if phone else "clean", "interviews": last - first + 1,
            "2 speakers found": total["two"], "words": total["words"],
            "right words, turns": f"{total['before'] / max(total['words'], 1):.1%}",
            "right words, words heard": f"{total['after'] / max(total['words'], 1):.1%}",
            "back-channels kept": f"{total['kept before']} -> {total['kept after']} of {total['backchannels']}",
            "words made right": total["moved right"], "words made wrong": total["moved wrong"],
            "RTF hearing words": f"{hearing / max(seconds, 1e-9):.3f}",
        })
    table(rows, f"Words heard one by one, simulated interviews seeds {first}-{last} (where 2 speakers were found)")


if __name__ == "__main__":
    main()
