"""Whisper transcription on real recordings with real (small, bundled) models."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from igot.asr.transcribe import load_whisper, transcribe
from igot.errors import IgotError
from igot_dev.evaluate import word_error_rate


def english_recordings(devdata, readings: int = 4):
    """English dev recordings with their references: three voices, then `readings` LJSpeech readings."""
    pairs = [
        (devdata / "openai_whisper/jfk.flac", (devdata / "openai_whisper/jfk.reference.txt").read_text()),
        (devdata / "librispeech_misc/2412-153948-0000.flac", (devdata / "librispeech_misc/2412-153948-0000.txt").read_text()),
        (devdata / "timit_ldc93s1/LDC93S1.flac", (devdata / "timit_ldc93s1/LDC93S1.txt").read_text()),
    ]
    with open(devdata / "ljspeech/metadata.csv", encoding="utf-8") as f:
        for row in list(csv.reader(f, delimiter="|"))[:readings]:
            pairs.append((devdata / f"ljspeech/{row[0]}.flac", row[-1]))
    return pairs


def clean_reference(text: str) -> str:
    # TIMIT's .txt starts with sample offsets ("0 46797 She had …").
    parts = text.split()
    while parts and parts[0].isdigit():
        parts.pop(0)
    return " ".join(parts)


def corpus_wer(recordings, model, language) -> float:
    """Word error rate over all words of all recordings (long ones weigh more)."""
    errors = words = 0.0
    for wav, reference in recordings:
        t = transcribe(wav, model, language=language, progress=False)
        assert t.language == language
        n = len(reference.split())
        errors += word_error_rate(reference, " ".join(p.text for p in t.phrases)) * n
        words += n
    return errors / words


def test_english_wer_tiny_en(devdata, wav16k, tiny_en):
    """tiny.en reads clear English: ~5-6 % WER on LibriSpeech in the Whisper paper; our set adds
    a noisy 1961 broadcast and 1880s vocabulary, so 12 % over all words leaves room for that
    and still catches a broken pipeline (wrong sample rate or channel mix gives > 50 %)."""
    wer = corpus_wer([(wav16k(p), clean_reference(r)) for p, r in english_recordings(devdata)], tiny_en, "en")
    assert wer < 0.12, f"WER {wer:.3f}"


def test_portuguese_wer_base(devdata, wav16k):
    """Whisper base on Brazilian Portuguese read speech. The references spell numbers out
    ("duzentos e sessenta e seis") where Whisper writes digits, which alone costs several
    words per sentence, and base is the second smallest model (~20-30 % WER on Portuguese
    in the Whisper paper's multilingual tables). Measured: 19.5 % with AVX-512 kernels; 36.4 % with
    AVX kernels alone (CT2_FORCE_CPU_ISA=AVX), where some windows fail the engine's checks and are
    decoded again by sampling. That sampling draws from a generator of the model's own thread,
    seeded once per process (by default at random: 23 % to over 45 % run to run), so this model is
    loaded here after a fixed seed. The bound is what a working pipeline stays under on any x86-64
    CPU, 45 %; a broken one (wrong sample rate or channel mix) gives over 50 %."""
    import ctranslate2

    ctranslate2.set_random_seed(0)
    model = load_whisper("bundled:base", "faster-whisper", "cpu")
    recordings = sorted((devdata / "falabrasil_pt").glob("*.flac"))
    wer = corpus_wer([(wav16k(p), p.with_suffix(".txt").read_text(encoding="utf-8")) for p in recordings], model, "pt")
    assert wer < 0.45, f"WER {wer:.3f}"


def test_language_detected(devdata, wav16k, whisper_base):
    t = transcribe(wav16k(devdata / "falabrasil_pt/ufpalign_falabrasil.flac"), whisper_base, progress=False)
    assert t.language == "pt"


def test_word_timestamps_follow_the_speech(devdata, wav16k, tiny_en):
    """Every word has a time inside the recording, in order; TIMIT's hand-labelled word starts
    are matched within 0.3 s on average (Whisper's own timing, before alignment)."""
    wav = wav16k(devdata / "timit_ldc93s1/LDC93S1.flac")
    t = transcribe(wav, tiny_en, language="en", progress=False)
    words = t.words
    assert words and all(0 <= w.start <= w.end <= t.duration + 0.01 for w in words)
    assert all(a.start <= b.start for a, b in zip(words, words[1:]))
    truth = [line.split("\t") for line in (devdata / "timit_ldc93s1/LDC93S1.words_seconds.tsv").read_text().splitlines()]
    truth = [(row[-1].lower(), float(row[0])) for row in truth if len(row) >= 3 and row[0][0].isdigit()]
    found = {w.text.lower().strip(".,"): w.start for w in words}
    errors = [abs(found[word] - start) for word, start in truth if word in found]
    assert len(errors) >= len(truth) * 0.7
    assert np.mean(errors) < 0.3, errors


def test_silence_gives_empty_transcript(tmp_path, tiny_en):
    import wave

    wav = tmp_path / "silence.wav"
    with wave.open(str(wav), "wb") as f:
        f.setnchannels(1), f.setsampwidth(2), f.setframerate(16000)
        f.writeframes(np.zeros(16000 * 3, dtype=np.int16).tobytes())
    t = transcribe(wav, tiny_en, progress=False)
    assert t.phrases == [] and abs(t.duration - 3.0) < 0.01


def test_english_only_model_refuses_other_language(devdata, wav16k, tiny_en):
    with pytest.raises(IgotError, match="English only"):
        transcribe(wav16k(devdata / "falabrasil_pt/ufpalign_coxinha.flac"), tiny_en, language="pt", progress=False)


def test_unknown_model_name():
    with pytest.raises(IgotError, match="Unknown Whisper model 'large-v9'"):
        load_whisper("large-v9")


@pytest.mark.parametrize("batched", [False, True])
def test_no_stretch_of_speech_is_left_out(devdata, wav16k, tiny_en, batched):
    """Whisper can stop decoding a batched chunk early and drop its end (here: the last caller
    of the radio phone-in, 35-42 s); the missing speech is decoded again. Batched, the default on
    a CPU and a GPU, and one window after the other (batch_size 1)."""
    from dataclasses import replace

    from igot.asr.transcribe import untranscribed_speech
    from igot.media.audio import load_audio

    wav = wav16k(devdata / "pyaudioanalysis/diarizationExample.flac")
    t = transcribe(wav, tiny_en if batched else replace(tiny_en, batch_size=1), language="en", progress=False)
    assert t.words[-1].end > 40.0
    assert "commonwealth" in " ".join(p.text.lower() for p in t.phrases)
    assert untranscribed_speech(load_audio(wav), t.phrases) == []


def test_long_recording_is_transcribed_piece_by_piece(devdata, wav16k, tiny_en, monkeypatch, tmp_path):
    """Pieces are cut in silences and put back in the recording's time (here 15 s pieces stand
    in for the 10 minutes of a real run): the pieces follow one another over the whole
    recording, and its words are each piece's words, as the piece alone gives them, in order,
    each moved by the piece's start.

    That the pieced words come close to those of one go is the model's doing, so it is stated,
    not asserted: tiny.en decodes a piece without the text before it, and how much that changes
    its words follows the CPU's kernels (GitHub issue 38). WER of the pieced words against one
    go's on one Xeon with AVX-512, 2026-11-27: 0.110 with CTranslate2's default there (Intel MKL),
    0.123 with oneDNN limited to AVX2, 0.157 with AVX only (CT2_FORCE_CPU_ISA=AVX
    ONEDNN_MAX_CPU_ISA=AVX), past the 0.15 once asserted here; the words differ inside the pieces
    (the noisy last caller most), not at the cuts."""
    import wave

    import igot.media.audio
    from igot.media.audio import SAMPLE_RATE, pieces, wav_duration

    wav = wav16k(devdata / "pyaudioanalysis/diarizationExample.flac")
    monkeypatch.setattr(igot.media.audio, "PIECE_SECONDS", 15.0)
    cuts = pieces(wav)
    assert len(cuts) == 3
    assert cuts[0][0] == 0 and cuts[-1][1] == wav_duration(wav) and all(b == c for (_, b), (c, _) in zip(cuts, cuts[1:]))
    pieced = transcribe(wav, tiny_en, language="en", progress=False)
    words = pieced.words
    assert all(a.start <= b.start and a.end <= b.end for a, b in zip(words, words[1:]))
    assert 0 <= words[0].start and words[-1].end <= pieced.duration == wav_duration(wav)
    alone = []  # each piece as a recording of its own (its very samples), its words in the recording's time
    with wave.open(str(wav), "rb") as source:
        for i, (start, end) in enumerate(cuts):
            first, last = int(round(start * SAMPLE_RATE)), int(round(end * SAMPLE_RATE))
            source.setpos(first)
            piece = tmp_path / f"piece-{i}.wav"
            with wave.open(str(piece), "wb") as f:
                f.setnchannels(1), f.setsampwidth(2), f.setframerate(SAMPLE_RATE)
                f.writeframes(source.readframes(last - first))
            assert len(pieces(piece)) == 1
            piece_words = transcribe(piece, tiny_en, language="en", progress=False).words
            alone += [(w.text, w.start + start, w.end + start) for w in piece_words]
    assert [w.text for w in words] == [text for text, _, _ in alone]
    assert np.allclose([(w.start, w.end) for w in words], [(a, b) for _, a, b in alone], atol=0.002)


def joined_readings(devdata, wav16k, tmp_path, names_and_pauses) -> tuple:
    """Dev recordings one after another with pauses: a conversation-length WAV, and where each
    reading lies in it, with its reference: [(start, end, reference)] in seconds."""
    import wave

    from igot.media.audio import SAMPLE_RATE, load_audio

    pairs = dict((p.stem, (p, clean_reference(r))) for p, r in english_recordings(devdata, readings=8))
    audio, readings, at = [], [], 0
    for name, pause in names_and_pauses:
        path, reference = pairs[name]
        speech = load_audio(wav16k(path))
        audio += [speech, np.zeros(int(pause * SAMPLE_RATE), np.float32)]
        readings.append((at / SAMPLE_RATE, (at + len(speech)) / SAMPLE_RATE, reference))
        at += len(speech) + int(pause * SAMPLE_RATE)
    wav = tmp_path / "joined.wav"
    with wave.open(str(wav), "wb") as f:
        f.setnchannels(1), f.setsampwidth(2), f.setframerate(SAMPLE_RATE)
        f.writeframes((np.concatenate(audio) * 32767).astype(np.int16).tobytes())
    return wav, readings


def joined_recordings(devdata, wav16k, tmp_path, names_and_pauses) -> tuple:
    """Dev recordings one after another with pauses: a conversation-length WAV and its reference."""
    wav, readings = joined_readings(devdata, wav16k, tmp_path, names_and_pauses)
    return wav, " ".join(reference for _, _, reference in readings)


def test_as_accurate_as_faster_whisper_alone(devdata, wav16k, tiny_en, tmp_path):
    """iGot's batched decoding (the default, a CPU's and a GPU's) must not cost words against plain faster-whisper
    (`transcribe(vad_filter=True)`, same model) on a recording longer than one 30 s window:
    5 dev recordings joined with pauses (43 s), whose first batch chunk ends with TIMIT's
    sentence, which batched text-only decoding drops (faster-whisper #1179). Measured WER with
    tiny.en: plain 0.02; iGot before the fix 0.19 (batched alone 0.12; the old repair decoded
    only the uncovered part and put it in the wrong place); iGot now 0.02. The margin of 0.02
    (one word in 50) allows batched decoding's word-level differences and catches any lost
    sentence (12 % of the words here)."""
    from igot.media.audio import load_audio

    wav, reference = joined_recordings(devdata, wav16k, tmp_path, [
        ("jfk", 0.7), ("2412-153948-0000", 1.5), ("LDC93S1", 0.4), ("LJ001-0001", 2.5), ("LJ001-0002", 1.0)])
    segments, _ = tiny_en.model.transcribe(load_audio(wav), language="en", vad_filter=True, word_timestamps=True)
    plain = word_error_rate(reference, " ".join(s.text for s in segments))
    ours = word_error_rate(reference, " ".join(p.text for p in transcribe(wav, tiny_en, language="en", progress=False).phrases))
    assert ours <= plain + 0.02, f"iGot WER {ours:.3f}, faster-whisper alone {plain:.3f}"


def test_progress_shows_seconds_as_a_person_reads_them(devdata, wav16k, tiny_en, capsys):
    """The transcription's bar counts seconds of recording with one decimal (never 30.999999999999996/42.0)."""
    import re

    transcribe(wav16k(devdata / "pyaudioanalysis/diarizationExample.flac"), tiny_en, language="en", progress=True)
    shown = capsys.readouterr().err
    figures = re.findall(r"(\d+(?:\.\d+)?)/(\d+(?:\.\d+)?)", shown)
    assert figures, shown
    assert all(len(x.partition(".")[2]) <= 1 and len(y.partition(".")[2]) <= 1 for x, y in figures), shown


def test_every_word_the_engine_writes_is_kept(devdata, wav16k, tiny_en, tmp_path):
    """A reading by several dev voices (84 s). faster-whisper asked for word timestamps moves to
    its next 30 s window from the last word's time, and a mistimed last word makes it skip what
    followed; alone (no word timestamps) it keeps those words. iGot decoding one window after the
    other (batch_size 1: without the VAD, and where it decodes a batched chunk again) decodes as
    the engine does alone and times the words afterwards: the engine's words, every one, each
    with its time.

    The premise, that the engine with word timestamps loses words here that it keeps alone, is
    stated, not asserted: it rests on tiny.en's numbers, which follow the CPU's kernels (GitHub
    issue 38). Words alone / with word timestamps on one Xeon with AVX-512, 2026-11-27: 196 / 186
    with oneDNN limited to AVX2 (CT2_USE_MKL=0 CT2_FORCE_CPU_ISA=AVX2 ONEDNN_MAX_CPU_ISA=AVX2);
    187 / 186 with CTranslate2's default there (Intel MKL), as on an AMD EPYC with AVX-512 in
    issue 38; 186 / 186 with AVX only. There, what the engine alone lost was TIMIT's sentence
    (37-40 s), left out with or without word timestamps: no word of the engine's is there to
    keep, and iGot says so (info "untranscribed") instead of filling it. So what is asserted is
    iGot's own part: exactly the engine's words, in order, inside the recording, and speech left
    without a word only in a reading the engine left out."""
    from dataclasses import replace
    from difflib import SequenceMatcher

    from igot.media.audio import load_audio
    from igot_dev.evaluate import normalize

    wav, readings = joined_readings(devdata, wav16k, tmp_path, [
        ("LJ001-0007", 1.18), ("LJ001-0001", 1.16), ("jfk", 0.9), ("LJ001-0008", 0.7), ("LJ001-0002", 0.4),
        ("LDC93S1", 0.28), ("LJ001-0003", 1.17), ("2412-153948-0000", 0.67), ("LJ001-0005", 0.23),
        ("LJ001-0006", 0.79), ("LJ001-0004", 0.95)])
    segments, _ = tiny_en.model.transcribe(load_audio(wav), language="en", vad_filter=True)
    alone = normalize(" ".join(s.text for s in segments))  # the engine alone, no word timestamps
    t = transcribe(wav, replace(tiny_en, batch_size=1), language="en", progress=False)
    assert normalize(" ".join(w.text for w in t.words)) == alone
    starts = [w.start for w in t.words]
    assert starts == sorted(starts) and all(0 <= w.start <= w.end <= t.duration for w in t.words)
    # The readings the engine left out (fewer than half of their words in its text, matched in
    # order against the whole reference): speech iGot reports untranscribed must lie in one.
    said = [(start, end, normalize(reference)) for start, end, reference in readings]
    owner = [i for i, (_, _, words) in enumerate(said) for _ in words]
    matched = [0] * len(said)
    reference = [w for _, _, words in said for w in words]
    for block in SequenceMatcher(None, reference, alone, autojunk=False).get_matching_blocks():
        for i in owner[block.a:block.a + block.size]:
            matched[i] += 1
    left_out = [(start, end) for (start, end, words), n in zip(said, matched) if n < len(words) / 2]
    holes = t.info["untranscribed"]
    assert all(any(a <= (h["start"] + h["end"]) / 2 <= b for a, b in left_out) for h in holes), (holes, left_out)
