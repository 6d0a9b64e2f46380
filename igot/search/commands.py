"""The terminal's side of search by meaning: the model for `igot index`, `igot search` and `igot ask`,
chosen once, and what each says when it cannot have it."""

from __future__ import annotations

import sys
from typing import Any, Callable, Optional

from igot.errors import IgotError
from igot.outputs.library import Interview
from igot.runtime import hub
from igot.search import embed, meaning
from igot.search.embed import Embedder
from igot.search.words import Hit


def say(line: str) -> None:
    print(f"igot: {line}", file=sys.stderr)


def embedder_for(name: Optional[str], device: str = "cpu", log: Callable[[str], None] = say,
                 load: Callable[[str, str, bool], Embedder] = embed.load_embedder,
                 access: Optional[hub.Hub] = None) -> Optional[Embedder]:
    """The embedding model, or None with one line saying what search by meaning needs. A hub model
    already downloaded loads without asking the hub; one that is not is downloaded when the hub
    answers (hub.from_cache). `load(name, device, offline)`: the loader (the workspace's is its
    model pool's, igot.pipeline.models); `access`: the hub, asked once by whoever holds it."""
    name = name or embed.DEFAULT_EMBEDDING_MODEL
    try:
        return load(name, device, hub.from_cache(name, access))
    except IgotError as exc:
        log(f"{exc} Until then, search finds words only.")
        return None


def index_meaning(interviews: list[Interview], model: Optional[str], progress: bool = True,
                  log: Callable[[str], None] = print) -> None:
    """`igot index`: the vectors of the interviews that have none yet (or stale ones)."""
    name = model or embed.DEFAULT_EMBEDDING_MODEL
    if not meaning.load_index(interviews, name).missing:
        return
    embedder = embedder_for(name)
    if embedder is None:
        return
    made = meaning.index_library(interviews, embedder, progress=progress, log=log)
    log(f"Meaning index: {made} interview{'s' * (made != 1)} embedded with {embedder.name}.")


def search_both(interviews: list[Interview], query: str, model: Optional[str], speaker: str = "", interview: str = "",
                limit: int = meaning.MEANING_LIMIT) -> list[Hit]:
    """`igot search`: words and meaning together; words only, with one line, where meaning cannot be had."""
    name = model or embed.DEFAULT_EMBEDDING_MODEL
    index = meaning.load_index(interviews, name)
    if interviews and not len(index.vectors):
        say(index.missing_line())
        return meaning.search(interviews, query, None, None, speaker=speaker, interview=interview)
    embedder = embedder_for(name) if len(index.vectors) else None
    if embedder is not None and index.missing:
        say(index.missing_line())
    return meaning.search(interviews, query, embedder, index, speaker=speaker, interview=interview, limit=limit)


def meaning_parts(interviews: list[Interview], model: Optional[str]) -> tuple[Optional[Embedder], Optional[meaning.MeaningIndex]]:
    """(embedder, index) for `igot ask`; (None, None), said in one line, when meaning cannot be had."""
    name = model or embed.DEFAULT_EMBEDDING_MODEL
    index = meaning.load_index(interviews, name)
    if not len(index.vectors):
        if interviews:
            say(index.missing_line())
        return None, None
    if index.missing:
        say(index.missing_line())
    embedder = embedder_for(name)
    return (embedder, index) if embedder is not None else (None, None)


def llm_for(name: Optional[str], device: str = "auto", log: Callable[[str], None] = say,
            load: Optional[Callable[[str, str, bool], Any]] = None, access: Optional[hub.Hub] = None):
    """The LLM that writes `igot ask`'s answer, or None with one line: the phrases then stand alone.
    `name` None: iGot's default for the device. `load(name, device, offline)`: the loader (the
    workspace's is its model pool's); `access`: the hub, asked once by whoever holds it."""
    from igot.runtime.devices import pick_device
    from igot.summary import summarize

    device = pick_device(device)
    name = name or summarize.default_llm(device)
    access = access or hub.Hub()
    if hub.out_of_reach(name, access):
        log(f"No written answer, the phrases alone: the LLM {name} is not on this computer and cannot be downloaded now. "
            "Connect to the internet once, or give a downloaded model with --llm-model.")
        return None
    load = load or (lambda name, device, offline: summarize.load_llm(name, device, local_files_only=offline))
    try:
        return load(name, device, hub.from_cache(name, access))
    except IgotError as exc:
        log(f"No written answer, the phrases alone: {exc}")
        return None
