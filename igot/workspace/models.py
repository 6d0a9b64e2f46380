"""The models behind the workspace's search, Ask, Themes and summaries, each loaded once per server,
the first time a page needs it (the server starts without them): the embedding model of search by
meaning and the LLM that writes Ask's answers and an interview's summary done again. They come from
the one model pool the queue's runs load theirs into (igot.pipeline.models): the LLM a queued run
loaded for its summary is the one Ask uses, and the other way round. Searching, asking and grouping
are igot.search's own functions (the same hits as `igot search`, the same checked answers as `igot
ask`); this only keeps what they read: the library's meaning index while its files are unchanged,
and which model each is (chosen once, here).
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence

import numpy as np

from igot.errors import IgotError
from igot.outputs.library import Interview
from igot.pipeline.models import Models as Pool
from igot.runtime import hub
from igot.runtime.devices import pick_device
from igot.search import ask, commands, embed, meaning
from igot.transcript import Transcript
from igot.search.embed import Embedder
from igot.search.meaning import MeaningIndex
from igot.search.words import Hit
from igot.summary import summarize

KEEP_QUOTE_VECTORS = 5000  # highlight quotes' vectors kept for the Themes board (~8 MB)


@dataclass
class Found:
    """A search's hits, and one line on what meaning search needs ("" when it took part)."""

    hits: list[Hit]
    meaning: bool  # whether meaning took part
    line: str


def indexed_model(interviews: Sequence[Interview], load: Callable[[Path], Optional[embed.PhraseEmbeddings]] = embed.load_embeddings) -> Optional[str]:
    """The model most of the library's interviews were embedded with (`igot index` or the run)."""
    models = Counter(e.model for iv in interviews if (e := load(iv.path)) is not None)
    return models.most_common(1)[0][0] if models else None


class Models:
    """The workspace's models for one library folder, taken from `pool` (None: a pool of its own,
    models kept). `embedding_model`: hub id or folder (None: the one the library was indexed with,
    else iGot's default); `llm_model`: the LLM that writes Ask's answers (None: iGot's default for
    the device, chosen here once); `use_llm` False: phrases alone; `device`: where both load ("auto":
    a GPU when there is one, chosen here once; the queue's runs on the same device share them);
    `answer_tokens`: the longest answer, in tokens; `llm`: one already loaded (the notebook's), kept
    in the pool as the one its name loads."""

    def __init__(self, folder: Path, embedding_model: Optional[str] = None, llm_model: Optional[str] = None,
                 use_llm: bool = True, device: str = "cpu", answer_tokens: int = ask.MAX_NEW_TOKENS, llm: Any = None,
                 pool: Optional[Pool] = None) -> None:
        self.folder = Path(folder)
        self.embedding_model = embedding_model
        self.device = pick_device(device)
        self.pool = pool or Pool(keep=True)
        if llm is not None:
            self.pool.keep_llm(llm, self.device)
        self.llm_model = llm.name if llm is not None else llm_model or summarize.default_llm(self.device)
        self.use_llm = use_llm
        self.answer_tokens = answer_tokens  # the longest answer written, in tokens
        self.hub = hub.Hub()  # asked once, the first time a model is not in the local cache
        self._lock = threading.Lock()  # one load, one query at a time (the models are not shared safely)
        self._llm_lock = threading.Lock()  # one answer written at a time: it holds the CPU for seconds
        self._summary_lock = threading.Lock()  # one summary written at a time: it holds the CPU for minutes
        # Each model's choice, made the first time it is needed: whether it loads from the local cache
        # only (hub.from_cache), or the line saying why it cannot load. The model itself stays in the
        # pool, which may free it for room on a GPU and load it again.
        self._offline: dict[str, bool] = {}  # by model name
        self._embedder_line: dict[str, str] = {}  # by model name
        self._llm_line = ""  # Ask's line when the LLM cannot load ("": none said)
        if llm is not None:
            self._offline[self.llm_model] = False  # it is here
        self._index: Optional[tuple[Any, tuple, MeaningIndex]] = None  # (interviews, embeddings' stamp, index)
        self._quote_vectors: dict[tuple[str, str], np.ndarray] = {}
        self._vectors: dict[Path, tuple[tuple, Optional[embed.PhraseEmbeddings]]] = {}  # by file: (its time and size, vectors)

    # --- search by meaning ----------------------------------------------------------------------
    def model_name(self, interviews: Sequence[Interview]) -> str:
        return self.embedding_model or indexed_model(interviews, self._vectors_of) or embed.DEFAULT_EMBEDDING_MODEL

    def _stamp(self) -> tuple:
        folder = self.folder / embed.EMBEDDINGS_FOLDER
        try:
            with os.scandir(folder) as entries:
                return tuple(sorted((e.name, e.stat().st_mtime_ns, e.stat().st_size) for e in entries if e.name.endswith(".json")))
        except OSError:
            return ()

    def meaning_parts(self, interviews: list[Interview]) -> tuple[Optional[Embedder], Optional[MeaningIndex], str]:
        """(embedder, index, line): the model and the vectors kept for these interviews, or Nones
        with one line saying what meaning search needs. The index is read again only when the
        interviews or their kept vectors changed; the model is loaded the first time only."""
        with self._lock:
            stamp = self._stamp()
            if self._index is None or self._index[0] is not interviews or self._index[1] != stamp:
                # which model: read again only when the kept vectors changed (a highlight saved changes
                # the interviews, not their vectors)
                name = self._index[2].model if self._index is not None and self._index[1] == stamp else self.model_name(interviews)
                self._index = (interviews, stamp, meaning.load_index(interviews, name, self._vectors_of))
            index = self._index[2]
            if not len(index.vectors):
                return None, None, index.missing_line() if interviews else ""
            embedder = self._load_embedder(index.model)
            if embedder is None:
                return None, None, self._embedder_line[index.model]
            return embedder, index, index.missing_line()

    def _vectors_of(self, interview_json: Path) -> Optional[embed.PhraseEmbeddings]:
        """An interview's kept vectors, read again only when their file changed: a highlight saved
        changes the interview's JSON, not its phrases (an hour's vectors take ~20 ms to read)."""
        path = embed.embeddings_path(interview_json)
        try:
            st = path.stat()
        except OSError:
            self._vectors.pop(path, None)
            return None
        kept = self._vectors.get(path)
        if kept is None or kept[0] != (st.st_mtime_ns, st.st_size):
            kept = self._vectors[path] = ((st.st_mtime_ns, st.st_size), embed.load_embeddings_file(path))
        return kept[1]

    def _load_embedder(self, name: str) -> Optional[Embedder]:
        if name in self._embedder_line:
            return None
        if name in self._offline:
            return self.pool.embedder(name, self.device, self._offline[name])
        said: list[str] = []
        embedder = commands.embedder_for(name, self.device, said.append, self._chosen(self.pool.embedder), self.hub)
        if embedder is None:
            self._embedder_line[name] = said[0] if said else f"The embedding model {name} could not be loaded."
        return embedder

    def _chosen(self, load: Callable[[str, str, bool], Any]) -> Callable[[str, str, bool], Any]:
        """`load`, its offline choice remembered once it has loaded the model (asked once a name)."""
        def remembered(name: str, device: str, offline: bool) -> Any:
            model = load(name, device, offline)
            self._offline[name] = offline
            return model

        return remembered

    def keep_vectors_in_step(self, interview_json: Path, t: Transcript) -> None:
        """After a correction: the interview's kept vectors made to match its phrases again, the
        corrected phrases alone embedded (with the model they were made with, when it can load).
        An interview with no vectors has none to keep in step."""
        earlier = embed.load_embeddings(interview_json)
        if earlier is None or earlier.matches(t, earlier.model):
            return
        with self._lock:
            embedder = self._load_embedder(earlier.model)
            if embedder is None:
                return  # the model is not here: `igot index` does it later
            made = embed.embed_phrases(t, embedder, earlier=earlier)
        embed.save_embeddings(interview_json, made)

    def search(self, interviews: list[Interview], query: str, language: str = "", only: Optional[meaning.Only] = None,
               limit: int = meaning.MEANING_LIMIT) -> Found:
        """Words and meaning together, as `igot search` finds them, kept to `only`."""
        embedder, index, line = self.meaning_parts(interviews)
        with self._lock:
            hits = meaning.search(interviews, query, embedder, index, language=language, limit=limit, only=only)
        return Found(hits, index is not None, line)

    def ask_phrases(self, interviews: list[Interview], question: str, only: Optional[meaning.Only] = None) -> Found:
        """The phrases that answer a question, as `igot ask` finds them."""
        embedder, index, line = self.meaning_parts(interviews)
        with self._lock:
            phrases = ask.find_phrases(interviews, question, embedder, index, only=only)
        return Found(phrases, index is not None, line)

    def quote_vectors(self, interviews: list[Interview], texts: Sequence[str]) -> tuple[Optional[np.ndarray], str]:
        """Unit vectors of highlight quotes (Themes), or None with the line of what they need."""
        embedder, index, line = self.meaning_parts(interviews)
        if embedder is None:
            kept = self._index[2] if self._index is not None else None
            if kept is not None and not len(kept.vectors):  # no index at all: say what makes one
                flag = f" --embedding-model {kept.model}" if kept.model != embed.DEFAULT_EMBEDDING_MODEL else ""
                line = f"No interview has a meaning index for {kept.model}: run igot index{flag} once (it downloads the model the first time)."
            return None, line
        if not texts:
            return np.zeros((0, embedder.dimension), np.float32), ""
        with self._lock:
            todo = list(dict.fromkeys(t for t in texts if (embedder.name, t) not in self._quote_vectors))
            if todo:
                if len(self._quote_vectors) + len(todo) > KEEP_QUOTE_VECTORS:
                    self._quote_vectors.clear()
                for text, vector in zip(todo, embed.embed_texts(embedder, todo, "passage")):
                    self._quote_vectors[(embedder.name, text)] = vector
            return np.array([self._quote_vectors[(embedder.name, t)] for t in texts], np.float32).reshape(len(texts), -1), ""

    # --- the LLM that writes answers ---------------------------------------------------------------
    def llm_state(self) -> tuple[bool, str]:
        """(whether a written answer may come, the line saying why not): the LLM is not loaded here."""
        if not self.use_llm:
            return False, "No written answer, the phrases alone: the workspace was started with --no-llm."
        if self._llm_line:
            return False, self._llm_line
        return True, ""

    def llm(self) -> tuple[Any, str]:
        """The LLM, loaded the first time; (None, why) when there is none."""
        if not self.use_llm or self._llm_line:
            return None, self.llm_state()[1]
        with self._llm_lock:
            if self.llm_model in self._offline:
                return self.pool.llm(self.llm_model, self.device, self._offline[self.llm_model]), ""
            said: list[str] = []
            model = commands.llm_for(self.llm_model, self.device, said.append, self._chosen(self.pool.llm), self.hub)
            if model is None:
                self._llm_line = said[0] if said else f"No written answer, the phrases alone: the LLM {self.llm_model} could not be loaded."
            return model, self._llm_line

    def answer(self, interviews: list[Interview], question: str, phrases: list[Hit]) -> tuple[ask.Answer, str]:
        """The LLM's answer from `phrases` alone, its citations and quotes checked (igot.search.ask)."""
        model, line = self.llm()
        if model is None:
            return ask.Answer(question, phrases), line
        with self._llm_lock:
            return ask.answer(question, phrases, interviews, model, self.answer_tokens), ""

    # --- the LLM that writes an interview's summary again ----------------------------------------
    @contextmanager
    def writing_summary(self) -> Iterator[None]:
        """Held while a summary is written: one at a time, and one asked for meanwhile is refused
        at once (SummaryBusy) rather than left waiting minutes behind it."""
        if not self._summary_lock.acquire(blocking=False):
            raise SummaryBusy("A summary is being written: nothing was changed.", "Wait until it is done, then do it again.")
        try:
            yield
        finally:
            self._summary_lock.release()

    def summary(self, t: Transcript, prompt: str) -> Transcript:
        """t with its summary written anew from `prompt` by the LLM that writes Ask's answers (one
        model loaded for both), as `igot run` writes it (igot.summary.summarize); NoLLM when there
        is none, saying what to do."""
        if not self.use_llm:
            raise NoLLM("The summary cannot be written again: the workspace was started with --no-llm.",
                        "Stop it (Ctrl+C) and start igot serve again without --no-llm.")
        model, line = self.llm()
        if model is None:
            # the line is Ask's ("No written answer, the phrases alone: WHY. FIX"): WHY and FIX hold here too
            raise NoLLM(f"The summary cannot be written again: {line.split(': ', 1)[-1]}")
        with self._llm_lock:
            return summarize.summarize(t, model, prompt=prompt)


class SummaryBusy(IgotError):
    status = 423  # Locked: the page says to wait, not to reload


class NoLLM(IgotError):
    status = 503
