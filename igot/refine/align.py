"""Word times from a CTC speech model: every phrase link lands where the phrase starts.

Whisper's word timestamps drift by hundreds of milliseconds. A wav2vec2 model fine-tuned with
CTC says, for every 20 ms frame, how likely each character is; the Viterbi path through those
frames that spells the known text gives each character, hence each word, its frames.

Phrase by phrase: the audio around a phrase goes through the model, the phrase's words are
spelled in the model's alphabet and forced-aligned. Words the alphabet cannot spell ("$1,200",
"2023", a name in another script) keep their place, timed between their neighbours.
"""

from __future__ import annotations

import math
import os
import unicodedata
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Optional, Union

import numpy as np
import torch
import torch.nn.functional as F

from igot.errors import IgotError
from igot.media.audio import SAMPLE_RATE, is_speech_wav, load_audio, read_window, wav_duration
from igot.runtime.devices import pick_device
from igot.runtime.progress import Bar, Progress
from igot.text import NO_SPACE_LANGUAGES
from igot.transcript import Transcript, Word

# Default wav2vec2 CTC checkpoints (character vocabularies), one per Whisper language code.
# Most are Jonatas Grosman's XLSR-53 fine-tunes on Common Voice, the de facto standard for
# forced alignment (WhisperX uses them). Where he published none:
#   cs, sk: comodoro's XLS-R 300m fine-tunes, WhisperX's defaults for Czech and Slovak;
#   sl: anton-l's XLSR-53 Slovenian, WhisperX's default;
#   bg: anuragshas's XLS-R 300m on Common Voice 8 (Robust Speech Event), the Bulgarian model
#       other alignment tools use; not in WhisperX's list.
ALIGN_MODELS: dict[str, str] = {
    "en": "facebook/wav2vec2-base-960h",
    "pt": "jonatasgrosman/wav2vec2-large-xlsr-53-portuguese",
    "es": "jonatasgrosman/wav2vec2-large-xlsr-53-spanish",
    "fr": "jonatasgrosman/wav2vec2-large-xlsr-53-french",
    "de": "jonatasgrosman/wav2vec2-large-xlsr-53-german",
    "it": "jonatasgrosman/wav2vec2-large-xlsr-53-italian",
    "nl": "jonatasgrosman/wav2vec2-large-xlsr-53-dutch",
    "pl": "jonatasgrosman/wav2vec2-large-xlsr-53-polish",
    "ru": "jonatasgrosman/wav2vec2-large-xlsr-53-russian",
    "ja": "jonatasgrosman/wav2vec2-large-xlsr-53-japanese",
    "zh": "jonatasgrosman/wav2vec2-large-xlsr-53-chinese-zh-cn",
    "cs": "comodoro/wav2vec2-xls-r-300m-cs-250",
    "sk": "comodoro/wav2vec2-xls-r-300m-sk-cv8",
    "sl": "anton-l/wav2vec2-large-xlsr-53-slovenian",
    "bg": "anuragshas/wav2vec2-large-xls-r-300m-bg",
}

MIN_SAMPLES = 400  # wav2vec2's receptive field: shorter input gives no frame


@dataclass(frozen=True)
class AlignOptions:
    """The tuned values of word timing; a sweep is replace(AlignOptions(), pad_seconds=1.0).
    None of them was swept on a table; the stage's time and memory with them: benchmarks/README.md,
    "A user's hour on a GPU" and "Word timing alone"."""

    pad_seconds: float = 0.5  # audio taken on each side of a phrase: Whisper's times can be this far off
    chunk_seconds: float = 30.0  # longest audio given to the model at once, so memory stays bounded
    context_seconds: float = 1.0  # audio either side of a chunk that the model hears but whose frames are dropped
    batch: int = 16  # chunks heard together when the whole recording is heard at once (on a GPU)


@dataclass
class Aligner:
    """A CTC model that gives, frame by frame, the log-probability of each character."""

    model: Any  # a transformers *ForCTC model in eval mode (None for a test's oracle)
    vocabulary: dict[str, int]  # character -> class id
    blank: int  # the CTC blank class (wav2vec2's pad token)
    frame_s: float  # seconds per emission frame
    device: str
    language: str
    name: str = ""  # hub id or folder, recorded in the transcript
    normalize: bool = True  # zero-mean unit-variance input, as the feature extractor does

    @property
    def delimiter(self) -> Optional[str]:
        """The vocabulary's word separator, or None for a language written without spaces."""
        if self.language in NO_SPACE_LANGUAGES:
            return None
        return next((d for d in ("|", " ") if d in self.vocabulary), None)

    @property
    def precision(self) -> str:
        return str(self.model.dtype).removeprefix("torch.") if self.model is not None else "float32"


def load_aligner(language: str, model: Optional[str] = None, device: str = "auto",
                 local_files_only: bool = False) -> Optional[Aligner]:
    """The alignment model for `language` (or `model`: a hub id or a save_pretrained folder);
    local_files_only: from the hub's local cache, without asking the hub.

    None when there is no default model for the language: the caller keeps Whisper's times.
    """
    name = model or ALIGN_MODELS.get(language)
    if name is None:
        return None
    try:
        from transformers import AutoFeatureExtractor, AutoModelForCTC, AutoTokenizer
    except ImportError:
        raise IgotError("Word alignment needs the transformers library.", "Run: pip install transformers") from None
    device = pick_device(device)
    path = os.path.expanduser(name)
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=local_files_only)
        extractor = AutoFeatureExtractor.from_pretrained(path, local_files_only=local_files_only)
        net = AutoModelForCTC.from_pretrained(path, local_files_only=local_files_only)
    except Exception as exc:  # the hub client and the loaders raise many types
        raise _load_error(name, exc) from None
    # float16 halves a GPU's memory and time, and wav2vec2 inference is stable in it; CPUs want float32.
    net = net.to(device, torch.float16 if device.startswith("cuda") else torch.float32).eval()
    config = net.config
    ratio = getattr(config, "inputs_to_logits_ratio", None) or math.prod(config.conv_stride)
    blank = config.pad_token_id if config.pad_token_id is not None else tokenizer.pad_token_id
    return Aligner(
        model=net,
        vocabulary=dict(tokenizer.get_vocab()),
        blank=int(blank),
        frame_s=ratio / SAMPLE_RATE,
        device=device,
        language=language,
        name=name,
        normalize=bool(getattr(extractor, "do_normalize", True)),
    )


def _load_error(name: str, exc: Exception) -> IgotError:
    text = str(exc).strip()
    if Path(os.path.expanduser(name)).exists():
        return IgotError(
            f"Could not read the alignment model at '{name}': {text.splitlines()[0] if text else type(exc).__name__}.",
            "Check that the folder holds a CTC model saved with save_pretrained, with its tokenizer and feature extractor.",
        )
    return IgotError(
        f"Could not download the alignment model '{name}' ({type(exc).__name__}).",
        "Check the internet connection and the model name, or download the model once and pass its folder.",
    )


# --- CTC forced alignment ------------------------------------------------------------------------


def forced_align(
    log_probs: torch.Tensor, tokens: list[int], blank: int, edge: Optional[int] = None
) -> list[tuple[int, int, float]]:
    """The most likely CTC path through `log_probs` [frames, classes] that spells `tokens`.

    Returns, per token, (first frame, end frame exclusive, mean probability over its frames).
    The path may start and end in blank, and must pass through a blank between two equal
    tokens. `edge`, when given, is the class that the frames before the first token and after
    the last one score instead of blank. Raises ValueError when there are too few frames to
    spell the tokens.
    """
    if not tokens:
        return []
    frames = log_probs.shape[0]
    if frames < min_frames(tokens):
        raise ValueError(f"{frames} frames cannot spell {len(tokens)} tokens")
    lp = log_probs.detach().to("cpu", torch.float64).numpy()
    # States: blank, token 1, blank, token 2, …, token N, blank.
    labels = np.full(2 * len(tokens) + 1, blank)
    labels[1::2] = tokens
    if edge is not None:
        labels[0] = labels[-1] = edge
    emit = lp[:, labels]  # [frames, states]
    # Skipping a blank (state s-2 -> s) is allowed only into a token unlike the one before it.
    skip_penalty = np.full(len(labels), -np.inf)
    skip_penalty[3::2] = np.where(labels[3::2] != labels[1:-2:2], 0.0, -np.inf)

    # score[2 + s]: the best path's log-probability ending in state s. The two -inf slots in
    # front make "from s-1" and "from s-2" plain shifted views.
    score = np.full(len(labels) + 2, -np.inf)
    score[2:4] = emit[0, :2]  # a path starts in the leading blank or in the first token
    moves = np.zeros((frames, len(labels)), dtype=np.uint8)  # 0 stay, 1 from s-1, 2 from s-2
    options = np.empty((3, len(labels)))
    states = np.arange(len(labels))
    # One vectorised step per frame. numpy, not torch: on vectors this small torch's per-op
    # overhead (and its thread pool) makes the loop 3-4 times slower.
    for t in range(1, frames):
        options[0] = score[2:]
        options[1] = score[1:-1]
        np.add(score[:-2], skip_penalty, out=options[2])
        move = options.argmax(axis=0)
        moves[t] = move
        score[2:] = options[move, states] + emit[t]

    last = len(labels) - 1 if score[-1] >= score[-2] else len(labels) - 2  # end in last token or blank
    if not np.isfinite(score[2 + last]):
        raise ValueError("no CTC path spells the tokens")
    path = np.empty(frames, dtype=np.int64)
    state = last
    for t in range(frames - 1, -1, -1):
        path[t] = state
        state -= int(moves[t, state])
    return _token_spans(path, lp, tokens)


def min_frames(tokens: list[int]) -> int:
    """Frames needed to spell `tokens`: one per token and one blank between equal neighbours."""
    return len(tokens) + sum(a == b for a, b in zip(tokens, tokens[1:]))


def _token_spans(path: np.ndarray, lp: np.ndarray, tokens: list[int]) -> list[tuple[int, int, float]]:
    spans = []
    for k, token in enumerate(tokens):
        frames = np.flatnonzero(path == 2 * k + 1)
        probability = float(np.exp(lp[frames, token]).mean())
        spans.append((int(frames[0]), int(frames[-1]) + 1, probability))
    return spans


# --- text to the model's alphabet ----------------------------------------------------------------


def spell(word: str, vocabulary: dict[str, int]) -> list[str]:
    """The characters of `word` in the model's alphabet; [] when the alphabet cannot spell it.

    Case follows the vocabulary; accents are kept where it has them and dropped where it has
    only the bare letter; punctuation is dropped. A letter or digit the vocabulary lacks ("2023",
    "$1,200", another script) makes the whole word unspellable: spelling part of it would pin
    the word to the wrong sounds.
    """
    chars: list[str] = []
    for c in unicodedata.normalize("NFKC", word):
        if c in ("|", " "):
            continue
        found = _in_vocabulary(c, vocabulary)
        if found:
            chars += found
        elif c.isalnum():
            return []
    return chars


def _in_vocabulary(c: str, vocabulary: dict[str, int]) -> Optional[list[str]]:
    bare = "".join(ch for ch in unicodedata.normalize("NFD", c) if not unicodedata.combining(ch))
    for form in (c, c.lower(), c.upper(), bare, bare.lower(), bare.upper()):
        if form and all(ch in vocabulary for ch in form):
            return list(form)
    return None


# --- alignment of a transcript -------------------------------------------------------------------


def align(
    t: Transcript,
    audio: Union[np.ndarray, Path, str],
    aligner: Optional[Aligner],
    progress: Progress = False,
    whole: Optional[bool] = None,
    options: Optional[AlignOptions] = None,
) -> Transcript:
    """Give every word the start and end that the alignment model hears; text is unchanged.

    `audio` is 16 kHz mono samples or a recording. With no aligner, `t` comes back as it is.
    Links are not touched: the caller rebuilds them from the new phrase starts.
    """
    if aligner is None:
        return t
    if not isinstance(audio, np.ndarray) and not is_speech_wav(Path(audio)):
        audio = load_audio(Path(audio))  # another format: decode it whole
    if isinstance(audio, np.ndarray):
        samples = np.asarray(audio, dtype=np.float32)
        duration = len(samples) / SAMPLE_RATE

        def read(start: float, end: float) -> np.ndarray:
            return samples[int(start * SAMPLE_RATE): int(end * SAMPLE_RATE)]
    else:
        # A recording on disk is read piece by piece, so a long one never sits in memory whole.
        path = Path(audio)
        duration = wav_duration(path)

        def read(start: float, end: float) -> np.ndarray:
            return read_window(path, start, end)

    if aligner.device.startswith("cuda") if whole is None else whole:
        # On a GPU (or when `whole`), hear the whole recording once in batches of chunks (one phrase at a time
        # leaves it idle), keep the frames (~30 MB an hour) and cut each phrase's out of them.
        frames = recording_log_probs(aligner, read, duration, options)
        hop = round(aligner.frame_s * SAMPLE_RATE)

        def emissions(start: int, end: int) -> torch.Tensor:
            return frames[start // hop: -(-end // hop)]
    else:
        def emissions(start: int, end: int) -> torch.Tensor:
            return model_log_probs(aligner, read(start / SAMPLE_RATE, end / SAMPLE_RATE), options)

    return align_with(t, emissions, aligner, duration, progress, options)


def align_with(
    t: Transcript,
    emissions: Callable[[int, int], torch.Tensor],
    aligner: Aligner,
    duration: float,
    progress: Progress = False,
    options: Optional[AlignOptions] = None,
) -> Transcript:
    """`align` with the frames coming from `emissions(start_sample, end_sample)` -> [frames, classes].

    Phrase windows never start before the previous phrase's last word ends, so phrases never
    overlap; every word ends with start <= end, in order, inside [0, duration].
    """
    pad = (options or AlignOptions()).pad_seconds
    phrases = []
    floor = 0.0  # where the previous phrase's words end
    with Bar(progress, len(t.phrases), "Aligning words", unit="phrase") as bar:
        for phrase in t.phrases:
            words = None
            start = max(floor, phrase.start - pad)
            end = min(duration, phrase.end + pad)
            hop = round(aligner.frame_s * SAMPLE_RATE)
            first, last = int(start * SAMPLE_RATE) // hop * hop, int(end * SAMPLE_RATE)  # on a frame boundary
            if phrase.words and last > first:
                words = align_phrase(emissions(first, last), phrase.words, aligner, first / SAMPLE_RATE)
            words = _in_order(words or phrase.words, floor, duration)
            if words:
                floor = words[-1].end
                phrase = replace(phrase, start=words[0].start, end=words[-1].end)
            phrases.append(replace(phrase, words=words))
            bar.update()
    return replace(t, phrases=phrases, info={**t.info, "alignment": aligner.name})


def align_phrase(log_probs: torch.Tensor, words: list[Word], aligner: Aligner, offset: float) -> Optional[list[Word]]:
    """Words timed from `log_probs` [frames, classes] of audio starting at `offset` seconds.

    None when nothing in the phrase is spellable or the audio is too short for its characters:
    the caller then keeps Whisper's times.
    """
    vocabulary, delimiter = aligner.vocabulary, aligner.delimiter
    any_sound = log_probs.shape[1]  # the class _with_any_sound adds
    tokens: list[int] = []
    ranges: list[Optional[tuple[int, int]]] = []  # each word's tokens, None when unspellable
    for w in words:
        chars = spell(w.text, vocabulary)
        if not chars and ranges and ranges[-1] is None:
            ranges.append(None)  # one "any sound" token stands for a whole run of unspellable words
            continue
        if tokens and delimiter is not None:
            tokens.append(vocabulary[delimiter])
        ranges.append((len(tokens), len(tokens) + len(chars)) if chars else None)
        tokens += [vocabulary[c] for c in chars] if chars else [any_sound]
    frames = log_probs.shape[0]
    if all(r is None for r in ranges) or frames < min_frames(tokens):
        return None
    spans = forced_align(_with_any_sound(log_probs, aligner.blank), tokens, aligner.blank, edge=any_sound)
    times: list[Optional[tuple[float, float]]] = [
        None if r is None else (offset + spans[r[0]][0] * aligner.frame_s, offset + spans[r[1] - 1][1] * aligner.frame_s)
        for r in ranges
    ]
    times = _fill_unspelled(times, words, offset, offset + frames * aligner.frame_s)
    return [replace(w, start=round(a, 3), end=round(b, 3)) for w, (a, b) in zip(words, times)]


def _with_any_sound(log_probs: torch.Tensor, blank: int) -> torch.Tensor:
    """`log_probs` plus one class, "any sound", for what the phrase cannot spell: the window's
    edges, which reach into the neighbouring phrases, and words such as "$1,200".

    A frame scores there its blank, or its best letter at half the probability. So spoken
    numbers and the neighbours' words are absorbed instead of pulling this phrase's letters
    towards them, while a letter still prefers its own frames to "any sound".
    """
    lp = log_probs.float()
    letters = lp.clone()
    letters[:, blank] = -math.inf
    any_sound = torch.maximum(lp[:, blank], letters.max(dim=-1).values + math.log(0.5))
    return torch.cat([lp, any_sound[:, None]], dim=-1)


def _fill_unspelled(
    times: list[Optional[tuple[float, float]]], words: list[Word], lo: float, hi: float
) -> list[tuple[float, float]]:
    """Time each run of unspellable words in the gap its aligned neighbours leave.

    At a phrase edge the run keeps Whisper's length, next to its aligned neighbour.
    """
    times = list(times)
    i = 0
    while i < len(times):
        if times[i] is not None:
            i += 1
            continue
        j = i
        while j < len(times) and times[j] is None:
            j += 1
        length = max(0.0, words[j - 1].end - words[i].start)
        before = times[i - 1][1] if i > 0 else None
        after = times[j][0] if j < len(times) else None
        if before is None:
            before = max(lo, after - length)
        if after is None:
            after = max(before, min(hi, before + length))
        times[i:j] = _split(before, after, words[i:j])
        i = j
    return times


def _split(start: float, end: float, words: list[Word]) -> list[tuple[float, float]]:
    """Cut [start, end] into consecutive pieces in proportion to Whisper's word lengths."""
    weights = np.array([max(w.end - w.start, 0.01) for w in words])
    edges = start + (end - start) * np.concatenate([[0.0], np.cumsum(weights) / weights.sum()])
    return [(float(a), float(b)) for a, b in zip(edges[:-1], edges[1:])]


def _in_order(words: list[Word], floor: float, duration: float) -> list[Word]:
    """Clamp times so words never overlap, never go backwards and stay inside the audio."""
    out = []
    for w in words:
        start = min(max(w.start, floor), duration)
        end = min(max(w.end, start), duration)
        out.append(replace(w, start=start, end=end))
        floor = end
    return out


# --- the model ------------------------------------------------------------------------------------


@torch.inference_mode()
def recording_log_probs(aligner: Aligner, read: Callable[[float, float], np.ndarray], duration: float,
                        options: Optional[AlignOptions] = None) -> torch.Tensor:
    """model_log_probs of a whole recording, its chunks (options.chunk_seconds, each heard with
    options.context_seconds either side) run options.batch at a time; chunks of equal length go
    together, so nothing is padded."""
    options = options or AlignOptions()
    step, context = _chunk_and_context(aligner, options)
    ratio = round(aligner.frame_s * SAMPLE_RATE)
    total = int(duration * SAMPLE_RATE)
    chunks = []  # (start, audio heard, frames to drop at its left)
    for start in range(0, max(total, 1), step):
        left = max(0, start - context)
        piece = torch.from_numpy(np.ascontiguousarray(read(left / SAMPLE_RATE, (start + step + context) / SAMPLE_RATE),
                                                      dtype=np.float32))
        if aligner.normalize:
            piece = (piece - piece.mean()) / torch.sqrt(piece.var(correction=0) + 1e-7)
        chunks.append((start, F.pad(piece, (0, max(0, MIN_SAMPLES - len(piece)))), (start - left) // ratio))
    frames: dict[int, torch.Tensor] = {}
    for length in {len(c[1]) for c in chunks}:
        same = [c for c in chunks if len(c[1]) == length]
        for i in range(0, len(same), options.batch):
            group = same[i: i + options.batch]
            with torch.inference_mode():
                logits = aligner.model(torch.stack([c[1] for c in group]).to(aligner.device, aligner.model.dtype)).logits
            for (start, _, drop), row in zip(group, logits):
                frames[start] = row[drop:][: step // ratio].float().log_softmax(dim=-1).cpu()
    return torch.cat([frames[start] for start, _, _ in chunks])


def model_log_probs(aligner: Aligner, samples: np.ndarray, options: Optional[AlignOptions] = None) -> torch.Tensor:
    """Log-probabilities [frames, classes] (CPU, float32) for 16 kHz samples.

    Long audio goes through the model in chunks of options.chunk_seconds, each heard with
    options.context_seconds of audio either side; chunk edges fall on frame boundaries so frame
    i is always at i * frame_s.
    """
    x = torch.from_numpy(np.ascontiguousarray(samples, dtype=np.float32))
    if aligner.normalize:
        x = (x - x.mean()) / torch.sqrt(x.var(correction=0) + 1e-7)
    ratio = round(aligner.frame_s * SAMPLE_RATE)
    step, context = _chunk_and_context(aligner, options or AlignOptions())
    dtype = aligner.model.dtype
    out = []
    for start in range(0, max(len(x), 1), step):
        left = max(0, start - context)
        piece = x[left : start + step + context]
        piece = F.pad(piece, (0, max(0, MIN_SAMPLES - len(piece))))
        logits = aligner.model(piece[None].to(aligner.device, dtype)).logits[0]
        keep = logits[(start - left) // ratio :][: step // ratio]
        out.append(keep.float().log_softmax(dim=-1).cpu())
    return torch.cat(out)


def _chunk_and_context(aligner: Aligner, options: AlignOptions) -> tuple[int, int]:
    """Samples in a chunk and heard either side of it, each a whole number of frames."""
    ratio = round(aligner.frame_s * SAMPLE_RATE)
    return (int(options.chunk_seconds * SAMPLE_RATE) // ratio * ratio,
            int(options.context_seconds * SAMPLE_RATE) // ratio * ratio)
