"""Whisper through transformers: the engine for GPUs that faster-whisper cannot use.

30 s windows decoded in batches (float16 and SDPA attention on CUDA), long-form with
timestamps, and word times from the decoder's cross-attention on the alignment heads, matched
to the audio frames by dynamic time warping, as openai-whisper does. (transformers' own
return_token_timestamps switches the model to eager attention for good, and its ASR pipeline
merges overlapping chunks, which blurs word times.)
"""

from __future__ import annotations

import contextlib
from typing import Any, Optional

import numpy as np

from igot.asr.whisper_model import TranscriptionOptions, WhisperModel
from igot.media.audio import SAMPLE_RATE
from igot.runtime.progress import Bar, Progress, advance_to
from igot.text import NO_SPACE_LANGUAGES
from igot.transcript import Phrase, Word

WINDOW = 30 * SAMPLE_RATE  # Whisper hears 30 s at a time
FRAME = 320  # audio samples per encoder frame (20 ms): the unit of Whisper's word times
QUIET = 1e-3  # a window whose loudest sample is under -60 dBFS holds nothing to transcribe
MAX_NEW_TOKENS = 220  # openai-whisper's limit per 30 s window (half the decoder's 448 positions)


def transcribe_audio(wm: WhisperModel, audio: np.ndarray, language, vad, progress,
                     options: Optional[TranscriptionOptions] = None, prompt: Optional[str] = None):
    """Whisper's phrases of `audio`; `prompt`: the glossary's terms (glossary.hotwords), given to
    every window as its previous text (transformers' prompt_ids, the nearest to faster-whisper's hotwords)."""
    windows = [(a, b) for a, b in speech_windows(audio, vad) if b > a and np.abs(audio[a:b]).max() >= QUIET]
    if not windows:
        return [], language
    language = language or _detect_language(wm, audio[windows[0][0]:windows[0][1]])
    batch_size = wm.windows_per_batch(options)
    phrases = []
    total = round(sum(b - a for a, b in windows) / SAMPLE_RATE, 1)
    with Bar(progress, total, "Transcribing", unit="s") as bar:
        done = 0
        for i in range(0, len(windows), batch_size):
            batch = windows[i:i + batch_size]
            phrases += _transcribe_windows(wm, audio, batch, language, prompt)
            done += sum(b - a for a, b in batch)
            advance_to(bar, done / SAMPLE_RATE)
    return phrases, language


def speech_windows(audio: np.ndarray, vad: bool) -> list[tuple[int, int]]:
    """(start, end) samples of windows of at most 30 s: stretches of speech if VAD is asked for
    and faster-whisper's Silero VAD is installed, else the whole audio cut at quiet moments."""
    if vad:
        try:
            from faster_whisper.vad import VadOptions, get_speech_timestamps
        except ImportError:
            vad = False
    if not vad:
        return quiet_cuts(audio)
    windows: list[tuple[int, int]] = []
    for region in get_speech_timestamps(audio, VadOptions(max_speech_duration_s=30, min_silence_duration_ms=160)):
        start, end = region["start"], min(region["end"], region["start"] + WINDOW)
        if windows and end - windows[-1][0] <= WINDOW:
            windows[-1] = (windows[-1][0], end)  # one window for nearby speech, pauses included
        else:
            windows.append((start, end))
    return windows


def quiet_cuts(audio: np.ndarray, search: int = 5 * SAMPLE_RATE, step: int = SAMPLE_RATE // 10) -> list[tuple[int, int]]:
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


def _transcribe_windows(wm: WhisperModel, audio: np.ndarray, windows, language: str,
                        prompt: Optional[str] = None) -> list[Phrase]:
    import torch
    from transformers.modeling_outputs import BaseModelOutput

    model = wm.model
    config = model.generation_config
    options = dict(language=language, task="transcribe") if config.is_multilingual else {}
    if prompt:
        ids = _prompt_ids(wm, prompt, language)
        if ids is not None:
            options["prompt_ids"] = ids
    with torch.inference_mode(), _quiet_transformers():
        encoded = model.model.encoder(_features(wm, [audio[a:b] for a, b in windows])).last_hidden_state
        sequences = model.generate(
            encoder_outputs=BaseModelOutput(last_hidden_state=encoded), return_timestamps=True,
            force_unique_generate_call=True, max_new_tokens=config.max_new_tokens or MAX_NEW_TOKENS, **options)
        segments = [_segments(_after_prompt(row, config), config) for row in sequences.tolist()]
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


def _prompt_ids(wm: WhisperModel, prompt: str, language: str):
    """The prompt's tokens (<|startofprev|> and the text), cut to what the decoder has room for
    beside its start tokens and the tokens it may write (generate refuses more); None: no room."""
    config = wm.model.generation_config
    ids = wm.processor.get_prompt_ids(prompt, return_tensors="pt").to(wm.model.device)
    room = wm.model.config.max_target_positions - (config.max_new_tokens or MAX_NEW_TOKENS) - len(_prompt(config, language))
    return ids[:room] if room > 1 else None


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


def _after_prompt(sequence: list[int], config) -> list[int]:
    """The tokens generate wrote: given prompt_ids, it returns them first, up to <|startoftranscript|>."""
    start = config.decoder_start_token_id
    return sequence[sequence.index(start) + 1:] if start in sequence else sequence


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
        text_index, time_index = dtw(-matrix.cpu().numpy().astype(np.float64))
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


def dtw(cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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


OPENING = "\"'“¡¿([{«-"
PUNCTUATION = OPENING + "”».,!?:;)]}。，！？：、"


def _phrase(tokenizer, tokens: list[int], starts: np.ndarray, probs: np.ndarray, language: str) -> Optional[Phrase]:
    """One segment: its words, each from the start of its first token to the start of the next word."""
    words = [Word(text, round(float(starts[a]), 3), round(float(starts[b]), 3), probability=round(float(np.mean(probs[a:b])), 3))
             for text, a, b in window_words(tokenizer, tokens, language)]
    if not words:
        return None
    _shorten_long_edges(words)
    return Phrase("", words[0].start, words[-1].end, tokenizer.decode(tokens).strip(), words=words)


def window_words(tokenizer, tokens: list[int], language: str) -> list[tuple[str, int, int]]:
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
