"""Conversations simulated from real voices, with exact reference turns and word ownership.

Two real people from the dev recordings (tests/data/recordings) take turns as in an interview:
turns of a few words to a sentence, short gaps, some overlap where the next person starts
before the other has finished, a turn that starts mid-sentence, and one-word back-channels
("yeah", "sim": here any short word, cut from the listener's own recordings) inside the other
person's turn. Optionally through a telephone band (300-3400 Hz, 8 kHz) and with room noise.

Word times in the source recordings come from Whisper's word timestamps, once per test
session (`find_voices`); the layout is deterministic from a seed. Nothing is stored: the
audio is rebuilt from the recordings each time.
"""

from __future__ import annotations

import json
import wave
from dataclasses import dataclass, field, replace
from itertools import groupby
from pathlib import Path
from typing import Sequence

import numpy as np

from igot.asr.transcribe import transcribe
from igot.media.audio import SAMPLE_RATE, convert_to_wav, load_audio
from igot.speakers.phrases import assign_speakers
from igot.text import ends_sentence
from igot.transcript import Phrase, Source, SpeakerTurn, Transcript, Word
from igot_dev.evaluate import read_rttm, right_speaker_share

RECORDINGS = Path(__file__).resolve().parents[1] / "tests" / "data" / "recordings"

# Whole recordings of one person each, by language; the picovoice clip holds three people.
ENGLISH = {
    "ljspeech": [f"ljspeech/LJ001-000{i}.flac" for i in range(1, 9)],
    "librispeech": ["librispeech_misc/2412-153948-0000.flac"],
    "jfk": ["openai_whisper/jfk.flac"],
}
PORTUGUESE = {f"lapsbm{n}": [f"falabrasil_pt/LapsBM_{n}.flac"] for n in ("0240", "0385", "0415", "0475", "0618")}
PORTUGUESE["ufpalign"] = ["falabrasil_pt/ufpalign_falabrasil.flac"]
MIN_VOICE_WORDS = 6
# The dev data's tune / check split (issue 22): speaker settings are chosen on "tune" only.
SPLIT = json.loads((RECORDINGS / "split.json").read_text(encoding="utf-8"))
SPEECH_LEVEL = 0.05  # every voice is brought to this RMS, as an auto-gain phone or meeting app would


@dataclass
class Utterance:
    audio: np.ndarray  # 16 kHz mono float32
    words: list[Word]  # times in this utterance


@dataclass
class Voice:
    name: str
    utterances: list[Utterance] = field(default_factory=list)


@dataclass
class Conversation:
    audio: np.ndarray
    words: list[Word]  # every word said, its `speaker` the voice that said it, in time order
    turns: list[SpeakerTurn]  # reference turns (they overlap where people talk at once)

    def save(self, path: Path) -> Path:
        with wave.open(str(path), "wb") as w:
            w.setnchannels(1), w.setsampwidth(2), w.setframerate(SAMPLE_RATE)
            w.writeframes((np.clip(self.audio, -1, 1) * 32767).astype("<i2").tobytes())
        return path


def _level(audio: np.ndarray) -> np.ndarray:
    return audio * (SPEECH_LEVEL / max(float(np.sqrt(np.mean(audio ** 2))), 1e-6))


def find_voices(whisper_model, language: str, work: Path, more: bool = False) -> list[Voice]:
    """Each person's recordings with Whisper's word times. `more` (English) adds the four people
    of the pyAudioAnalysis radio phone-in, cut at their reference turns."""
    work.mkdir(parents=True, exist_ok=True)
    voices = []
    for name, files in (ENGLISH if language == "en" else PORTUGUESE).items():
        voice = Voice(name)
        for relative in files:
            wav = work / f"{name}-{Path(relative).stem}.wav"
            convert_to_wav(RECORDINGS / relative, wav)
            words = transcribe(wav, whisper_model, language=language, progress=False).words
            voice.utterances.append(Utterance(_level(load_audio(wav)), [w for w in words if w.end > w.start]))
        voices.append(voice)
    if language == "en":  # three people in sequence, cut at their reference turns
        voices += _people_of(whisper_model, "picovoice_falcon/test", "falcon", work)
        if more:
            voices += _people_of(whisper_model, "pyaudioanalysis/diarizationExample", "radio", work)
    # A voice needs a sentence of its own (the shortest picovoice turn is one short phrase).
    return [v for v in voices if sum(len(u.words) for u in v.utterances) >= MIN_VOICE_WORDS]


def _people_of(whisper_model, name: str, prefix: str, work: Path) -> list[Voice]:
    """The people of a recording of several, each cut at their reference turns."""
    wav = work / f"{prefix}.wav"
    convert_to_wav(RECORDINGS / f"{name}.flac", wav)
    audio, words = load_audio(wav), transcribe(wav, whisper_model, language="en", progress=False).words
    voices: dict[str, Voice] = {}
    for turn in read_rttm(RECORDINGS / f"{name}.DERIVED.rttm"):
        a, b = int(turn.start * SAMPLE_RATE), int(turn.end * SAMPLE_RATE)
        inside = [replace(w, start=w.start - turn.start, end=w.end - turn.start) for w in words
                  if turn.start <= (w.start + w.end) / 2 < turn.end and w.end > w.start]
        voice = voices.setdefault(turn.speaker, Voice(f"{prefix}-{turn.speaker}"))
        voice.utterances.append(Utterance(_level(audio[a:b]), inside))
    return list(voices.values())


def simulate(voices: Sequence[Voice], seed: int, seconds: float = 40.0, phone: bool = False,
             noise_snr: float | None = None, reuse: bool = True) -> Conversation:
    """An interview between the two `voices`, about `seconds` long.

    With `reuse=False` no stretch of a recording is said twice: the interview ends early when
    the person whose turn it is has no three unsaid words left in a row. Each voice has only
    2-50 s of recordings, so a 40 s interview that reuses them holds near-copies of the same
    audio, which real speech never has and which make voices easier to tell apart and to
    count (docs/findings.md, "The simulated interviews reuse their audio")."""
    rng = np.random.default_rng(seed)
    placed: list[tuple[float, np.ndarray]] = []
    words: list[Word] = []
    turns: list[SpeakerTurn] = []
    unsaid = None if reuse else {id(v): [[True] * len(u.words) for u in v.utterances] for v in voices}
    t, who = 0.5, 0
    while t < seconds:
        voice, other = voices[who], voices[1 - who]
        if unsaid is None:
            utterance = _pick(rng, voice)
            n = len(utterance.words)
            size = int(min(n, rng.integers(3, 15)))
            first = int(rng.integers(1, n - size + 1)) if n > size and rng.random() < 0.4 else 0  # mid-sentence start
        else:
            chosen = _pick_unsaid(rng, voice, unsaid[id(voice)])
            if chosen is None:
                break
            utterance, first, size = chosen
        span = utterance.words[first:first + size]
        audio, cut_start = _cut(utterance, first, first + size)
        shift = t - cut_start
        said = [replace(w, start=round(float(w.start + shift), 3), end=round(float(w.end + shift), 3), speaker=voice.name) for w in span]
        placed.append((t, audio))
        words += said
        turns.append(SpeakerTurn(voice.name, float(said[0].start), float(said[-1].end)))
        length = said[-1].end - said[0].start
        if length > 2.5 and rng.random() < 0.6:  # the listener says "yeah" meanwhile
            reply = _short_word(rng, other, None if unsaid is None else unsaid[id(other)])
            if reply is not None:
                clip, word = reply
                at = said[0].start + length * rng.uniform(0.3, 0.7)
                placed.append((at - 0.03, clip))
                words.append(replace(word, start=round(float(at), 3), end=round(float(at + word.end - word.start), 3), speaker=other.name))
                turns.append(SpeakerTurn(other.name, words[-1].start, words[-1].end))
        # Next person: often a short gap, sometimes starting before this one has finished.
        gap = -rng.uniform(0.2, 0.7) if rng.random() < 0.3 else rng.uniform(0.1, 0.8)
        t = t + len(audio) / SAMPLE_RATE + gap
        who = 1 - who
    total = _mixed(rng, placed, t, words, phone, noise_snr)
    words.sort(key=lambda w: w.start)
    turns.sort(key=lambda x: x.start)
    return Conversation(total, words, turns)


def _mixed(rng, placed: list[tuple[float, np.ndarray]], until: float, words: list[Word], phone: bool,
           noise_snr: float | None) -> np.ndarray:
    """The stretches `placed` (start in seconds, audio) mixed into one recording ending 0.5 s after
    the last word, with room noise at `noise_snr` dB and through a phone line if asked."""
    total = np.zeros(int((max(until, 0) + 1.0) * SAMPLE_RATE) + max(len(a) for _, a in placed), dtype=np.float32)
    for start, audio in placed:
        a = int(round(start * SAMPLE_RATE))
        total[a:a + len(audio)] += audio
    total = total[: int((max(w.end for w in words) + 0.5) * SAMPLE_RATE)]
    if noise_snr is not None:
        total = total + _room_noise(rng, len(total), SPEECH_LEVEL / 10 ** (noise_snr / 20))
    if phone:
        total = telephone(total)
    return total.astype(np.float32)


def telephone(audio: np.ndarray) -> np.ndarray:
    """A phone line: 300-3400 Hz, sampled at 8 kHz, then back to 16 kHz for the pipeline."""
    from scipy.signal import butter, resample_poly, sosfilt

    band = sosfilt(butter(6, [300, 3400], btype="bandpass", fs=SAMPLE_RATE, output="sos"), audio)
    return resample_poly(resample_poly(band, 1, 2), 2, 1)[: len(audio)].astype(np.float32)


def _room_noise(rng, count: int, level: float) -> np.ndarray:
    """Low rumble with some hiss, like a room's ventilation."""
    from scipy.signal import butter, sosfilt

    rumble = sosfilt(butter(2, 400, fs=SAMPLE_RATE, output="sos"), rng.standard_normal(count))
    noise = rumble / max(rumble.std(), 1e-9) + 0.3 * rng.standard_normal(count)
    return (noise / noise.std() * level).astype(np.float32)


def _pick(rng, voice: Voice) -> Utterance:
    usable = [u for u in voice.utterances if len(u.words) >= 3]
    return usable[int(rng.integers(len(usable)))]


def _cut(utterance: Utterance, first: int, last: int) -> tuple[np.ndarray, float]:
    """Audio of words[first:last], cut half-way into the pauses around them."""
    words = utterance.words
    start = (words[first - 1].end + words[first].start) / 2 if first > 0 else max(0.0, words[0].start - 0.1)
    end = (words[last - 1].end + words[last].start) / 2 if last < len(words) else words[-1].end + 0.15
    a, b = int(start * SAMPLE_RATE), int(end * SAMPLE_RATE)
    return utterance.audio[a:b], start


def _pick_unsaid(rng, voice: Voice, unsaid: list[list[bool]]):
    """(utterance, first word, word count) of a stretch of 3-14 words of `voice` not said yet,
    marked said; None when no three unsaid words in a row are left."""
    runs = []  # (utterance index, first, length) of each run of unsaid words
    for k, flags in enumerate(unsaid):
        j = 0
        for free, run in groupby(flags):
            length = len(list(run))
            if free and length >= 3:
                runs.append((k, j, length))
            j += length
    if not runs:
        return None
    k, start, length = runs[int(rng.integers(len(runs)))]
    size = int(min(length, rng.integers(3, 15)))
    first = start + int(rng.integers(1, length - size + 1)) if length > size and rng.random() < 0.4 else start
    unsaid[k][first:first + size] = [False] * size
    return voice.utterances[k], first, size


def _short_word(rng, voice: Voice, unsaid: list[list[bool]] | None = None):
    """One short word of `voice`, cut from its recordings: the back-channel (with `unsaid`,
    only a word not said yet, then marked said)."""
    options = [(k, j) for k, u in enumerate(voice.utterances) for j, w in enumerate(u.words)
               if 0.15 <= w.end - w.start <= 0.6 and (unsaid is None or unsaid[k][j])]
    if not options:
        return None
    k, j = options[int(rng.integers(len(options)))]
    if unsaid is not None:
        unsaid[k][j] = False
    utterance, word = voice.utterances[k], voice.utterances[k].words[j]
    a, b = int((word.start - 0.03) * SAMPLE_RATE), int((word.end + 0.03) * SAMPLE_RATE)
    return utterance.audio[max(a, 0):b], word


def pairs(voices: Sequence[Voice], count: int, seed: int) -> list[tuple[Voice, Voice]]:
    """`count` different pairs of people, chosen by the seed."""
    rng = np.random.default_rng(seed)
    every = [(a, b) for i, a in enumerate(voices) for b in voices[i + 1:]]
    return [every[i] for i in rng.permutation(len(every))[:count]]



# Turns as diarizers give them (keyword arguments of coarse_turns): "fine", boundaries to a few
# hundredths of a second as a frame-level diarizer places them; "coarse", a window-based one.
DIARIZER_ERRORS = {"fine": {"jitter": (0.0, 0.05), "miss_short": 0.2, "join": 0.2}, "coarse": {}}


def coarse_turns(turns: Sequence[SpeakerTurn], seed: int, jitter: tuple[float, float] = (0.1, 0.3),
                 miss_short: float = 0.5, short: float = 1.0, join: float = 0.5) -> list[SpeakerTurn]:
    """Turns as a diarizer errs: every boundary moved 0.1-0.3 s either way, half the short
    turns (back-channels) missed, and one person's turns less than `join` s apart joined."""
    rng = np.random.default_rng(seed)
    moved = []
    for t in turns:
        start, end = (x + rng.choice((-1, 1)) * rng.uniform(*jitter) for x in (t.start, t.end))
        if end - start >= 0.1 and not (t.end - t.start < short and rng.random() < miss_short):
            moved.append(SpeakerTurn(t.speaker, max(0.0, float(start)), float(end)))
    joined: list[SpeakerTurn] = []
    for t in sorted(moved, key=lambda t: (t.speaker, t.start)):
        if joined and joined[-1].speaker == t.speaker and t.start - joined[-1].end < join:
            joined[-1] = SpeakerTurn(t.speaker, joined[-1].start, max(joined[-1].end, t.end))
        else:
            joined.append(t)
    return sorted(joined, key=lambda t: t.start)


def words_to_speakers(words, turns) -> list[Word]:
    """`words` with the speakers iGot gives them, in the same order (phrases are in reading
    order, where a back-channel comes after the sentence it interrupted)."""
    return [w for _, w in phrases_of(words, turns)]


def phrases_of(words, turns) -> list[tuple[int, Word]]:
    """For each of `words`, the index of its phrase and the word as iGot gives it."""
    plain = [Word(w.text, w.start, w.end) for w in words]
    out = assign_speakers(Transcript(Source("interview"), "en", phrases=[Phrase("", 0, 0, "", words=plain)]), turns)
    found = {(w.start, w.end, w.text): (k, w) for k, p in enumerate(out.phrases) for w in p.words}
    return [found[(w.start, w.end, w.text)] for w in words]


def speaker_mapping(found: Sequence[str], true: Sequence[str]) -> dict[str, str]:
    """Found speaker -> true one, pairs sharing the most words first (for two people, the right
    share's best one-to-one mapping)."""
    votes: dict[tuple, int] = {}
    for f, t in zip(found, true):
        votes[(f, t)] = votes.get((f, t), 0) + 1
    mapping: dict[str, str] = {}
    for (f, t), _ in sorted(votes.items(), key=lambda kv: -kv[1]):
        if f not in mapping and t not in mapping.values():
            mapping[f] = t
    return mapping


def turn_taking(c, turns) -> dict:
    """How iGot's phrases follow the conversation `c` when given `turns`: right words (pooled
    count), back-channels kept apart on the right speaker without splitting the sentence they
    fell in, and changes of speaker mid-sentence kept."""
    found = phrases_of(c.words, turns)
    speakers = [w.speaker for _, w in found]
    right = right_speaker_share(speakers, [w.speaker for w in c.words])
    mapping = speaker_mapping(speakers, [w.speaker for w in c.words])
    backchannels = kept = 0
    for k, w in enumerate(c.words):
        if not any(t.speaker == w.speaker and (t.start, t.end) == (w.start, w.end) for t in c.turns):
            continue
        around = [j for j in (k - 1, k + 1) if 0 <= j < len(c.words) and c.words[j].speaker != w.speaker]
        if len(around) < 2 or ends_sentence(c.words[k - 1].text):
            continue  # not inside the other person's sentence
        backchannels += 1
        phrase, said = found[k]
        alone = all(found[j][0] != phrase for j in range(len(c.words)) if c.words[j].speaker != w.speaker)
        kept += alone and mapping.get(said.speaker) == w.speaker and found[k - 1][0] == found[k + 1][0]
    changes = changed = 0
    for k in range(1, len(c.words)):
        before, now = c.words[k - 1], c.words[k]
        rest = c.words[k:k + 3]
        if before.speaker != now.speaker and not ends_sentence(before.text) and all(w.speaker == now.speaker for w in rest) and len(rest) == 3:
            changes += 1
            changed += found[k][0] != found[k - 1][0] and mapping.get(found[k][1].speaker) == now.speaker
    return {"right": right * len(c.words), "words": len(c.words), "backchannels": backchannels, "kept": kept,
            "changes": changes, "changed": changed}


def pooled(conversations, make_turns) -> dict:
    """`turn_taking` summed over (seed, conversation) pairs, with turns `make_turns(c, seed)`."""
    total: dict[str, float] = {}
    for seed, c in conversations:
        for key, value in turn_taking(c, make_turns(c, seed)).items():
            total[key] = total.get(key, 0) + value
    return total


def side_voices(whisper_model, language: str, side: str, work: Path) -> list[Voice]:
    """The voices of one side of the split ("tune" or "check") in `language`."""
    names = SPLIT[side]["english_voices" if language == "en" else "portuguese_voices"]
    return [v for v in find_voices(whisper_model, language, work, more=language == "en") if v.name in names]


def side_interviews(whisper_model, side: str, work: Path, seconds: float = 60.0):
    """Every pair of one side's voices in a two-person interview, clean and through a phone line
    (room noise at 30 dB SNR), nothing said twice: (name, interview, its saved WAV)."""
    for language in ("en", "pt"):
        voices = side_voices(whisper_model, language, side, work / f"voices-{language}")
        for k, pair in enumerate((a, b) for i, a in enumerate(voices) for b in voices[i + 1:]):
            for phone in (False, True):
                c = simulate(pair, seed=1000 + k, seconds=seconds, phone=phone, noise_snr=30 if phone else None, reuse=False)
                name = f"{language}-{'phone' if phone else 'clean'} {pair[0].name}/{pair[1].name}"
                yield name, c, c.save(work / f"{side}-{language}-{k}-{phone}.wav")


def long_interview(voices: Sequence[Voice], seed: int, minutes: float, phone: bool = False,
                   noise_snr: float | None = None) -> Conversation:
    """An interview of about `minutes` as real ones go: `voices[0]` asks (a question of a few
    words to a sentence), one of the others answers at length (2-8 stretches of a sentence each,
    with pauses, the interviewer's back-channels inside), and with two interviewees the other
    sometimes adds a little. The same people throughout, so a diarizer sees each voice hundreds of
    times.

    Each voice has only 2-50 s of recordings, so its stretches come back again and again: each
    one said with its own loudness (+-4 dB) and pace and pitch (+-4 %, resampled), which is as
    far from real variety as the dev data lets these go (docs/findings.md, "Long interviews")."""
    rng = np.random.default_rng(seed)
    seconds = minutes * 60.0
    placed: list[tuple[float, np.ndarray]] = []
    words: list[Word] = []
    turns: list[SpeakerTurn] = []
    interviewer, people = voices[0], list(voices[1:])

    def say(voice: Voice, at: float) -> float:
        """One stretch of `voice` from `at` (seconds); returns where it ends."""
        utterance = _pick(rng, voice)
        n = len(utterance.words)
        size = int(min(n, rng.integers(3, 15)))
        first = int(rng.integers(1, n - size + 1)) if n > size and rng.random() < 0.4 else 0
        audio, cut_start = _cut(utterance, first, first + size)
        audio, pace = _vary(rng, audio)
        said = [replace(w, start=round(float(at + (w.start - cut_start) / pace), 3),
                        end=round(float(at + (w.end - cut_start) / pace), 3), speaker=voice.name)
                for w in utterance.words[first:first + size]]
        placed.append((at, audio))
        words.extend(said)
        turns.append(SpeakerTurn(voice.name, said[0].start, said[-1].end))
        return at + len(audio) / SAMPLE_RATE

    def nod(voice: Voice, at: float) -> None:
        """A back-channel of `voice` at `at`."""
        reply = _short_word(rng, voice)
        if reply is None:
            return
        clip, word = reply
        placed.append((at - 0.03, clip * 10 ** (rng.uniform(-4, 4) / 20)))
        words.append(replace(word, start=round(float(at), 3), end=round(float(at + word.end - word.start), 3), speaker=voice.name))
        turns.append(SpeakerTurn(voice.name, words[-1].start, words[-1].end))

    def answer(voice: Voice, at: float, stretches: int) -> float:
        begun = at
        for k in range(stretches):
            at = say(voice, at) + (rng.uniform(0.15, 0.7) if k < stretches - 1 else 0.0)
            if at - begun > 4 and rng.random() < 0.35:  # the interviewer: "yeah", "sim"
                nod(interviewer, at - rng.uniform(0.8, 2.0))
        return at

    t, last = 0.5, 0
    while t < seconds:
        t = say(interviewer, t) + _next_gap(rng)
        # the one who answers: with two interviewees, mostly the one not asked last
        who = (last + (rng.random() < 0.7)) % len(people) if len(people) > 1 else 0
        t = answer(people[who], t, int(rng.integers(2, 9))) + _next_gap(rng)
        if len(people) > 1 and rng.random() < 0.25:  # the other one adds a little
            t = answer(people[1 - who], t, int(rng.integers(1, 4))) + _next_gap(rng)
        last = who
    total = _mixed(rng, placed, t, words, phone, noise_snr)
    order = sorted(range(len(words)), key=lambda k: words[k].start)
    return Conversation(total, [words[k] for k in order], sorted(turns, key=lambda x: x.start))


def _next_gap(rng) -> float:
    """The pause before the next person: often short, sometimes they start before the end."""
    return -rng.uniform(0.2, 0.7) if rng.random() < 0.2 else rng.uniform(0.1, 0.9)


def _vary(rng, audio: np.ndarray) -> tuple[np.ndarray, float]:
    """`audio` said again: louder or softer by up to 4 dB, faster or slower (and higher or lower)
    by up to 4 %; returns it and its pace (new duration = old / pace)."""
    pace = float(rng.uniform(0.96, 1.04))
    count = max(int(round(len(audio) / pace)), 1)
    resampled = np.interp(np.arange(count) * pace, np.arange(len(audio)), audio).astype(np.float32)
    return resampled * float(10 ** (rng.uniform(-4, 4) / 20)), pace


# Long interviews per side (issue 40, point 4): (language, phone line, people, minutes).
LONG_INTERVIEWS = (("en", False, 2, 20), ("en", True, 3, 40), ("pt", False, 3, 30), ("pt", True, 2, 25))


def long_interviews(whisper_model, side: str, work: Path):
    """One side's long simulated interviews (LONG_INTERVIEWS), its people chosen by the seed among
    the side's voices: (name, interview, its saved WAV)."""
    for k, (language, phone, people, minutes) in enumerate(LONG_INTERVIEWS):
        voices = side_voices(whisper_model, language, side, work / f"voices-{language}")
        rng = np.random.default_rng(2000 + k)
        chosen = [voices[i] for i in rng.permutation(len(voices))[:people]]
        c = long_interview(chosen, seed=2000 + k, minutes=minutes, phone=phone, noise_snr=30 if phone else None)
        name = f"{language}-{'phone' if phone else 'clean'} {minutes} min {'/'.join(v.name for v in chosen)}"
        yield name, c, c.save(work / f"{side}-long-{k}.wav")
