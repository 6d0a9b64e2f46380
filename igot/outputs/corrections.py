"""Corrections the researcher makes to what the machine got wrong: a phrase's words, who said a
phrase (or some words of it), a phrase split or two joined, the speakers' names (two given one
name become one person). Each is a function from a transcript to the corrected transcript; each
is kept in the transcript's history (Transcript.edits) with what it replaced, so the last one can
be undone, and every corrected word keeps what the machine heard (Word.heard). Every naming comes
through `named` (the workspace, `igot rename`, the notebook's naming cell), so no writer changes
the phrases behind the history's back; the history is bounded in bytes (HISTORY_BYTES), and says
where it was cut.

What follows a correction, here: the phrases' times and texts, the highlights over the corrected
phrases (anchored by time: their quote and speaker are read again) and the summary's citations
(pointed at the phrase now said at their time). Everything made from the transcript (exports, the
library page, the search) follows through the store, which writes it all in one change.
"""

from __future__ import annotations

import difflib
import uuid
from dataclasses import replace
from datetime import datetime, timezone
from typing import Mapping, Optional, Sequence, Union

import orjson

from igot.errors import IgotError
from igot.links import link_at
from igot.outputs import conflicts
from igot.outputs import highlights as marks
from igot.speakers.phrases import name_speakers
from igot.text import join_words, typed_line
from igot.transcript import Edit, Phrase, Speaker, Transcript, Word

NEW_SPEAKER = "new"  # where a phrase may be given: a speaker of its own
PHRASE_MAX = 5000  # characters in one corrected phrase: a phrase, not a document
HISTORY_MAX = 200  # corrections kept to undo; older ones are forgotten (their words keep `heard`)
# The undo history's size in the interview's JSON, at most: the oldest corrections are forgotten
# beyond it. A correction of words keeps ~1-2 kB, a merge of speakers on an hour ~0.1 MB (the
# speaker and voices each phrase had); the whole hour is ~1.4 MB, and the file must stay readable.
HISTORY_BYTES = 256 * 1024
# Where the history was cut (an Edit of this kind, first in it): nothing before it can be undone.
FORGOTTEN = "forgotten"
# A part of a naming's record: the speaker and voices that phrases outside what it joined had,
# each phrase otherwise as it is now (Edit.before holds only those, without words).
NAMES_SPEAKERS = "names-speakers"


class CorrectionError(IgotError):
    """A correction that cannot be made as asked; `status` is its HTTP status in the workspace."""

    status = 400


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def _phrase_at(t: Transcript, index: object) -> Phrase:
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(t.phrases):
        raise CorrectionError(f"There is no phrase {index!r} in this interview ({len(t.phrases)} phrases).",
                              "Reload the page, then do it again.")
    return t.phrases[index]


def _word_at(p: Phrase, index: object, what: str) -> int:
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(p.words):
        raise CorrectionError(f"The phrase has no word {index!r} ({what}; it has {len(p.words)}).",
                              "Select words of the phrase, then do it again.")
    return index


def _made(t: Transcript, words: list[Word], speaker: str) -> Phrase:
    """A phrase of `words` said by `speaker`: its text, times and link from them."""
    words = [replace(w, speaker=speaker) for w in words]
    start = words[0].start
    link = link_at(t.source.url, t.source.kind, start) if any(p.link for p in t.phrases) else None
    return Phrase(speaker, start, words[-1].end, join_words(words, t.language), link, words)


def _recorded(t: Transcript, kind: str, at: int, removed: int, phrases: list[Phrase],
              speakers: Optional[list[Speaker]] = None, by: str = "") -> Transcript:
    """`t` with phrases[at:at + removed] replaced by `phrases`, the change kept in its history (made
    `by` that person), and what reads the phrases by time (highlights, summary citations) brought in step."""
    edit = Edit(uuid.uuid4().hex[:12], kind, at, [replace(p) for p in t.phrases[at:at + removed]], len(phrases),
                list(t.speakers) if speakers is not None else None, _now(), conflicts.person(by))
    changed = replace(t, phrases=t.phrases[:at] + phrases + t.phrases[at + removed:],
                      speakers=speakers if speakers is not None else t.speakers,
                      edits=history(t.edits + [edit]))
    return in_step(changed, changed.phrases[at].start if phrases else None, (phrases[-1].end if phrases else None))


def in_step(t: Transcript, start: Optional[float] = None, end: Optional[float] = None) -> Transcript:
    """The highlights between `start` and `end` (all when None) with their quote and speaker read
    again from the phrases now there; every summary citation pointed at the phrase said at its time."""
    def touched(h) -> bool:
        return start is None or end is None or (h.start <= end and h.end >= start)

    kept = None
    if t.highlights is not None:
        kept = []
        for h in t.highlights:
            if touched(h):
                at = t.phrase_at(h.start)
                h = replace(h, quote=marks.quote_between(t, h.start, h.end) or h.quote,
                            speaker=t.phrases[at].speaker if at is not None else h.speaker)
            kept.append(h)
    summary = [replace(point, citations=[replace(c, phrase=t.phrase_at(c.time)) if c.phrase is not None else c
                                          for c in point.citations]) for point in t.summary]
    return replace(t, highlights=kept, summary=summary)


# --- the words of a phrase ------------------------------------------------------------------------
def retimed(old: list[Word], texts: list[str]) -> list[Word]:
    """The words `texts` in place of `old`: a word kept keeps its time; a changed word keeps the
    time of the one it replaces; words added share the span of the words they stand among; words
    taken out go. What the machine heard stays with the words (Word.heard): a changed word keeps
    the word it replaced, an added one "" (nothing was heard there), and a word taken out is kept
    in the heard text of the word after it (or before it, at the end)."""
    out: list[Word] = []
    gone = ""  # words taken out, waiting for the next word to keep them
    matcher = difflib.SequenceMatcher(a=[w.text.casefold() for w in old], b=[x.casefold() for x in texts], autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        new = texts[b0:b1]
        machine = [w.heard if w.heard is not None else w.text for w in old[a0:a1]]
        if op == "equal":
            made = [replace(w, text=x) for w, x in zip(old[a0:a1], new)]
        elif op == "delete":
            gone = " ".join(x for x in [gone, *machine] if x)
            continue
        elif op == "replace" and a1 - a0 == b1 - b0:
            made = [replace(w, text=x, heard=h) for w, x, h in zip(old[a0:a1], new, machine)]
        else:
            # Several words for others, or words added: they share the span of those they replace,
            # else the gap (or the word) beside them.
            if a1 > a0:
                start, end = old[a0].start, old[a1 - 1].end
            else:
                before = out[-1] if out else None
                after = old[a0] if a0 < len(old) else None
                start = before.end if before else (after.start if after else 0.0)
                end = after.start if after else (before.end if before else 0.0)
                if end <= start and before is not None:  # no gap: the word before shares its own span
                    start, end = before.start, before.end
                    share = (end - start) / (len(new) + 1)
                    out[-1] = replace(before, end=round(start + share, 3))
                    start += share
            step = (end - start) / len(new)
            made = [Word(x, round(start + i * step, 3), round(start + (i + 1) * step, 3), heard=" ".join(machine) if i == 0 else "")
                    for i, x in enumerate(new)]
        if gone:
            first = made[0]
            made[0] = replace(first, heard=" ".join(x for x in [gone, first.heard if first.heard is not None else first.text] if x))
            gone = ""
        out += made
    if gone and out:
        last = out[-1]
        out[-1] = replace(last, heard=" ".join(x for x in [last.heard if last.heard is not None else last.text, gone] if x))
    return out


def corrected(t: Transcript, index: object, text: object, by: str = "") -> Transcript:
    """Phrase `index` as the researcher typed it (`by`: who, kept in the history; "" for one person)."""
    p = _phrase_at(t, index)
    if not isinstance(text, str):
        raise CorrectionError("The corrected phrase must be text.", "Type the words, then save.")
    text = typed_line(text)
    if not text:
        raise CorrectionError("The corrected phrase is empty.", "Type what was said, or give the phrase to another speaker.")
    if len(text) > PHRASE_MAX:
        raise CorrectionError(f"The corrected phrase is {len(text)} characters long.", f"Keep a phrase to {PHRASE_MAX} characters.")
    if text == typed_line(p.text):
        return t
    if p.words:
        words = retimed(p.words, text.split())
        phrase = replace(p, text=text, words=[replace(w, speaker=p.words[0].speaker) for w in words],
                         start=words[0].start, end=words[-1].end)
    else:
        phrase = replace(p, text=text)
    return _recorded(t, "words", index, 1, [phrase], by=by)


# --- who said it ------------------------------------------------------------------------------------
def _speaker(t: Transcript, speaker: object) -> tuple[str, Optional[list[Speaker]]]:
    """(the speaker id a phrase goes to, the speakers list when a new one was made)."""
    if speaker == NEW_SPEAKER:
        taken = {s.id for s in t.speakers} | {p.speaker for p in t.phrases}
        n = 1
        while f"S{n}" in taken:
            n += 1
        return f"S{n}", t.speakers + [Speaker(f"S{n}", f"Speaker {n}")]
    if not isinstance(speaker, str) or speaker not in {s.id for s in t.speakers} | {p.speaker for p in t.phrases}:
        raise CorrectionError(f"This interview has no speaker {speaker!r}.", "Choose a speaker from the list, or a new one.")
    return speaker, None


def given(t: Transcript, index: object, speaker: object, first: object = None, last: object = None,
          by: str = "") -> Transcript:
    """Phrase `index` (or its words `first` to `last`, an interjection inside it) said by `speaker`
    (an id, or NEW_SPEAKER): the words given become a phrase of their own, between what is left."""
    p = _phrase_at(t, index)
    sid, speakers = _speaker(t, speaker)
    if first is None and last is None:
        if sid == p.speaker:
            return t
        phrase = _made(t, p.words, sid) if p.words else replace(p, speaker=sid)
        if p.words:
            phrase = replace(phrase, text=p.text)  # the same words: the text as it was (punctuated, corrected)
        return _recorded(t, "speaker", index, 1, [phrase], speakers, by)
    a, b = _word_at(p, first, "first"), _word_at(p, last, "last")
    if b < a:
        a, b = b, a
    parts = [(p.words[:a], p.speaker), (p.words[a:b + 1], sid), (p.words[b + 1:], p.speaker)]
    phrases = [_made(t, words, who) for words, who in parts if words]
    if len(phrases) == 1 and phrases[0].speaker == p.speaker:
        return t
    return _recorded(t, "speaker", index, 1, phrases, speakers, by)


def split(t: Transcript, index: object, at_word: object, by: str = "") -> Transcript:
    """Phrase `index` cut in two before its word `at_word`."""
    p = _phrase_at(t, index)
    k = _word_at(p, at_word, "where to split")
    if k == 0:
        raise CorrectionError("A phrase is split before one of its words, not before the first.", "Choose a word inside the phrase.")
    return _recorded(t, "split", index, 1, [_made(t, p.words[:k], p.speaker), _made(t, p.words[k:], p.speaker)], by=by)


def joined(t: Transcript, index: object, by: str = "") -> Transcript:
    """Phrase `index` and the next one as one phrase, said by the first one's speaker."""
    p = _phrase_at(t, index)
    q = _phrase_at(t, index + 1 if isinstance(index, int) else index)
    if not (p.words and q.words):
        text = join_words([Word(p.text, 0, 0), Word(q.text, 0, 0)], t.language)
        return _recorded(t, "join", index, 2, [replace(p, text=text, end=max(p.end, q.end))], by=by)
    phrase = replace(_made(t, p.words + q.words, p.speaker), text=join_words([Word(p.text, 0, 0), Word(q.text, 0, 0)], t.language))
    return _recorded(t, "join", index, 2, [phrase], by=by)


def renamed(t: Transcript, names: Mapping[str, str], by: str = "") -> Transcript:
    """The speakers named ({speaker id: name}); two given one name become one person everywhere
    (igot.speakers.phrases.name_speakers, as `igot rename` does)."""
    if not isinstance(names, Mapping) or not names or not all(isinstance(k, str) and isinstance(v, str) for k, v in names.items()):
        raise CorrectionError("The names must be given as {speaker: name}.", "Type a name for each speaker you rename.")
    ids = {s.id for s in t.speakers}
    unknown = [k for k in names if k not in ids]
    if unknown:
        raise CorrectionError(f"This interview has no speaker {unknown[0]!r}.", "Reload the page, then name the speakers again.")
    return named(t, {k: v for k, v in names.items() if typed_line(v)}, by)


def named(t: Transcript, names: Union[Sequence[str], Mapping[str, str]], by: str = "") -> Transcript:
    """The speakers named as igot.speakers.phrases.name_speakers reads `names` ('Ana,Bruno' in
    order, or {'Speaker 2' / '2' / 'S2': name}), kept in the history like every correction: every
    way of naming (the workspace, `igot rename`, the notebook's naming cell) comes through here, so
    an earlier correction is never undone over phrases a merge made anew. A merge keeps only what
    it changed: the phrases it joined or cut, and the speaker and voices of the others (names_record)."""
    after = name_speakers(t, names)
    if after.phrases == t.phrases and after.speakers == t.speakers:
        return t
    return in_step(replace(after, edits=history(t.edits + names_record(t, after, by))))


def names_record(before: Transcript, after: Transcript, by: str = "") -> list[Edit]:
    """What undoes a naming of `before` into `after`, as one group of edits sharing an id (undone
    together), last the one of kind "names" holding the speakers before. Phrases the merge joined
    or cut are kept whole (an Edit each stretch, at its place in `after`); a phrase that only
    changed speaker or voices (a merged speaker's, or every one whose voices named the merged
    speaker; the ids renumbered) keeps those alone, without its words: on an hour a merge keeps
    ~0.1 MB rather than the ~1.4 MB of every phrase."""
    gid, now, by = uuid.uuid4().hex[:12], _now(), conflicts.person(by)
    old, new = before.phrases, after.phrases
    stretches: list[list[int]] = []  # [a0, a1, b0, b1]: old[a0:a1] became new[b0:b1]
    relabelled: list[tuple[int, Phrase]] = []  # (place in `after`, the speaker and voices it had)
    if old != new:
        key = lambda p: (p.start, p.end, p.text)  # noqa: E731  (what a merge leaves alone when it only renames)
        matcher = difflib.SequenceMatcher(a=[key(p) for p in old], b=[key(p) for p in new], autojunk=False)
        for op, a0, a1, b0, b1 in matcher.get_opcodes():
            if op != "equal":
                stretches.append([a0, a1, b0, b1])
                continue
            for i, j in zip(range(a0, a1), range(b0, b1)):
                o, n = old[i], new[j]
                if o is n or o == n:
                    continue
                had = Phrase(o.speaker, o.start, o.end, "", voices=dict(o.voices) if o.voices is not None else None)
                if _given_back(n, had) == o:
                    relabelled.append((j, had))
                elif stretches and stretches[-1][1] == i and stretches[-1][3] == j:
                    stretches[-1][1], stretches[-1][3] = i + 1, j + 1
                else:
                    stretches.append([i, i + 1, j, j + 1])
    edits = []
    for j, had in relabelled:  # runs of neighbours: one edit each, placed by `at`
        if edits and edits[-1].at + edits[-1].after == j:
            edits[-1].before.append(had)
            edits[-1].after += 1
        else:
            edits.append(Edit(gid, NAMES_SPEAKERS, j, [had], 1, None, now, by))
    edits += [Edit(gid, "names", b0, [replace(p) for p in old[a0:a1]], b1 - b0, None, now, by)
              for a0, a1, b0, b1 in stretches]
    return edits + [Edit(gid, "names", 0, [], 0, list(before.speakers), now, by)]


def _given_back(p: Phrase, had: Phrase) -> Phrase:
    """Phrase `p` with the speaker and voices it had (`had`), its words said by that speaker again."""
    return replace(p, speaker=had.speaker, voices=dict(had.voices) if had.voices is not None else None,
                   words=[replace(w, speaker=had.speaker) for w in p.words])


# --- the history: bounded, and undo -----------------------------------------------------------------
def _groups(edits: Sequence[Edit]) -> list[list[Edit]]:
    """The history as corrections: neighbouring edits that share an id are one (a naming's record)."""
    groups: list[list[Edit]] = []
    for e in edits:
        if groups and groups[-1][0].id == e.id:
            groups[-1].append(e)
        else:
            groups.append([e])
    return groups


def history(edits: list[Edit]) -> list[Edit]:
    """`edits` within HISTORY_MAX corrections and HISTORY_BYTES of JSON: the oldest forgotten
    first, and then a FORGOTTEN edit first in it, so Undo says why it goes no further. A correction
    larger than the bound alone is forgotten at once: it cannot be undone, and says so."""
    groups = _groups(edits)
    cut = bool(groups) and groups[0][0].kind == FORGOTTEN
    if cut:
        groups = groups[1:]
    sizes = [len(orjson.dumps(g)) for g in groups]
    total, first = sum(sizes), 0
    while first < len(groups) and (total > HISTORY_BYTES or len(groups) - first > HISTORY_MAX):
        total -= sizes[first]
        first += 1
    if first == 0 and not cut:
        return edits
    marker = [Edit(uuid.uuid4().hex[:12], FORGOTTEN, 0, created=_now())]
    return marker + [e for g in groups[first:] for e in g]


def undoable(t: Transcript) -> tuple[int, Optional[str]]:
    """(how many corrections Undo can take back, the kind of the last one)."""
    groups = [g for g in _groups(t.edits) if g[0].kind != FORGOTTEN]
    return len(groups), groups[-1][-1].kind if groups else None


def undone(t: Transcript) -> Transcript:
    """The transcript before its last correction (a naming's whole record at once)."""
    groups = _groups(t.edits)
    if not groups:
        raise CorrectionError("There is no correction to undo.", "")
    group = groups[-1]
    if group[0].kind == FORGOTTEN:
        raise CorrectionError("The corrections before this point were forgotten to keep the interview's file small "
                              "(or one was too large to keep): they cannot be undone.",
                              "Correct what is still wrong by hand.")
    phrases = list(t.phrases)
    # A naming's speakers and voices first (they change no phrase's place), then the phrases it
    # made anew, last first: each edit's place is in the transcript as the correction left it.
    for edit in group:
        if edit.kind == NAMES_SPEAKERS:
            if edit.at + len(edit.before) > len(phrases):
                raise _cannot_undo()
            phrases[edit.at:edit.at + len(edit.before)] = [
                _given_back(p, had) for p, had in zip(phrases[edit.at:edit.at + len(edit.before)], edit.before)]
    made = [e for e in group if e.kind != NAMES_SPEAKERS and not (e.kind == "names" and not e.before and not e.after)]
    if any(e.at + e.after > len(phrases) for e in made) or not _fits(made, [phrases[e.at:e.at + e.after] for e in made]):
        raise _cannot_undo()
    for edit in reversed(made):
        phrases[edit.at:edit.at + edit.after] = [replace(p) for p in edit.before]
    speakers = next((list(e.speakers) for e in reversed(group) if e.speakers is not None), t.speakers)
    back = replace(t, phrases=phrases, speakers=speakers, edits=t.edits[:len(t.edits) - len(group)])
    return in_step(back)


def _fits(edits: list[Edit], now: list[list[Phrase]]) -> bool:
    """Whether the phrases `now` at the places of `edits` (one correction's) are the ones it made:
    a file changed behind the history's back (an older iGot's rename joined phrases without
    keeping it) would have Undo put the edits' phrases over others, and their words would be lost.
    A split, a join, a phrase given to another speaker and a naming keep every word (its text and
    times; a naming's moved back-channel may cross from one of its stretches to another); a phrase
    whose words were corrected keeps its moment."""
    def said(phrases) -> list[tuple]:
        return sorted((w.text, w.start, w.end) for p in phrases for w in p.words)

    if not edits:
        return True
    if edits[0].kind in ("split", "join", "speaker", "names"):
        return said(p for region in now for p in region) == said(p for e in edits for p in e.before)
    for edit, region in zip(edits, now):
        if bool(region) != bool(edit.before):
            return False
        if region and not (min(p.start for p in region) <= max(p.end for p in edit.before)
                           and min(p.start for p in edit.before) <= max(p.end for p in region)):
            return False
    return True


def _cannot_undo() -> CorrectionError:
    return CorrectionError("The interview was changed since its last correction without it being kept in the history "
                           "(by an older iGot, or by hand), so undoing it could lose words: nothing was undone.",
                           "Correct what is still wrong by hand.")


def heard(p: Phrase) -> Optional[str]:
    """What the machine wrote for phrase `p`, when the researcher corrected it (None when not)."""
    if not any(w.heard is not None for w in p.words):
        return None
    return " ".join(w.heard if w.heard is not None else w.text for w in p.words if w.heard != "").strip()



KINDS = ("words", "speaker", "split", "join", "names", "undo")


def correction(t: Transcript, asked: Mapping[str, object], by: str = "") -> Transcript:
    """The correction a request asks for: {"kind": one of KINDS, and its fields}, made `by` that
    person (kept in the history: Edit.by; "" in a one-person library)."""
    kind = asked.get("kind")
    if kind == "words":
        return corrected(t, asked.get("phrase"), asked.get("text"), by)
    if kind == "speaker":
        return given(t, asked.get("phrase"), asked.get("speaker"), asked.get("first"), asked.get("last"), by)
    if kind == "split":
        return split(t, asked.get("phrase"), asked.get("word"), by)
    if kind == "join":
        return joined(t, asked.get("phrase"), by)
    if kind == "names":
        return renamed(t, asked.get("names"), by)
    if kind == "undo":
        return undone(t)
    raise CorrectionError(f"Unknown correction {kind!r}.", f"Ask for one of: {', '.join(KINDS)}.")


def touches(asked: Mapping[str, object]) -> conflicts.Touches:
    """What the correction `asked` (as `correction` reads it) touches, for a change made on an
    older version of the interview (igot.outputs.store.Library.change): made on the interview as it
    is now when that is as the person's page read it, refused otherwise.
    - "words", "speaker" (all of a phrase, or some of its words), "split": that phrase;
      "join": it and the next one; "speaker" also the name of the speaker it is given to. With them, how many phrases there are: a split or join
      elsewhere moves the indices, and the change could land on another phrase.
    - "names": the speakers' ids and names only (a correction of a phrase does not collide with it).
    - "undo": the whole history: undo takes back the interview's last correction, whoever made it,
      so any correction since refuses it.
    An unknown kind touches everything the history and phrases say: `correction` refuses it anyway."""
    kind = asked.get("kind")
    index = asked.get("phrase")
    if kind == "speaker" and asked.get("speaker") != NEW_SPEAKER:
        # Also who the speaker id given is: a naming that made two speakers one renumbers the ids,
        # and "S2" may now be someone else.
        return conflicts.phrases_touched([index] if isinstance(index, int) else [], speaker=asked.get("speaker"))
    if kind in ("words", "speaker", "split"):
        return conflicts.phrases_touched([index] if isinstance(index, int) else [])
    if kind == "join":
        return conflicts.phrases_touched([index, index + 1] if isinstance(index, int) and not isinstance(index, bool)
                                         else [])
    if kind == "names":
        return conflicts.SPEAKERS
    return conflicts.EDITS
