"""Review: the parts of an interview the machine may have got wrong, brought to the researcher in
the order they were said, each to be fixed (a correction) or accepted as right.

Four kinds of item:
- "word": the words the recogniser was less sure of than `ReviewOptions.below` (the engine's word
  probability), neighbours in one phrase as one item. A threshold, not a share of each
  interview's words: a share spends flags on a clean interview and runs out on a bad one, and a
  threshold lists what the lowest words of the whole library would (benchmarks/review_quality.py,
  docs/findings.md) while one interview's list never depends on the others.
- "unwritten": speech the run heard where no word was written (Transcript.info "untranscribed").
- "speaker": a phrase whose voice is closer to another speaker's than to its own
  (Phrase.voices, measured by the run; igot.speakers.phrase_voices decides what is clear).
- "glossary": words close to a glossary term but written otherwise, offering the term.

An item is gone once accepted (its id in Transcript.reviewed) or fixed: a word item when its phrase
was corrected (a word there has Word.heard), a glossary item when its words were, a speaker item
when its phrase was remade by a correction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Iterable, Optional, Sequence

from igot.asr import glossary as terms_of
from igot.asr.transcribe import UNTRANSCRIBED
from igot.errors import IgotError
from igot.outputs import conflicts
from igot.speakers import phrase_voices
from igot.transcript import Transcript

KINDS = ("word", "unwritten", "speaker", "glossary")
REVIEWED_MAX = 20000  # accepted items kept in one interview: far more than an hour has


@dataclass(frozen=True)
class ReviewOptions:
    # A word is doubtful when the engine's probability for it is below this. Chosen on *tune* of
    # tests/data/recordings/split.json (0.05-0.95) by the F1 of the wrong words listed, the side's
    # recordings as one library (benchmarks/review_quality.py): 0.65 listed 11.8 % of tune's words,
    # recall 0.56 (a tenth of each interview: 0.41); on check, run once, recall 0.72 at 21.9 %.
    below: float = 0.65


@dataclass
class ReviewItem:
    id: str  # stable while the interview is not corrected there: what "accept" names
    kind: str  # one of KINDS
    start: float
    end: float
    text: str  # the words in doubt ("" where none were written)
    speaker: str  # who says it, as every page names them
    why: str  # one line for the researcher
    phrase: Optional[int] = None  # the phrase it is in
    first: Optional[int] = None  # its words in that phrase, first..last (word and glossary items)
    last: Optional[int] = None
    offer: Optional[str] = None  # a glossary term to write instead, or the speaker id it sounds like


class ReviewError(IgotError):
    status = 400


def items(t: Transcript, glossary: Sequence[str] = (), options: ReviewOptions = ReviewOptions()) -> list[ReviewItem]:
    """What is left to review in `t`, in the order said: every kind, less the accepted and fixed."""
    found = _doubtful_words(t, options) + _unwritten(t) + _other_voice(t) + _near_glossary(t, glossary)
    done = set(t.reviewed)
    return sorted((i for i in found if i.id not in done), key=lambda i: (i.start, KINDS.index(i.kind)))


def left(t: Transcript, glossary: Sequence[str] = (), options: ReviewOptions = ReviewOptions()) -> int:
    return len(items(t, glossary, options))


def accepted(t: Transcript, item_id: object, glossary: Sequence[str] = (), options: ReviewOptions = ReviewOptions()) -> Transcript:
    """`t` with the item `item_id` accepted as right (it leaves the list)."""
    if not isinstance(item_id, str) or not any(i.id == item_id for i in items(t, glossary, options)):
        raise ReviewError(f"There is no review item {str(item_id)[:60]!r} left in this interview.",
                          "Reload the page: it may have been fixed or accepted already.")
    return replace(t, reviewed=(t.reviewed + [item_id])[-REVIEWED_MAX:])


def touches(item_id: object, glossary: Sequence[str] = (), options: ReviewOptions = ReviewOptions()) -> conflicts.Touches:
    """What accepting item `item_id` touches, for an accept made on an older version of the
    interview (igot.outputs.store.Library.change): the phrase the item is in (found by its id, as
    `accepted` finds it) and how many phrases there are. An item gone since (fixed, or accepted by
    someone else) reads as None: the accept is refused, saying what the phrase reads now."""
    def phrase_of(t: Transcript) -> tuple[bool, Optional[int]]:
        found = next((i for i in items(t, glossary, options) if i.id == item_id), None)
        return found is not None, found.phrase if found is not None else None

    def reads(t: Transcript) -> object:
        there, k = phrase_of(t)
        return None if not there else conflicts.phrases_read([k] if k is not None else [])(t)

    def describe(base: Transcript, now: Transcript) -> conflicts.Conflict:
        _, k = phrase_of(base)
        indices = [k] if k is not None else []
        if conflicts.phrases_read(indices)(base) != conflicts.phrases_read(indices)(now):
            return conflicts.phrases_conflict(indices)(base, now)
        return conflicts.Conflict(f"review {item_id}", None, "", "This item was accepted or fixed since your page read "
                                                                 f"the interview. {conflicts.NOT_MADE}")

    return conflicts.Touches(reads, describe)


# --- each kind ------------------------------------------------------------------------------------
def _doubtful_words(t: Transcript, options: ReviewOptions) -> list[ReviewItem]:
    # A phrase the researcher corrected was read by them: its doubts are settled.
    corrected = {k for k, p in enumerate(t.phrases) if any(w.heard is not None for w in p.words)}
    flagged = [(k, i) for k, p in enumerate(t.phrases) if k not in corrected for i, w in enumerate(p.words)
               if w.probability is not None and w.probability < options.below]
    out: list[ReviewItem] = []
    for k, i in flagged:
        last = out[-1] if out else None
        if last is not None and last.phrase == k and last.last == i - 1:
            out[-1] = _word_item(t, k, last.first, i)
        else:
            out.append(_word_item(t, k, i, i))
    return out


def doubtful_words(found: Iterable[ReviewItem], options: ReviewOptions = ReviewOptions()) -> str:
    """How many words the list holds and why they are there, in one line for the page and the
    terminal: "12 words the recogniser was less than 40 % sure of."."""
    n = sum(i.last - i.first + 1 for i in found if i.kind == "word" and i.first is not None and i.last is not None)
    sure = f"the recogniser was less than {options.below:.0%} sure of".replace("%", " %")
    return f"{n} word{'' if n == 1 else 's'} {sure}." if n else f"No words left that {sure}."


def _word_item(t: Transcript, k: int, first: int, last: int) -> ReviewItem:
    p = t.phrases[k]
    words = p.words[first: last + 1]
    lowest = min(w.probability for w in words if w.probability is not None)
    return ReviewItem(f"word:{words[0].start:.2f}-{words[-1].end:.2f}", "word", words[0].start, words[-1].end,
                      " ".join(w.text for w in words), t.speaker_name(p.speaker),
                      f"The machine was unsure of {'this word' if first == last else 'these words'} "
                      f"(probability {lowest:.2f}).", k, first, last)


def _unwritten(t: Transcript) -> list[ReviewItem]:
    out = []
    holes = t.info.get(UNTRANSCRIBED)
    for hole in holes if isinstance(holes, list) else []:  # info is only loosely checked on loading
        start, end = (hole.get("start"), hole.get("end")) if isinstance(hole, dict) else (None, None)
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in (start, end)):
            continue
        k = t.phrase_at(start)
        out.append(ReviewItem(f"unwritten:{start:.2f}", "unwritten", float(start), float(end), "",
                              t.speaker_name(t.phrases[k].speaker) if k is not None else "",
                              f"Speech was heard here ({end - start:.0f} s) but no words were written.", k))
    return out


def _other_voice(t: Transcript) -> list[ReviewItem]:
    out = []
    ids = set(t.speaker_ids())
    for k, p in enumerate(t.phrases):
        other = phrase_voices.sounds_like(p)
        # voices measured before two speakers were made one name a speaker that is no more
        if other is None or other not in ids or not p.words:
            continue
        out.append(ReviewItem(f"speaker:{p.start:.2f}", "speaker", p.start, p.end, p.text, t.speaker_name(p.speaker),
                              f"This sounds more like {t.speaker_name(other)} than {t.speaker_name(p.speaker)}.",
                              k, 0, len(p.words) - 1, other))
    return out


def _near_glossary(t: Transcript, glossary: Sequence[str]) -> list[ReviewItem]:
    if not glossary:
        return []
    out = []
    for k, p in enumerate(t.phrases):
        for first, last, term in terms_of.near_misses([w.text for w in p.words], glossary):
            words = p.words[first: last + 1]
            if any(w.heard is not None for w in words):
                continue  # corrected by hand: the researcher has seen it
            out.append(ReviewItem(f"glossary:{words[0].start:.2f}:{term}", "glossary", words[0].start, words[-1].end,
                                  " ".join(w.text for w in words), t.speaker_name(p.speaker),
                                  f"Close to “{term}” in your glossary.", k, first, last, term))
    return out


def as_dicts(found: Iterable[ReviewItem]) -> list[dict]:
    from dataclasses import asdict

    return [asdict(i) for i in found]
