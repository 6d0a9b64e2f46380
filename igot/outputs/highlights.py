"""Highlights: moments of an interview a researcher marked, with tags and a note.

A highlight is anchored by time (start, end): the words it covers are those said between, found
again on every page, so it survives a re-run, a rename and a merge of speakers. Everything here
is a plain function of a Transcript; the exports, the workspace and the Google Doc share it.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import replace
from datetime import datetime, timezone
from typing import Optional, Sequence

import numpy as np

from igot.errors import IgotError
from igot.outputs import conflicts
from igot.outputs.spans import Span, phrase_spans
from igot.text import clean_text, typed_line, without_controls
from igot.transcript import Highlight, Transcript

# What one write may hold: long enough for any real use, short enough that a stray paste or a
# hostile page cannot bloat every export.
TAG_MAX = 60  # characters in a tag
TAGS_MAX = 20  # tags on one highlight
NOTE_MAX = 2000  # characters in a note
QUOTE_MAX = 20000  # characters a highlight may cover (about 40 minutes of speech)
TIME_SLACK = 0.5  # seconds past the recording's end a selection's last word may end
UNTAGGED = "Untagged"


class HighlightError(IgotError):
    """A highlight that cannot be kept as asked: the interview is left as it was."""


# --- tags -------------------------------------------------------------------------------------
def clean_tag(text: str) -> str:
    """A tag as kept: one line, single spaces, the case the user typed, no control characters or
    bidi marks (a tag from someone else's file too: it is compared and shown this way)."""
    return typed_line(str(text))


def tag_key(tag: str) -> str:
    """What makes two tags the same tag: 'Pricing ' and 'pricing' are one."""
    return clean_tag(tag).casefold()


def checked_tags(tags: object) -> list[str]:
    """The tags of a write (a list of strings), cleaned (control characters and bidi marks
    removed) and without repeats; HighlightError when they are not a list or one is unusable."""
    # Only a list: a JSON object or a string is iterable too, and would give its keys or letters as tags.
    if not isinstance(tags, (list, tuple)):
        kind = {dict: "an object", str: "a string", int: "a number", float: "a number"}.get(type(tags), type(tags).__name__)
        raise HighlightError(f"The tags must be a list of words, not {kind} ({str(tags)[:40]!r}).",
                             "Send them as a list, e.g. [\"pricing\"].")
    kept: dict[str, str] = {}
    for raw in tags:
        if not isinstance(raw, str):
            raise HighlightError(f"A tag must be text, not {raw!r}.", "Send each tag as a string, e.g. [\"pricing\"].")
        tag = clean_tag(raw)
        if not tag:
            continue
        if len(tag) > TAG_MAX:
            raise HighlightError(f"The tag '{tag[:40]}…' is {len(tag)} characters long.",
                                 f"Keep a tag to {TAG_MAX} characters; put the rest in the note.")
        # What cleaning leaves that still does not print (a zero-width space, a lone surrogate)
        # would make two tags that look the same differ.
        hidden = next((ch for ch in tag if not ch.isprintable()), None)
        if hidden is not None:
            raise HighlightError(f"The tag {tag!r} holds a character that does not print ({hidden!r}).",
                                 "Type the tag as plain words.")
        kept.setdefault(tag_key(tag), tag)
    if len(kept) > TAGS_MAX:
        raise HighlightError(f"{len(kept)} tags on one highlight.", f"Keep to {TAGS_MAX} tags.")
    return list(kept.values())


def checked_note(note: object) -> str:
    if note is None:
        return ""
    if not isinstance(note, str):
        raise HighlightError("The note must be text.", "Type the note as words.")
    # Lines and tabs are the note's own; any other control character only acts on a terminal.
    note = without_controls(note.replace("\r\n", "\n"), keep="\n\t").strip()
    if len(note) > NOTE_MAX:
        raise HighlightError(f"The note is {len(note)} characters long.", f"Keep a note to {NOTE_MAX} characters.")
    return note


# --- the words a highlight covers -------------------------------------------------------------
def _covered(span: Span, start: float, end: float) -> bool:
    """A word is in a highlight when the middle of it is said between the highlight's times."""
    middle = (span.start + span.end) / 2
    return start - 1e-3 <= middle <= end + 1e-3


def phrase_words(t: Transcript) -> list[tuple[str, list[Span]]]:
    """Each phrase's clean text and its words' places and times (what a page marks)."""
    out = []
    for p in t.phrases:
        text = clean_text(p.text)
        out.append((text, phrase_spans(p, text) if text else []))
    return out


def quote_between(t: Transcript, start: float, end: float) -> str:
    """The words said between `start` and `end`, phrase by phrase, in reading order (only the
    phrases said then are looked into: an hour has ~1,500)."""
    pieces = []
    for p in t.phrases:
        if p.start > end + 1e-3 or p.end < start - 1e-3:
            continue
        text = clean_text(p.text)
        inside = [s for s in (phrase_spans(p, text) if text else []) if _covered(s, start, end)]
        if inside:
            pieces.append(text[inside[0].c0:inside[-1].c1])
    return " ".join(pieces)


def marked(t: Transcript, words: Optional[list[tuple[str, list[Span]]]] = None) -> dict[int, list[tuple[int, int, list[Highlight]]]]:
    """{phrase index: [(first character, past the last, the highlights covering them)]}: runs of
    a phrase's clean text that highlights cover, words next to each other joined into one run."""
    highlights = t.highlights or []
    if not highlights:
        return {}
    out: dict[int, list[tuple[int, int, list[Highlight]]]] = {}
    for i, near in touching(t, highlights).items():
        # Only the phrases a highlight touches are looked at (an hour has ~1,500).
        p = t.phrases[i]
        text = clean_text(p.text)
        text, spans = words[i] if words is not None else (text, phrase_spans(p, text) if text else [])
        runs: list[tuple[int, int, list[Highlight]]] = []
        for s in spans:
            covering = [h for h in near if _covered(s, h.start, h.end)]
            if not covering:
                continue
            if runs and runs[-1][2] == covering and not text[runs[-1][1]:s.c0].strip():
                runs[-1] = (runs[-1][0], s.c1, covering)
            else:
                runs.append((s.c0, s.c1, covering))
        if runs:
            out[i] = runs
    return out


def touching(t: Transcript, highlights: Sequence[Highlight]) -> dict[int, list[Highlight]]:
    """{phrase index: the highlights whose time touches that phrase, in their order}, phrases in
    order; one array comparison per highlight, not one per phrase and highlight."""
    starts = np.fromiter((p.start for p in t.phrases), float, len(t.phrases))
    ends = np.fromiter((p.end for p in t.phrases), float, len(t.phrases))
    found: dict[int, list[Highlight]] = {}
    for h in highlights:
        for i in np.flatnonzero((starts <= h.end + 1e-3) & (ends >= h.start - 1e-3)):
            found.setdefault(int(i), []).append(h)
    return dict(sorted(found.items()))


def pieces(text: str, runs: Sequence[tuple[int, int, list[Highlight]]]) -> list[tuple[str, list[Highlight]]]:
    """`text` cut at the runs of marked(): (piece, the highlights covering it; [] for none)."""
    out, pos = [], 0
    for c0, c1, covering in runs:
        out += [(text[pos:c0], []), (text[c0:c1], covering)]
        pos = c1
    out.append((text[pos:], []))
    return [(piece, covering) for piece, covering in out if piece]


def by_tag(t: Transcript) -> list[tuple[str, list[Highlight]]]:
    """The highlights grouped by tag (a highlight with two tags is in both), tags A to Z, each
    group in order of time; untagged ones last."""
    groups: dict[str, tuple[str, list[Highlight]]] = {}
    for h in sorted(t.highlights or [], key=lambda h: (h.start, h.end)):
        for tag in h.tags or [""]:
            groups.setdefault(tag_key(tag), (clean_tag(tag), []))[1].append(h)
    keys = sorted((k for k in groups if k), key=str.casefold) + ([""] if "" in groups else [])
    return [(groups[k][0] or UNTAGGED, groups[k][1]) for k in keys]


def has_tag(h: Highlight, tag: str) -> bool:
    key = tag_key(tag)
    return any(tag_key(x) == key for x in h.tags)


def tagged_phrases(t: Transcript, tag: str) -> set[int]:
    """The phrases that a highlight with `tag` (any case) touches."""
    found: set[int] = set()
    for h in t.highlights or []:
        if has_tag(h, tag):
            found.update(i for i, p in enumerate(t.phrases) if p.start < h.end and p.end > h.start)
    return found


# --- changes ----------------------------------------------------------------------------------
def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def checked_times(t: Transcript, start: object, end: object) -> tuple[float, float]:
    """Times of a write, as numbers inside the recording; HighlightError when they are not."""
    try:
        start_s, end_s = float(start), float(end)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise HighlightError(f"The times {start!r} to {end!r} are not numbers of seconds.",
                             "Select the words to highlight again.") from None
    if not (math.isfinite(start_s) and math.isfinite(end_s)) or isinstance(start, bool) or isinstance(end, bool):
        raise HighlightError("The times are not numbers of seconds.", "Select the words to highlight again.")
    length = t.length()
    if start_s < 0 or end_s <= start_s or end_s > length + TIME_SLACK:
        raise HighlightError(f"{start_s:g} s to {end_s:g} s is not a stretch of this recording (0 to {length:g} s).",
                             "Select words of this interview's transcript.")
    return start_s, end_s


def new_highlight(t: Transcript, start: object, end: object, tags: Sequence[object] = (), note: object = "",
                  by: str = "") -> Highlight:
    """A highlight of the words said between `start` and `end`, checked: times inside the
    recording, words there, sane tags and note. `by`: who makes it ("" in a one-person library);
    it stays who made it when others edit it (who changed what is the activity log's)."""
    start_s, end_s = checked_times(t, start, end)
    quote = quote_between(t, start_s, end_s)
    if not quote:
        raise HighlightError(f"No words are said between {start_s:g} s and {end_s:g} s.", "Select words of the transcript.")
    if len(quote) > QUOTE_MAX:
        raise HighlightError(f"The selection is {len(quote)} characters long.", f"Highlight up to {QUOTE_MAX} characters at a time.")
    at = t.phrase_at(start_s)
    speaker = t.phrases[at].speaker if at is not None else ""
    return Highlight(uuid.uuid4().hex[:12], round(start_s, 3), round(end_s, 3), quote, speaker,
                     checked_tags(tags), checked_note(note), _now(), conflicts.person(by))


def find(t: Transcript, highlight_id: str) -> Highlight:
    for h in t.highlights or []:
        if h.id == highlight_id:
            return h
    raise HighlightError(f"No highlight {highlight_id!r} in this interview.",
                         "It was deleted, maybe in another tab: reload the page.")


def with_highlight(t: Transcript, h: Highlight) -> Transcript:
    """The transcript with `h` added, or in place of the one with its id; in order of time."""
    kept = [x for x in t.highlights or [] if x.id != h.id]
    return replace(t, highlights=sorted(kept + [h], key=lambda x: (x.start, x.end, x.id)))


def edited(t: Transcript, highlight_id: str, tags: Optional[Sequence[object]] = None, note: object = None) -> Transcript:
    """The transcript with one highlight's tags and/or note changed (None: left as it was)."""
    h = find(t, highlight_id)
    changed = replace(h, tags=checked_tags(tags) if tags is not None else h.tags,
                      note=checked_note(note) if note is not None else h.note)
    return with_highlight(t, changed)


def without_highlight(t: Transcript, highlight_id: str) -> Transcript:
    find(t, highlight_id)
    return replace(t, highlights=[h for h in t.highlights or [] if h.id != highlight_id])


# --- what each change touches (igot.outputs.conflicts): two people highlighting at once --------------
# Adding a highlight touches nothing another change can collide with: it has an id of its own, and
# its quote is read from the interview as it is when it is added.
TOUCHES_NEW = conflicts.NOTHING


def highlight_state(t: Transcript, highlight_id: str) -> Optional[dict]:
    """Highlight `highlight_id` as an edit or a deletion of it reads it (its tags, note and
    moment), JSON-able; None when it is gone. Not its quote and speaker: a correction of its words
    brings those in step, and does not collide with a new tag."""
    h = next((h for h in t.highlights or [] if h.id == highlight_id), None)
    if h is None:
        return None
    return {"id": h.id, "tags": list(h.tags), "note": h.note, "start": h.start, "end": h.end, "quote": h.quote,
            "by": h.by}


def _highlight_conflict(highlight_id: str):
    def describe(base: Transcript, now: Transcript) -> conflicts.Conflict:
        state = highlight_state(now, highlight_id)
        thing = f"highlight {highlight_id}"
        if state is None:
            return conflicts.Conflict(thing, None, "", f"This highlight was deleted since your page read it. "
                                                       f"{conflicts.NOT_MADE}")
        # Who edited it is not kept in the interview (Highlight.by is who made it): said as whose it is.
        whose = f"{state['by']}'s highlight" if state["by"] else "This highlight"
        tags = ", ".join(f"“{tag}”" for tag in state["tags"]) or "none"
        note = f", its note {conflicts.quoted(state['note'])}" if state["note"] else ", no note"
        return conflicts.Conflict(thing, state, "", f"{whose} {conflicts.quoted(state['quote'])} was changed since "
                                                    f"your page read it: its tags are now {tags}{note}. "
                                                    f"{conflicts.NOT_MADE}")
    return describe


def touches_highlight(highlight_id: str) -> conflicts.Touches:
    """What editing or deleting highlight `highlight_id` touches: that highlight (its tags, note,
    start and end; None once deleted)."""
    return conflicts.Touches(lambda t: _touched_state(t, highlight_id), _highlight_conflict(highlight_id))


def _touched_state(t: Transcript, highlight_id: str) -> object:
    state = highlight_state(t, highlight_id)
    return None if state is None else (state["tags"], state["note"], state["start"], state["end"])


def tags_renamed(t: Transcript, old: str, new: str) -> Optional[Transcript]:
    """The transcript with tag `old` called `new` (joined with `new` where a highlight has both);
    None when no highlight has `old`."""
    key = tag_key(old)
    if not any(tag_key(tag) == key for h in t.highlights or [] for tag in h.tags):
        return None
    new_tags = checked_tags([new])
    if not new_tags:
        raise HighlightError("The new tag name is empty.", "Type the name the tag should have.")
    new_tag = new_tags[0]
    changed = []
    for h in t.highlights or []:
        if any(tag_key(tag) == key for tag in h.tags):
            h = replace(h, tags=checked_tags([new_tag if tag_key(tag) == key else tag for tag in h.tags]))
        changed.append(h)
    return replace(t, highlights=changed)
