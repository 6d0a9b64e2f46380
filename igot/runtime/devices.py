"""Which device a stage runs on, and handing GPU memory back between stages."""

from __future__ import annotations

import gc


def pick_device(device: str = "auto") -> str:
    """"cuda" when a GPU is there (and not told otherwise), else "cpu"."""
    if device != "auto":
        return device
    try:
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    except ImportError:
        return "cpu"


def is_gpu(device: str) -> bool:
    """Whether a device name ("cuda", "cuda:1", "cpu") is a GPU."""
    return str(device).startswith("cuda")


def free_memory() -> None:
    """Let go of a model that is no longer referenced, so the next stage has the GPU to itself."""
    gc.collect()
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    except ImportError:
        pass
