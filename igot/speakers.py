"""Words to speakers, then phrases: a phrase never mixes speakers, and speakers get names.

Speakers are numbered "Speaker 1", "Speaker 2" … in the order they first speak, so the
numbers read naturally in the document, and can be renamed without find-and-replace.
"""

from __future__ import annotations

import bisect
from dataclasses import replace
from typing import Mapping, Optional, Sequence, Union

from igot.errors import IgotError
from igot.links import link_at
from igot.transcript import Phrase, Speaker, SpeakerTurn, Transcript, Word

# Languages written without spaces between words: Whisper's words join with nothing.
NO_SPACE_LANGUAGES = {"zh", "ja", "th", "lo", "my", "yue", "bo"}


def join_words(words: Sequence[Word], language: Optional[str]) -> str:
    return ("" if language in NO_SPACE_LANGUAGES else " ").join(w.text for w in words).strip()


def ends_sentence(word: str) -> bool:
    return word.rstrip("\"'”’)»").endswith((".", "?", "!", "…", "。", "？", "！"))


def speaker_at(turns: Sequence[SpeakerTurn], starts: Sequence[float], start: float, end: float) -> Optional[str]:
    """The speaker who talks most during [start, end]; the nearest turn when none overlaps."""
    if not turns:
        return None
    i = bisect.bisect_right(starts, end)
    overlap: dict[str, float] = {}
    # Turns are sorted and barely overlap, so a few turns back is enough.
    for t in turns[max(0, i - 8): i]:
        o = min(end, t.end) - max(start, t.start)
        if o > 0:
            overlap[t.speaker] = overlap.get(t.speaker, 0.0) + o
    if overlap:
        return max(overlap, key=overlap.get)
    middle = (start + end) / 2
    nearest = [t for t in (turns[i - 1] if i > 0 else None, turns[i] if i < len(turns) else None) if t]
    return min(nearest, key=lambda t: min(abs(middle - t.start), abs(middle - t.end))).speaker


def assign_speakers(transcript: Transcript, turns: Sequence[SpeakerTurn]) -> Transcript:
    """Give every word a speaker and cut phrases where the speaker changes or a sentence ends.

    Whisper's segments can run 30 s and cross speakers; a phrase here is one sentence (or part
    of one) by one speaker, so each link lands close to what the reader clicked. Speakers are
    renumbered S1, S2 … in order of first appearance.
    """
    turns = sorted(turns, key=lambda t: t.start)
    starts = [t.start for t in turns]
    order: dict[str, str] = {}  # diarizer's id -> our id, in order of first appearance
    phrases: list[Phrase] = []
    for phrase in transcript.phrases:
        run: list[Word] = []
        for word in phrase.words:
            raw = speaker_at(turns, starts, word.start, word.end) or "1"
            speaker = order.setdefault(raw, f"S{len(order) + 1}")
            word = replace(word, speaker=speaker)
            if run and (run[-1].speaker != speaker or ends_sentence(run[-1].text)):
                phrases.append(_phrase(run, transcript.language))
                run = []
            run.append(word)
        if run:
            phrases.append(_phrase(run, transcript.language))
    speakers = [Speaker(sid, f"Speaker {sid[1:]}") for sid in order.values()]
    return replace(transcript, phrases=phrases, speakers=speakers, turns=list(turns))


def _phrase(words: list[Word], language: Optional[str]) -> Phrase:
    return Phrase(words[0].speaker or "", words[0].start, words[-1].end, join_words(words, language), words=words)


def parse_names(text: str) -> Union[list[str], dict[str, str]]:
    """'Ana,Bruno' -> ['Ana', 'Bruno']; 'Speaker 2=Bruno, 1=Ana' -> {'Speaker 2': 'Bruno', '1': 'Ana'}."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if any("=" in p for p in parts):
        pairs = [p.split("=", 1) for p in parts]
        if not all(len(p) == 2 and p[0].strip() and p[1].strip() for p in pairs):
            raise IgotError(f"Cannot read the speaker names '{text}'.", "Write them as 'Ana,Bruno' or 'Speaker 1=Ana,Speaker 2=Bruno'.")
        return {k.strip(): v.strip() for k, v in pairs}
    return parts


def name_speakers(transcript: Transcript, names: Union[Sequence[str], Mapping[str, str]]) -> Transcript:
    """Rename speakers by order ('Ana,Bruno') or by mapping ('Speaker 2' / '2' / 'S2' -> name)."""
    if isinstance(names, Mapping):
        by_key = {}
        for key, name in names.items():
            number = key.strip().lower().removeprefix("speaker").removeprefix("s").strip()
            if not number.isdigit():
                raise IgotError(f"Unknown speaker '{key}' in the names.", "Use 'Speaker 1=Ana' or '1=Ana'.")
            by_key[f"S{int(number)}"] = name
    else:
        by_key = {f"S{i + 1}": name for i, name in enumerate(names) if name.strip()}
    unknown = sorted(set(by_key) - {s.id for s in transcript.speakers})
    if unknown:
        found = len(transcript.speakers)
        raise IgotError(
            f"Names were given for {len(by_key)} speakers, but the interview has {found} ({', '.join(unknown)} not found).",
            "Give one name per speaker, in the order they first speak.",
        )
    speakers = [Speaker(s.id, by_key.get(s.id, s.name)) for s in transcript.speakers]
    return replace(transcript, speakers=speakers)


def add_links(transcript: Transcript) -> Transcript:
    """Point every phrase at its start in the video (no link for a local file without --video-url)."""
    source = transcript.source
    phrases = [replace(p, link=link_at(source.url, source.kind, p.start)) for p in transcript.phrases]
    return replace(transcript, phrases=phrases)
