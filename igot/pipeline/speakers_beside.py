"""Speaker detection beside the transcription: on a GPU with room for two models it runs in its own
thread (and CUDA stream) while Whisper, word timing and punctuation run, then loads the summary
model there; otherwise it runs when its turns are asked for."""

from __future__ import annotations

import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from igot.pipeline.stages import diarization, load_llm_ahead
from igot.pipeline.context import RunContext
from igot.transcript import SpeakerTurn, Transcript


class SpeakerDetection:
    """Leaving the `with` block, by an error too, never leaves the speaker thread waiting."""

    def __init__(self, ctx: RunContext, wav: Path):
        self.ctx, self.wav = ctx, wav
        beside = ctx.plan.speakers_beside
        # The thread starts once Whisper is loaded (a model being built changes torch's default
        # dtype for the whole process, which must not happen under Sortformer's inference), and
        # loads the summary model ahead only once Whisper's memory is free.
        self.whisper_loaded, self.whisper_done = threading.Event(), threading.Event()
        # The thread's own timings, joined to the run's once it is done, in the order of the stages.
        self.beside = replace(ctx, timings={}) if beside else None
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="igot-speakers") if beside else None
        self.found = None

    def __enter__(self) -> "SpeakerDetection":
        if self.worker is not None:
            self.found = self.worker.submit(self._find_beside)
        return self

    def __exit__(self, *exc_info) -> None:
        self.whisper_freed()  # a failed transcription must not leave the speaker thread waiting
        if self.worker is not None:
            self.worker.shutdown(wait=False, cancel_futures=True)

    def whisper_freed(self) -> None:
        self.whisper_loaded.set()
        self.whisper_done.set()

    def turns(self, t: Transcript) -> list[SpeakerTurn]:
        """The speakers' turns: waited for from the thread, or found now (none when nobody speaks)."""
        ctx = self.ctx
        turns: list[SpeakerTurn] = []
        if self.found is not None:
            with ctx.timed("waiting_for_speakers"):
                turns = self.found.result()
                ctx.timings.update(self.beside.timings)
        elif t.phrases:
            with ctx.timed("diarization"):
                turns = diarization(ctx, self.wav)
        ctx.models.done_with("diarizer")
        return turns

    def _find_beside(self) -> list[SpeakerTurn]:
        """Diarization on its own CUDA stream (so its kernels run beside Whisper's) once Whisper is
        loaded, then the summary model loaded ahead of its stage once Whisper has freed its memory
        (Whisper's batches and the summary model together would pass what the two speech models
        need)."""
        import torch

        ctx = self.beside
        cuda = ctx.plan.device == "cuda"
        self.whisper_loaded.wait()
        with torch.cuda.stream(torch.cuda.Stream(device=ctx.plan.torch_device)) if cuda else contextlib.nullcontext():
            with ctx.timed("diarization"):
                turns = diarization(ctx, self.wav)
            self.whisper_done.wait()
            if "summary" in ctx.plan.stages:
                load_llm_ahead(ctx)
            if cuda:
                torch.cuda.current_stream().synchronize()  # the summary model's weights are in place
        return turns
