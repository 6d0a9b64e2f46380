"""Search by words and by meaning together, over every interview of the library.

Words: the word search (igot.search.words.search), every query word in the phrase. Meaning:
the phrases whose vectors are nearest the question's (cosine), in any language the model knows.
The two rankings are merged by reciprocal rank fusion: a phrase's score is the sum over the
rankings it is in of 1 / (RRF_K + its rank there), so a phrase found both ways comes first and
neither way's scores need to be comparable.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Collection, Iterable, Mapping, Optional, Sequence, overload

import numpy as np

from igot.outputs import library
from igot.outputs.library import Interview
from igot.search import embed, words
from igot.search.embed import Embedder
from igot.search.words import Hit
from igot.text import clean_text

# The constant of Cormack, Clarke and Büttcher (SIGIR 2009), used as published: the retrieval set
# of benchmarks/search_quality.py is too small to tune it on.
RRF_K = 60
MEANING_LIMIT = 10  # phrases found by meaning that a search shows (the benchmark's Recall@10)

# The phrases a search is kept to: {an interview's JSON path: its phrase indexes, or None for all of
# them}; an interview not named is left out (the workspace's filters, a tag's highlights).
Only = Mapping[Path, Optional[Collection[int]]]


@dataclass
class MeaningIndex:
    """The phrase vectors of a library, one matrix for one matrix product a query."""

    model: str
    vectors: np.ndarray  # float32 (rows, dimension), every phrase of `interviews`
    owner: np.ndarray  # row -> index into `interviews`
    phrase: np.ndarray  # row -> index into that interview's phrases
    interviews: list[Interview] = field(default_factory=list)
    missing: list[Interview] = field(default_factory=list)  # no vectors of this model for their phrases: words only

    def missing_line(self) -> str:
        """One line for the interviews searched by words only; "" when there are none."""
        if not self.missing:
            return ""
        n = len(self.missing)
        return (f"{n} interview{'s are' if n != 1 else ' is'} searched by words only (no meaning index for {self.model}): "
                f"run igot index{' --embedding-model ' + self.model if self.model != embed.DEFAULT_EMBEDDING_MODEL else ''} once "
                "(it downloads the model the first time).")


def load_index(interviews: Iterable[Interview], model: str,
               load: Callable[[Path], Optional[embed.PhraseEmbeddings]] = embed.load_embeddings) -> MeaningIndex:
    """The vectors kept for each interview (igot index, or the run), where they are of `model` and
    of the phrases as they are now. `load`: how an interview's vectors are read (a server keeps them)."""
    kept, missing, blocks = [], [], []
    for iv in interviews:
        e = load(iv.path)
        if e is None or not e.matches(iv.transcript, model):
            missing.append(iv)
            continue
        kept.append(iv)
        blocks.append(e.vectors)
    dimension = blocks[0].shape[1] if blocks else 0
    vectors = np.concatenate(blocks) if blocks else np.zeros((0, dimension), np.float32)
    owner = np.concatenate([np.full(len(b), i, np.int32) for i, b in enumerate(blocks)]) if blocks else np.zeros(0, np.int32)
    phrase = np.concatenate([np.arange(len(b), dtype=np.int32) for b in blocks]) if blocks else np.zeros(0, np.int32)
    said = np.abs(vectors).sum(axis=1) > 0  # a phrase with no text has zeros: left out, never found
    return MeaningIndex(model, vectors[said], owner[said], phrase[said], kept, missing)


def index_library(interviews: Iterable[Interview], embedder: Embedder, progress: bool = False,
                  log: Callable[[str], None] = print) -> int:
    """`igot index`: the vectors of every interview that has none of this model, or stale ones
    (its phrases changed), computed and kept. Returns how many were made."""
    made = 0
    todo = [iv for iv in interviews if not ((e := embed.load_embeddings(iv.path)) and e.matches(iv.transcript, embedder.name))]
    for n, iv in enumerate(todo, 1):
        log(f"Meaning index: {iv.name} ({len(iv.transcript.phrases)} phrases, {n} of {len(todo)})")
        # A corrected interview: its unchanged phrases keep their vectors (read again: one at a time).
        earlier = embed.load_embeddings(iv.path)
        embed.save_embeddings(iv.path, embed.embed_phrases(iv.transcript, embedder, progress=progress, earlier=earlier))
        made += 1
    return made


def meaning_search(index: MeaningIndex, query_vector: np.ndarray, limit: int = MEANING_LIMIT, speaker: str = "",
                   interview: str = "", language: str = "", only: Optional[Only] = None) -> list[Hit]:
    """The `limit` phrases nearest the query, nearest first, among those the filters keep (the same
    filters as the word search)."""
    return [phrase_hit(iv, i, score) for iv, i, score in nearest(index, query_vector, limit, speaker, interview, language, only)]


def nearest(index: MeaningIndex, query_vector: np.ndarray, limit: int = MEANING_LIMIT, speaker: str = "",
            interview: str = "", language: str = "", only: Optional[Only] = None) -> list[tuple[Interview, int, float]]:
    """meaning_search() as (interview, phrase index, cosine), nothing made of them."""
    if not len(index.vectors) or limit <= 0:
        return []
    # einsum: one core and no BLAS threads, which would stay spinning after the product and slow
    # the next query's embedding 2-3 times (110 ms for 43, 280,000 phrases on 2 cores).
    scores = np.einsum("ij,j->i", index.vectors, query_vector.astype(np.float32))
    keep = _kept_rows(index, speaker, interview, language, only)
    if keep is not None:
        scores = np.where(keep, scores, -np.inf)
    top = min(limit, int(keep.sum()) if keep is not None else len(scores))
    if top <= 0:
        return []
    best = np.argpartition(-scores, top - 1)[:top]
    best = best[np.argsort(-scores[best], kind="stable")]
    return [(index.interviews[index.owner[r]], int(index.phrase[r]), float(scores[r])) for r in best]


def _kept_rows(index: MeaningIndex, speaker: str, interview: str, language: str, only: Optional[Only] = None) -> Optional[np.ndarray]:
    if not (speaker or interview or language or only is not None):
        return None
    want_speaker, want_interview = words.normalize(speaker), words.normalize(interview)
    keep = np.zeros(len(index.vectors), bool)
    for i, iv in enumerate(index.interviews):
        t = iv.transcript
        if (want_interview and want_interview not in words.normalize(iv.name)) or (language and (t.language or "") != language):
            continue
        if only is not None and iv.path not in only:
            continue
        rows = np.nonzero(index.owner == i)[0]
        if only is not None and only[iv.path] is not None:
            rows = rows[np.isin(index.phrase[rows], np.fromiter(only[iv.path], np.int64))]
        if want_speaker:
            ok = {s for s in {p.speaker for p in t.phrases} if want_speaker in f" {words.normalize(t.speaker_name(s))} "}
            rows = rows[np.array([t.phrases[j].speaker in ok for j in index.phrase[rows]], bool)] if len(rows) else rows
        keep[rows] = True
    return keep


def phrase_hit(iv: Interview, i: int, score: float = 0.0) -> Hit:
    """Phrase i of an interview as a hit found by meaning (nothing to highlight)."""
    t = iv.transcript
    p = t.phrases[i]
    return Hit(iv.name, words.search_names(iv)[p.speaker][0], p.start, clean_text(p.text), i, library.video_link(t, p.start),
               f"{iv.page_uri}#p-{i}", [], t.info.get("google_doc"), how="meaning", score=score)


# A phrase a search found: (its interview, its index there, found by "words", "meaning" or "both", score).
Found = tuple[Interview, int, str, float]


class Hits(Sequence[Hit]):
    """A search's phrases, best first, each made a Hit (its words marked, its links) only when read:
    a word said often is in thousands of phrases, and a page shows the first few hundred."""

    def __init__(self, found: list[Found], q: words.Query) -> None:
        self._found, self._q = found, q

    def __len__(self) -> int:
        return len(self._found)

    @overload
    def __getitem__(self, k: int) -> Hit: ...

    @overload
    def __getitem__(self, k: slice) -> list[Hit]: ...

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self._hit(f) for f in self._found[k]]
        return self._hit(self._found[k])

    def _hit(self, found: Found) -> Hit:
        iv, i, how, score = found
        if how == "meaning":
            return phrase_hit(iv, i, score)
        return replace(words.word_hit(iv, i, self._q), how=how, score=score)


def rank_words(word_found: list[tuple[Interview, int]], q: words.Query) -> list[tuple[Interview, int]]:
    """Word hits, those made most of the query's words first (the share of the phrase's letters
    that matched); the library's order among equals."""
    share = [words.word_share(iv, i, q) for iv, i in word_found]
    return [word_found[n] for n in sorted(range(len(word_found)), key=lambda n: -share[n])]


def fuse(word_found: list[tuple[Interview, int]], meaning_found: list[tuple[Interview, int, float]],
         q: words.Query, k: int = RRF_K) -> list[Found]:
    """Both rankings as one (reciprocal rank fusion), the word hits ranked by rank_words(); a phrase
    in both is one hit, marked "both"."""
    near = {(id(iv), i): rank for rank, (iv, i, _) in enumerate(meaning_found, 1)}
    fused = []
    for rank, (iv, i) in enumerate(rank_words(word_found, q), 1):
        also = near.pop((id(iv), i), None)
        fused.append((iv, i, "words" if also is None else "both", 1.0 / (k + rank) + (1.0 / (k + also) if also else 0.0)))
    fused += [(iv, i, "meaning", 1.0 / (k + rank)) for rank, (iv, i, _) in enumerate(meaning_found, 1) if (id(iv), i) in near]
    fused.sort(key=lambda found: -found[3])  # stable: among equals, words first, in their order
    return [(iv, i, how, round(score, 6)) for iv, i, how, score in fused]


def search(interviews: list[Interview], query: str, embedder: Optional[Embedder], index: Optional[MeaningIndex],
           speaker: str = "", interview: str = "", language: str = "", limit: int = MEANING_LIMIT,
           only: Optional[Only] = None) -> Hits:
    """Every word hit and the `limit` nearest phrases by meaning, merged; with no embedder or index,
    the word hits alone, in the library's order, as before. `only`: kept to those phrases (see Only)."""
    q = words.parse_query(query)
    by_words = word_matches(interviews, q, speaker, interview, language, only)
    if embedder is None or index is None or not len(index.vectors) or not clean_text(query):
        return Hits([(iv, i, "words", 0.0) for iv, i in by_words], q)
    near = nearest(index, embed.embed_query(query, embedder), limit, speaker, interview, language, only)
    return Hits(fuse(by_words, near, q), q)


def word_matches(interviews: list[Interview], q: words.Query, speaker: str = "", interview: str = "",
                 language: str = "", only: Optional[Only] = None) -> list[tuple[Interview, int]]:
    """The word search (words.matches), kept to the phrases of `only` when it is given."""
    found = words.matches(interviews, q, speaker=speaker, interview=interview, language=language)
    if only is None:
        return found
    return [(iv, i) for iv, i in found if iv.path in only and (only[iv.path] is None or i in only[iv.path])]
