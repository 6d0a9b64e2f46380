"""How fast the summary model writes, token by token, on a GPU: the decode rate of Gemma 3 1B's
shape (random weights, no download) in float32 and bfloat16, next to what the GPU's memory
bandwidth allows, for the ways igot has generated:

- one chunk per generate call (before: the map step called generate once per chunk),
- the chunks of an hour in one generate call, padded on the left (now: LLM.generate_many),
- the same with a static KV cache, with and without transformers' compiled (CUDA graph) decode,
- which attention kernels run (PyTorch's SDPA picks by dtype: bfloat16 can get cuDNN's),
  and a profile of the decode steps, to see where a step's time goes.

Prompts are random token ids of production length (a one-hour interview is 3-4 chunks of about
7,400 tokens at MAX_CONTEXT 8192); every row writes its full --new tokens (random weights never
stop early). ms/step = (time of N new tokens - time of 1) / (N - 1): the prefill is left out.

    python benchmarks/summary_decode.py [--new 96] [--dtypes float32,bfloat16] [--profile]
    python benchmarks/summary_decode.py --tiny --device cpu --new 8      # smoke test
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from igot import decode  # noqa: E402
from igot.summarize import attention_kernels  # noqa: E402
from tests.tiny_models import gemma3_config  # noqa: E402

LENGTHS = [7400, 7100, 6800, 4300]  # the map step of one hour: 4 chunks, the last one shorter


def build(dtype: torch.dtype, device: str, tiny: bool, attn: str = "sdpa"):
    from transformers import Gemma3ForCausalLM

    config = gemma3_config(262144 if not tiny else 512, tiny=tiny)
    config._attn_implementation = attn
    torch.manual_seed(0)
    default = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device):
            model = Gemma3ForCausalLM(config).eval()
    finally:
        torch.set_default_dtype(default)
    return model


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def timed_generate(model, lengths: list[int], new: int, device: str, cache: str | None = None,
                   compile_: bool = False, kernels=None) -> float:
    from transformers import GenerationConfig

    width = max(lengths)
    g = torch.Generator().manual_seed(1)
    vocab = model.config.vocab_size
    ids = torch.randint(10, vocab, (len(lengths), width), generator=g)
    mask = torch.zeros_like(ids)
    for i, n in enumerate(lengths):
        ids[i, : width - n] = 0
        mask[i, width - n:] = 1
    ids, mask = ids.to(device), mask.to(device)
    config = GenerationConfig(max_new_tokens=new, min_new_tokens=new, do_sample=False, eos_token_id=1, pad_token_id=0,
                              cache_implementation=cache, disable_compile=not compile_)
    sync(device)
    started = time.perf_counter()
    with torch.inference_mode(), (kernels or contextlib.nullcontext)():
        out = model.generate(input_ids=ids, attention_mask=mask, generation_config=config)
    sync(device)
    assert out.shape[1] == width + new
    return time.perf_counter() - started


def prompts(model, lengths: list[int], device: str):
    width = max(lengths)
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(10, model.config.vocab_size, (len(lengths), width), generator=g)
    mask = torch.zeros_like(ids)
    for i, n in enumerate(lengths):
        ids[i, : width - n] = 0
        mask[i, width - n:] = 1
    return ids.to(device), mask.to(device)


def igot_tokens(model, lengths: list[int], new: int, device: str, graphs: bool) -> torch.Tensor:
    """igot's own loop (igot/decode.py): static cache, our masks, a CUDA graph per step."""
    ids, mask = prompts(model, lengths, device)
    with torch.inference_mode(), attention_kernels(device):
        return decode.greedy(model, ids, mask, new, set(), 0, graphs=graphs)


def timed_igot(model, lengths: list[int], new: int, device: str, graphs: bool = True, **_) -> float:
    sync(device)
    started = time.perf_counter()
    igot_tokens(model, lengths, new, device, graphs)
    sync(device)
    return time.perf_counter() - started


def step_ms(model, lengths, new, device, timed=timed_generate, **kw) -> tuple[float, float]:
    """(ms per decode step, seconds of the prefill-only call)."""
    timed(model, lengths, 2, device, **kw)  # warm-up (kernels, compile for these shapes)
    one = timed(model, lengths, 1, device, **kw)
    full = timed(model, lengths, new, device, **kw)
    return 1000 * (full - one) / (new - 1), one


def same_tokens(model, lengths, device, new: int = 48) -> str:
    """igot's loop (eager and graphed) against generate(): how many of the new tokens agree."""
    from transformers import GenerationConfig

    ids, mask = prompts(model, lengths, device)
    config = GenerationConfig(max_new_tokens=new, min_new_tokens=new, do_sample=False, eos_token_id=1, pad_token_id=0)
    with torch.inference_mode(), attention_kernels(device):
        reference = model.generate(input_ids=ids, attention_mask=mask, generation_config=config)[:, ids.shape[1]:]
    eager = igot_tokens(model, lengths, new, device, graphs=False)
    graphed = igot_tokens(model, lengths, new, device, graphs=True)
    lead = lambda a, b: min(int((a[i] != b[i]).nonzero()[0]) if (a[i] != b[i]).any() else new for i in range(len(a)))  # noqa: E731
    return (f"graphed == eager: {bool(torch.equal(graphed, eager))}; tokens before the first difference from "
            f"generate(): eager {lead(eager, reference)}/{new}, graphed {lead(graphed, reference)}/{new}")


def copy_bandwidth(device: str) -> float:
    """Bytes a second the GPU moves (read + write) in a large device-to-device copy."""
    if not device.startswith("cuda"):
        return float("nan")
    a = torch.empty(2**30, dtype=torch.uint8, device=device)
    b = torch.empty_like(a)
    b.copy_(a)
    sync(device)
    started = time.perf_counter()
    for _ in range(10):
        b.copy_(a)
    sync(device)
    return 2 * 10 * a.numel() / (time.perf_counter() - started)


def weight_bytes(model) -> int:
    return sum(p.numel() * p.element_size() for p in model.parameters())


def kv_bytes_per_step(model, lengths: list[int]) -> int:
    """KV cache read in one decode step: global layers read the whole row, sliding ones their window."""
    c = model.config
    per_token = 2 * c.num_key_value_heads * c.head_dim * model.dtype.itemsize
    types = c.layer_types
    total = 0
    for n in lengths:
        total += sum(per_token * (n if t == "full_attention" else min(n, c.sliding_window)) for t in types)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--new", type=int, default=96, help="new tokens a timed call writes")
    parser.add_argument("--dtypes", default="float32,bfloat16")
    parser.add_argument("--modes", default="one,batch,static,compiled,igot,kernels",
                        help="one: a chunk a call; batch: 4 chunks a call; static: + static cache; "
                             "igot: igot's own loop (igot/decode.py), with and without CUDA graphs; "
                             "compiled: + compiled decode; kernels: each SDPA backend alone (one chunk)")
    parser.add_argument("--profile", action="store_true", help="profile 16 decode steps of one chunk")
    parser.add_argument("--tiny", action="store_true")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    device, lengths = args.device, LENGTHS if not args.tiny else [70, 60, 50, 30]
    name = torch.cuda.get_device_name() if device == "cuda" else "CPU"
    bandwidth = copy_bandwidth(device)
    import transformers

    print(f"{name}; torch {torch.__version__}; transformers {transformers.__version__}; "
          f"copy bandwidth {bandwidth / 1e12:.2f} TB/s; prompts {lengths}; {args.new} new tokens", flush=True)
    modes = args.modes.split(",")
    rows = []
    for dtype_name in args.dtypes.split(","):
        dtype = getattr(torch, dtype_name)
        model = build(dtype, device, args.tiny)
        weights = weight_bytes(model)
        runs = []
        if "batch-cudnn" in modes:  # the batch as before the fix: PyTorch's own choice of attention kernel
            runs.append(("4 chunks a call, dynamic cache, cuDNN attention allowed", lengths, {}))
        ours = lambda: attention_kernels(device)  # noqa: E731  what LLM.generate_many uses
        if "one" in modes:
            runs.append(("one chunk a call (before)", lengths[:1], {}))
        if "batch" in modes:
            runs.append(("4 chunks a call, dynamic cache", lengths, {"kernels": ours}))
        if "static" in modes:
            runs.append(("4 chunks a call, static cache", lengths, {"cache": "static", "kernels": ours}))
        if "compiled" in modes:
            runs.append(("4 chunks a call, static cache, compiled", lengths,
                         {"cache": "static", "compile_": True, "kernels": ours}))
        if "igot" in modes:
            runs.append(("4 chunks a call, igot's loop, no graphs", lengths, {"timed": timed_igot, "graphs": False}))
            runs.append(("4 chunks a call, igot's loop, CUDA graphs (now)", lengths, {"timed": timed_igot, "graphs": True}))
            print(f"{dtype_name}: {same_tokens(model, lengths, device)}", flush=True)
        if "kernels" in modes and device == "cuda":
            from torch.nn.attention import SDPBackend, sdpa_kernel

            for backend in (SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH):
                runs.append((f"one chunk, SDPA {backend.name} only", lengths[:1],
                             {"kernels": lambda b=backend: sdpa_kernel([b])}))
        for label, rows_lengths, kw in runs:
            try:
                if device == "cuda":
                    torch.cuda.reset_peak_memory_stats()
                started = time.perf_counter()
                ms, prefill = step_ms(model, rows_lengths, args.new, device, **kw)
                wall = time.perf_counter() - started
                peak = torch.cuda.max_memory_allocated() / 2**30 if device == "cuda" else float("nan")
                bound = 1000 * (weights + kv_bytes_per_step(model, rows_lengths)) / bandwidth
                row = dict(dtype=dtype_name, mode=label, rows=len(rows_lengths), ms=ms, tps=1000 * len(rows_lengths) / ms,
                           bound=bound, prefill=prefill, peak=peak, wall=wall, compiles=_compiles())
            except Exception as exc:  # a kernel that refuses these shapes or this dtype
                row = dict(dtype=dtype_name, mode=label, rows=len(rows_lengths), error=f"{type(exc).__name__}: {str(exc)[:120]}")
            rows.append(row)
            print(_line(row), flush=True)
        if args.profile:
            profile(model, lengths[:1], device)
        del model
        if device == "cuda":
            torch.cuda.empty_cache()
    print("\n| precision | how | rows | ms/step | tokens/s | bandwidth bound ms/step | prefill s | peak GiB | wall s (3 calls) | graphs compiled |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(_line(row))


def _compiles() -> int:
    """Graphs torch.compile has built in this process so far (recompiles included)."""
    from torch._dynamo.utils import counters

    return int(counters["stats"]["unique_graphs"])


def _line(r: dict) -> str:
    if "error" in r:
        return f"| {r['dtype']} | {r['mode']} | {r['rows']} | failed: {r['error']} |"
    return (f"| {r['dtype']} | {r['mode']} | {r['rows']} | {r['ms']:.1f} | {r['tps']:.0f} | {r['bound']:.2f} | "
            f"{r['prefill']:.2f} | {r['peak']:.2f} | {r['wall']:.1f} | {r['compiles']} |")


def profile(model, lengths, device) -> None:
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    timed_generate(model, lengths, 2, device)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with torch_profile(activities=activities) as prof:
        timed_generate(model, lengths, 17, device)
    key = "self_cuda_time_total" if device == "cuda" else "self_cpu_time_total"
    print(f"\nprofile, {model.dtype}, one chunk, prefill + 16 decode steps, by GPU time:")
    print(prof.key_averages().table(sort_by=key, row_limit=14, max_name_column_width=60))
    print(f"\nprofile, {model.dtype}, by CPU time:")
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10, max_name_column_width=60))


if __name__ == "__main__":
    main()
