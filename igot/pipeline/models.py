"""The models a run has loaded: each loaded once, one at a time, and freed once its stage is done."""

from __future__ import annotations

import threading
from typing import Any, Callable, Optional

from igot.asr import transcribe
from igot.asr.whisper_model import WhisperModel
from igot.runtime.devices import free_memory
from igot.speakers import diarize


class Models:
    """Loaded models. With keep=True they stay loaded across runs (notebook, tests); otherwise
    each is freed as soon as its stage is done, so the next heavy model has the GPU to itself."""

    def __init__(self, keep: bool = False):
        self.keep = keep
        self._loaded: dict[tuple, Any] = {}
        # One model loads at a time: transformers builds a model under process-wide settings (the
        # default dtype, patched weight-init functions), and a summary model loading in the speaker
        # thread while the main thread loaded another came out empty on an H100 ("Cannot copy out
        # of meta tensor").
        self._loading = threading.Lock()

    def get(self, key: tuple, load: Callable[[], Any]) -> Any:
        """The model under `key` (its kind first), loaded by `load` the first time, one at a time."""
        with self._loading:
            if key not in self._loaded:
                self._loaded[key] = load()
            return self._loaded[key]

    # offline: a hub model from the local cache only (the hub cannot be reached)
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

    def embedder(self, model: str, device: str, offline: bool = False):
        from igot.search import embed

        return self.get(("embedder", model, device), lambda: embed.load_embedder(model, device, offline))

    def sortformer(self, model: Optional[str], device: str, offline: bool = False):
        from igot.speakers import sortformer

        return self.get(("diarizer", "sortformer", model, device), lambda: sortformer.load_sortformer(model, device, offline))

    def share(self, other: Models, kind: str) -> None:
        """Use the models of this kind that `other` has loaded, instead of loading them again."""
        self._loaded.update({k: v for k, v in other._loaded.items() if k[0] == kind})

    def done_with(self, kind: str) -> None:
        if self.keep:
            return
        for key in [k for k in self._loaded if k[0] == kind]:
            del self._loaded[key]
        free_memory()
