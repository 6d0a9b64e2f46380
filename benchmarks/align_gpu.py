"""Speed and memory of word alignment on a production-size model, with no model download.

Builds a randomly initialised wav2vec2 large (the shape of facebook/wav2vec2-large-xlsr-53,
about 315M parameters), saves it with its processor, loads it through igot.refine.align.load_aligner
as a downloaded checkpoint would be, and aligns an hour of audio: noise, with a synthetic
Whisper-like transcript of about 3 words a second in 10-second phrases. The weights are random,
so the times are meaningless, but every frame goes through the model and the Viterbi search
as in a real run. Target on an H100: under 60 s and under 4 GB of GPU memory per hour.

    python -m benchmarks.align_gpu                 # one hour, GPU if there is one
    python -m benchmarks.align_gpu --minutes 1     # smoke test on a CPU

Needs only torch, transformers, numpy and tqdm (which transformers brings), and igot from
this checkout (no install).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]

import igot.refine.align as align_module  # noqa: E402
from igot.media.audio import SAMPLE_RATE  # noqa: E402
from igot.refine.align import align, load_aligner  # noqa: E402
from igot.transcript import Phrase, Source, Transcript, Word  # noqa: E402

LETTERS = "abcdefghijklmnopqrstuvwxyzáéíóúãõâêôçà"
WORDS = ("the", "app", "was", "really", "easy", "to", "set", "up", "but", "then", "I", "could", "not",
         "find", "my", "account", "again,", "so", "called", "support", "$1,200", "2023", "and", "they", "helped.")


def build_model(folder: Path, size: str = "large") -> int:
    """Save a random wav2vec2 with a character vocabulary and its processor to `folder`: "large"
    (XLSR-53's shape, the aligner of most languages) or "base" (facebook/wav2vec2-base-960h's,
    English's aligner)."""
    from transformers import (
        Wav2Vec2Config,
        Wav2Vec2CTCTokenizer,
        Wav2Vec2FeatureExtractor,
        Wav2Vec2ForCTC,
        Wav2Vec2Processor,
    )

    vocab = {"<pad>": 0, "<s>": 1, "</s>": 2, "<unk>": 3, "|": 4, "'": 5, **{c: 6 + i for i, c in enumerate(LETTERS)}}
    vocab_file = folder / "vocab.json"
    vocab_file.write_text(json.dumps(vocab))
    tokenizer = Wav2Vec2CTCTokenizer(str(vocab_file), unk_token="<unk>", pad_token="<pad>", word_delimiter_token="|")
    extractor = Wav2Vec2FeatureExtractor(feature_size=1, sampling_rate=SAMPLE_RATE, padding_value=0.0, do_normalize=True)
    Wav2Vec2Processor(feature_extractor=extractor, tokenizer=tokenizer).save_pretrained(folder)
    # facebook/wav2vec2-large-xlsr-53's shape: the checkpoints in igot.refine.align.ALIGN_MODELS are fine-tunes of it.
    # facebook/wav2vec2-base-960h's: post-norm layers, group-normalised feature encoder without conv biases.
    shape = dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096,
                 feat_extract_norm="layer", do_stable_layer_norm=True, conv_bias=True) if size == "large" else \
        dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
             feat_extract_norm="group", do_stable_layer_norm=False, conv_bias=False)
    config = Wav2Vec2Config(
        vocab_size=len(vocab), pad_token_id=0, **shape, conv_dim=(512,) * 7, conv_stride=(5, 2, 2, 2, 2, 2, 2),
        conv_kernel=(10, 3, 3, 3, 3, 2, 2), num_conv_pos_embeddings=128, num_conv_pos_embedding_groups=16,
    )
    torch.manual_seed(0)
    model = Wav2Vec2ForCTC(config)
    model.save_pretrained(folder)
    return sum(p.numel() for p in model.parameters())


def synthetic_transcript(seconds: float, phrase_s: float, rng: np.random.Generator) -> Transcript:
    """Whisper-like phrases of `phrase_s` seconds with ~3 words a second, a 0.5 s pause between."""
    phrases = []
    start = 0.5
    while start + phrase_s < seconds - 0.5:
        n = int(phrase_s * 3)
        edges = start + np.sort(rng.uniform(0, phrase_s, 2 * n))
        words = [Word(str(rng.choice(WORDS)), round(float(a), 3), round(float(b), 3)) for a, b in zip(edges[::2], edges[1::2])]
        phrases.append(Phrase("", words[0].start, words[-1].end, " ".join(w.text for w in words), words=words))
        start += phrase_s + 0.5
    return Transcript(Source("benchmark"), "pt", seconds, phrases=phrases)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=60.0, help="length of the audio to align")
    parser.add_argument("--phrase-seconds", type=float, default=10.0)
    parser.add_argument("--device", default="auto")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    seconds = args.minutes * 60

    tmp = tempfile.TemporaryDirectory(prefix="igot-align-bench-")
    t0 = time.perf_counter()
    params = build_model(Path(tmp.name))
    built = time.perf_counter() - t0
    t0 = time.perf_counter()
    aligner = load_aligner("pt", model=tmp.name, device=args.device)
    loaded = time.perf_counter() - t0
    assert aligner is not None
    print(f"model: {params / 1e6:.0f}M parameters, built and saved in {built:.1f} s, loaded in {loaded:.1f} s "
          f"on {aligner.device} ({aligner.precision})")

    audio = (rng.standard_normal(int(seconds * SAMPLE_RATE)) * 0.1).astype(np.float32)
    transcript = synthetic_transcript(seconds, args.phrase_seconds, rng)
    cuda = aligner.device.startswith("cuda")

    # Time spent in the model (forward pass and copy back), apart from the Viterbi search.
    model_s = 0.0
    model_log_probs = align_module.model_log_probs

    def timed(aligner_, samples, options=None):
        nonlocal model_s
        t = time.perf_counter()
        out = model_log_probs(aligner_, samples, options)  # returns on the CPU, so the GPU work is done
        model_s += time.perf_counter() - t
        return out

    align_module.model_log_probs = timed
    # Warm-up (CUDA context, kernels) on two phrases, so the table shows the steady state.
    align(Transcript(Source("warm-up"), "pt", seconds, phrases=transcript.phrases[:2]), audio, aligner)
    model_s = 0.0
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    aligned = align(transcript, audio, aligner)
    elapsed = time.perf_counter() - t0
    align_module.model_log_probs = model_log_probs

    words = aligned.words
    assert len(words) == len(transcript.words)
    assert all(a.end <= b.start for a, b in zip(words, words[1:])) and all(w.start <= w.end for w in words)
    peak = torch.cuda.max_memory_allocated() / 2**30 if cuda else float("nan")
    row = {
        "audio h": f"{seconds / 3600:.3f}",
        "phrases": len(aligned.phrases),
        "words": len(words),
        "seconds": f"{elapsed:.1f}",
        "s per audio hour": f"{elapsed * 3600 / seconds:.1f}",
        "model s": f"{model_s:.1f}",
        "viterbi+rest s": f"{elapsed - model_s:.1f}",
        "peak GPU GiB": f"{peak:.2f}",
        "precision": aligner.precision,
        "device": torch.cuda.get_device_name() if cuda else "cpu",
    }
    widths = [max(len(k), len(str(v))) for k, v in row.items()]
    print("  ".join(k.ljust(w) for k, w in zip(row, widths)))
    print("  ".join(str(v).ljust(w) for v, w in zip(row.values(), widths)))
    tmp.cleanup()


if __name__ == "__main__":
    main()
