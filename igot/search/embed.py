"""The embedding stage: every phrase of an interview as a vector of its meaning, for search by meaning.

`load_embedder(name, device, offline)` loads a sentence-transformers model once; `embed_phrases(t,
embedder)` gives the interview's phrase vectors (one row a phrase, unit length, so a dot product
is the cosine); `embed_query(text, embedder)` the vector of a question. The run and `igot index`
compute them; they are kept in OUT/.igot/embeddings/<interview>.json, beside the library cache,
where `load_embeddings` reads them back in about a millisecond an interview.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from igot.errors import IgotError, install_hint
from igot.runtime import hub
from igot.runtime import changes
from igot.runtime.files import write_atomic
from igot.runtime.progress import Progress
from igot.text import clean_text
from igot.transcript import Transcript

# For Portuguese and English together (docs/findings.md, "Search by meaning: the model"):
# multilingual-e5-small (MIT, 118M parameters, 384 dimensions, ~100 languages) is trained for
# retrieval, question against passage; paraphrase-multilingual-MiniLM-L12-v2 (same size) is trained
# on paraphrases and cuts inputs at 128 tokens. 470 MB in float32; an hour's ~1,400 phrases embed in
# about half a minute on 2 cores (benchmarks/search_quality.py).
DEFAULT_EMBEDDING_MODEL = "intfloat/multilingual-e5-small"
# E5 models were trained with these words in front of questions and of the texts searched; without
# them their retrieval figures do not hold. Models whose own configuration names prompts use those.
E5_PREFIXES = ("query: ", "passage: ")
BATCH_SIZE = 32  # sentence-transformers' own default
STORE_VERSION = 1
EMBEDDINGS_FOLDER = Path(changes.STATE) / changes.EMBEDDINGS


@dataclass
class Embedder:
    name: str  # hub id or folder, as recorded with the vectors: a query must use the same model
    model: Any  # a sentence_transformers.SentenceTransformer
    query_prefix: str = ""
    passage_prefix: str = ""

    @property
    def dimension(self) -> int:
        # sentence-transformers 5.7 renamed get_sentence_embedding_dimension; Colab's may have either
        getter = getattr(self.model, "get_embedding_dimension", None) or getattr(self.model, "get_sentence_embedding_dimension")
        return int(getter())


@dataclass
class PhraseEmbeddings:
    """The vectors of one interview's phrases, row i for phrase i (zeros for a phrase with no text)."""

    model: str  # the Embedder's name
    vectors: np.ndarray  # float32, (phrases, dimension), rows of unit length
    digest: str  # of the phrases' texts: vectors of other texts are stale
    keys: Optional[list[str]] = None  # each phrase's text_key: a corrected phrase alone is embedded again
    made: int = 0  # how many vectors were computed (the others were kept from before)

    def matches(self, t: Transcript, model: str) -> bool:
        return self.model == model and self.digest == phrases_digest(t) and len(self.vectors) == len(t.phrases)


def load_embedder(name: Optional[str] = None, device: str = "cpu", offline: bool = False) -> Embedder:
    """A sentence-transformers model by hub id or folder. offline: from the hub's local cache only;
    a hub model that is not there is an IgotError that says what search by meaning needs."""
    name = name or DEFAULT_EMBEDDING_MODEL
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise IgotError("Search by meaning needs sentence-transformers.", f"Run: {install_hint('search')}") from None
    if hub.is_hub_id(name):
        if offline and hub.cached(name) is None:
            raise IgotError(f"Search by meaning needs the model {name}, which is not on this computer, and it cannot be downloaded now.",
                            "Connect to the internet once (igot index downloads it), or give a downloaded copy with --embedding-model FOLDER.")
    elif not Path(name).expanduser().is_dir():
        raise IgotError(f"No embedding model at '{name}'.", "Give a Hugging Face model id or the folder of a sentence-transformers model.")
    try:
        model = SentenceTransformer(str(Path(name).expanduser()) if not hub.is_hub_id(name) else name,
                                    device=device, local_files_only=offline)
    except Exception as exc:  # missing files, no network, not a sentence-transformers model
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise IgotError(f"Could not load the embedding model '{name}' ({reason}).",
                        "Check the model name and the internet connection, or give the folder of a downloaded model.") from None
    query, passage = prefixes(name, model)
    return Embedder(name, model.eval(), query, passage)


def prefixes(name: str, model: Any) -> tuple[str, str]:
    """(before a question, before a phrase): the model's own prompts when it names them, else E5's
    for an E5 model, else none."""
    prompts = getattr(model, "prompts", None) or {}
    if prompts.get("query"):
        return prompts["query"], prompts.get("document") or prompts.get("passage") or ""
    return E5_PREFIXES if "e5" in Path(name).name.lower().replace("_", "-").split("-") else ("", "")


def embed_texts(embedder: Embedder, texts: Sequence[str], kind: str = "passage", progress: Progress = False) -> np.ndarray:
    """Unit vectors of `texts` (float32, one row each); kind "query" or "passage" picks the prefix."""
    prefix = embedder.query_prefix if kind == "query" else embedder.passage_prefix
    if not texts:
        return np.zeros((0, embedder.dimension), np.float32)
    vectors = embedder.model.encode([prefix + t for t in texts], batch_size=BATCH_SIZE, normalize_embeddings=True,
                                    convert_to_numpy=True, show_progress_bar=progress is True)
    return np.asarray(vectors, dtype=np.float32)


def embed_query(text: str, embedder: Embedder) -> np.ndarray:
    return embed_texts(embedder, [clean_text(text)], "query")[0]


def phrase_texts(t: Transcript) -> list[str]:
    return [clean_text(p.text) for p in t.phrases]


def phrases_digest(t: Transcript) -> str:
    return hashlib.sha1(json.dumps(phrase_texts(t), ensure_ascii=False).encode()).hexdigest()[:16]


def text_key(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def embed_phrases(t: Transcript, embedder: Embedder, progress: Progress = False,
                  earlier: Optional[PhraseEmbeddings] = None) -> PhraseEmbeddings:
    """The stage: a vector for each phrase of `t`, by its text alone (a phrase with none: zeros, so
    that it is never found). `earlier`: the interview's vectors before a correction: a phrase whose
    text is unchanged keeps its vector, so only the corrected phrases are embedded again."""
    texts = phrase_texts(t)
    keys = [text_key(text) for text in texts]
    kept: dict[str, np.ndarray] = {}
    if earlier is not None and earlier.model == embedder.name and earlier.keys and len(earlier.keys) == len(earlier.vectors):
        kept = dict(zip(earlier.keys, earlier.vectors))
    said = [i for i, text in enumerate(texts) if text and keys[i] not in kept]
    found = embed_texts(embedder, [texts[i] for i in said], "passage", progress)
    vectors = np.zeros((len(texts), embedder.dimension), np.float32)
    for i, key in enumerate(keys):
        if texts[i] and key in kept:
            vectors[i] = kept[key]
    if said:
        vectors[said] = found
    return PhraseEmbeddings(embedder.name, vectors, phrases_digest(t), keys, len(said))


# --- kept beside the library ---------------------------------------------------------------------
def embeddings_path(interview_json: Path | str) -> Path:
    """Where the vectors of the interview saved as `interview_json` are kept."""
    path = Path(interview_json)
    return path.parent / EMBEDDINGS_FOLDER / f"{path.stem}.json"


def save_embeddings(interview_json: Path | str, e: PhraseEmbeddings) -> Path:
    """Kept for the interview saved as `interview_json` (see embeddings_path)."""
    path = embeddings_path(interview_json)
    path.parent.mkdir(parents=True, exist_ok=True)
    with changes.locked(Path(interview_json).parent):  # the library's lock, as every writer in it
        save_embeddings_file(path, e)
    return path


def save_embeddings_file(path: Path, e: PhraseEmbeddings) -> None:
    """Written whole or not at all, as float16 (half the room; a cosine moves by ~1e-3)."""
    rows, dimension = e.vectors.shape
    data = base64.b64encode(np.ascontiguousarray(e.vectors, dtype="<f2").tobytes()).decode("ascii")
    write_atomic(path, json.dumps({"version": STORE_VERSION, "model": e.model, "digest": e.digest, "phrases": rows,
                                   "dimension": dimension, "vectors": data, "keys": e.keys}))


def load_embeddings(interview_json: Path | str) -> Optional[PhraseEmbeddings]:
    """The kept vectors of an interview; None when there are none or they cannot be read."""
    return load_embeddings_file(embeddings_path(interview_json))


def load_embeddings_file(path: Path) -> Optional[PhraseEmbeddings]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if data.get("version") != STORE_VERSION:
            return None
        rows, dimension = int(data["phrases"]), int(data["dimension"])
        vectors = np.frombuffer(base64.b64decode(data["vectors"]), dtype="<f2").reshape(rows, dimension)
        keys = data.get("keys")  # files written before corrections have none
        keys = [str(k) for k in keys] if isinstance(keys, list) and len(keys) == rows else None
        return PhraseEmbeddings(str(data["model"]), vectors.astype(np.float32), str(data["digest"]), keys)
    except (OSError, ValueError, KeyError, TypeError):
        return None
