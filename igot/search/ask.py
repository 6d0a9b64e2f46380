"""Ask the library: the phrases that answer a question, then the local LLM's answer from them alone,
every point citing interview and time, each citation and quote checked against the transcripts.

The LLM reads the phrases numbered, "[3] Onboarding · Ana: …", and cites them by number.
A number that is not one of them is removed; a time written instead is matched to a phrase of the
interviews read (as the summary's times are); a quote is looked up in the transcripts with the
summary's own quote check, linked to where it was said, or kept and marked as not said.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional, Sequence

from igot.outputs import highlights
from igot.outputs.library import Interview
from igot.search import meaning
from igot.search.embed import Embedder
from igot.search.words import Hit
from igot.summary import summarize
from igot.text import clean_text, format_clock, shown

ASK_LIMIT = 12  # phrases the LLM reads: an answer's worth, and ~600 tokens of a small model's context
MAX_NEW_TOKENS = 384

ASK_PROMPT = """\
A product team asks a question about its user interviews. Below are the phrases of the interviews \
that may answer it, numbered, each with its interview and speaker.

Question: {question}

Phrases:
{phrases}

Answer the question using only these phrases, as a short bullet list, one "- " bullet per point. \
End every bullet with the numbers of the phrases it comes from in brackets, for example [2] or [1, 4]. \
Copy quotes word for word between quotation marks. If the phrases do not answer the question, say so \
in one bullet. Write in the language of the question."""

# [3], [1, 4], [2; 5]: the numbers of the phrases a point comes from.
REFERENCE = re.compile(r"\[\s*(\d{1,3}(?:\s*[,;]\s*\d{1,3})*)\s*\]")


@dataclass
class Moment:
    """Where a point's evidence was said: an interview's phrase, checked to exist."""

    interview: str  # its name
    phrase: int  # index into its phrases
    time: float  # seconds
    link: str  # the video at that second, else the transcript page there
    page: str  # the transcript page at that phrase


@dataclass
class AskPoint:
    text: str  # the LLM's words, references taken out (they are in `citations`)
    citations: list[Moment] = field(default_factory=list)
    unverified_quotes: list[str] = field(default_factory=list)  # quoted words nobody said in these interviews
    removed: list[str] = field(default_factory=list)  # references to no phrase read, as written


@dataclass
class Answer:
    question: str
    phrases: list[Hit]  # what answers it, best first: what the LLM read
    points: list[AskPoint] = field(default_factory=list)  # empty without an LLM
    model: Optional[str] = None  # the LLM that wrote the points


def find_phrases(interviews: list[Interview], question: str, embedder: Optional[Embedder],
                 index: Optional[meaning.MeaningIndex], speaker: str = "", interview: str = "",
                 limit: int = ASK_LIMIT, only: Optional[meaning.Only] = None) -> list[Hit]:
    """The phrases that answer the question, by words and by meaning together, the best `limit`
    (`only`: among those phrases, e.g. a tag's highlights)."""
    return meaning.search(interviews, question, embedder, index, speaker=speaker, interview=interview, limit=limit,
                          only=only)[:limit]


def tag_phrases(interviews: list[Interview], tag: str) -> meaning.Only:
    """The phrases inside the highlights with `tag` (any case), interview by interview (see meaning.Only)."""
    found = {iv.path: highlights.tagged_phrases(iv.transcript, tag) for iv in interviews}
    return {path: phrases for path, phrases in found.items() if phrases}


def render_phrases(phrases: Sequence[Hit]) -> str:
    """One line a phrase, by number, without its time: a time alone names no interview, and small
    models copy the lines they read (SmolLM2 wrote one phrase's time before another's words)."""
    return "\n".join(f"[{n}] {h.interview} · {h.speaker + ': ' if h.speaker else ''}{h.text}"
                     for n, h in enumerate(phrases, 1))


def ask_prompt(question: str, phrases: Sequence[Hit]) -> str:
    return ASK_PROMPT.replace("{question}", clean_text(question)).replace("{phrases}", render_phrases(phrases))


def answer(question: str, phrases: list[Hit], interviews: list[Interview], llm: Optional[summarize.LLM] = None,
           max_new_tokens: int = MAX_NEW_TOKENS) -> Answer:
    """The LLM's answer from `phrases` alone, checked; without an LLM (or phrases), the phrases alone."""
    if llm is None or not phrases:
        return Answer(question, phrases)
    text = llm.generate(ask_prompt(question, phrases), max_new_tokens)
    return Answer(question, phrases, check_answer(text, phrases, interviews), llm.name)


def check_answer(text: str, phrases: Sequence[Hit], interviews: Sequence[Interview]) -> list[AskPoint]:
    """The answer's bullets, each citation resolved to a phrase that exists, each quote looked up.
    A bullet written again word for word is kept once: small models loop (SmolLM2 repeats its
    last two bullets until it runs out of tokens)."""
    bullets = list(dict.fromkeys(summarize.parse_bullets(text)))
    return [check_point(bullet, phrases, interviews) for bullet in bullets]


def check_point(bullet: str, phrases: Sequence[Hit], interviews: Sequence[Interview]) -> AskPoint:
    by_page = {iv.page_uri: iv for iv in interviews}
    read = [(by_page.get(h.page.split("#")[0]), h) for h in phrases]
    citations: list[Moment] = []
    removed: list[str] = []
    for match in REFERENCE.finditer(bullet):
        for number in re.findall(r"\d+", match.group(1)):
            n = int(number)
            iv = read[n - 1][0] if 1 <= n <= len(read) else None
            if iv is None or read[n - 1][1].phrase >= len(iv.transcript.phrases):
                removed.append(f"[{number}]")
            else:
                _add(citations, _moment(iv, read[n - 1][1].phrase))
    for match in summarize.CITATION.finditer(bullet):  # a time written instead of a number
        for written in re.findall(summarize.TIME, match.group()):
            found = _at_time(written, [(iv, h) for iv, h in read if iv is not None])
            if found is None:
                removed.append(f"[{written}]")
            else:
                _add(citations, _moment(*found))
    text = _tidy(summarize.CITATION.sub("", REFERENCE.sub("", bullet)))
    unverified = []
    cited = _unique(by_page.get(c.page.split("#")[0]) for c in citations)
    read_too = _unique([*cited, *(iv for iv, _ in read)])
    for quote in _quotes(text):  # where the point says it comes from first, then the phrases read, then all
        found = _said(quote, text, read_too) or _said(quote, text, [iv for iv in interviews if all(iv is not r for r in read_too)])
        if found is None:
            unverified.append(quote)
        else:
            _add(citations, _moment(*found))
    return AskPoint(text, citations, unverified, removed)


def _unique(interviews) -> list[Interview]:
    """Without repeats or None, in order (an Interview is a dataclass: compared, never hashed)."""
    found: list[Interview] = []
    for iv in interviews:
        if iv is not None and all(iv is not f for f in found):
            found.append(iv)
    return found


def _quotes(text: str) -> list[str]:
    return [next(g for g in m.groups() if g is not None).strip() for m in summarize.QUOTE.finditer(text)]


def _said(quote: str, text: str, interviews: Sequence[Interview]) -> Optional[tuple[Interview, int]]:
    """Where the quote was said, by the speaker the point puts it in the mouth of when it names one."""
    for iv in interviews:
        speaker = dict(summarize.quotes_with_speakers(iv.transcript, text)).get(quote)
        index = summarize.find_quote(iv.transcript, quote, speaker)
        if index is not None:
            return iv, index
    return None


def _at_time(written: str, read: Sequence[tuple[Interview, Hit]]) -> Optional[tuple[Interview, int]]:
    """The phrase at a time written without its interview: a phrase read that was said then, else
    the first interview read with a phrase then."""
    seconds = summarize.parse_time(written)
    if seconds is None:
        return None
    at = [(iv, summarize.find_phrase(iv.transcript, seconds)) for iv in _unique(iv for iv, _ in read)]
    for iv, h in read:
        if any(iv is other and index == h.phrase for other, index in at):
            return iv, h.phrase
    return next(((iv, index) for iv, index in at if index is not None), None)


def _moment(iv: Interview, i: int) -> Moment:
    hit = meaning.phrase_hit(iv, i)
    return Moment(iv.name, i, hit.start, hit.link, hit.page)


def _add(citations: list[Moment], moment: Moment) -> None:
    if all((c.page, c.phrase) != (moment.page, moment.phrase) for c in citations):
        citations.append(moment)


def _tidy(text: str) -> str:
    text = re.sub(r"\s+([.,;:!?])", r"\1", clean_text(text))
    return re.sub(r"([.,;:])\1+", r"\1", text).strip(" ,;:-–—")


def answer_lines(a: Answer) -> list[str]:
    """The answer for a terminal: the points with their moments, then the phrases read (each line
    escaped: what the files hold may carry control characters)."""
    return [shown(line) for line in _answer_lines(a)]


def _answer_lines(a: Answer) -> list[str]:
    lines = []
    if a.points:
        lines.append(f"Answer ({a.model}, from the phrases below only; every moment checked):")
        for p in a.points:
            lines.append(f"- {p.text}")
            lines += [f"    {c.interview} · {format_clock(c.time)} · {c.link}" for c in p.citations]
            lines += [f"    \"{q}\": not said in these interviews" for q in p.unverified_quotes]
            if not p.citations:
                lines.append("    (cites no phrase: not backed by the interviews)")
        lines.append("")
    lines.append(f"Phrases that answer it ({len(a.phrases)}):" if a.phrases else "No phrase answers it.")
    lines += [f"[{n}] {h.interview} · {format_clock(h.start)} · {h.speaker + ': ' if h.speaker else ''}{h.text} · {h.link}"
              for n, h in enumerate(a.phrases, 1)]
    return lines
