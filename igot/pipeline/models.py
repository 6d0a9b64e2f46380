"""The models loaded for runs and for the workspace beside them, in one pool: each loaded once, one
at a time, by the choice its caller made (the run's plan, the workspace's start); the loaders decide
nothing again. One run frees each model as soon as its stage is done, so the next heavy model has
the GPU to itself; a queue (`igot run a b c`, the workspace's) keeps them while it has work, and a
GPU short of room frees the others, least needed next first, before a model loads."""

from __future__ import annotations

import threading
from typing import Any, Callable, Iterable, Optional

from igot.asr import transcribe
from igot.asr.whisper_model import WhisperModel
from igot.runtime.devices import free_memory, is_gpu
from igot.speakers import diarize

# What only a run uses; search, Ask and the summary done again use the LLM and the embedder too.
RUN_ONLY = ("whisper", "aligner", "punctuator", "diarizer")

# The free GPU memory a model loads into without freeing the others first: the most one stage needs
# beside what is kept, Whisper large-v3 transcribing in batches of 32 (10.9 GiB, benchmarks/README.md,
# "Whisper alone"). So a T4 (15 GB) holding Gemma 3 1B in float32 (4 GB) for the summary frees it
# before large-v3 loads for the next recording, and an H100 (80 GB) keeps everything.
GPU_ROOM_GIB = 11.0

# When the GPU is short, the models freed first. Whisper first: it needs the most room while it works,
# and the room is checked only when a model loads, so it must load again into a GPU made ready rather
# than stay kept into a full one; then the run's other models in the order the run uses them (once a
# later one loads, they wait for the next recording); the LLM and the embedder last, which search and
# Ask use at any moment between runs.
FREE_ORDER = ("whisper", "aligner", "punctuator", "diarizer", "llm", "embedder")


def gpu_free_gib(device: str) -> Optional[float]:
    """The free memory of the GPU `device` names, in GiB, with what torch keeps cached for its own
    reuse counted as free; None for a CPU (its memory is not watched)."""
    if not is_gpu(device):
        return None
    try:
        import torch

        if not torch.cuda.is_available():
            return None
        free, _ = torch.cuda.mem_get_info(torch.device(device))
        cached = torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
        return (free + cached) / 2**30
    except (ImportError, RuntimeError):
        return None


class Models:
    """Loaded models. With keep=True they stay loaded across runs (a queue, the workspace, the
    notebook, tests); otherwise each is freed as soon as its stage is done. `free_gib(device)`: the
    GPU memory free now, in GiB (None: not a GPU), read before a model loads; `room_gib`: what a
    model loads into without freeing the others first (GPU_ROOM_GIB)."""

    def __init__(self, keep: bool = False, free_gib: Callable[[str], Optional[float]] = gpu_free_gib,
                 room_gib: float = GPU_ROOM_GIB):
        self.keep = keep
        self.free_gib = free_gib
        self.room_gib = room_gib
        self._loaded: dict[tuple, Any] = {}
        self._device: dict[tuple, str] = {}  # where each loaded model is: only a GPU's are freed for room
        self._held = threading.Lock()  # the dicts above, changed or read whole
        # One model loads at a time: transformers builds a model under process-wide settings (the
        # default dtype, patched weight-init functions), and a summary model loading in the speaker
        # thread while the main thread loaded another came out empty on an H100 ("Cannot copy out
        # of meta tensor").
        self._loading = threading.Lock()

    def get(self, key: tuple, load: Callable[[], Any], device: Optional[str] = None) -> Any:
        """The model under `key` (its kind first, its device last), loaded by `load` the first time,
        one at a time. One already loaded is handed out without waiting for another's load: search
        and Ask go on while a queued run loads Whisper. `device`: where it loads (None: the key's
        last part when that names a GPU, else the CPU)."""
        found = self._loaded.get(key, self)
        if found is not self:
            return found
        device = device or (str(key[-1]) if is_gpu(str(key[-1])) else "cpu")
        with self._loading:
            found = self._loaded.get(key, self)
            if found is self:
                self.make_room(device, loading=key)
                found = load()
                with self._held:
                    self._loaded[key], self._device[key] = found, device
            return found

    def make_room(self, device: str, loading: tuple = ()) -> list[tuple]:
        """Before a model loads on a GPU with less than room_gib free: the other models kept on a GPU
        freed one by one in FREE_ORDER until it has that room (or none is left). The keys freed."""
        freed: list[tuple] = []
        free = self.free_gib(device)
        if free is None or free >= self.room_gib:
            return freed
        with self._held:
            on_gpu = [k for k in self._loaded if k != loading and is_gpu(self._device[k])]
        for key in sorted(on_gpu, key=lambda k: FREE_ORDER.index(k[0]) if k[0] in FREE_ORDER else len(FREE_ORDER)):
            self.drop([key])
            freed.append(key)
            free = self.free_gib(device)
            if free is None or free >= self.room_gib:
                break
        return freed

    # offline: a hub model from the local cache only (the caller's choice: igot.runtime.hub.from_cache)
    def whisper(self, name: str, engine: str, device: str, offline: bool = False) -> WhisperModel:
        return self.get(("whisper", name, engine, device), lambda: transcribe.load_whisper(name, engine, device, offline))

    def aligner(self, language: str, model: Optional[str], device: str, offline: bool = False):
        from igot.refine import align

        return self.get(("aligner", language, model, device), lambda: align.load_aligner(language, model, device, offline))

    def punctuator(self, model: str, device: str, offline: bool = False):
        from igot.refine import punctuate

        return self.get(("punctuator", model, device), lambda: punctuate.load_punctuator(model, device, offline))

    def diarizer(self, device: str):
        return self.get(("diarizer", device), lambda: diarize.load_diarizer(device))

    def sherpa(self):
        from igot.speakers import sherpa

        return self.get(("diarizer", "sherpa-onnx"), sherpa.load_sherpa)

    def llm(self, model: str, device: str, offline: bool = False):
        from igot.summary import summarize

        return self.get(("llm", model, device), lambda: summarize.load_llm(model, device, local_files_only=offline))

    def keep_llm(self, llm: Any, device: str) -> None:
        """An LLM loaded elsewhere (the notebook's), kept as the one its name loads on `device`."""
        with self._held:
            self._loaded[("llm", llm.name, device)], self._device[("llm", llm.name, device)] = llm, device

    def embedder(self, model: str, device: str, offline: bool = False):
        from igot.search import embed

        return self.get(("embedder", model, device), lambda: embed.load_embedder(model, device, offline))

    def sortformer(self, model: Optional[str], device: str, offline: bool = False):
        from igot.speakers import sortformer

        return self.get(("diarizer", "sortformer", model, device), lambda: sortformer.load_sortformer(model, device, offline))

    def loaded(self) -> list[tuple]:
        """The keys of the models loaded now, the first loaded first."""
        with self._held:
            return list(self._loaded)

    def share(self, other: Models, kind: str) -> None:
        """Use the models of this kind that `other` has loaded, instead of loading them again."""
        with other._held:
            found = [(k, v, other._device[k]) for k, v in other._loaded.items() if k[0] == kind]
        with self._held:
            for key, model, device in found:
                self._loaded[key], self._device[key] = model, device

    def drop(self, keys: Iterable[tuple]) -> None:
        """These models let go of, their memory handed back (once nothing else holds them)."""
        with self._held:
            for key in keys:
                self._loaded.pop(key, None)
                self._device.pop(key, None)
        free_memory()

    def free(self, kinds: Iterable[str]) -> None:
        """Every model of these kinds let go of, kept or not (a queue done: RUN_ONLY)."""
        kinds = set(kinds)
        self.drop([k for k in self.loaded() if k[0] in kinds])

    def done_with(self, kind: str) -> None:
        """A stage is done with its kind of model: freed, unless the models are kept."""
        if self.keep:
            return
        self.free([kind])
