"""What each workspace page shows, as plain data (JSON for the page's script): the library, an
interview with its player, a tag's quotes, search hits. Made from the library alone; no HTTP."""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path
from typing import Optional, Sequence
from urllib.parse import quote

from igot.links import youtube_id
from igot.outputs import corrections, export, highlights
from igot.outputs.library import Interview, Skipped
from igot.search.ask import Answer, Moment
from igot.search.meaning import Only
from igot.search.words import Hit, search_names
from igot.text import clean_text
from igot.transcript import Highlight, Phrase, Transcript
from igot.workspace import tags as tags_module
from igot.outputs.store import Opened
from igot.workspace.interviews import is_video, media_file

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
    return {
        "stem": opened.stem, "version": opened.version, "title": clean_text(t.source.title) or opened.stem,
        "language": t.language or "", "duration": t.length(), "created": t.info.get("created", ""),
        "player": player_of(opened, folder),
        "speakers": speakers_view(t),
        "phrases": phrases_view(t),
        # The summary as the exports show it: each point's pieces (a quote nobody said marked) and
        # the moments it cites, which the page plays.
        "summary": summary_view(t),
        "summary_note": export.SUMMARY_NOTE if export.from_model(export.summary_items(t, None)) else "",
        "corrections": corrections_view(t),
        "highlights": highlights_view(t),
        "files": {fmt: f"files/{quote(opened.stem)}.{fmt}" for fmt in ("html", "md", "json")
                  if opened.path.with_suffix(f".{fmt}").is_file()},
        **colours(),
    }


def speakers_view(t: Transcript) -> list[dict]:
    """The interview's speakers: id, the name every page shows, and colour (their place)."""
    known = {s.id: s for s in t.speakers}
    # "given": the name alone, without "(recognised)"; "recognised": a remembered voice's guess
    # that waits for the researcher to accept it (or to type another name)
    return [{"id": s, "name": t.speaker_name(s) if (t.speakers or s) else "", "colour": i,
             "given": known[s].name if s in known else "", "recognised": s in known and known[s].recognised}
            for i, s in enumerate(t.speaker_ids())]


def phrases_view(t: Transcript, start: int = 0, stop: Optional[int] = None) -> list[dict]:
    """Phrases start:stop with each word's place and time (what a selection is turned into times
    with), and what the machine heard where the researcher corrected them."""
    phrases = t.phrases[start:stop]
    words = highlights.phrase_words(replace(t, phrases=phrases))
    by_at = {e.at: e.by for e in t.edits if e.kind == "words" and e.by}  # who corrected the words there last
    return [{"speaker": p.speaker, "start": p.start, "end": p.end, "text": text,
             "words": [[round(s.c0), round(s.c1), round(s.start, 3), round(s.end, 3)] for s in spans],
             "heard": corrections.heard(p), "corrected_by": by_at.get(start + k, "") if corrections.heard(p) else ""}
            for k, (p, (text, spans)) in enumerate(zip(phrases, words))]


def corrections_view(t: Transcript) -> dict:
    """The researcher's corrections: how many, and the last one (what Undo takes back)."""
    count, last = corrections.undoable(t)  # a naming's record is several edits, undone as one
    return {"count": count, "last": last}


def correction_view(before: Transcript, opened: Opened) -> dict:
    """A correction's answer: what it changed of the interview's page (interview_view), for the page
    to patch what it shows. `replaced`: the page's phrases from `at`, `removed` of them, are now
    `phrases` (a split or a join changes their number; a merge of speakers, most of them); the
    speakers, highlights (their quotes follow the words) and corrections whole, and the version the
    next change names. The whole view of an hour was ~0.4 MB and ~0.2 s to make and send."""
    t = opened.transcript
    at, removed, added = changed_phrases(before.phrases, t.phrases)
    return {"version": opened.version, "duration": t.length(),
            "replaced": {"at": at, "removed": removed, "phrases": phrases_view(t, at, at + added)},
            "speakers": speakers_view(t), "highlights": highlights_view(t), "corrections": corrections_view(t),
            "merged": opened.merged}  # made over a teammate's newer change: the page reads the interview again


def changed_phrases(before: Sequence[Phrase], after: Sequence[Phrase]) -> tuple[int, int, int]:
    """(at, removed, added): `after` is `before` with before[at:at + removed] replaced by
    after[at:at + added], the phrases around them unchanged (a correction keeps those very objects)."""
    same = lambda a, b: a is b or a == b  # noqa: E731
    n = min(len(before), len(after))
    at = 0
    while at < n and same(before[at], after[at]):
        at += 1
    tail = 0
    while tail < n - at and same(before[-1 - tail], after[-1 - tail]):
        tail += 1
    return at, len(before) - at - tail, len(after) - at - tail


def summary_view(t: Transcript) -> list[dict]:
    """The interview's summary points: text pieces ([text, is a quote nobody said]) and cited times."""
    out = []
    for item in export.summary_items(t, None):
        if isinstance(item, str):
            out.append({"pieces": [[clean_text(item), False]], "times": []})
        else:
            out.append({"pieces": [[piece, flagged] for piece, flagged in export.point_segments(item)],
                        "times": [c.time for c in item.citations]})
    return out


def tag_view(interviews: Sequence[Interview], tag: str) -> dict:
    found = tags_module.quotes(interviews, tag)
    return {"tag": tag, "quotes": [asdict(q) for q in found],
            "interviews": len({q.stem for q in found}), **colours()}


def narrowed(interviews: Sequence[Interview], interview: str = "", speaker: str = "", tag: str = "") -> Optional[Only]:
    """The workspace's filters as the phrases a search is kept to (igot.search.meaning.Only): one
    interview (its stem), one speaker (the name as listed), the phrases a tag's highlights touch.
    None: no filter."""
    if not (interview or speaker or tag):
        return None
    only: dict = {}
    for iv in interviews:
        if interview and iv.path.stem != interview:
            continue
        t = iv.transcript
        allowed: Optional[set[int]] = highlights.tagged_phrases(t, tag) if tag else None
        if speaker:
            names = search_names(iv)  # the names as a hit shows them, once per speaker
            said = {i for i, p in enumerate(t.phrases) if names[p.speaker][0] == speaker}
            allowed = said if allowed is None else allowed & said
        if allowed is None or allowed:
            only[iv.path] = allowed
    return only


def hit_view(iv: Interview, h: Hit, ids: Sequence[str]) -> dict:
    """A phrase found (by words, meaning or both) as the page shows it: playable, linked to its
    interview; `ids`: the interview's speaker ids (their colours)."""
    p = iv.transcript.phrases[h.phrase]
    return {"stem": iv.path.stem, "interview": h.interview, "speaker": h.speaker,
            "colour": ids.index(p.speaker) if p.speaker in ids else 0, "start": h.start, "end": p.end,
            "text": h.text, "phrase": h.phrase, "marks": h.marks, "how": h.how}


def by_page(interviews: Sequence[Interview]) -> dict[str, Interview]:
    """The interviews by their page's address, as a hit names it (Hit.page before its #)."""
    return {iv.page_uri: iv for iv in interviews}


def hits_view(interviews: Sequence[Interview], hits: Sequence[Hit]) -> list[dict]:
    pages = by_page(interviews)
    ids: dict[str, list[str]] = {}  # each interview's speakers read once: it reads every phrase
    out = []
    for h in hits:
        iv = pages.get(h.page.split("#")[0])
        if iv is not None:
            if iv.page_uri not in ids:
                ids[iv.page_uri] = iv.transcript.speaker_ids()
            out.append(hit_view(iv, h, ids[iv.page_uri]))
    return out


def search_view(interviews: Sequence[Interview], query: str, hits: Sequence[Hit], meaning: bool, line: str) -> dict:
    """The library search (the same hits as `igot search`, found by words and meaning together);
    `line`: what meaning search needs, when it could not take part."""
    return {"query": query, "count": len(hits), "hits": hits_view(interviews, hits[:SEARCH_LIMIT]),
            "meaning": meaning, "line": line, **colours()}


def moment_view(pages: dict[str, Interview], c: Moment) -> dict:
    iv = pages.get(c.page.split("#")[0])
    t = iv.transcript if iv is not None else None
    p = t.phrases[c.phrase] if t is not None else None
    ids = t.speaker_ids() if t is not None else []
    return {"stem": iv.path.stem if iv is not None else "", "interview": c.interview, "phrase": c.phrase, "time": c.time,
            "link": c.link, "text": clean_text(p.text) if p is not None else "",
            "speaker": clean_text(t.speaker_name(p.speaker)) if p is not None and (t.speakers or p.speaker) else "",
            "colour": ids.index(p.speaker) if p is not None and p.speaker in ids else 0}


def answer_view(interviews: Sequence[Interview], a: Answer, line: str) -> dict:
    """Ask's answer: each point with its checked moments, quotes nobody said marked as such;
    `line`: why there is no written answer, when there is none."""
    pages = by_page(interviews)
    model = Path(a.model).name if a.model and Path(a.model).suffix == ".gguf" else a.model  # a file: its name, not where it is
    return {"question": a.question, "model": model, "line": line, "phrases": hits_view(interviews, a.phrases),
            "points": [{"text": p.text, "citations": [moment_view(pages, c) for c in p.citations],
                        "unverified": p.unverified_quotes, "removed": p.removed} for p in a.points],
            **colours()}


def speakers_of(interviews: Sequence[Interview]) -> list[str]:
    """Every speaker name in the library, A to Z (the search's speaker filter)."""
    return sorted({name for iv in interviews for name in iv.speaker_names()}, key=str.casefold)


def find_interview(interviews: Sequence[Interview], stem: str) -> Optional[Interview]:
    return next((iv for iv in interviews if iv.path.stem == stem), None)
