"""Who spoke when with NVIDIA NeMo's streaming Sortformer, an end-to-end diarizer.

Sortformer (nvidia/diar_streaming_sortformer_4spk-v2, CC-BY-4.0) predicts, every 80 ms, how
likely each of at most 4 speakers is to be talking, so it handles overlapping speech and needs
no clustering. It cannot be told the number of speakers and never outputs more than 4: with 5
or more people it merges or misses some, and it cannot tell that it did. So a known count above
4 goes to senko instead (`handles`), and finding all 4 slots in use (`at_capacity`) is the only
hint that there may be more people.

NeMo is an optional extra (pip install 'igot-interviews[nemo]'): it is imported only when a model is loaded.
"""

from __future__ import annotations

import contextlib
import io
import tarfile
from pathlib import Path
from typing import Any, Iterator, Optional

from igot.errors import IgotError, install_hint
from igot.media.audio import SAMPLE_RATE, load_audio
from igot.runtime.devices import pick_device
from igot.runtime.progress import Progress
from igot.transcript import SpeakerTurn

SORTFORMER_MODEL = "nvidia/diar_streaming_sortformer_4spk-v2"
MAX_SPEAKERS = 4

# The model card's "very high latency" setting, in 80 ms frames: 27 s chunks with 3.2 s of look-ahead,
# a 40-frame FIFO and a 188-frame speaker cache. It has the best published DER of the four settings,
# and latency does not matter for a finished recording. Each step attends over a fixed ~610 frames,
# where offline mode attends over the whole file; what still grows with length is the audio and its
# features, which NeMo computes for the whole file at once (H100: peak 0.8 GiB for 10 min, 2.6 GiB
# for an hour). NeMo warns that an update period below chunk_len acts as chunk_len: these are the
# card's values all the same.
STREAMING = {
    "chunk_len": 340,
    "chunk_right_context": 40,
    "chunk_left_context": 1,
    "fifo_len": 40,
    "spkcache_update_period": 300,
    "spkcache_len": 188,
}


class TooManySpeakers(IgotError):
    """The user said more people speak than Sortformer can tell apart: the caller uses senko."""

    def __init__(self, num_speakers: int):
        self.num_speakers = num_speakers
        super().__init__(f"Sortformer handles at most {MAX_SPEAKERS} speakers, not {num_speakers}.",
                         "Use the senko diarizer for this recording.")


def handles(num_speakers: Optional[int]) -> bool:
    """Whether Sortformer can diarize this many speakers; None (unknown) is taken as yes."""
    return num_speakers is None or num_speakers <= MAX_SPEAKERS


def nemo_installed() -> bool:
    from importlib.util import find_spec

    return find_spec("nemo") is not None


def require_nemo() -> None:
    """Raise the IgotError that says why NeMo cannot be used, and what to do, if it cannot."""
    _sortformer_class()


def nemo_problem() -> Optional[str]:
    """Why NeMo's Sortformer cannot be used here ("not installed", or what importing it raised),
    or None when it can. Imports NeMo, which takes a few seconds the first time."""
    try:
        _sortformer_class()
    except IgotError as exc:
        return exc.reason
    return None


def load_sortformer(model: Optional[str] = None, device: str = "auto", local_files_only: bool = False) -> Any:
    """A Sortformer in streaming mode, ready to diarize: a hub id, or a local .nemo file.

    from_pretrained downloads a .nemo and restores it, so a local file takes the same path as the
    published model. On CUDA it stays in float32, as published: an hour takes 10 s on an H100,
    spent mostly in the speaker-cache bookkeeping, so bfloat16 autocast was no faster (11 s), and
    float16 on a T4 would only add a risk of overflow.
    """
    model_class = _sortformer_class()
    name = model or SORTFORMER_MODEL
    local = Path(name).expanduser()
    if local_files_only and not (name.endswith(".nemo") or local.exists()):  # the .nemo in the hub's cache
        from igot.runtime.hub import cached

        snapshot = cached(name)
        found = sorted(snapshot.glob("*.nemo")) if snapshot else []
        if not found:
            raise IgotError(f"The Sortformer model '{name}' is not in the local cache.",
                            "Connect to the internet once to download it, or give its .nemo file with --diarizer-model.")
        local = found[0]
    try:
        with _tar_filter_argument():
            if name.endswith(".nemo") or local.exists():  # a .nemo file, or the cached copy of a hub model
                loaded = model_class.restore_from(str(local), map_location=pick_device(device))
            else:
                loaded = model_class.from_pretrained(name, map_location=pick_device(device))
    except Exception as exc:  # NeMo and the hub raise many kinds; the user can fix any of them the same way
        raise IgotError(f"The Sortformer model '{name}' could not be loaded ({type(exc).__name__}: {exc}).",
                        "Check the name or path and the connection, or choose the senko diarizer.") from exc
    configure_streaming(loaded)
    return loaded.eval()


@contextlib.contextmanager
def _tar_filter_argument() -> Iterator[None]:
    """NeMo unpacks a .nemo with TarFile.extract(..., filter="data"), after checking each member's
    path itself. Debian 12's Python 3.11.2 predates extraction filters (3.11.4) and rejects the
    argument: there, while restoring, it is dropped (the paths are still checked by NeMo)."""
    if hasattr(tarfile, "data_filter"):
        yield
        return
    original = tarfile.TarFile.extract

    def extract(self, member, path="", set_attrs=True, *, numeric_owner=False, filter=None):
        return original(self, member, path, set_attrs, numeric_owner=numeric_owner)

    tarfile.TarFile.extract = extract
    try:
        yield
    finally:
        tarfile.TarFile.extract = original


def configure_streaming(model: Any) -> None:
    model.streaming_mode = True
    modules = model.sortformer_modules
    for key, value in STREAMING.items():
        setattr(modules, key, value)
    modules._check_streaming_parameters()


def diarize_nemo(audio_path: Path, model: Any, num_speakers: Optional[int] = None, progress: Progress = False) -> list[SpeakerTurn]:
    """Speaker turns of a 16 kHz mono WAV, sorted by start. Turns of different speakers may overlap
    (people talking at once). Speaker ids are "1".."4" in order of first speech.

    Told a count of 1 to 4, only that many speakers are kept, those who talk most; their words
    fall to the nearest kept turn. Told more than 4, it raises TooManySpeakers.
    """
    if num_speakers is not None and num_speakers < 1:
        raise IgotError(f"The number of speakers must be 1 or more, not {num_speakers}.", "Leave it empty to detect it.")
    if not handles(num_speakers):
        raise TooManySpeakers(num_speakers)
    samples = load_audio(audio_path)
    # NeMo draws a bar per streaming chunk whatever `verbose` says: keep it off stderr unless asked.
    # (NeMo's own bar, or none: a hook is not told, the diarization being one call.)
    with contextlib.nullcontext() if progress is True else contextlib.redirect_stderr(io.StringIO()):
        lines = model.diarize(audio=[samples], sample_rate=SAMPLE_RATE, batch_size=1, num_workers=0, verbose=progress is True)[0]
    turns = parse_turns(lines, len(samples) / SAMPLE_RATE)
    return keep_speakers(turns, num_speakers) if num_speakers else turns


def parse_turns(lines: list[str], duration: float) -> list[SpeakerTurn]:
    """NeMo's "start end speaker_K" lines to turns inside [0, duration], sorted by start."""
    turns = []
    for line in lines:
        start, end, label = line.split()
        start, end = max(0.0, float(start)), min(duration, float(end))  # the last 80 ms frame can pass the end
        if end > start:
            turns.append(SpeakerTurn(str(int(label.rsplit("_", 1)[1]) + 1), round(start, 3), round(end, 3)))
    return sorted(turns, key=lambda t: (t.start, t.end))


def keep_speakers(turns: list[SpeakerTurn], count: int) -> list[SpeakerTurn]:
    """The turns of the `count` speakers who talk most."""
    talk: dict[str, float] = {}
    for t in turns:
        talk[t.speaker] = talk.get(t.speaker, 0.0) + t.end - t.start
    kept = set(sorted(talk, key=talk.get, reverse=True)[:count])
    return [t for t in turns if t.speaker in kept]


def at_capacity(turns: list[SpeakerTurn]) -> bool:
    """All 4 speaker slots in use: more people may speak than Sortformer can tell apart."""
    return len({t.speaker for t in turns}) >= MAX_SPEAKERS


def _sortformer_class() -> Any:
    if not nemo_installed():
        reason = "NeMo is not installed"
    else:
        try:
            from nemo.collections.asr.models import SortformerEncLabelModel
        except Exception as exc:  # a missing module of its own, a broken build: any of them stops it the same way
            reason = f"NeMo does not import: {type(exc).__name__}: {exc}"
        else:
            reason = None
    if reason:
        error = IgotError(f"Sortformer speaker detection needs NVIDIA NeMo, and it cannot be used here ({reason}).",
                          _nemo_fix())
        error.reason = reason
        raise error
    from nemo.utils import logging as nemo_logging

    # NeMo logs each step, and warns that the model card's own streaming values are unusual;
    # iGot says what it is doing itself.
    nemo_logging.set_verbosity(nemo_logging.ERROR)
    return SortformerEncLabelModel


def _nemo_fix() -> str:
    """In Colab, `pip install 'igot-interviews[nemo]'` would downgrade packages the session has loaded."""
    from importlib.util import find_spec

    try:
        in_colab = find_spec("google.colab") is not None
    except ModuleNotFoundError:
        in_colab = False
    if in_colab:
        return ("In step 5, set speaker detection to 'auto' (it uses senko when NeMo cannot be used) or 'senko', "
                "and run the cells again; do not pip install NeMo yourself, it would change Colab's own libraries.")
    return f"Install it with: {install_hint('nemo')} (a Python environment of its own is best), or choose --diarizer senko."
