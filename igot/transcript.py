"""The interview transcript: one data model that every stage reads and writes.

A `Transcript` saved as JSON is the contract between stages and exports: any stage can be
rerun, or any export made, from a saved file.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Optional

import orjson

from igot.errors import install_hint
from igot.runtime.files import write_atomic

SCHEMA_VERSION = 2  # 2: highlights (a file of version 1 has none and loads as it is)


@dataclass
class Word:
    text: str
    start: float
    end: float
    speaker: Optional[str] = None  # speaker id, set by the words-to-speakers stage
    probability: Optional[float] = None


@dataclass
class Phrase:
    """A run of words by one speaker; every phrase links to its moment in the video."""

    speaker: str  # speaker id ("" before diarization)
    start: float
    end: float
    text: str
    link: Optional[str] = None
    words: list[Word] = field(default_factory=list)


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
        version = data.get("schema_version", 0)
        if version > SCHEMA_VERSION:
            raise ValueError(
                f"transcript schema version {version} is newer than this iGot understands "
                f"({SCHEMA_VERSION}); upgrade iGot ({install_hint()})"
            )
        return cls(
            source=_build(Source, data["source"]),
            language=data.get("language"),
            duration=float(data.get("duration", 0.0)),
            speakers=[_build(Speaker, s) for s in data.get("speakers", [])],
            phrases=[
                _build(Phrase, {**p, "words": [_build(Word, w) for w in p.get("words", [])]})
                for p in data.get("phrases", [])
            ],
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
        )

    @classmethod
    def from_json(cls, text: str) -> "Transcript":
        return cls.from_dict(orjson.loads(text))

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


def _build(cls, data: dict[str, Any]):
    """Make a dataclass from a dict, ignoring keys a newer writer may have added."""
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})
