"""Greedy decoding of several prompts at once with a static KV cache, on a GPU as CUDA graphs.

transformers' generate() runs each decode step from Python: for Gemma 3 1B that is ~2,000
small kernel launches a token, 30 ms of CPU work for ~1 ms of GPU work on an H100 (and a slower
CPU on Colab). Its compiled path cannot help: Gemma 3's sliding-window cache hands the mask
builder a Python int that changes every step, so torch.compile recompiles every step.

Here the masks are built by us, in fixed-size tensors updated in place, so one decode step has
the same shapes and addresses every time: on CUDA it is captured once as a CUDA graph and
replayed (one launch a token). The tokens are those of generate(do_sample=False): the same
model forward, the same argmax, the same padding of finished rows (tests/test_summarize.py).
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from igot.summary import loops

# Models whose forward takes ready-made masks per layer type ({"full_attention": ...,
# "sliding_attention": ...}); others go through generate().
SUPPORTED = {"gemma3_text"}
CHECK_EVERY = 16  # steps between looks at whether every row has ended (each look waits for the GPU)


def can_decode(model: Any) -> bool:
    config = model.config
    return (config.model_type in SUPPORTED and getattr(config, "_attn_implementation", None) == "sdpa"
            and set(getattr(config, "layer_types", None) or []) <= {"full_attention", "sliding_attention"})


def cache_argument(model: Any) -> str:
    """The forward's name for the KV cache: `cache` from transformers 5.2x (which warns that
    `past_key_values` goes in 5.40), `past_key_values` before (Colab's 5.15 knows only that)."""
    import inspect

    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def greedy(model: Any, ids: Any, mask: Any, max_new_tokens: int, stops: set[int], pad: int,
           graphs: bool | None = None, on_token: Callable[[], None] | None = None,
           stuck: Callable[[list[int]], bool] | None = loops.looping) -> Any:
    """New tokens [rows, max_new_tokens] for left-padded `ids` with their attention `mask`.
    A row that wrote a stop token goes on with `pad`, as generate() does; the loop ends when every
    row has ended. graphs=False: no CUDA graph on CUDA either (they are only ever used on CUDA).
    on_token: called after each step (the first token included), for a progress bar. stuck: whether
    a row's tokens so far are a loop, which ends it too (None: only stop tokens end a row)."""
    import torch
    from transformers import StaticCache
    from transformers.cache_utils import StaticSlidingWindowLayer

    config = model.config
    window = getattr(config, "sliding_window", None) or 0
    rows, width = ids.shape
    if window and width < window:  # the sliding layers must be full after the prompt: pad to the window
        ids = torch.nn.functional.pad(ids, (window - width, 0), value=pad)
        mask = torch.nn.functional.pad(mask, (window - width, 0), value=0)
        width = window
    device = ids.device
    graphs = device.type == "cuda" and graphs is not False  # graphs exist on CUDA only
    total = width + max_new_tokens
    cache = StaticCache(config=config, max_cache_len=total)
    for layer in cache.layers:
        if isinstance(layer, StaticSlidingWindowLayer):
            layer.__class__ = _rolling_window_class()
    positions = (mask.long().cumsum(-1) - 1).clamp(min=0)  # each row counts from its first real token
    cache_kw = {cache_argument(model): cache}
    out = model(input_ids=ids, attention_mask=mask, position_ids=positions, **cache_kw, use_cache=True, logits_to_keep=1)

    # What one step reads and writes, in tensors that keep their address.
    stop_ids = torch.tensor(sorted(stops) or [-1], device=device)
    token = out.logits[:, -1].argmax(-1)
    new = torch.full((rows, max_new_tokens), pad, dtype=torch.long, device=device)
    new[:, 0] = token
    ended = torch.isin(token, stop_ids)
    state = {
        "token": token[:, None].clone(),
        "position": positions[:, -1:] + 1,
        "step": torch.ones(1, dtype=torch.long, device=device),  # column of `new` the step writes
        "slot": torch.full((1,), width, dtype=torch.long, device=device),  # cache slot of the token read
        # Full-attention layers see every cache slot: the prompt's real tokens and what was written.
        "full": torch.zeros(rows, 1, 1, total, dtype=torch.bool, device=device),
        # Sliding layers keep the last `window` tokens, shifted left each step, the newest last.
        "sliding": mask[:, -window:].bool()[:, None, None, :].clone() if window else None,
    }
    state["full"][:, 0, 0, :width] = mask.bool()
    del out
    tick = on_token or (lambda: None)
    tick()

    def step() -> None:
        state["full"].index_fill_(-1, state["slot"], True)
        masks = {"full_attention": state["full"]}
        if window:
            state["sliding"].copy_(state["sliding"].roll(-1, dims=-1))
            state["sliding"][..., -1] = True
            masks["sliding_attention"] = state["sliding"]
        logits = model(input_ids=state["token"], attention_mask=masks, position_ids=state["position"],
                       **cache_kw, use_cache=True).logits[:, -1]
        token = torch.where(ended, pad, logits.argmax(-1))
        new.index_copy_(1, state["step"], token[:, None])
        ended.logical_or_(torch.isin(token, stop_ids))
        state["token"].copy_(token[:, None])
        state["position"].add_(1)
        state["slot"].add_(1)
        state["step"].add_(1)

    done = 1
    replay = None
    while done < max_new_tokens:
        if done % CHECK_EVERY == 0:
            # A row stuck in a loop ends here, as if it had written a stop token (igot.summary.loops):
            # its repeats would only be left out of the summary, at ~0.1 s a token on a CPU.
            looped = [i for i, row in enumerate(new[:, :done].tolist()) if stuck and not ended[i] and stuck(row)]
            if looped:
                ended[looped] = True
            if bool(ended.all()):
                break
        if graphs and replay is None and done >= 3:  # a few plain steps first: kernels chosen, memory settled
            replay = torch.cuda.CUDAGraph()
            torch.cuda.synchronize()
            with torch.cuda.graph(replay):
                step()
        if replay is not None:
            replay.replay()
        else:
            step()
        done += 1
        tick()
    return new


@functools.cache
def _rolling_window_class():
    from transformers.cache_utils import StaticSlidingWindowLayer

    class RollingWindow(StaticSlidingWindowLayer):
        """transformers' sliding-window cache layer, whose one-token step makes a small tensor from
        a Python list (a host-to-GPU copy that CUDA graph capture refuses). Here that step is the
        same shift, written as one concatenation of tensors already on the GPU."""

        def update(self, key_states, value_states, *args, **kwargs):
            import torch

            if not (self.is_initialized and key_states.shape[-2] == 1 and self.cumulative_length_int >= self.max_cache_len):
                return super().update(key_states, value_states, *args, **kwargs)
            self.cumulative_length_int += 1
            self.keys.copy_(torch.cat((self.keys[:, :, 1:], key_states), dim=-2))
            self.values.copy_(torch.cat((self.values[:, :, 1:], value_states), dim=-2))
            return self.keys, self.values

    return RollingWindow
