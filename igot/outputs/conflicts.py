"""What a change touches, and what is said when someone else changed that meanwhile.

In a team's library two people change one interview at once. Each change names the version of
the interview its page read (igot.outputs.store.Library.change). A change made on an older
version is still made when what it touches is as it was in that version: a `Touches` reads that
from a transcript, and the store compares what it reads in the version the page read with what it
reads now. When they differ, `conflict` says what changed (a short key and the thing as it is
now, for the page to show) and who changed it, when the interview itself can say (Edit.by).

The functions that make a Touches live next to the change they describe (corrections.touches,
highlights.touches_*, review.touches); the phrase's and the speakers' descriptions, which several
kinds of change share, are here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable, Optional, Sequence

from igot.text import typed_line
from igot.transcript import Edit, Transcript

FIX = "Reload the page to see it, then make your change again if it is still needed."
NOT_MADE = "Your change was not made."
BY_MAX = 100  # characters of a person's name kept in Edit.by and Highlight.by
QUOTE_MAX = 200  # characters of a phrase quoted in a message (the page shows it whole from `now`)
# Edit kinds that record no phrase of their own (igot.outputs.corrections): the history's cut, and a
# naming's record of the speakers' names.
_NO_PHRASE = ("forgotten",)


@dataclass(frozen=True)
class Conflict:
    """A change refused because what it touches was changed since its page read the interview."""

    thing: str  # a short key: "phrase 12" (its index), "highlight ab12cd", "speakers", "phrases", "corrections"
    now: Optional[dict]  # the thing as it is now (JSON-able), None when it is gone
    by: str  # who changed it, "" when the interview cannot say
    problem: str  # one line for the person whose change was refused


class Touches:
    """What a change touches: called on a transcript, it gives what the change reads of it (a
    value compared with ==: equal in the version the page read and now, the change is made on the
    interview as it is now). `conflict(base, now)` says what changed between them."""

    def __init__(self, reads: Callable[[Transcript], object],
                 describe: Optional[Callable[[Transcript, Transcript], Conflict]] = None) -> None:
        self.reads = reads
        self.describe = describe

    def __call__(self, t: Transcript) -> object:
        return self.reads(t)

    def conflict(self, base: Transcript, now: Transcript) -> Conflict:
        if self.describe is not None:
            return self.describe(base, now)
        return Conflict("interview", None, "", f"What this change touches was changed since your page read the "
                                               f"interview. {NOT_MADE}")


# A change that touches nothing another change can collide with (a new highlight: its own id).
NOTHING = Touches(lambda t: None)


def conflict_of(touches: Callable[[Transcript], object], base: Transcript, now: Transcript) -> Conflict:
    """What a `touches` (a Touches, or any plain function) says of the change between `base` and `now`."""
    if isinstance(touches, Touches):
        return touches.conflict(base, now)
    return Touches(touches).conflict(base, now)


def person(by: object) -> str:
    """A person's name as a change keeps it (Edit.by, Highlight.by): one line, bounded; "" for none."""
    return typed_line(by)[:BY_MAX] if isinstance(by, str) else ""


# --- words for a message ------------------------------------------------------------------------
def when(created: str, now: Optional[datetime] = None) -> str:
    """How long ago an ISO time was, as a message says it ("a moment ago", "5 minutes ago")."""
    try:
        then = datetime.fromisoformat(created.replace("Z", "+00:00"))
        if then.tzinfo is None:
            then = then.replace(tzinfo=timezone.utc)
    except (AttributeError, ValueError):
        return "since your page read it"
    seconds = ((now or datetime.now(timezone.utc)) - then).total_seconds()
    if seconds < 120:
        return "a moment ago"
    if seconds < 3600:
        return f"{int(seconds // 60)} minutes ago"
    return f"at {then.strftime('%H:%M')} UTC on {then.strftime('%Y-%m-%d')}"


def quoted(text: str) -> str:
    text = " ".join(text.split())
    return f"“{text if len(text) <= QUOTE_MAX else text[:QUOTE_MAX - 1] + '…'}”"


def new_edits(base: Transcript, now: Transcript) -> list[Edit]:
    """The corrections in `now`'s history that `base` did not have, oldest first."""
    known = {(e.id, e.kind, e.at, e.after) for e in base.edits}
    return [e for e in now.edits if (e.id, e.kind, e.at, e.after) not in known]


# --- phrases ------------------------------------------------------------------------------------
def phrase_state(t: Transcript, index: int, named: bool = False) -> Optional[dict]:
    """Phrase `index` as a change of it reads it (its words, speaker id and moment), JSON-able;
    None when there is no such phrase. `named`: with the speaker's name too, as a page shows it
    (not compared: naming the speakers does not collide with a correction of a phrase)."""
    if not 0 <= index < len(t.phrases):
        return None
    p = t.phrases[index]
    state = {"phrase": index, "text": p.text, "words": [w.text for w in p.words], "speaker": p.speaker,
             "start": p.start, "end": p.end}
    if named:
        state["speaker_name"] = t.speaker_name(p.speaker) if p.speaker else ""
    return state


def phrases_read(indices: Sequence[int]) -> Callable[[Transcript], object]:
    """What a change of phrases `indices` reads: those phrases and how many phrases there are
    (a split or join elsewhere moves every index after it: the change would land on another
    phrase, so it is refused)."""
    wanted = tuple(i for i in indices if isinstance(i, int) and not isinstance(i, bool))

    def reads(t: Transcript) -> object:
        return len(t.phrases), [phrase_state(t, i) for i in wanted]
    return reads


_MOVED = {"split": "split a phrase", "join": "joined two phrases", "names": "made two speakers one",
          "speaker": "gave some words of a phrase to another speaker", "words": "corrected a phrase"}


def phrases_conflict(indices: Sequence[int]) -> Callable[[Transcript, Transcript], Conflict]:
    """What is said when phrases `indices` (or the count of phrases) changed between the
    version read and now."""
    wanted = [i for i in indices if isinstance(i, int) and not isinstance(i, bool)]

    def describe(base: Transcript, now: Transcript) -> Conflict:
        made = new_edits(base, now)
        if len(base.phrases) != len(now.phrases):
            moved = [e for e in made if e.kind not in _NO_PHRASE and e.after != len(e.before)]
            last = moved[-1] if moved else None
            what = (f"{last.by} {_MOVED.get(last.kind, 'changed the phrases')} {when(last.created)}" if last and last.by
                    else "Phrases were split, joined or undone since your page read the interview")
            return Conflict("phrases", {"phrases": len(now.phrases)}, last.by if last else "",
                            f"{what}: the phrases after it moved, so your change could land on another phrase. "
                            f"{NOT_MADE}")
        i = next((i for i in wanted if phrase_state(base, i) != phrase_state(now, i)), wanted[0] if wanted else 0)
        state = phrase_state(now, i, named=True)
        # Who: the last correction made since that put this phrase where it is (its place as the
        # count did not change, indices did not move).
        last = next((e for e in reversed(made) if e.kind not in _NO_PHRASE and e.at <= i < e.at + e.after), None)
        who = last.by if last is not None else ""
        reads = "it is gone" if state is None else (
            f"it now reads {quoted(state['text'])}" + (f" ({state['speaker_name']})" if state["speaker_name"] else ""))
        head = (f"{who} changed this phrase {when(last.created)}" if who
                else "This phrase was changed since your page read it")
        return Conflict(f"phrase {i}", state, who, f"{head}: {reads}. {NOT_MADE}")
    return describe


def phrases_touched(indices: Sequence[int], speaker: object = None) -> Touches:
    """What a change of phrases `indices` touches (phrases_read); with `speaker`, also who that
    speaker id is (its name), for a change that gives the phrases to it."""
    reads, describe = phrases_read(indices), phrases_conflict(indices)
    if speaker is None:
        return Touches(reads, describe)

    def who(t: Transcript) -> object:
        return next((s.name for s in t.speakers if s.id == speaker), None)

    return Touches(lambda t: (reads(t), who(t)),
                   lambda base, now: describe(base, now) if reads(base) != reads(now) else speakers_conflict(base, now))


# --- the speakers ---------------------------------------------------------------------------------
def speakers_read(t: Transcript) -> object:
    """What naming the speakers reads: their ids and names (not the phrases: a correction of a
    phrase and a naming do not collide)."""
    return [(s.id, s.name) for s in t.speakers]


def speakers_conflict(base: Transcript, now: Transcript) -> Conflict:
    named = [e for e in new_edits(base, now) if e.speakers is not None]  # the edits that changed the speakers
    last = named[-1] if named else None
    who = last.by if last is not None else ""
    listed = ", ".join(f"{s.name} ({s.id})" for s in now.speakers) or "none"
    head = (f"{who} changed the speakers {when(last.created)}" if who
            else "The speakers were changed since your page read the interview")
    return Conflict("speakers", {"speakers": [{"id": s.id, "name": s.name} for s in now.speakers]}, who,
                    f"{head}: they are now {listed}. {NOT_MADE}")


SPEAKERS = Touches(speakers_read, speakers_conflict)


# --- the whole history (undo) -----------------------------------------------------------------------
def edits_read(t: Transcript) -> object:
    return [(e.id, e.kind, e.at, e.after) for e in t.edits]


def edits_conflict(base: Transcript, now: Transcript) -> Conflict:
    made = [e for e in new_edits(base, now) if e.kind not in _NO_PHRASE]
    last = made[-1] if made else None
    who = last.by if last is not None else ""
    if last is None:
        head = "A correction was undone since your page read the interview"
    elif who:
        head = f"{who} made a correction {when(last.created)}"
    else:
        head = "The interview was corrected since your page read it"
    after = now.edits[-1] if now.edits else None
    return Conflict("corrections", {"count": len(now.edits), "last": after.kind if after else None,
                                    "by": after.by if after else ""}, who,
                    f"{head}: Undo would now take back that one, not yours. Nothing was undone.")


EDITS = Touches(edits_read, edits_conflict)
