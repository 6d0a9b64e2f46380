"""The interview transcript: one data model that every stage reads and writes.

A `Transcript` saved as JSON is the contract between stages and exports: any stage can be
rerun, or any export made, from a saved file.
"""

from __future__ import annotations

import bisect
import json
import math
import sys
from dataclasses import asdict, dataclass, field, fields, replace
from itertools import repeat
from pathlib import Path
from typing import Any, Optional

import orjson

from igot.errors import install_hint
from igot.runtime.files import write_atomic

SCHEMA_VERSION = 3  # 2: highlights; 3: corrections (Word.heard, Transcript.edits). Older files load as they are.
# (Highlight.by and Edit.by, who made each, came later without a new version: a file without them
# loads with "", and an older iGot reading a file with them passes them over: _build.)


@dataclass
class Word:
    text: str
    start: float
    end: float
    speaker: Optional[str] = None  # speaker id, set by the words-to-speakers stage
    probability: Optional[float] = None
    heard: Optional[str] = None  # what the machine wrote, when the researcher corrected the word (else None)


@dataclass
class Phrase:
    """A run of words by one speaker; every phrase links to its moment in the video."""

    speaker: str  # speaker id ("" before diarization)
    start: float
    end: float
    text: str
    link: Optional[str] = None
    words: list[Word] = field(default_factory=list)
    # How close this phrase's voice is to each speaker's voice (cosine, speaker id: similarity),
    # measured by the run; None where the phrase is too short to tell, or was made by a correction.
    voices: Optional[dict[str, float]] = None


@dataclass
class Speaker:
    id: str  # stable id used by phrases, e.g. "S1"
    name: str  # what the reader sees, e.g. "Speaker 1" or "Ana"
    # The name came from a remembered voice (igot.speakers.voices) and waits for the user to accept or
    # change it; every page shows it as "Ana (recognised)" until then.
    recognised: bool = False


@dataclass
class SpeakerTurn:
    """A stretch of audio the diarizer gave to one speaker."""

    speaker: str
    start: float
    end: float


@dataclass
class Source:
    title: str
    url: Optional[str] = None  # canonical video URL that links point at; None for a local file
    path: Optional[str] = None  # local media file, when the interview came from disk
    kind: str = "file"  # "youtube", "vimeo", "media" (direct link), "web" (other yt-dlp site) or "file"


@dataclass
class Citation:
    """A moment of the interview that a summary point cites, checked to exist in the transcript."""

    time: float  # seconds: where the link opens the video
    link: Optional[str] = None  # None when the interview has no video URL
    phrase: Optional[int] = None  # index into Transcript.phrases of the phrase said then


@dataclass
class SummaryPoint:
    """One bullet of the summary, with its evidence: the moments it cites, the quotes nobody said."""

    text: str  # what the model wrote, its time citations taken out (they are in `citations`)
    citations: list[Citation] = field(default_factory=list)
    unverified_quotes: list[str] = field(default_factory=list)  # quoted words not found in the transcript
    removed_times: list[str] = field(default_factory=list)  # cited times with no phrase there, as written


@dataclass
class Highlight:
    """A moment the researcher marked: anchored by time, so it survives a re-run, a rename and a
    merge of speakers; it keeps the words and the speaker as they were when it was made."""

    id: str  # stable, unique in the interview: what the workspace edits and deletes by
    start: float  # seconds
    end: float
    quote: str  # the words highlighted, as they were read then
    speaker: str = ""  # speaker id at `start` when it was made (Transcript.highlight_speaker says who now)
    tags: list[str] = field(default_factory=list)
    note: str = ""
    created: str = ""  # ISO 8601, UTC
    by: str = ""  # who made it (their name in a team's library; "" in a one-person library)


@dataclass
class Edit:
    """One correction the researcher made, with what it replaced, so it can be undone: the phrases
    from `at` on that it took out (`before`), how many stand in their place now (`after`), and the
    speakers as they were when it changed them."""

    id: str
    kind: str  # "words", "speaker", "split", "join", "names"
    at: int  # index of the first phrase it changed
    before: list[Phrase] = field(default_factory=list)
    after: int = 0
    speakers: Optional[list[Speaker]] = None  # the speakers before, when it changed them
    created: str = ""  # ISO 8601, UTC
    by: str = ""  # who made it (their name in a team's library; "" in a one-person library)


@dataclass
class Transcript:
    source: Source
    language: Optional[str] = None
    duration: float = 0.0
    speakers: list[Speaker] = field(default_factory=list)
    phrases: list[Phrase] = field(default_factory=list)
    turns: list[SpeakerTurn] = field(default_factory=list)
    # How the transcript was made (engine, model, timings): for the reader of the JSON only.
    info: dict[str, Any] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION
    summary: list[SummaryPoint] = field(default_factory=list)  # empty until the summary stage runs
    # None: this transcript does not say (a run makes none), and saving it keeps those of the file
    # it replaces (igot.outputs.store); [] once every highlight was deleted.
    highlights: Optional[list[Highlight]] = None
    # The researcher's corrections, oldest first (what undo takes back, last first). A run makes none.
    edits: list[Edit] = field(default_factory=list)
    # The Review list's items the researcher accepted as right (igot.outputs.review item ids).
    reviewed: list[str] = field(default_factory=list)

    # --- helpers -----------------------------------------------------------------------------
    @property
    def words(self) -> list[Word]:
        """In reading order: a back-channel's words come after the sentence it interrupted."""
        return [w for p in self.phrases for w in p.words]

    def speaker_ids(self) -> list[str]:
        """Known speakers first, in their order, then any id only the phrases use (so each keeps
        its colour in every export)."""
        ids = [s.id for s in self.speakers]
        ids += dict.fromkeys(p.speaker for p in self.phrases if p.speaker not in ids)
        return ids

    def length(self) -> float:
        """Seconds of the recording; when unknown, up to the last phrase's end."""
        return self.duration or max((p.end for p in self.phrases), default=0.0)

    def speaker_name(self, speaker_id: str) -> str:
        """The name every page shows: a recognised name is marked until the user accepts it."""
        for s in self.speakers:
            if s.id == speaker_id:
                return f"{s.name} (recognised)" if s.recognised else s.name
        return speaker_id or "Unknown speaker"

    def phrase_at(self, seconds: float) -> Optional[int]:
        """The index of the phrase said at `seconds`; between phrases, the last one begun by then
        (else the first). None when there are no phrases."""
        before = None
        for i, p in enumerate(self.phrases):
            if p.start <= seconds < p.end:
                return i
            if p.start <= seconds and (before is None or p.start >= self.phrases[before].start):
                before = i
        return before if before is not None else (0 if self.phrases else None)

    def highlight_speaker(self, h: Highlight) -> str:
        """Who says a highlight now: its speaker id when it still exists, else (speakers merged
        since) the speaker of the phrase at its start."""
        if h.speaker in {s.id for s in self.speakers} or (not self.speakers and h.speaker):
            return h.speaker
        at = self.phrase_at(h.start)
        return self.phrases[at].speaker if at is not None else h.speaker

    # --- JSON ----------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        return json_lines(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Transcript":
        """The transcript in `data` (a JSON as read); ValueError saying what is wrong (problem())
        when it is not one, so no page ever meets a value of the wrong kind."""
        why = problem(data)
        if why:
            raise ValueError(why)
        return cls(
            source=_build(Source, data["source"]),
            language=data.get("language"),
            duration=float(data.get("duration", 0.0)),
            speakers=[_build(Speaker, s) for s in data.get("speakers", [])],
            phrases=[_phrase(p) for p in data.get("phrases", [])],
            turns=[_build(SpeakerTurn, t) for t in data.get("turns", [])],
            info=dict(data.get("info", {})),
            schema_version=SCHEMA_VERSION,
            # Files written before the summary existed have none: they load with an empty one.
            summary=[
                _build(SummaryPoint, {**s, "citations": [_build(Citation, c) for c in s.get("citations", [])]})
                for s in data.get("summary", [])
            ],
            # Files written before highlights existed have none (None: saving keeps the file's own).
            highlights=None if data.get("highlights") is None else [_build(Highlight, h) for h in data["highlights"]],
            edits=[_build(Edit, {**e, "before": [_phrase(p) for p in e.get("before", [])],
                                 "speakers": None if e.get("speakers") is None else [_build(Speaker, s) for s in e["speakers"]]})
                   for e in data.get("edits", [])],
            reviewed=list(data.get("reviewed", [])),
        )

    @classmethod
    def from_json(cls, text: str) -> "Transcript":
        try:
            data = orjson.loads(text)
        except orjson.JSONDecodeError:
            # orjson refuses NaN, Infinity and lone surrogates, which json reads: read so, problem()
            # names the value, as the library's listing does; JSON that is truly broken raises here.
            try:
                data = json.loads(text)
            except RecursionError:
                raise ValueError("it is nested thousands deep: not an interview") from None
        return cls.from_dict(data)

    def save(self, path: Path | str) -> None:
        """Write atomically, so an interrupted run never leaves half a file behind."""
        path = Path(path)
        write_atomic(path, self.to_json())

    @classmethod
    def load(cls, path: Path | str) -> "Transcript":
        return cls.from_json(Path(path).read_text(encoding="utf-8"))


@dataclass
class Diarization:
    """Who speaks when, on its own: a diarizer's turns, as the speaker step keeps them."""

    turns: list[SpeakerTurn] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)  # how they were found (the diarizer)

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, indent=1)

    @classmethod
    def from_json(cls, text: str) -> "Diarization":
        data = json.loads(text)
        return cls(turns=[_build(SpeakerTurn, t) for t in data["turns"]], info=dict(data.get("info", {})))

    def save(self, path: Path | str) -> None:
        write_atomic(Path(path), self.to_json())

    @classmethod
    def load(cls, path: Path | str) -> "Diarization":
        return cls.from_json(Path(path).read_text(encoding="utf-8"))



def in_said_order(words: list[Word]) -> list[Word]:
    """The words in the order they were decoded, their times made to follow that order. A word
    timer can give a word a time out of place (faster-whisper's cross-attention times, on some
    CPUs' kernels): every later stage that orders words by time would then move it ("and that's
    i think" for "and i think that's"). The words whose starts follow each other (the longest
    such run) keep their times; each word out of place is given a time between its neighbours
    (in proportion to its length, like its fellows), never moved. A quote never changes its
    words' order."""
    if len(words) < 2 or all(a.start <= b.start for a, b in zip(words, words[1:])):
        return words
    kept = set(_longest_rising([w.start for w in words]))
    out = list(words)
    i = 0
    while i < len(words):
        if i in kept:
            i += 1
            continue
        j = i
        while j < len(words) and j not in kept:
            j += 1
        run = words[i:j]  # out of place, between kept words i - 1 and j
        before = words[i - 1] if i > 0 else None
        after = words[j] if j < len(words) else None
        weights = [max(w.end - w.start, 0.01) for w in run]
        total = sum(weights)
        hi = after.start if after is not None else max(before.end, max(w.end for w in run))
        lo = before.end if before is not None else min(w.start for w in run)
        if lo >= hi:
            # No gap between the neighbours: the words keep their length, ending where the next
            # one starts (their middles stay before it: a selection from it does not take them).
            lo = max(before.start if before is not None else 0.0, hi - total)
        at = lo
        for k, (w, weight) in enumerate(zip(run, weights)):
            end = hi if k == len(run) - 1 else at + (hi - lo) * weight / total
            out[i + k] = replace(w, start=round(at, 3), end=round(max(at, end), 3))
            at = end
        i = j
    return out



def phrases_in_said_order(phrases: list[Phrase]) -> list[Phrase]:
    """`phrases` (in the order they were decoded) with their words' times made to follow that
    order (in_said_order, across phrases), each phrase spanning its words."""
    words = in_said_order([w for p in phrases for w in p.words])
    out, k = [], 0
    for p in phrases:
        mine, k = words[k:k + len(p.words)], k + len(p.words)
        out.append(replace(p, words=mine, start=mine[0].start, end=mine[-1].end) if mine and mine != p.words else p)
    return out

def _longest_rising(values: list[float]) -> list[int]:
    """The indices of a longest run of `values`, in order, that never goes down (patience sorting)."""
    tails: list[float] = []  # the smallest last value of a run of each length
    ends: list[int] = []  # its index
    back = [-1] * len(values)
    for i, v in enumerate(values):
        k = bisect.bisect_right(tails, v)
        if k == len(tails):
            tails.append(v)
            ends.append(i)
        else:
            tails[k], ends[k] = v, i
        back[i] = ends[k - 1] if k else -1
    found, i = [], ends[-1] if ends else -1
    while i >= 0:
        found.append(i)
        i = back[i]
    return found[::-1]

def json_lines(record: Any) -> str:
    """A dataclass as JSON, each field on a line and each item of a list field (a phrase, a turn, a
    highlight) on a line of its own: readable and diffable. orjson writes an hour's transcript in
    ~15 ms where json takes ~90 ms (with indent=, ~0.2 s): a highlight saved in the workspace
    writes the whole file."""
    rows = []
    for f in fields(record):
        value = getattr(record, f.name)
        if isinstance(value, list) and value:
            items = b",\n  ".join(orjson.dumps(item, option=orjson.OPT_SERIALIZE_NUMPY) for item in value)
            rows.append(b'"%s": [\n  %s\n ]' % (f.name.encode(), items))
        else:
            rows.append(b'"%s": %s' % (f.name.encode(), orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY)))
    return (b"{\n " + b",\n ".join(rows) + b"\n}\n").decode("utf-8")


def _phrase(data: dict[str, Any]) -> Phrase:
    return _build(Phrase, {**data, "words": [_build(Word, w) for w in data.get("words", [])]})


def _build(cls, data: dict[str, Any]):
    """Make a dataclass from a dict, ignoring keys a newer writer may have added."""
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})


# --- what a transcript JSON may hold ----------------------------------------------------------------
# An interview JSON may come from anyone (a shared Drive folder): problem() stands between such a
# file and every page, so that one wrong value is said about that file and never breaks another.

# How far a time may pass the recording's end: Whisper reads 30 s windows, and a time it guesses
# past the end stays inside the last one.
END_SLACK = 30.0
_LARGEST = 2**53  # beyond this an int has no exact float; no time or count in a transcript is near it
_DEEPEST = 64  # how deeply `info` may nest: iGot writes 3 levels; a file nested deeper was made up


class _Bounds:
    """What a field's check needs to know of the whole transcript."""

    def __init__(self, end: Optional[float], phrases: int) -> None:
        self.end = end  # the recording's length, None when unknown
        self.phrases = phrases  # how many phrases (what a citation may point at)


def _number(value: Any) -> bool:
    """A finite JSON number; True and False are not numbers here."""
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, int) and not isinstance(value, bool) and -_LARGEST <= value <= _LARGEST


def _valid_text(value: str) -> bool:
    """Text that can be written as UTF-8: json.loads lets a lone surrogate ("\\ud800") through."""
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _text(value: Any, at: _Bounds) -> Optional[str]:
    if not isinstance(value, str):
        return ""
    return None if _valid_text(value) else "not valid text"


def _text_or_none(value: Any, at: _Bounds) -> Optional[str]:
    return None if value is None else _text(value, at)


def _texts(value: Any, at: _Bounds) -> Optional[str]:
    if not isinstance(value, list):
        return "not a list"
    return next(("not a list of texts" for v in value if _text(v, at) is not None), None)


def _flag(value: Any, at: _Bounds) -> Optional[str]:
    return None if isinstance(value, bool) else ""


def _number_or_none(value: Any, at: _Bounds) -> Optional[str]:
    return None if value is None or _number(value) else ""


def _time(value: Any, at: _Bounds) -> Optional[str]:
    if not _number(value):
        return ""
    if value < 0:
        return "before the recording starts"
    if at.end is not None and value > at.end + END_SLACK:
        return f"past the recording's end at {at.end:g} s"
    return None


def _count(value: Any, at: _Bounds) -> Optional[str]:
    return None if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _LARGEST else ""


def _similarities(value: Any, at: _Bounds) -> Optional[str]:
    if value is None:
        return None
    if not isinstance(value, dict) or not all(isinstance(k, str) and _number(v) for k, v in value.items()):
        return "not speakers with a number each"
    return None


def _phrase_index(value: Any, at: _Bounds) -> Optional[str]:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        return ""
    return None if 0 <= value < at.phrases else f"there are {at.phrases} phrases"


# Each record's fields, as its dataclass above defines them: (check, required). A field that may be
# left out has a default there; one a newer iGot added is passed over (from_dict ignores it).
_SOURCE = {"title": (_text, True), "url": (_text_or_none, False), "path": (_text_or_none, False),
           "kind": (_text, False)}
_SPEAKER = {"id": (_text, True), "name": (_text, True), "recognised": (_flag, False)}
_WORD = {"text": (_text, True), "start": (_time, True), "end": (_time, True), "speaker": (_text_or_none, False),
         "probability": (_number_or_none, False), "heard": (_text_or_none, False)}
_PHRASE = {"speaker": (_text, True), "start": (_time, True), "end": (_time, True), "text": (_text, True),
           "link": (_text_or_none, False), "voices": (_similarities, False)}
_TURN = {"speaker": (_text, True), "start": (_time, True), "end": (_time, True)}
_CITATION = {"time": (_time, True), "link": (_text_or_none, False), "phrase": (_phrase_index, False)}
_POINT = {"text": (_text, True), "unverified_quotes": (_texts, False), "removed_times": (_texts, False)}
_EDIT = {"id": (_text, True), "kind": (_text, True), "at": (_count, True), "after": (_count, False),
         "created": (_text, False), "by": (_text, False)}
_HIGHLIGHT = {"id": (_text, True), "start": (_time, True), "end": (_time, True), "quote": (_text, True),
              "speaker": (_text, False), "tags": (_texts, False), "note": (_text, False), "created": (_text, False),
              "by": (_text, False)}


def _plain_word(w: Any, last: float) -> bool:
    """A word as iGot writes it, checked in one expression: an hour holds ~10,000 words, and
    _record() takes ~4 times as long over each. False sends it to _record() to say what is wrong."""
    if type(w) is not dict:
        return False
    text, start, end, speaker, p = w.get("text"), w.get("start"), w.get("end"), w.get("speaker"), w.get("probability")
    return (type(text) is str and (text.isascii() or _valid_text(text)) and type(start) is float and 0 <= start <= last
            and type(end) is float and 0 <= end <= last and (speaker is None or type(speaker) is str and speaker.isascii())
            and (p is None or type(p) is float and math.isfinite(p)) and _plain_heard(w.get("heard")))


def _plain_heard(heard: Any) -> bool:
    return heard is None or type(heard) is str and (heard.isascii() or _valid_text(heard))


def _shown(value: Any) -> str:
    """A value as a message quotes it: short, whatever a file holds."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _record(item: Any, spec: dict, what: str, at: _Bounds) -> Optional[str]:
    if not isinstance(item, dict):
        return f"{what} is {_shown(item)}, not an object"
    for key, (check, required) in spec.items():
        if key not in item:
            if required:
                return f"{what} has no {key}"
            continue
        why = check(item[key], at)
        if why is not None:
            article = "an" if key[0] in "aeiou" else "a"
            return f"{what} has {article} {key} of {_shown(item[key])}" + (f" ({why})" if why else "")
    return None


def _records(data: dict, key: str, spec: dict, what: str, at: _Bounds, whose: str = "its") -> tuple[list, Optional[str]]:
    """The list `data[key]` (empty when left out), and what is wrong with it or with one of its
    items (`what`: how an item is named, "{}" its number from 1)."""
    items = data.get(key, [])
    if not isinstance(items, list):
        return [], f"{whose} {key} are {_shown(items)}, not a list"
    for i, item in enumerate(items):
        why = _record(item, spec, what.format(i + 1), at)
        if why:
            return items, why
    return items, None


def _loose(info: dict) -> Optional[str]:
    """What in `info` (free-form: for the reader of the JSON) no page could show or send: a number
    that is not finite, text that is not text, nesting without end."""
    stack = [(info, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > _DEEPEST:
            return "its info is nested too deep"
        if isinstance(value, dict):
            for key, v in value.items():
                if not isinstance(key, str) or not _valid_text(key):
                    return "its info holds a name that is not valid text"
                stack.append((v, depth + 1))
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)
        elif isinstance(value, str):
            if not _valid_text(value):
                return "its info holds text that is not valid text"
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and not _number(value):
            return f"its info holds {_shown(value)}, not a finite number"
    return None


def problem(data: Any) -> Optional[str]:
    """What is wrong with an interview JSON (a dict as json.loads gives it), in words, e.g.
    "phrase 3 has a start of 'x'"; None when Transcript.from_dict can read it. Every field must
    be of the kind its dataclass says, every number finite, and every time inside the recording:
    from 0 to its duration (when known) and END_SLACK more. A word, phrase or turn may end before
    it starts (older iGot versions wrote such words); a highlight may not."""
    if not isinstance(data, dict):
        return "it is not an interview (a JSON object with a source and phrases)"
    version = data.get("schema_version", 0)
    if not isinstance(version, int) or isinstance(version, bool) or version < 0:
        return f"its schema_version is {_shown(version)}, not a version number"
    if version > SCHEMA_VERSION:
        return (f"transcript schema version {version} is newer than this iGot understands "
                f"({SCHEMA_VERSION}); upgrade iGot ({install_hint()})")
    if "source" not in data:
        return "it has no source (an older or hand-made file?)"
    duration = data.get("duration", 0.0)
    if not _number(duration) or duration < 0:
        return f"its duration is {_shown(duration)}, not a length in seconds"
    language = data.get("language")
    if language is not None and _text(language, _Bounds(None, 0)) is not None:
        return f"its language is {_shown(language)}, not a language code"
    phrases = data.get("phrases", [])
    at = _Bounds(float(duration) if duration > 0 else None, len(phrases) if isinstance(phrases, list) else 0)
    why = _record(data["source"], _SOURCE, "its source", at)
    if why:
        return why
    if "\x00" in (data["source"].get("path") or ""):
        return "its source has a path with a NUL character in it"
    _, why = _records(data, "speakers", _SPEAKER, "speaker {}", at)
    if why:
        return why
    phrases, why = _records(data, "phrases", _PHRASE, "phrase {}", at)
    if why:
        return why
    last = at.end + END_SLACK if at.end is not None else sys.float_info.max
    for i, p in enumerate(phrases):
        words = p.get("words", [])
        if not isinstance(words, list) or not all(map(_plain_word, words, repeat(last))):  # worded: only then
            why = _records(p, "words", _WORD, f"word {{}} of phrase {i + 1}", at, f"phrase {i + 1}'s")[1]
            if why:
                return why
    _, why = _records(data, "turns", _TURN, "speaker turn {}", at)
    if why:
        return why
    points, why = _records(data, "summary", _POINT, "summary point {}", at)
    if why:
        return why
    for i, point in enumerate(points):
        why = _records(point, "citations", _CITATION, f"citation {{}} of summary point {i + 1}", at,
                       f"summary point {i + 1}'s")[1]
        if why:
            return why
    if data.get("highlights") is not None:
        marks, why = _records(data, "highlights", _HIGHLIGHT, "highlight {}", at)
        bad = next((i for i, h in enumerate(marks) if h["start"] > h["end"]), None) if not why else None
        if bad is not None:
            why = f"highlight {bad + 1} ends before it starts ({marks[bad]['start']:g} s to {marks[bad]['end']:g} s)"
        if why:
            return f"its highlights are not in the form iGot writes: {why}"
    edits, why = _records(data, "edits", _EDIT, "correction {}", at)
    if why:
        return why
    for i, e in enumerate(edits):
        before, why = _records(e, "before", _PHRASE, f"phrase {{}} before correction {i + 1}", at, f"correction {i + 1}'s")
        for k, p in enumerate(before if not why else []):
            why = _records(p, "words", _WORD, f"word {{}} of phrase {k + 1} before correction {i + 1}", at)[1]
            if why:
                break
        if not why and e.get("speakers") is not None:
            why = _records(e, "speakers", _SPEAKER, f"speaker {{}} before correction {i + 1}", at, f"correction {i + 1}'s")[1]
        if why:
            return why
    if _texts(data.get("reviewed", []), at) is not None:
        return "its reviewed items are not a list of texts"
    info = data.get("info", {})
    if not isinstance(info, dict):
        return f"its info is {_shown(info)}, not an object"
    return _loose(info)
