"""One model pool for the runs, the workspace's queue, search and Ask (issue 41, point 2): a GPU short
of room frees the other models in the stated order before one loads; one rule says when a hub model
loads from the local cache; the workspace takes its LLM from the pool it hands its queue. Fast: no
model is loaded here (tests/test_add_interviews.py runs a queued recording with real ones)."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


from igot.pipeline.models import FREE_ORDER, GPU_ROOM_GIB, RUN_ONLY, Models, gpu_free_gib
from igot.summary.summarize import CPU_LLM
from igot.workspace import server
from igot.workspace.models import Models as WorkspaceModels

# What each kind takes on the GPU, in GiB: about a T4's run with large-v3 and Gemma 3 1B in float32.
SIZES = {"whisper": 3.0, "aligner": 1.2, "punctuator": 1.0, "diarizer": 0.5, "llm": 4.0, "embedder": 0.5}


class Gpu:
    """A GPU of `total` GiB whose free memory is what the pool's models on it leave."""

    def __init__(self, total: float):
        self.total = total
        self.pool = Models(keep=True, free_gib=self.free)

    def free(self, device: str):
        if not device.startswith("cuda"):
            return None
        return self.total - sum(SIZES[key[0]] for key in self.pool.loaded() if key[-1].startswith("cuda"))

    def load(self, kind: str, device: str = "cuda"):
        return self.pool.get((kind, f"{kind}-model", device), lambda: f"the {kind}")

    def kinds(self) -> list[str]:
        return [key[0] for key in self.pool.loaded()]


def test_a_gpu_short_of_room_frees_the_other_models_least_needed_next_first():
    assert FREE_ORDER[:4] == RUN_ONLY and FREE_ORDER[4:] == ("llm", "embedder")  # the workspace's last
    gpu = Gpu(80.0)  # an H100: everything kept
    for kind in ("embedder", "llm", "diarizer", "punctuator", "aligner"):
        gpu.load(kind)
    gpu.load("embedder", "cpu")  # on the CPU: neither counted nor freed
    gpu.load("whisper")
    assert gpu.kinds() == ["embedder", "llm", "diarizer", "punctuator", "aligner", "embedder", "whisper"]

    gpu = Gpu(80.0)
    for kind in ("embedder", "llm", "diarizer", "punctuator", "aligner"):
        gpu.load(kind)
    gpu.total = 15.0  # a T4 after a recording: 7.2 GiB kept, 7.8 free, and large-v3 wants its room
    assert gpu.free("cuda") < GPU_ROOM_GIB
    freed = gpu.pool.make_room("cuda", loading=("whisper", "whisper-model", "cuda"))
    # The run's own first, in the run's order, until 11 GiB are free: the LLM goes too, the embedder stays.
    assert [key[0] for key in freed] == ["aligner", "punctuator", "diarizer", "llm"]
    assert gpu.free("cuda") >= GPU_ROOM_GIB
    assert gpu.load("whisper") == "the whisper" and gpu.kinds() == ["embedder", "whisper"]

    # Room enough: nothing is freed; a model already loaded is handed out without looking.
    assert gpu.load("aligner") == "the aligner" and gpu.kinds() == ["embedder", "whisper", "aligner"]

    # A GPU too small for the room asked: everything else freed, and the model loads all the same.
    small = Gpu(6.0)
    small.load("embedder"), small.load("whisper")
    assert small.load("llm") == "the llm" and small.kinds() == ["llm"]


def test_the_memory_probe_reads_no_gpu_for_a_cpu():
    assert gpu_free_gib("cpu") is None


def test_done_with_frees_a_kind_unless_kept_and_free_frees_it_anyway():
    one_run = Gpu(80.0)
    one_run.pool.keep = False
    one_run.load("whisper"), one_run.load("llm")
    one_run.pool.done_with("whisper")
    assert one_run.kinds() == ["llm"]
    queue = Gpu(80.0)
    for kind in ("whisper", "aligner", "punctuator", "diarizer", "llm", "embedder"):
        queue.load(kind)
    queue.pool.done_with("whisper")  # kept while the queue has work
    assert len(queue.kinds()) == 6
    queue.pool.free(RUN_ONLY)  # the queue is empty
    assert queue.kinds() == ["llm", "embedder"]


# Run in a process of its own, with its own empty hub cache (HF_HUB_CACHE is read when
# huggingface_hub is imported); `Asked` is the hub's answer to "can you be reached?", which a
# machine without internet cannot give for real.
ONE_RULE = """
import sys
from pathlib import Path
from igot.runtime import hub

class Asked(hub.Hub):
    def __init__(self, answers):
        super().__init__()
        self.answers, self.asked = answers, 0

    @property
    def online(self):
        self.asked += 1
        return self.answers

cache, local = Path(sys.argv[1]), sys.argv[2]
# Not here, the hub answers: downloaded. Not here, no hub: from the cache, and out of reach.
assert not hub.from_cache("org/model", Asked(True)) and not hub.out_of_reach("org/model", Asked(True))
assert hub.from_cache("org/model", Asked(False)) and hub.out_of_reach("org/model", Asked(False))
# Here: from the cache, the hub never asked (no check for a newer copy, no wait).
commit = "0" * 40
model = cache / "models--org--model"
(model / "refs").mkdir(parents=True)
(model / "refs" / "main").write_text(commit)
(model / "snapshots" / commit).mkdir(parents=True)
(model / "snapshots" / commit / "config.json").write_text("{}")
never = Asked(True)
assert hub.from_cache("org/model", never) and not hub.out_of_reach("org/model", never) and never.asked == 0
# A folder on this computer: nothing comes from the hub.
assert not hub.from_cache(local, never) and not hub.out_of_reach(local, never)
print("ok")
"""


def test_one_rule_for_when_a_hub_model_loads_from_the_local_cache(tmp_path):
    local = tmp_path / "org" / "model"
    local.mkdir(parents=True)
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "hub"), "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run([sys.executable, "-c", ONE_RULE, str(tmp_path / "hub"), str(local)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


@dataclass
class GivenLLM:
    """An LLM loaded elsewhere (the notebook's), as the pool keeps it: by its name."""

    name: str


def test_the_workspace_takes_its_llm_from_the_pool_it_shares_with_its_queue(tmp_path):
    pool = Models(keep=True)
    given = GivenLLM(str(tmp_path / "smol.gguf"))
    models = WorkspaceModels(tmp_path, llm=given, pool=pool)
    assert models.llm() == (given, "") and models.llm_state() == (True, "")
    assert pool.loaded() == [("llm", given.name, "cpu")]  # what a run on the CPU naming it would use
    # Chosen once where the workspace starts: iGot's default for the device, not by the loader.
    assert WorkspaceModels(tmp_path).llm_model == CPU_LLM

    folder = tmp_path / "library"
    folder.mkdir()
    running = server.start(folder, llm=given, device="cpu")  # the server's page and its queue: one pool
    try:
        assert running.queue.models.loaded() == [("llm", given.name, "cpu")]
    finally:
        running.stop()
