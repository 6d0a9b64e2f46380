"""Speech to text with word timestamps: Whisper through faster-whisper, openai-whisper or transformers.

`load_whisper` picks the engine, the device and the precision; `transcribe` returns a
`Transcript` whose phrases are Whisper's segments, with no speakers yet.
"""

from __future__ import annotations

import ctypes
import functools
import inspect
import itertools
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from igot.asr import glossary as glossary_module
from igot.asr.whisper_model import BUNDLED_PREFIX, TranscriptionOptions, WhisperModel, check_language
from igot.errors import IgotError, install_hint
from igot.media.audio import SAMPLE_RATE, is_speech_wav, load_audio, pieces, read_window
from igot.runtime.devices import is_gpu, pick_device
from igot.runtime.progress import Bar, Progress, advance_to
from igot.transcript import Phrase, Source, Transcript, Word, phrases_in_said_order

ENGINES = ("faster-whisper", "openai-whisper", "transformers")
MODEL_NAMES = (
    "tiny", "tiny.en", "base", "base.en", "small", "small.en", "medium", "medium.en",
    "large-v1", "large-v2", "large-v3", "large", "large-v3-turbo", "turbo",
)
# The default model by device (igot.pipeline, the CLI, the notebook and load_whisper read these).
CPU_MODEL = "small"  # the best accuracy that still runs near real time on a laptop CPU
GPU_MODEL = "large-v3"  # the most accurate Whisper; in float16 it fits a free 15 GB T4 with room to spare
# The languages Whisper knows (its tokenizer's codes; "yue" since large-v3).
WHISPER_LANGUAGES = (
    "af am ar as az ba be bg bn bo br bs ca cs cy da de el en es et eu fa fi fo fr gl gu ha haw he hi hr ht hu hy id is "
    "it ja jw ka kk km kn ko la lb ln lo lt lv mg mi mk ml mn mr ms mt my ne nl nn no oc pa pl ps pt ro ru sa sd si sk "
    "sl sn so sq sr su sv sw ta te tg th tk tl tr tt uk ur uz vi yi yo zh yue"
).split()
# The transformers engine's models on the Hugging Face hub (OpenAI's own conversions).
HUB_IDS = {
    **{name: f"openai/whisper-{name}" for name in MODEL_NAMES},
    "large-v1": "openai/whisper-large", "large": "openai/whisper-large-v3", "turbo": "openai/whisper-large-v3-turbo",
}


def check_model_name(name: str) -> None:
    if name.startswith(BUNDLED_PREFIX) or Path(name).expanduser().exists() or name in MODEL_NAMES:
        return
    raise IgotError(
        f"Unknown Whisper model '{name}'.",
        f"Choose one of {', '.join(MODEL_NAMES)}, or give the path of a model folder or file.",
    )


def default_engine(device: str = "auto") -> str:
    """faster-whisper (int8) on CPU; on a GPU the fastest engine that works there: faster-whisper
    where CTranslate2 can use CUDA, else Whisper through transformers."""
    if not is_gpu(pick_device(device)):
        return "faster-whisper"
    return "faster-whisper" if ctranslate2_can_use_cuda() else "transformers"


@functools.cache
def ctranslate2_can_use_cuda() -> bool:
    """CTranslate2 sees a GPU and can load the cuBLAS it was built for (CUDA 12's for CTranslate2 4.x).
    It loads cuBLAS only when a model first runs, so a machine with CUDA 13 alone fails late: the
    probe loads that library the way CTranslate2 will (by name, from the library path)."""
    try:
        import ctranslate2

        if ctranslate2.get_cuda_device_count() == 0:
            return False
        cuda = 12 if int(ctranslate2.__version__.split(".")[0]) >= 4 else 11
        ctypes.CDLL(f"cublas64_{cuda}.dll" if sys.platform == "win32" else f"libcublas.so.{cuda}")
        return True
    except (ImportError, OSError, RuntimeError):
        return False


def default_model(device: str) -> str:
    return GPU_MODEL if is_gpu(device) else CPU_MODEL


def precision(engine: str, device: str) -> str:
    """Whisper's precision by engine and device: int8 on a CPU for faster-whisper (~4x faster than
    float32 at the same accuracy), float16 on a GPU (the T4's fast path), float32 otherwise."""
    if is_gpu(device):
        return "float16"
    return "int8" if engine == "faster-whisper" else "float32"


def load_whisper(name: Optional[str] = None, engine: str = "auto", device: str = "auto",
                 local_files_only: bool = False) -> WhisperModel:
    """Load a Whisper model by name (tiny … large-v3, turbo), local path, or bundled:NAME (None:
    the device's default model). engine "auto" is `default_engine(device)`; local_files_only: a
    named model from the hub's local cache only (faster-whisper and transformers engines)."""
    if engine != "auto" and engine not in ENGINES:
        raise IgotError(f"Unknown engine '{engine}'.", f"Choose one of auto, {', '.join(ENGINES)}.")
    device = pick_device(device)
    name = name or default_model(device)
    check_model_name(name)
    engine = default_engine(device) if engine == "auto" else engine
    if engine == "faster-whisper":
        return _load_faster_whisper(name, device, local_files_only)
    if engine == "transformers":
        return _load_transformers(name, device, local_files_only)
    return _load_openai_whisper(name, device)


def _load_faster_whisper(name: str, device: str, local_files_only: bool = False) -> WhisperModel:
    try:
        import faster_whisper
    except ImportError:
        raise IgotError("The faster-whisper engine is not installed.", f"Run: {install_hint('faster')}") from None
    chosen = precision("faster-whisper", device)
    path = _bundled_path(name) if name.startswith(BUNDLED_PREFIX) else os.path.expanduser(name)
    kind, _, index = device.partition(":")  # CTranslate2 takes the GPU's number apart: cuda:1 is ("cuda", 1)
    try:
        model = faster_whisper.WhisperModel(path, device=kind, device_index=int(index or 0), compute_type=chosen,
                                            local_files_only=local_files_only)
    except Exception as exc:  # the hub client and CTranslate2 raise many types
        raise _load_error(name, exc) from None
    return WhisperModel("faster-whisper", name, kind, chosen, model)


def _load_openai_whisper(name: str, device: str) -> WhisperModel:
    try:
        import whisper
    except ImportError:
        raise IgotError("The openai-whisper engine is not installed.", f"Run: {install_hint('openai')}") from None
    if name.startswith(BUNDLED_PREFIX):
        raise IgotError(
            f"The bundled model '{name}' is in CTranslate2 format, which openai-whisper cannot read.",
            "Use --engine faster-whisper with it, or give openai-whisper a model name or a .pt file.",
        )
    try:
        model = whisper.load_model(os.path.expanduser(name), device=device)
    except Exception as exc:
        raise _load_error(name, exc) from None
    # openai-whisper keeps fp32 weights and runs its decoder in fp16 on CUDA (fp16=True below).
    return WhisperModel("openai-whisper", name, device, precision("openai-whisper", device), model)


def _load_transformers(name: str, device: str, local_files_only: bool = False) -> WhisperModel:
    try:
        import torch
        from transformers import WhisperForConditionalGeneration, WhisperProcessor
    except ImportError:
        raise IgotError("The transformers engine is not installed.", "Run: pip install torch transformers") from None
    if name.startswith(BUNDLED_PREFIX):
        raise IgotError(
            f"The bundled model '{name}' is in CTranslate2 format, which transformers cannot read.",
            "Use --engine faster-whisper with it, or give transformers a model name or a saved model folder.",
        )
    path = os.path.expanduser(name) if Path(name).expanduser().exists() else HUB_IDS[name]
    # Precision by stage: log-mel features in float32; encoder and decoder in float16 on CUDA, as
    # OpenAI runs Whisper, on the tensor cores every GPU since the T4 (compute capability 7.5) has
    # for fp16 (bfloat16 needs Ampere, 8.0: the T4 has no bf16 tensor cores); float32 on CPU, where
    # fp16 matrix products are slow; word alignment (softmax, DTW) in float32. SDPA: PyTorch's fused
    # attention kernels.
    chosen = precision("transformers", device)
    try:
        model = WhisperForConditionalGeneration.from_pretrained(
            path, dtype=getattr(torch, chosen), attn_implementation="sdpa", local_files_only=local_files_only)
        processor = WhisperProcessor.from_pretrained(path, local_files_only=local_files_only)
    except Exception as exc:  # the hub client and safetensors raise many types
        raise _load_error(name, exc) from None
    return WhisperModel("transformers", name, device, chosen, model.to(device).eval(), processor)


def _load_error(name: str, exc: Exception) -> IgotError:
    text = str(exc)
    if Path(os.path.expanduser(name)).exists():
        return IgotError(f"Could not read the Whisper model at '{name}': {text.splitlines()[0] if text else type(exc).__name__}.",
                         "Check that the folder or file is a complete model for this engine.")
    return IgotError(
        f"Could not download the Whisper model '{name}' ({type(exc).__name__}).",
        "Check the internet connection, or download the model once and pass its folder with --model.",
    )


def _bundled_path(name: str) -> str:
    from igot.runtime import bundled

    return str(bundled.whisper_model_dir(name.removeprefix(BUNDLED_PREFIX)))


def transcribe(
    audio_path: Path,
    whisper_model: WhisperModel,
    source: Optional[Source] = None,
    language: Optional[str] = None,
    vad: bool = True,
    progress: Progress = True,
    options: Optional[TranscriptionOptions] = None,
    glossary: Sequence[str] = (),
) -> Transcript:
    """Transcribe a 16 kHz mono WAV. Phrases are Whisper's segments, each with timed words.
    `glossary`: names and words Whisper is given, so it writes them as spelled there (igot.asr.glossary)."""
    options = options or TranscriptionOptions()
    prompt = glossary_module.hotwords(glossary)
    check_language(whisper_model.name, language)
    source = source or Source(title=Path(audio_path).stem, path=str(audio_path))
    # A long recording is read and transcribed piece by piece (cut in silences), so memory stays
    # flat however long the interview; the first piece's language holds for the rest. On a GPU,
    # longer pieces keep its batches full (options.gpu_piece_seconds).
    length = options.gpu_piece_seconds if is_gpu(whisper_model.device) else None
    cuts = pieces(audio_path, length) if is_speech_wav(Path(audio_path)) else [(0.0, None)]
    phrases: list[Phrase] = []
    missed: list[dict] = []
    detected = language
    whole = cuts[-1][1]
    for start, end in cuts:
        # The hook is told each piece's start and end, and its work in the recording's seconds: a
        # piece of silence gives no segment to report, and 10 hours of it (60 pieces, two VAD passes
        # each) would otherwise run for minutes without the hook, so without Cancel.
        told = _in_recording(progress, start, whole)
        _tell(told, 0.0, (end or 0.0) - start)
        audio = read_window(audio_path, start, end) if end is not None else load_audio(audio_path)
        found, detected = _transcribe_audio(whisper_model, audio, language or detected, vad, told, options, prompt)
        phrases += [_shifted(p, start, end) for p in found] if end is not None else found
        missed += [{"start": round(h["start"] + start, 2), "end": round(h["end"] + start, 2)} for h in _speech_left_out(audio, found)]
        _tell(told, len(audio) / SAMPLE_RATE, len(audio) / SAMPLE_RATE)
    duration = cuts[-1][1] if cuts[-1][1] is not None else len(audio) / SAMPLE_RATE
    phrases = phrases_in_said_order(phrases)  # a word the engine timed out of place keeps its place
    info = {
        "engine": whisper_model.engine,
        "model": whisper_model.name,
        "device": whisper_model.device,
        "precision": whisper_model.precision,
        # Speech the VAD hears that no word covers: said in the run's last line, never silently lost.
        UNTRANSCRIBED: missed,
    }
    if prompt:
        info["glossary"] = glossary_module.given_to_whisper(glossary)  # the terms Whisper was given
    return Transcript(source=source, language=language or detected, duration=duration, phrases=phrases, info=info)


def _in_recording(progress: Progress, start: float, whole: Optional[float]) -> Progress:
    """A progress hook told a piece's seconds as the recording's (start + done of the whole), so
    the share it hears goes forward across pieces; a bar (True) or nothing (False) as it is."""
    if not callable(progress) or whole is None:
        return progress
    return lambda what, done, total: progress(what, round(start + done, 1), whole)


def _tell(progress: Progress, done: float, total: float) -> None:
    if callable(progress):
        progress("Transcribing", done, total)


UNTRANSCRIBED = "untranscribed"  # Transcript.info key: [{"start", "end"}] of speech no word covers


def untranscribed_seconds(t: Transcript) -> float:
    return round(sum(h["end"] - h["start"] for h in t.info.get(UNTRANSCRIBED, [])), 1)


def _speech_left_out(audio: np.ndarray, phrases: list[Phrase]) -> list[dict]:
    """untranscribed_speech, where faster-whisper's VAD is installed (any engine can be used without it)."""
    try:
        return untranscribed_speech(audio, phrases)
    except ImportError:
        return []


def _transcribe_audio(wm: WhisperModel, audio: np.ndarray, language, vad, progress, options: TranscriptionOptions,
                      prompt: Optional[str] = None) -> tuple[list[Phrase], Optional[str]]:
    """`prompt`: the glossary's terms for Whisper (glossary.hotwords), each engine's nearest way of taking them."""
    if wm.engine == "faster-whisper":
        return _faster_whisper(wm, audio, language, vad, progress, len(audio) / SAMPLE_RATE, wm.windows_per_batch(options),
                               prompt)
    if wm.engine == "transformers":
        from igot.asr import whisper_transformers

        return whisper_transformers.transcribe_audio(wm, audio, language, vad, progress, options, prompt)
    return _openai_whisper(wm, audio, language, vad, progress, prompt)


def _shifted(phrase: Phrase, offset: float, limit: float) -> Phrase:
    """A piece's phrase in the recording's time; Whisper's last word can overrun the piece."""
    def at(t: float) -> float:
        return round(min(t + offset, limit), 3)

    words = [replace(w, start=at(w.start), end=at(w.end)) for w in phrase.words]
    return replace(phrase, start=at(phrase.start), end=at(phrase.end), words=words)


def _faster_whisper(wm: WhisperModel, audio: np.ndarray, language, vad, progress, duration, batch_size: int,
                    hotwords: Optional[str] = None):
    with Bar(progress, round(duration, 1), "Transcribing", unit="s") as bar:
        if not vad or batch_size <= 1:  # batched decoding needs the VAD's chunks (below)
            phrases, language = decode_then_time(wm, audio, language, vad, bar, hotwords)
            return (with_speech_filled(wm, audio, phrases, language) if hotwords else phrases), language
        from faster_whisper import BatchedInferencePipeline

        # hotwords: in the prompt of every 30 s window, batched or not (faster-whisper's get_prompt)
        options = dict(language=language, word_timestamps=True, hotwords=hotwords)
        # Batched decoding (the fast path) needs VAD to cut the audio into chunks of speech. Its
        # chunks are fixed by the VAD, so word times never move where decoding goes on.
        batched = BatchedInferencePipeline(model=wm.model)
        segments, info = batched.transcribe(audio, batch_size=batch_size, **options)
        phrases = _collect(segments, bar, duration)
        language = language or info.language
        # Batched decoding is text only (no timestamp tokens, no fallback to higher temperatures,
        # no previous text), and Whisper then sometimes stops a 30 s chunk early and the rest of
        # it is lost (faster-whisper issue #1179); the words left are then timed by alignment
        # against the whole chunk, so they drift into the lost speech. A chunk with speech that no
        # word covers is decoded again, whole, the careful way (sequentially, as faster-whisper's
        # own transcribe does), and that version is kept if it leaves less speech out. Both ways
        # can drop speech: what neither covers is decoded once more, alone.
        for start, end in chunks_with_holes(audio, phrases):
            redone, _ = decode_then_time(wm, audio[int(start * SAMPLE_RATE):int(end * SAMPLE_RATE)], language, True, None,
                                         hotwords)
            others = [p for p in phrases if not start <= (p.start + p.end) / 2 < end]
            redone = sorted(others + [_shifted(p, start, end) for p in redone], key=lambda p: p.start)
            if _left_out(audio, redone, start, end) <= _left_out(audio, phrases, start, end):
                phrases = redone
        holes = untranscribed_speech(audio, phrases)
        if holes:  # without the glossary: with it, Whisper stops early more often (with_speech_filled)
            more, _ = batched.transcribe(audio, batch_size=batch_size, clip_timestamps=holes,
                                         **{**options, "language": language, "hotwords": None})
            phrases = sorted(phrases + _collect(more, None, duration), key=lambda p: p.start)
        advance_to(bar, duration)  # the piece is done, said even when it was silence (no segment moved the bar)
    return phrases, language


def with_speech_filled(wm: WhisperModel, audio: np.ndarray, phrases: list[Phrase], language: Optional[str]) -> list[Phrase]:
    """`phrases` decoded with the glossary in Whisper's prompt, and the speech they leave without
    words decoded again without it. Given a glossary, Whisper sometimes ends a window early and a
    sentence is lost (dev recordings, benchmarks/review_quality.py: 19 terms raised the word error
    rate of base from 0.063 to 0.201, nearly all of it sentences left out)."""
    for hole in untranscribed_speech(audio, phrases):
        start, end = hole["start"], hole["end"]
        piece = audio[int(start * SAMPLE_RATE):int(end * SAMPLE_RATE)]
        more, _ = decode_then_time(wm, piece, language, True, None)
        more = [_shifted(p, start, end) for p in more]
        if more:
            phrases = sorted(phrases + more, key=lambda p: p.start)
    return phrases


def decode_then_time(wm: WhisperModel, audio: np.ndarray, language: Optional[str], vad: bool,
                     bar: Any, hotwords: Optional[str] = None) -> tuple[list[Phrase], Optional[str]]:
    """faster-whisper's own `transcribe(audio, vad_filter=vad)`, in its own two steps (its VAD
    joins the speech, then it decodes that), without word timestamps: with them it moves to its
    next 30 s window from the last word's time, and a mistimed last word jumps over what was said
    after it (a whole sentence, silently). The decoded text is then timed word by word by the
    engine's own aligner on the very windows it decoded (time_words), and put back in the
    recording's time as the engine does. So the words are the engine's alone, every one."""
    from faster_whisper.vad import SpeechTimestampsMap, VadOptions, collect_chunks, get_speech_timestamps

    speech = get_speech_timestamps(audio, VadOptions()) if vad else None  # the engine's default VAD settings
    if vad and not speech:
        advance_to(bar, len(audio) / SAMPLE_RATE)  # all of it looked at: the hook hears it (and may stop the run)
        return [], language  # nothing the VAD calls speech: nothing to decode, as the engine would find
    heard = np.concatenate(collect_chunks(audio, speech)[0]) if speech else audio
    where = SpeechTimestampsMap(speech, SAMPLE_RATE) if speech else None
    segments, info = wm.model.transcribe(heard, language=language, vad_filter=False, hotwords=hotwords)
    decoded = []
    for seg in segments:
        decoded.append(seg)
        advance_to(bar, where.get_original_time(seg.end, is_end=True) if where else seg.end)
    phrases = time_words(wm, heard, decoded, info.language)
    if where is not None:
        phrases = [_restored(p, where) for p in phrases]
    return phrases, info.language


def _restored(phrase: Phrase, where: Any) -> Phrase:
    """A phrase timed in the speech the VAD joined, in the recording's time (each word by the
    piece of speech its middle falls in, as faster-whisper restores its own words)."""
    words = []
    for w in phrase.words:
        piece = where.get_chunk_index((w.start + w.end) / 2)
        words.append(replace(w, start=round(where.get_original_time(w.start, piece), 3),
                             end=round(where.get_original_time(w.end, piece), 3)))
    return replace(phrase, start=words[0].start, end=words[-1].end, words=words)


def time_words(wm: WhisperModel, audio: np.ndarray, segments: list, language: Optional[str]) -> list[Phrase]:
    """faster-whisper segments decoded without word timestamps (from `transcribe` of `audio` with
    no VAD), as phrases of timed words: the engine's own word timing (cross-attention of its
    alignment heads, dynamic time warping, its punctuation merging and long-word rules) run on
    the decoded text over the very 30 s window each segment was decoded in (its `seek`). Every
    decoded word is kept: a segment the aligner gives no words keeps its words spread over its
    own times."""
    from faster_whisper.audio import pad_or_trim
    from faster_whisper.tokenizer import Tokenizer

    model = wm.model
    tokenizer = Tokenizer(model.hf_tokenizer, model.model.is_multilingual, task="transcribe", language=language)
    own = inspect.signature(model.transcribe).parameters  # the engine's own punctuation merging
    prepend, append = own["prepend_punctuations"].default, own["append_punctuations"].default
    features = model.feature_extractor(audio) if len(audio) else None
    phrases: list[Phrase] = []
    last_speech = 0.0
    for seek, window in itertools.groupby([s for s in segments if s.text.strip()], key=lambda s: s.seek):
        window = list(window)
        frames = min(model.feature_extractor.nb_max_frames, features.shape[-1] - 1 - seek)
        encoded = model.encode(pad_or_trim(features[:, seek:seek + frames]))
        parts = [dict(seek=seek, start=s.start, end=s.end, tokens=list(s.tokens)) for s in window]
        last_speech = model.add_word_timestamps([parts], tokenizer, encoded, frames, prepend, append, last_speech) or last_speech
        for seg, part in zip(window, parts):
            words = [Word(w["word"].strip(), round(w["start"], 3), round(w["end"], 3), probability=round(w["probability"], 3))
                     for w in part.get("words", []) if w["word"].strip()]
            words = words or _spread(seg.text, seg.start, seg.end)
            phrases.append(Phrase("", words[0].start, words[-1].end, seg.text.strip(), words=words))
    return phrases


def _spread(text: str, start: float, end: float) -> list[Word]:
    """A phrase's words spread evenly over its times, when no better timing is had."""
    tokens = text.split()
    step = (end - start) / max(len(tokens), 1)
    return [Word(w, round(start + i * step, 3), round(start + (i + 1) * step, 3)) for i, w in enumerate(tokens)]


def batch_chunks(audio: np.ndarray) -> list[tuple[float, float]]:
    """The stretches (start, end in seconds) that BatchedInferencePipeline decodes as one 30 s
    window: speech found by its VAD settings, gathered up to 30 s."""
    from faster_whisper.vad import VadOptions, get_speech_timestamps

    chunks: list[list[float]] = []
    speech = 0.0  # in the last chunk (its silences are cut out before decoding)
    for region in get_speech_timestamps(audio, VadOptions(max_speech_duration_s=30, min_silence_duration_ms=160)):
        start, end = region["start"] / SAMPLE_RATE, region["end"] / SAMPLE_RATE
        if chunks and speech + end - start <= 30:
            chunks[-1][1], speech = end, speech + end - start
        else:
            chunks.append([start, end])
            speech = end - start
    return [(a, b) for a, b in chunks]


def chunks_with_holes(audio: np.ndarray, phrases: list[Phrase]) -> list[tuple[float, float]]:
    """The batch chunks holding speech that no word covers (see `untranscribed_speech`)."""
    holes = untranscribed_speech(audio, phrases)
    return [(a, b) for a, b in batch_chunks(audio) if any(h["start"] < b and h["end"] > a for h in holes)]


def _left_out(audio: np.ndarray, phrases: list[Phrase], start: float, end: float) -> float:
    """Seconds of speech between start and end that no word covers."""
    holes = untranscribed_speech(audio, phrases)
    return sum(min(h["end"], end) - max(h["start"], start) for h in holes if h["start"] < end and h["end"] > start)


def speech_stretches(audio: np.ndarray, min_silence_ms: int = 160, pad_ms: Optional[int] = None) -> list[tuple[float, float]]:
    """(start, end) seconds of each stretch of speech faster-whisper's VAD hears between pauses of
    at least `min_silence_ms` (160 ms: a breath; speakers taking turns leave one), each widened by
    `pad_ms` (None: the engine's own padding, 400 ms)."""
    from faster_whisper.vad import VadOptions, get_speech_timestamps

    pad = {} if pad_ms is None else {"speech_pad_ms": pad_ms}
    regions = get_speech_timestamps(audio, VadOptions(min_silence_duration_ms=min_silence_ms, **pad))
    return [(r["start"] / SAMPLE_RATE, r["end"] / SAMPLE_RATE) for r in regions]


def untranscribed_speech(audio: np.ndarray, phrases: list[Phrase], min_length: float = 1.0) -> list[dict]:
    """Stretches of speech (per VAD) at least `min_length` seconds long with no word in them."""
    from faster_whisper.vad import VadOptions, get_speech_timestamps

    covered = sorted((w.start - 0.3, w.end + 0.3) for p in phrases for w in p.words)
    holes = []
    for region in get_speech_timestamps(audio, VadOptions(min_silence_duration_ms=160)):
        start, end = region["start"] / SAMPLE_RATE, region["end"] / SAMPLE_RATE
        for a, b in covered:
            if b <= start or a >= end:
                continue
            if a - start >= min_length:
                holes.append({"start": round(start, 2), "end": round(a, 2)})
            start = max(start, b)
        if end - start >= min_length:
            holes.append({"start": round(start, 2), "end": round(end, 2)})
    return holes


def _collect(segments, bar, duration) -> list[Phrase]:
    phrases = []
    for seg in segments:
        words = [Word(w.word.strip(), round(w.start, 3), round(w.end, 3), probability=round(w.probability, 3))
                 for w in (seg.words or []) if w.word.strip()]
        if words:
            phrases.append(Phrase("", words[0].start, words[-1].end, seg.text.strip(), words=words))
        advance_to(bar, min(seg.end, duration))
    return phrases


def _openai_whisper(wm: WhisperModel, audio: np.ndarray, language, vad, progress, prompt: Optional[str] = None):
    options: dict[str, Any] = dict(language=language, word_timestamps=True, fp16=is_gpu(wm.device))
    if prompt:
        # openai-whisper has no hotwords: the glossary is its initial prompt, given to every 30 s
        # window where it can be (carry_initial_prompt, since 20240930), else to the first
        options["initial_prompt"] = prompt
        if "carry_initial_prompt" in inspect.signature(wm.model.transcribe).parameters:
            options["carry_initial_prompt"] = True
    if vad:
        # openai-whisper has no VAD; this is its own guard against text invented in long silences.
        options["hallucination_silence_threshold"] = 2.0
    result = wm.model.transcribe(audio, verbose=False if progress is True else None, **options)
    phrases = []
    for seg in result["segments"]:
        words = [Word(w["word"].strip(), round(w["start"], 3), round(w["end"], 3), probability=round(w["probability"], 3))
                 for w in seg.get("words", []) if w["word"].strip()]
        if words:
            phrases.append(Phrase("", words[0].start, words[-1].end, seg["text"].strip(), words=words))
    return phrases, result.get("language")


# --- transformers engine -------------------------------------------------------------------------
# The audio is cut into windows of at most 30 s (at pauses), decoded in batches in one generate
# call each, and every window's tokens are then aligned to its audio in one more decoder pass:
# the cross-attention of the model's alignment heads, averaged and matched to the tokens by dynamic
# time warping, as openai-whisper and faster-whisper time their words.
