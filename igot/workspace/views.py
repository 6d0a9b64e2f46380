"""What each workspace page shows, as plain data (JSON for the page's script): the library, an
interview with its player, a tag's quotes, search hits. Made from the library alone; no HTTP."""

from __future__ import annotations

from dataclasses import asdict
from typing import Optional, Sequence
from urllib.parse import quote

from igot.links import youtube_id
from igot.outputs import export, highlights, library
from igot.outputs.library import Interview, Skipped
from igot.text import clean_text
from igot.transcript import Highlight, Transcript
from igot.workspace import tags as tags_module
from igot.workspace.interviews import Opened, is_video, media_file

SEARCH_LIMIT = 300  # hits shown at once; the count says how many more there are


def colours() -> dict:
    return {"palette": list(export.PALETTE), "borders": list(export.BORDERS)}


def library_view(interviews: Sequence[Interview], skipped: Sequence[Skipped]) -> dict:
    """The home page: interviews newest first, the files skipped with why, the tag board."""
    return {
        "interviews": [{
            "stem": iv.path.stem, "name": iv.name, "date": iv.date.strftime("%Y-%m-%d"),
            "language": iv.transcript.language or "", "duration": iv.transcript.length(),
            "speakers": iv.speaker_names(), "highlights": len(iv.transcript.highlights or []),
        } for iv in interviews],
        "skipped": [{"file": s.path.name, "why": s.why} for s in skipped],
        "tags": [asdict(row) for row in tags_module.board(interviews)],
        "languages": sorted({iv.transcript.language for iv in interviews if iv.transcript.language}),
        "people": speakers_of(interviews),
        **colours(),
    }


def player_of(opened: Opened, folder) -> dict:
    """How the page plays the interview: YouTube or Vimeo through their players, a local
    recording through the browser's own, or nothing to play."""
    source = opened.transcript.source
    if source.kind == "youtube" and source.url and youtube_id(source.url):
        return {"kind": "youtube", "id": youtube_id(source.url), "url": source.url}
    if source.kind == "vimeo" and source.url:
        return {"kind": "vimeo", "url": source.url}
    media = media_file(opened.transcript, folder)
    if media is not None:
        return {"kind": "video" if is_video(media) else "audio", "src": f"media/{quote(opened.stem)}"}
    if source.kind == "media" and source.url and export.safe_link(source.url):
        return {"kind": "video", "src": source.url, "external": True}
    return {"kind": "none", "url": export.safe_link(source.url)}


def highlights_view(t: Transcript) -> list[dict]:
    """The interview's highlights as the page shows them: who says each now, in their colour."""
    ids = t.speaker_ids()  # once: it reads every phrase

    def view(h: Highlight) -> dict:
        speaker = t.highlight_speaker(h)
        return {**asdict(h), "speaker_id": speaker, "speaker": t.speaker_name(speaker) if (t.speakers or speaker) else "",
                "colour": ids.index(speaker) if speaker in ids else 0}

    return [view(h) for h in t.highlights or []]


def interview_view(opened: Opened, folder) -> dict:
    """An interview page: its facts, player, speakers, phrases with each word's place and time
    (what a selection is turned into times with), and highlights."""
    t = opened.transcript
    ids = t.speaker_ids()
    words = highlights.phrase_words(t)
    return {
        "stem": opened.stem, "version": opened.version, "title": clean_text(t.source.title) or opened.stem,
        "language": t.language or "", "duration": t.length(), "created": t.info.get("created", ""),
        "player": player_of(opened, folder),
        "speakers": [{"id": s, "name": t.speaker_name(s) if (t.speakers or s) else "", "colour": i}
                     for i, s in enumerate(ids)],
        "phrases": [{"speaker": p.speaker, "start": p.start, "end": p.end, "text": text,
                     "words": [[round(s.c0), round(s.c1), round(s.start, 3), round(s.end, 3)] for s in spans]}
                    for p, (text, spans) in zip(t.phrases, words)],
        "highlights": highlights_view(t),
        "files": {fmt: f"files/{quote(opened.stem)}.{fmt}" for fmt in ("html", "md", "json")
                  if opened.path.with_suffix(f".{fmt}").is_file()},
        **colours(),
    }


def tag_view(interviews: Sequence[Interview], tag: str) -> dict:
    found = tags_module.quotes(interviews, tag)
    return {"tag": tag, "quotes": [asdict(q) for q in found],
            "interviews": len({q.stem for q in found}), **colours()}


def search_view(interviews: Sequence[Interview], query: str, interview: str = "", speaker: str = "",
                language: str = "", tag: str = "") -> dict:
    """The library search (the same hits as `igot search`), kept to one interview (its stem), one
    speaker (the name as listed), a language and the phrases a tag's highlights touch."""
    chosen = [iv for iv in interviews if not interview or iv.path.stem == interview]
    hits = []
    for iv in chosen:
        t = iv.transcript
        tagged = _tagged(t, tag) if tag else None
        ids = t.speaker_ids()
        for h in library.search([iv], query, language=language):
            if (tagged is not None and h.phrase not in tagged) or (speaker and h.speaker != speaker):
                continue
            p = t.phrases[h.phrase]
            hits.append({"stem": iv.path.stem, "interview": h.interview, "speaker": h.speaker,
                         "colour": ids.index(p.speaker) if p.speaker in ids else 0, "start": h.start, "end": p.end,
                         "text": h.text, "phrase": h.phrase, "marks": h.marks})
    return {"query": query, "count": len(hits), "hits": hits[:SEARCH_LIMIT], **colours()}


def _tagged(t: Transcript, tag: str) -> set[int]:
    """The phrases that a highlight with `tag` touches."""
    key = highlights.tag_key(tag)
    found = set()
    for h in t.highlights or []:
        if any(highlights.tag_key(x) == key for x in h.tags):
            found.update(i for i, p in enumerate(t.phrases) if p.start < h.end and p.end > h.start)
    return found


def speakers_of(interviews: Sequence[Interview]) -> list[str]:
    """Every speaker name in the library, A to Z (the search's speaker filter)."""
    return sorted({name for iv in interviews for name in iv.speaker_names()}, key=str.casefold)


def find_interview(interviews: Sequence[Interview], stem: str) -> Optional[Interview]:
    return next((iv for iv in interviews if iv.path.stem == stem), None)
