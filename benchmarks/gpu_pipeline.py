"""The whole pipeline on one hour of audio on a GPU, with production-size models and no weights.

Randomly initialised models of the real shapes are saved the way downloads are (Whisper
large-v3 in transformers' format, wav2vec2 large for word timing, an XLM-R base token
classifier like kredor/punctuate-all, NeMo Sortformer from its published config as a .nemo, the
summary's Gemma 3 1B, the meaning index's intfloat/multilingual-e5-small as sentence-transformers
saves it), then `igot.pipeline.run` does what a default run does to an hour of speech (a spliced
recording tiled to length), every stage, summary and meaning index included at their production
settings, loading each model itself and freeing it before the next, as a user's run does. Whisper decodes
exactly --tokens tokens per 30 s window (about 3 a second, what real speech gives), each one a
word, so the later stages see a real hour's ~9,000 words. The random summary model never stops
early: every row writes its full SummaryOptions.max_new_tokens (the worst case). The meaning
index embeds every phrase of that transcript with the E5 model (its tokenizer, a Unigram trained
here on the words Whisper can write, cuts them into 3-6 pieces a word, prefix included, where
XLM-R's cuts real speech into ~1.5: more work than a real hour). Prints one row per stage with its time (model loading
included) and peak GPU memory, then openai-whisper side by side.

    python -m benchmarks.gpu_pipeline --audio speech.wav --tokenizer DIR [--minutes 60] [--summary-tokenizer GEMMA_DIR]
        [--whisper large-v3-turbo] [--one-after-the-other]

--audio is any 16 kHz mono 16-bit WAV (tiled to --minutes); --tokenizer a folder holding
Whisper's multilingual tokenizer.json. Needs torch, transformers, NeMo, yt-dlp (igot.media.source
imports it), sentence-transformers and, for the side-by-side row, openai-whisper. --summary-tokenizer:
Gemma 3's own tokenizer (saved by summary_gpu.py --save-tokenizer DIR), for the real number of
summary chunks. On a GPU machine without NeMo, carry it as wheels installed with --no-deps:
igot.colab.NEMO_NO_DEPS plus what that list leaves to Colab (benchmarks/README.md, this script's section).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
import wave
from pathlib import Path

import torch

# No model hub on a benchmark machine: every model is built here, and a download attempt (the
# summary model's, say) must fail at once instead of retrying for ~23 s inside a stage's time.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]

from igot.media.audio import SAMPLE_RATE  # noqa: E402
from igot.pipeline import Models, RunOptions, run, work_dir_for  # noqa: E402
from igot.search import embed  # noqa: E402
from igot.summary.summarize import SummaryOptions  # noqa: E402
from igot_dev.long_transcript import long_interview  # noqa: E402
from igot_dev.tiny_models import (SENTENCES, TINY, gemma3_config, gemma_tokenizer, save_random_e5,  # noqa: E402
                                   save_random_whisper, whisper_tokenizer)


def tile(source: Path, target: Path, seconds: float) -> None:
    """`source` repeated to `seconds`, written a block at a time."""
    with wave.open(str(source), "rb") as r:
        assert (r.getframerate(), r.getnchannels(), r.getsampwidth()) == (SAMPLE_RATE, 1, 2), "need 16 kHz mono 16-bit"
        block = r.readframes(r.getnframes())
    left = int(seconds * SAMPLE_RATE) * 2
    with wave.open(str(target), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(SAMPLE_RATE)
        while left > 0:
            w.writeframes(block[:left])
            left -= len(block)


def save_punctuator(folder: Path, tiny: bool, texts: list[str] | None = None, vocab_size: int = 150) -> None:
    """kredor/punctuate-all's shape (XLM-R base, 6 labels) with a small tokenizer trained here on
    `texts` (default: a few sentences): the model's 250k-row embedding is kept; only which row a
    word maps to differs."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast, XLMRobertaConfig, XLMRobertaForTokenClassification

    backend = Tokenizer(models.Unigram())
    backend.pre_tokenizer, backend.decoder = pre_tokenizers.Metaspace(), decoders.Metaspace()
    backend.train_from_iterator(texts or SENTENCES * 3, trainers.UnigramTrainer(
        vocab_size=vocab_size, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"], unk_token="<unk>"))
    backend.post_processor = processors.TemplateProcessing(single="<s> $A </s>", special_tokens=[("<s>", 0), ("</s>", 2)])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
                                        pad_token="<pad>", cls_token="<s>", sep_token="</s>", mask_token="<mask>")
    labels = {0: "0", 1: ".", 2: ",", 3: "?", 4: "-", 5: ":"}
    size = dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64, vocab_size=len(tokenizer)) \
        if tiny else dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072, vocab_size=250002)
    config = XLMRobertaConfig(**size, max_position_embeddings=514, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                              id2label=labels, label2id={v: k for k, v in labels.items()})
    torch.manual_seed(0)
    tokenizer.save_pretrained(folder)
    XLMRobertaForTokenClassification(config).save_pretrained(folder)


def save_summary_model(folder: Path, tiny: bool, tokenizer_dir: Path | None = None, **config) -> None:
    """google/gemma-3-1b-it's shape with random weights (`config` overrides its config, e.g. Gemma
    3 270M's sizes), saved in float32 as the download is, and Gemma 3's own tokenizer from
    `tokenizer_dir` (summary_gpu.py --save-tokenizer DIR; any saved tokenizer), or else a BPE
    trained on a generated interview. That BPE cuts Whisper's random words into ~7 tokens each
    (Gemma: ~1.7 a real word), so an hour becomes 9-10 chunks instead of 3-4."""
    from transformers import AutoTokenizer, Gemma3ForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir) if tokenizer_dir else \
        gemma_tokenizer([p.text for p in long_interview(0.5).phrases])
    torch.manual_seed(0)
    with torch.device("cuda" if torch.cuda.is_available() else "cpu"):
        model = Gemma3ForCausalLM(gemma3_config(len(tokenizer) if tiny else 262144, tiny=tiny, **config))
    tokenizer.save_pretrained(folder)
    model.save_pretrained(folder)
    del model


def words_only(folder: Path) -> None:
    """Whisper may write only tokens that start a word (a space first): random weights otherwise
    write ~800 words an hour, and real speech is ~9,000 (150 a minute), which the later stages
    pay for. With --tokens 90 a 30 s window holds about 75-90 words."""
    from transformers import GenerationConfig, WhisperTokenizer

    tokenizer = WhisperTokenizer.from_pretrained(folder)
    config = GenerationConfig.from_pretrained(folder)
    text = [i for t, i in tokenizer.get_vocab().items() if i < tokenizer.convert_tokens_to_ids("<|endoftext|>")]
    config.suppress_tokens = sorted(i for i in text if not tokenizer.convert_ids_to_tokens(i).startswith("Ġ"))
    config.save_pretrained(folder)


def whisper_words(tokenizer) -> list[str]:
    """Every word Whisper can write here (its tokens that start a word, see words_only): what the
    meaning index's tokenizer is trained on, so the hour's words cut into pieces as words do."""
    end = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    words = (tokenizer.convert_tokens_to_string([t]).strip() for t, i in tokenizer.get_vocab().items()
             if i < end and t.startswith("Ġ"))
    return [w for w in words if w]


def build_models(work: Path, tokenizer_dir: Path, tokens: int, tiny: bool, whisper_shape: str,
                 summary_tokenizer: Path | None = None) -> dict[str, str]:
    from benchmarks import align_gpu, sortformer_gpu
    from benchmarks.whisper_gpu import SHAPES

    started = time.perf_counter()
    shape = dict(TINY, mel_bins=128) if tiny else SHAPES[whisper_shape]
    tokenizer = whisper_tokenizer(tokenizer_dir, work / "tokenizer", vocab_size=51866)
    whisper = save_random_whisper(work / "whisper", tokenizer, **shape, max_new_tokens=tokens, min_new_tokens=tokens)
    words_only(whisper)
    save_punctuator(work / "punctuator", tiny)
    save_summary_model(work / "summary", tiny, summary_tokenizer)
    # The folder named as the hub's model is, so iGot gives it E5's "query: "/"passage: " prefixes.
    embedder = save_random_e5(work / "multilingual-e5-small", whisper_words(tokenizer), tiny=tiny)
    if tiny:
        from igot_dev.tiny_models import save_tiny_sortformer, save_tiny_wav2vec2

        save_tiny_wav2vec2(work / "aligner")
        save_tiny_sortformer(work / "sortformer.nemo")
    else:
        (work / "aligner").mkdir()
        align_gpu.build_model(work / "aligner")
        sortformer_gpu.build_model(work / "sortformer.nemo")
    print(f"models built and saved in {time.perf_counter() - started:.0f} s", flush=True)
    return dict(model=str(whisper), align_model=str(work / "aligner"), punctuation_model=str(work / "punctuator"),
                diarizer_model=str(work / "sortformer.nemo"), llm_model=str(work / "summary"),
                embedding_model=str(embedder))


class StageMeter:
    """The pipeline says when each stage starts (its log lines): time and GPU peak per stage."""

    STAGES = ("Transcription:", "Word timing:", "Punctuation:", "Speakers:", "Summary:", "Meaning index:")

    def __init__(self):
        self.rows: list[dict] = []
        self.current, self.started = "source and audio", time.perf_counter()
        self.held = 0.0  # GPU memory allocated when the current row began (models kept from before)
        self.cuda = torch.cuda.is_available()
        if self.cuda:
            torch.cuda.reset_peak_memory_stats()

    def log(self, message: str) -> None:
        print(message, flush=True)
        stage = next((s[:-1] for s in self.STAGES if message.startswith(s)), None)
        if stage:
            self.begin(stage)

    def begin(self, stage: str) -> None:
        if stage != self.current:
            self.close()
            self.current = stage

    def close(self) -> None:
        peak = torch.cuda.max_memory_allocated() / 2**30 if self.cuda else 0.0
        self.rows.append(dict(stage=self.current, seconds=time.perf_counter() - self.started, peak_gib=peak,
                              held_gib=self.held))
        if self.cuda:
            torch.cuda.reset_peak_memory_stats()
        self.started = time.perf_counter()
        self.held = torch.cuda.memory_allocated() / 2**30 if self.cuda else 0.0

    def row(self, stage: str) -> dict | None:
        return next((r for r in self.rows if r["stage"] == stage), None)


class MeteredModels(Models):
    """iGot's own model pool, unchanged, telling the meter when the meaning index loads its model
    (its log line comes after the load) and when it is done with it (the save follows), so that
    row's time and peak hold the embedder's loading and nothing of the summary's or the save's."""

    def __init__(self, meter: StageMeter):
        super().__init__()
        self.meter = meter

    def embedder(self, model: str, device: str, offline: bool = False):
        self.meter.begin("Meaning index")
        return super().embedder(model, device, offline)

    def done_with(self, kind: str) -> None:
        super().done_with(kind)
        if kind == "embedder":
            self.meter.begin("saving")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--audio", type=Path, required=True)
    parser.add_argument("--tokenizer", type=Path, required=True)
    parser.add_argument("--minutes", type=float, default=60)
    parser.add_argument("--tokens", type=int, default=90, help="Whisper tokens per 30 s window")
    parser.add_argument("--openai-minutes", type=float, default=3, help="openai-whisper side by side; 0 skips it")
    parser.add_argument("--whisper", default="large-v3", choices=["large-v3", "large-v3-turbo"])
    parser.add_argument("--summary-tokenizer", type=Path,
                        help="Gemma 3's tokenizer saved by summary_gpu.py --save-tokenizer DIR: real chunk counts")
    parser.add_argument("--one-after-the-other", action="store_true",
                        help="no speaker detection beside the transcription (a T4's order): a peak for every stage")
    parser.add_argument("--tiny", action="store_true", help="tiny models: a smoke test of the script")
    args = parser.parse_args()
    assert torch.cuda.is_available() or args.tiny, "this benchmark is for a GPU"
    import transformers

    print(f"{torch.cuda.get_device_name() if torch.cuda.is_available() else 'CPU'}, torch {torch.__version__}, "
          f"transformers {transformers.__version__}", flush=True)
    work = Path(tempfile.mkdtemp(prefix="igot-gpu-"))
    try:
        wav = work / "interview.wav"
        tile(args.audio, wav, args.minutes * 60)
        models = build_models(work, args.tokenizer, args.tokens, args.tiny, args.whisper, args.summary_tokenizer)
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        out = work / "out"
        # The audio is already 16 kHz WAV: hand it to the pipeline as its finished audio stage
        # (the GPU machine has no ffmpeg), exactly as a resumed run finds it.
        stage = work_dir_for(str(wav), out)
        stage.mkdir(parents=True)
        (stage / "audio.wav").hardlink_to(wav)
        meter = StageMeter()
        options = RunOptions(language="en", engine="transformers", diarizer="nemo", progress=False,
                             speakers_beside=False if args.one_after_the_other else None, **models)
        started = time.perf_counter()
        result = run(str(wav), out, options, models=MeteredModels(meter), log=meter.log)
        total = time.perf_counter() - started
        meter.close()
        t = result.transcript
        summary = t.info.get("summary", {})
        print(f"\nWhisper {args.whisper}, {args.minutes:g} min of audio: {len(t.words)} words, {len(t.phrases)} phrases, "
              f"{len(t.speakers)} speakers; summary: {summary.get('chunks')} chunks, {summary.get('generate_calls')} "
              f"generate calls of {SummaryOptions().max_new_tokens} new tokens each row "
              "(random weights never stop early: the worst case)")
        timings = t.info.get("timings", {})
        kept = embed.load_embeddings(result.files["json"]) if "json" in result.files else None
        meaning = meter.row("Meaning index")
        if kept is None or meaning is None:
            print("\nthe meaning index was NOT made (see the log above): its row is missing")
        else:
            from transformers import AutoTokenizer

            pieces = AutoTokenizer.from_pretrained(models["embedding_model"])(
                [embed.E5_PREFIXES[1] + text for text in embed.phrase_texts(t)], truncation=True, max_length=512)
            tokens = sum(len(ids) for ids in pieces["input_ids"])
            print(f"meaning index: {kept.vectors.shape[0]} phrases x {kept.vectors.shape[1]} dimensions kept beside the "
                  f"transcript, {tokens} tokens embedded ({tokens / max(len(t.words), 1):.1f} a word); GPU memory held "
                  f"when it began {meaning['held_gib']:.2f} GiB")
        beside = "waiting_for_speakers" in timings
        peak = max(r["peak_gib"] for r in meter.rows)
        if beside:
            # Speaker detection ran in its own thread beside transcription, word timing and
            # punctuation: the log's stage order mixes them, so the run's own timings say what each
            # stage took, and the peak is the whole run's (both threads).
            # The summary and the meaning index run alone after them: their peaks are their own.
            names = dict(transcription="transcription", alignment="word timing", punctuation="punctuation",
                         diarization="speakers (beside the three above)", waiting_for_speakers="waited for speakers",
                         summary="summary", meaning="meaning index (multilingual-e5-small)")
            alone = dict(summary="Summary", meaning="Meaning index")
            print("\n| stage | seconds (loading included) | peak GPU GiB |\n|---|---|---|")
            for key, label in names.items():
                if key in timings:
                    row = meter.row(alone.get(key, ""))
                    cell = f"{row['peak_gib']:.2f}" if row else "in the whole run's"
                    print(f"| {label} | {timings[key]:.1f} | {cell} |")
        else:
            print("\n| stage | seconds (loading included) | peak GPU GiB |\n|---|---|---|")
            for row in meter.rows:
                print(f"| {row['stage']} | {row['seconds']:.1f} | {row['peak_gib']:.2f} |")
        print(f"| whole pipeline | {total:.1f} | peak GPU {peak:.2f} GiB |")
        print("\nthe run's own timings (s): " + ", ".join(f"{k} {v:.1f}" for k, v in timings.items())
              + f"; speakers beside the transcription: {beside}")
        if args.openai_minutes:
            from benchmarks.whisper_gpu import LARGE_V3, openai_row

            shape = dict(TINY, mel_bins=128) if args.tiny else LARGE_V3
            row = openai_row(shape, wav, argparse.Namespace(openai_minutes=args.openai_minutes, tokens=args.tokens),
                             "cuda" if torch.cuda.is_available() else "cpu", work)
            per_hour = row["seconds"] / row["hours"]
            transcription = next(r for r in meter.rows if r["stage"] == "Transcription")
            print("\n| Whisper large-v3 engine | seconds per audio hour | peak GPU GiB |\n|---|---|---|")
            print(f"| transformers (batched, in the run above, loading included) | "
                  f"{transcription['seconds'] * 60 / args.minutes:.1f} | {transcription['peak_gib']:.2f} |")
            print(f"| openai-whisper (sequential; {row['windows']} windows timed) | {per_hour:.1f} | {row['peak_gib'] or 0:.2f} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
