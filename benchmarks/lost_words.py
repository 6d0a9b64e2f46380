"""Where right-speaker words are lost: iGot's wrong words by kind, on simulated interviews.

    PYTHONPATH=. python benchmarks/lost_words.py [--seeds 20-29]

Two-person interviews simulated from real voices (tests/conversations.py, 40 s, English and
Portuguese, clean and through a phone line with room noise at 30 dB SNR), diarized by the
pipeline's steps (`diarize`, then `hear_words` over the words). Only interviews where two
speakers were found: a wrong count is speaker_count.py's subject. Every word said is of one
kind, from the true turns:

- back-channel: a one-word turn inside the other person's turn ("yeah" while they talk);
- said at once: overlapping the other person's speech (a turn that starts before the other ends);
- near a change: within 1 s of a true change of speaker, no one else speaking;
- elsewhere.

Two views of the same interviews: "said", every word spoken with its exact time (as
speakers_accuracy.py scores the simulated interviews); "transcript", the words Whisper base
writes, each paired with the word said at that moment by `evaluate.align_words` (WDER's
pairing: a word the transcript drops, or one said by no one, is not scored) and of that word's
kind. Right = the true speaker under the best one-to-one mapping of found to true speakers.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.tables import table  # noqa: E402
from igot.diarize import diarize, hear_words, load_diarizer  # noqa: E402
from igot.evaluate import align_words  # noqa: E402
from igot.transcribe import load_whisper, transcribe  # noqa: E402
from igot.transcript import Word  # noqa: E402
from tests.conversations import interviews, phrases_of, speaker_mapping  # noqa: E402

KINDS = ("back-channel", "said at once", "near a change", "elsewhere")


def kind_of(words, turns, k: int) -> str:
    """Which of KINDS the said word `words[k]` is, from the true `turns`."""
    w = words[k]
    others = [t for t in turns if t.speaker != w.speaker and t.start < w.end and t.end > w.start]
    if any(t.speaker == w.speaker and (t.start, t.end) == (w.start, w.end) for t in turns) and \
            any(t.start <= w.start and t.end >= w.end for t in others):
        return "back-channel"
    if others:
        return "said at once"
    middle = (w.start + w.end) / 2
    changes = [t.start for t in turns] + [t.end for t in turns]
    return "near a change" if min(abs(x - middle) for x in changes) < 1.0 else "elsewhere"


def score(said, kinds, found, pairs) -> tuple[Counter, Counter]:
    """Words and wrong words per kind; `pairs` (i said, j found) of the words scored."""
    mapping = speaker_mapping([found[j] for _, j in pairs], [said[i].speaker for i, _ in pairs])
    words, wrong = Counter(), Counter()
    for i, j in pairs:
        words[kinds[i]] += 1
        wrong[kinds[i]] += mapping.get(found[j]) != said[i].speaker
    return words, wrong


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="20-29", help="first-last seed: one interview (and pair of people) each")
    args = parser.parse_args()
    first, last = (int(x) for x in args.seeds.split("-"))
    diarizer = load_diarizer("cpu")
    whisper = load_whisper("bundled:base", "faster-whisper", "cpu")
    work = Path(tempfile.mkdtemp(prefix="igot-lost-words-"))
    rows = []
    for language, phone, made in interviews(whisper, range(first, last + 1), work):
        two = 0
        totals = {view: (Counter(), Counter()) for view in ("said", "transcript")}
        for seed, c, wav in made:
            turns = diarize(wav, diarizer)
            if len({t.speaker for t in turns}) != 2:
                continue
            two += 1
            kinds = [kind_of(c.words, c.turns, k) for k in range(len(c.words))]
            plain = [Word(w.text, w.start, w.end) for w in c.words]
            found = [w.speaker for _, w in phrases_of(plain, hear_words(plain, turns, wav, diarizer))]
            heard = transcribe(wav, whisper, language=language, progress=False).words
            written = [w.speaker for _, w in phrases_of(heard, hear_words(heard, turns, wav, diarizer))]
            for view, counts in (("said", score(c.words, kinds, found, [(i, i) for i in range(len(c.words))])),
                                 ("transcript", score(c.words, kinds, written, align_words(c.words, heard)))):
                for total, part in zip(totals[view], counts):
                    total.update(part)
            print(f"  {language} {'phone' if phone else 'clean'} {seed}", file=sys.stderr, flush=True)
        for view, (words, wrong) in totals.items():
            n = sum(words.values())
            row = {"language": language, "line": "phone" if phone else "clean", "2 found": f"{two}/{last - first + 1}",
                   "words": view, "scored": n, "right": f"{1 - sum(wrong.values()) / max(n, 1):.1%}"}
            row.update({kind: f"{wrong[kind]} of {words[kind]}" for kind in KINDS})
            rows.append(row)
    table(rows, f"Wrong-speaker words by kind (wrong of scored), simulated interviews seeds {first}-{last}, where 2 speakers were found")


if __name__ == "__main__":
    main()
