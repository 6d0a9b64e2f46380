"""Tags across the library: the board (every tag with how many highlights, interviews and
people), a tag's quotes from every interview, and those quotes as Markdown and CSV."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Optional, Sequence

from igot.outputs import export, highlights
from igot.outputs.library import Interview
from igot.text import clean_text, format_clock


@dataclass
class TagCount:
    tag: str
    highlights: int
    interviews: int
    people: int


@dataclass
class Quote:
    """One highlight under a tag, with where it is."""

    tag: str
    interview: str  # its name
    stem: str  # its JSON file's stem: the workspace's id for it
    date: str  # YYYY-MM-DD, when it was transcribed
    speaker: str  # the name shown ("" when never split by speaker)
    colour: int  # the speaker's colour in that interview (export.PALETTE)
    start: float
    end: float
    quote: str
    note: str
    highlight: str  # its id
    video: Optional[str]  # the web video at that moment, when there is one


def _person(iv: Interview, speaker_id: str) -> tuple[str, ...]:
    """Who a speaker is across the library: a name the user gave is one person everywhere;
    "Speaker 2" is someone else in every interview."""
    t = iv.transcript
    named = next((s for s in t.speakers if s.id == speaker_id), None)
    if named is not None and named.name != f"Speaker {speaker_id[1:]}":
        return (" ".join(named.name.split()).casefold(),)
    return (str(iv.path), speaker_id)


def board(interviews: Sequence[Interview]) -> list[TagCount]:
    """Every tag of the library, the most used first (then A to Z)."""
    seen: dict[str, dict] = {}
    for iv in interviews:
        for tag, items in highlights.by_tag(iv.transcript):
            row = seen.setdefault(highlights.tag_key(tag) if items[0].tags else "", {
                "tag": tag, "highlights": 0, "interviews": set(), "people": set()})
            row["highlights"] += len(items)
            row["interviews"].add(str(iv.path))
            row["people"].update(_person(iv, iv.transcript.highlight_speaker(h)) for h in items)
    rows = [TagCount(r["tag"], r["highlights"], len(r["interviews"]), len(r["people"])) for r in seen.values()]
    return sorted(rows, key=lambda r: (-r.highlights, r.tag.casefold()))


def quotes(interviews: Sequence[Interview], tag: str) -> list[Quote]:
    """Every highlight with `tag` (any case), interview by interview (newest first), in order of time.
    `tag` "" gives the untagged ones."""
    key = highlights.tag_key(tag)
    out = []
    for iv in interviews:
        t = iv.transcript
        ids = t.speaker_ids()
        for h in sorted(t.highlights or [], key=lambda h: h.start):
            if not (any(highlights.tag_key(x) == key for x in h.tags) if key else not h.tags):
                continue
            speaker = t.highlight_speaker(h)
            who = t.speaker_name(speaker) if (t.speakers or speaker) else ""
            out.append(Quote(tag, iv.name, iv.path.stem, iv.date.strftime("%Y-%m-%d"), who,
                             ids.index(speaker) if speaker in ids else 0, h.start, h.end, clean_text(h.quote), h.note,
                             h.id, export.highlight_link(t, h)))
    return out


def quotes_markdown(tag: str, found: Sequence[Quote]) -> str:
    """A tag's quotes as a Markdown page: one section per interview."""
    esc = export.md_text
    out = [f"# {esc(tag)}", "", f"{len(found)} highlight{'s' * (len(found) != 1)} in "
           f"{len({q.stem for q in found})} interview{'s' * (len({q.stem for q in found}) != 1)}.", ""]
    for stem in dict.fromkeys(q.stem for q in found):
        these = [q for q in found if q.stem == stem]
        out += [f"## {esc(these[0].interview)} ({these[0].date})", ""]
        for q in these:
            clock = f"[{format_clock(q.start)}]({export.md_url(q.video)})" if q.video else format_clock(q.start)
            who = f"{esc(q.speaker)}, " if q.speaker else ""
            note = f" _{esc(q.note)}_" if q.note else ""
            out.append(f"- “{esc(q.quote)}” — {who}{clock}{note}")
        out.append("")
    return "\n".join(out)


CSV_COLUMNS = ("tag", "interview", "date", "speaker", "time", "start_seconds", "end_seconds", "quote", "note", "video")


def quotes_csv(found: Sequence[Quote]) -> str:
    """A tag's quotes as CSV, one row per quote (a spreadsheet opens it as it is)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for q in found:
        writer.writerow([_cell(x) for x in (q.tag, q.interview, q.date, q.speaker, format_clock(q.start),
                                            f"{q.start:.2f}", f"{q.end:.2f}", q.quote, q.note, q.video or "")])
    return buffer.getvalue()


def _cell(text: str) -> str:
    """A spreadsheet runs a cell that starts with = + - @ as a formula: such text starts with '."""
    return f"'{text}" if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
