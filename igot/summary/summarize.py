"""The summary: bullets of what the interview says, each bullet citing the moments it comes from.

An instruction-tuned language model (transformers text generation, through the model's chat
template) reads the transcript as "[12:34] Ana: ..." lines and writes bullets that cite times.
A transcript longer than the model's context is summarised in chunks cut between phrases, and
the model then merges the partial summaries (map-reduce); nothing is ever cut off.

What the model gives as evidence is checked against the transcript: a time where nobody speaks
is removed, and a quote that nobody said (or not the speaker it is put in the mouth of) is kept
but marked unverified, so the summary cannot invent what people said.
"""

from __future__ import annotations

import math
import os
import re
import time
import unicodedata
from contextlib import contextmanager
from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

from igot.errors import IgotError, install_hint
from igot.links import link_at
from igot.runtime.devices import free_memory, pick_device
from igot.runtime.progress import Bar, Progress
from igot.summary import decode, loops
from igot.text import clean_text, format_clock
from igot.transcript import Citation, SummaryPoint, Transcript

# Instruction-tuned, 32k context, 4 GB in float32: the largest Gemma 3 a free T4 runs (it needs
# float32). Google trained the 1B mainly on English; gemma-3-4b-it (140 languages) needs 16 GB in
# float32, so it is for larger GPUs (L4, A100). Gated on Hugging Face: accept the licence once.
GPU_LLM = "google/gemma-3-1b-it"
# On 2 CPU cores the 1B's summary of an hour takes 0.30 of the recording (the whole run ~0.9), and
# its 768 tokens a call are a fixed cost: a 10-minute interview took 1.24 of the recording in all.
# The 270M's took 0.14 of the hour (the whole run 0.74; benchmarks/README.md, "The hour on a
# laptop"). It follows instructions less well: IFEval 51.2 against the 1B's 80.2 (Google's model
# cards). --llm-model google/gemma-3-1b-it brings the 1B back.
CPU_LLM = "google/gemma-3-270m-it"


def default_llm(device: str) -> str:
    return GPU_LLM if device.startswith("cuda") else CPU_LLM


@dataclass(frozen=True)
class SummaryOptions:
    """The tuned values of the summary; a sweep is replace(SummaryOptions(), batch=1)."""

    # Tokens per call (None: the model's own context). Small models lose the thread in longer
    # inputs, and memory grows faster than the prompt: Gemma 3 1B in float32 peaks at 6.2 GB with
    # 8192 tokens, 19 GB with a whole hour (19k tokens) at once, more than a T4 has
    # (docs/findings.md, "Summary chunks: 8,192 tokens, several in one call").
    max_context: Optional[int] = 8192
    # Room for about 15 bullets with their times. Not swept; the stage's time with it:
    # benchmarks/README.md, "The summary stage alone".
    max_new_tokens: int = 768
    # An answer gets answer_share of the tokens of the text it reads (the transcript, or the
    # summaries it merges), at least least_new_tokens and at most max_new_tokens: a summary in
    # proportion to the interview. Small models given room write until it is used up, repeating
    # themselves (SmolLM2 135M wrote all 768 tokens for a 41 s call, ~80 s on 2 cores), and each
    # token is ~0.1 s on 2 cores: a 30-second call (~130 tokens) gets 128, not 256. 128 holds
    # three bullets with a quote and a time each; an interview of more than ~6 minutes (1,536
    # tokens) gets all 768, as before. Chosen, not swept: no instruction-tuned weights here to
    # judge longer answers by (docs/findings.md, "Short recordings in the workspace").
    answer_share: float = 0.5
    least_new_tokens: int = 128
    # Chunks summarised together in one generate call: a one-hour interview is 3-4 chunks, so its
    # map step is one decode loop; four rows of 8192 tokens fit a T4 beside Gemma 3 1B in float32
    # (docs/findings.md, "Summary chunks"; `benchmarks/summary_gpu.py --batches 1,4` times it).
    batch: int = 4
    # Seconds a cited time may fall before a phrase start (times are floored, models round), and
    # the share of a quote's words found in order (Whisper's spelling, dropped fillers). Not
    # measured on a table: tests/test_summarize.py holds the cases they were set on.
    time_tolerance: float = 3.0
    quote_match: float = 0.8


DEFAULT_PROMPT = """\
You help a product team learn from a user interview: "{name}".

Below is the transcript. Each line starts with the time it was said, as [minutes:seconds] or \
[hours:minutes:seconds], and the name of the person speaking; a new [time] inside a line starts \
a new phrase.

Write a short summary as a bullet list, one "- " bullet per point, covering:
- the user's needs and goals,
- their pain points and frustrations,
- notable quotes, copied word for word between quotation marks, with the name of who said them.

End every bullet with the time or times it comes from, exactly as written in the transcript, \
for example [12:34]. Use only what the transcript says. Write in {language}.

Transcript:
{transcript}

Now write the bullet summary in {language}, every bullet ending with its [time]s."""

MERGE_PROMPT = """\
The user interview "{name}" was too long to read at once, so it was summarised in parts. \
Below are the summaries of its consecutive parts.

Combine them into one bullet list, one "- " bullet per point, in the same language as the \
summaries: merge bullets that say the same thing, keep every time such as [12:34] exactly as \
written, and keep quotes word for word.

{summaries}

Now write the combined bullet list."""

LANGUAGES = {
    "pt": "Portuguese", "en": "English", "es": "Spanish", "fr": "French", "de": "German", "it": "Italian",
    "nl": "Dutch", "pl": "Polish", "cs": "Czech", "sk": "Slovak", "sl": "Slovenian", "bg": "Bulgarian",
    "ru": "Russian", "uk": "Ukrainian", "ja": "Japanese", "zh": "Chinese", "ko": "Korean", "ar": "Arabic",
    "hi": "Hindi", "tr": "Turkish", "sv": "Swedish", "da": "Danish", "no": "Norwegian", "fi": "Finnish",
    "el": "Greek", "he": "Hebrew", "ro": "Romanian", "hu": "Hungarian", "ca": "Catalan", "id": "Indonesian",
    "vi": "Vietnamese", "th": "Thai",
}


# --- the model ----------------------------------------------------------------------------------
@dataclass
class LLM:
    name: str  # hub id, folder or GGUF file, recorded in the transcript's info
    model: Any  # a transformers causal language model
    tokenizer: Any
    context: int  # the most tokens one call reads and writes together
    chat: bool  # False: the tokenizer has no chat template (a base model), the prompt goes in as text

    @classmethod
    def of(cls, name: str, model: Any, tokenizer: Any) -> "LLM":
        context = getattr(model.config, "max_position_embeddings", None) or 2048
        return cls(name, model, tokenizer, int(context), bool(getattr(tokenizer, "chat_template", None)))

    def prompt_ids(self, prompt: str) -> list[int]:
        """The tokens the model reads for `prompt`: a user turn of its chat, or the bare text."""
        if self.chat:
            text = self.tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
            )
            return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])  # the template has them
        return list(self.tokenizer(prompt.rstrip() + "\n\n")["input_ids"])

    def count(self, text: str) -> int:
        """Tokens of a piece of text on its own (no chat template, no special tokens)."""
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def generate(self, prompt: str, max_new_tokens: int) -> str:
        """The model's answer to `prompt`, greedy: the same transcript gives the same summary."""
        return self.generate_many([prompt], max_new_tokens)[0]

    def generate_many(self, prompts: list[str], max_new_tokens: int, on_token: Optional[Callable[[], None]] = None,
                      stop_loops: bool = True) -> list[str]:
        """The answers to independent prompts, decoded together: one step loop for all of them
        instead of one per prompt (a decode step costs about the same for 1 or 4 rows on a GPU).
        Shorter prompts are padded on the left and masked, so each answer is the one it gets alone.
        on_token: called at each new token of the rows (the progress bar's tick). stop_loops: a row
        stuck in a loop ends there (igot.summary.loops); False: only at its end token or its room."""
        import torch
        from transformers import GenerationConfig, StoppingCriteria, StoppingCriteriaList

        class Tick(StoppingCriteria):  # says a step was made; stops a row stuck in a loop (igot.summary.loops)
            def __call__(self, input_ids, scores, **kwargs):
                if on_token:
                    on_token()
                written = input_ids[:, width:]
                if not stop_loops or written.shape[1] % decode.CHECK_EVERY:
                    return torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)
                return torch.tensor([loops.looping(row) for row in written.tolist()], device=input_ids.device)

        defaults = self.model.generation_config
        eos = defaults.eos_token_id
        stops = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        pad = defaults.pad_token_id if defaults.pad_token_id is not None else self.tokenizer.pad_token_id
        pad = pad if pad is not None else min(stops, default=0)
        rows = [self.prompt_ids(p) for p in prompts]
        width = max(len(r) for r in rows)
        device = self.model.device
        ids = torch.tensor([[pad] * (width - len(r)) + r for r in rows], device=device)
        mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows], device=device)
        with torch.inference_mode(), attention_kernels(device):
            if decode.can_decode(self.model):  # Gemma 3: our loop, one CUDA graph launch a token
                out = decode.greedy(self.model, ids, mask, max_new_tokens, stops, pad, on_token=on_token,
                                    stuck=loops.looping if stop_loops else None)
            else:
                config = GenerationConfig(max_new_tokens=max_new_tokens, do_sample=False, eos_token_id=eos,
                                          bos_token_id=defaults.bos_token_id, pad_token_id=pad)
                ticks = StoppingCriteriaList([Tick()])
                out = self.model.generate(input_ids=ids, attention_mask=mask, generation_config=config,
                                          stopping_criteria=ticks)[:, width:]
        answers = []
        for row in out.tolist():
            end = next((i for i, token in enumerate(row) if token in stops), len(row))  # then only padding
            answers.append(self.tokenizer.decode(row[:end], skip_special_tokens=True).strip())
        return answers

    def close(self) -> None:
        """Free the model's memory now, so the next stage has the GPU to itself."""
        self.model = None
        free_memory()


@contextmanager
def attention_kernels(device: Any) -> Iterator[None]:
    """Generation without cuDNN's attention kernel. PyTorch picks it for bfloat16 on Hopper GPUs,
    and it builds a new execution plan for every key length it has not seen: with a growing KV
    cache that is every decode step, ~100 ms each (Gemma 3 1B on an H100: 155 ms a token instead
    of 57 once the lengths were seen; docs/findings.md, "cuDNN's attention off while generating")."""

    if not str(device).startswith("cuda"):
        yield
        return
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):
        yield


def pick_dtype(device: str) -> Any:
    """bfloat16 on GPUs that compute in it (compute capability 8.0 and up: A100, L4, H100),
    float32 everywhere else.

    Gemma 3 was trained in bfloat16. A T4 (7.5) only emulates bfloat16, and Gemma 3 in float16
    overflows into empty answers, so a T4 runs float32 (4 GB for the 1B model). Where bfloat16 is
    native it halves the memory and, with igot's CUDA-graph decode, is the faster choice: on an
    H100 9.5 ms a step against 13.3 in float32, the whole-hour summary 11.6 s against 16.1 s
    (docs/findings.md, "Summary precision"; benchmarks/summary_gpu.py). Pass dtype= to load_llm for another choice.
    """
    import torch

    if str(device).startswith("cuda") and torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8:
        return torch.bfloat16
    return torch.float32


def load_llm(model: Optional[str] = None, device: str = "auto", dtype: Any = None, local_files_only: bool = False) -> LLM:
    """A hub id, a folder saved with save_pretrained, or a GGUF file (a folder with one GGUF file
    in it and no config.json counts as that file). local_files_only: from the hub's local cache."""
    device = pick_device(device)
    name = model or default_llm(device)
    try:
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError:
        raise IgotError("The summary needs PyTorch and transformers.", f"Run: {install_hint('text')}") from None
    dtype = dtype or pick_dtype(device)
    folder, gguf_file = _locate(name)
    extra = {"gguf_file": gguf_file} if gguf_file else {}
    extra["local_files_only"] = local_files_only
    try:
        with gguf_read_once(gguf_file is not None):
            tokenizer = AutoTokenizer.from_pretrained(folder, **extra)
            network = AutoModelForCausalLM.from_pretrained(folder, **{_dtype_argument(): dtype}, **extra)
    except Exception as exc:  # missing files, no network, a gated model, an unknown architecture
        raise load_error(name, exc) from None
    # Only moved: from_pretrained keeps the RoPE frequencies in float32 on purpose, and a
    # .to(bfloat16) would round them, blurring positions deep in a long prompt.
    network = network.to(device).eval()
    return LLM.of(name, network, tokenizer)


def _dtype_argument() -> str:
    """transformers 4.56 renamed from_pretrained's torch_dtype= to dtype=; Colab may have either."""
    import transformers

    major, minor = (int(x) for x in re.findall(r"\d+", transformers.__version__)[:2])
    return "dtype" if (major, minor) >= (4, 56) else "torch_dtype"


def _locate(name: str) -> tuple[str, Optional[str]]:
    """(what from_pretrained reads, the GGUF file name in it or None)."""
    path = Path(name).expanduser()
    if path.is_file():
        if path.suffix.lower() != ".gguf":
            raise IgotError(f"'{name}' is a file but not a GGUF model.",
                            "Give a .gguf file, a model folder, or a Hugging Face model id such as " + GPU_LLM + ".")
        return str(path.parent), path.name
    if path.is_dir():
        ggufs = sorted(path.glob("*.gguf"))
        if len(ggufs) == 1 and not (path / "config.json").exists():
            return str(path), ggufs[0].name
        return str(path), None
    if name.lower().endswith(".gguf") or name.startswith(("/", "./", "../", "~")) or "\\" in name:
        raise IgotError(f"No language model at '{name}'.", "Check the path of the model file or folder.")
    return name, None


@contextmanager
def gguf_read_once(active: bool) -> Iterator[None]:
    """transformers opens a GGUF file three times (tokenizer, config, weights), and gguf's reader
    walks every vocabulary entry in Python each time: about 20 s a time for Gemma's 262k tokens
    on two cores. While loading, every open of the same file gets the one reader."""
    try:
        import gguf
    except ImportError:
        active = False
    if not active:
        yield
        return
    original = gguf.GGUFReader
    readers: dict[tuple[str, str], Any] = {}

    def reader(path: Any, mode: str = "r") -> Any:
        key = (os.fspath(path), mode)
        if key not in readers:
            readers[key] = original(path, mode)
        return readers[key]

    gguf.GGUFReader = reader
    try:
        yield
    finally:
        gguf.GGUFReader = original


def load_error(name: str, exc: Exception) -> IgotError:
    text = str(exc).strip()
    reason = text.splitlines()[0] if text else type(exc).__name__
    if "gated" in text.lower() or type(exc).__name__ == "GatedRepoError":
        return IgotError(
            f"The language model '{name}' is gated: Hugging Face lets you download it once you accept its licence.",
            f"Open https://huggingface.co/{name} signed in, accept the licence, then give iGot your token as HF_TOKEN "
            "(in Colab: the key icon, secret HF_TOKEN, notebook access on).",
        )
    if Path(name).expanduser().exists():
        return IgotError(f"Could not read the language model at '{name}': {reason}.",
                         "Give a GGUF file or a folder saved with save_pretrained of a text-generation model.")
    return IgotError(f"Could not download the language model '{name}' ({reason}).",
                     "Check the model name and the internet connection, or download it once and give its folder or GGUF file.")


# --- the prompt ---------------------------------------------------------------------------------
def read_prompt(path: Path | str) -> str:
    """A prompt template from a text file (UTF-8), checked for the {transcript} placeholder."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise IgotError(f"Prompt file not found: '{path}'.", "Check the path of the prompt file.")
    try:
        prompt = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        raise IgotError(f"Could not read the prompt file '{path}': {err}.", "Save it as plain UTF-8 text.") from None
    check_prompt(prompt)
    return prompt


def check_prompt(prompt: str) -> None:
    """The transcript goes into the prompt once: a kept prompt with {transcript} many times would make
    every summary call read the interview again and again (hours for one summary)."""
    count = prompt.count("{transcript}")
    if count == 0:
        raise IgotError("The prompt has no {transcript} placeholder, so the model would never see the interview.",
                        "Write {transcript} where the transcript goes; {language} and {name} are filled in too.")
    if count > 1:
        raise IgotError(f"The prompt has {{transcript}} {count} times: the model would read the whole interview "
                        f"{count} times in every call.", "Keep one {transcript}, where the transcript goes.")


def language_name(code: Optional[str]) -> str:
    if not code:
        return "the language of the transcript"
    return LANGUAGES.get(code.lower().split("-")[0], code)


def fill_prompt(template: str, t: Transcript, text: str, slot: str = "{transcript}") -> str:
    """The template with its placeholders filled in one pass, so a title or a transcript holding
    "{transcript}" or "{name}" is never filled again; other braces stay as written (no str.format)."""
    values = {"{language}": language_name(t.language), "{name}": clean_text(t.source.title) or "Interview", slot: text}
    return re.sub("|".join(re.escape(k) for k in values), lambda m: values[m.group(0)], template)


# --- the transcript as the model reads it ------------------------------------------------------
@dataclass
class Piece:
    """A phrase, or a part of one too long for a chunk alone, as the model reads it."""

    phrase: int  # index into Transcript.phrases
    speaker: str
    start: float
    text: str


def transcript_pieces(t: Transcript) -> list[Piece]:
    return [Piece(i, p.speaker, p.start, clean_text(p.text)) for i, p in enumerate(t.phrases) if clean_text(p.text)]


def render(t: Transcript, pieces: list[Piece]) -> str:
    """One line per speaker turn, every phrase opening with its time: "[12:34] Ana: ... [12:40] ...".
    A chunk that starts mid-turn names its speaker again."""
    lines: list[str] = []
    previous: Optional[Piece] = None
    for piece in pieces:
        stamp = f"[{format_clock(piece.start)}] {piece.text}"
        if previous is not None and previous.speaker == piece.speaker:
            lines[-1] += " " + stamp
        else:
            name = t.speaker_name(piece.speaker) if piece.speaker or t.speakers else ""
            lines.append(f"[{format_clock(piece.start)}] {name}: {piece.text}" if name else stamp)
        previous = piece
    return "\n".join(lines)


def split_transcript(t: Transcript, llm: LLM, budget: int) -> list[list[Piece]]:
    """Consecutive chunks of phrases whose rendered text is at most `budget` tokens each."""
    pieces = transcript_pieces(t)
    if not pieces:
        return []
    # Each piece's tokens with its speaker's name: an upper bound, whatever line it ends up in.
    costs = [llm.count(render(t, [p])) + 1 for p in pieces]
    chunks: list[list[Piece]] = []
    current: list[Piece] = []
    used = 0
    for piece, cost in zip(pieces, costs):
        if cost > budget:  # one phrase longer than a whole chunk: cut it between words
            chunks += [current] if current else []
            chunks += [[part] for part in _cut_piece(t, llm, piece, budget)]
            current, used = [], 0
        elif used + cost > budget:
            chunks.append(current)
            current, used = [piece], cost
        else:
            current.append(piece)
            used += cost
    if current:
        chunks.append(current)
    return chunks


def _fit(chunk: list[Piece], fits: Callable[[list[Piece]], bool]) -> list[list[Piece]]:
    """The chunk, halved until each half fits for certain (the estimate is per piece; tokens can
    differ a little once pieces are joined)."""
    if len(chunk) < 2 or fits(chunk):
        return [chunk]
    half = len(chunk) // 2
    return _fit(chunk[:half], fits) + _fit(chunk[half:], fits)


def _cut_piece(t: Transcript, llm: LLM, piece: Piece, budget: int) -> list[Piece]:
    if llm.count(render(t, [piece])) <= budget:
        return [piece]
    words = piece.text.split()
    if len(words) < 2:
        raise IgotError("A single word of the transcript is longer than the model's context.",
                        "Use a model with a larger context, or lower max_new_tokens.")
    half = len(words) // 2
    return [*_cut_piece(t, llm, replace(piece, text=" ".join(words[:half])), budget),
            *_cut_piece(t, llm, replace(piece, text=" ".join(words[half:])), budget)]


# --- map-reduce ---------------------------------------------------------------------------------
@dataclass
class Part:
    """A summary of consecutive chunks: what the merge step reads."""

    start: float
    end: float
    text: str


def summarize(
    t: Transcript,
    llm: LLM,
    prompt: str = DEFAULT_PROMPT,
    merge_prompt: str = MERGE_PROMPT,
    progress: Progress = False,
    options: Optional[SummaryOptions] = None,
) -> Transcript:
    """t with its summary (t.summary): bullets whose cited times are checked and linked, whose
    quotes are looked up; t.info["summary"] says how (model, context, chunks, calls, seconds).

    The transcript goes in whole when it fits options.max_context tokens (or the model's own
    context, if smaller) with the prompt and an answer of options.max_new_tokens; else in chunks
    cut between phrases, whose summaries the model then merges with `merge_prompt`. Up to
    options.batch chunks are summarised together in one generate call (the same answers as one by
    one, in less time)."""
    options = options or SummaryOptions()
    max_new_tokens, batch = options.max_new_tokens, options.batch
    check_prompt(prompt)
    if "{summaries}" not in merge_prompt:
        raise IgotError("The merge prompt has no {summaries} placeholder.", "Write {summaries} where the partial summaries go.")
    started = time.perf_counter()
    context = min(llm.context, options.max_context or llm.context)
    limit = context - max_new_tokens  # what one prompt may take, chat template included
    budget = limit - len(llm.prompt_ids(fill_prompt(prompt, t, ""))) - 8  # 8: joins between pieces
    if budget < 64:
        raise IgotError(f"The prompt and an answer of {max_new_tokens} tokens leave no room for the transcript "
                        f"in the model's context of {context} tokens.", "Shorten the prompt or lower max_new_tokens.")
    chunks = [fitted for chunk in split_transcript(t, llm, budget)
              for fitted in _fit(chunk, lambda c: len(llm.prompt_ids(fill_prompt(prompt, t, render(t, c)))) <= limit)]
    if not chunks:
        return replace(t, summary=[])
    if len(chunks) > 1:
        merge_budget(t, llm, merge_prompt, limit, max_new_tokens)  # fail before the long part, not after
    step = max(1, batch)
    texts = [render(t, chunk) for chunk in chunks]
    sizes = [llm.count(text) for text in texts]
    rooms = [answer_room(sizes[i:i + step], options) for i in range(0, len(texts), step)]
    # Progress in tokens written, the slow part on a CPU (a call may take minutes): the calls
    # planned are the map step's and, with several chunks, one merge; a row that stops early
    # fills the rest of its call at once, so the time left is rarely too low.
    planned = len(rooms) + (len(chunks) > 1)
    bar = Bar(progress, sum(rooms) + (len(chunks) > 1) * max_new_tokens, "Summary", unit="token", leave=True)
    calls = 0

    def ask(prompts: list[str], read: list[int]) -> list[str]:
        """Independent prompts, `batch` at a time in one generate call each; read[i]: the tokens
        of the text prompts[i] asks about, which set the room for its answer."""
        nonlocal calls
        answers: list[str] = []
        for i in range(0, len(prompts), step):
            calls += 1
            rows = prompts[i:i + step]
            room = answer_room(read[i:i + step], options)
            bar.note(f"call {calls} of {max(calls, planned)}, reading {len(rows)} part{'s' * (len(rows) > 1)}")
            bar.total = max(bar.total, bar.n + room)
            before = bar.n
            answers += llm.generate_many(rows, room, on_token=lambda: bar.update(1))
            bar.update(max(0, before + room - bar.n))
        return answers

    answers = ask([fill_prompt(prompt, t, text) for text in texts], sizes)
    parts = [Part(chunk[0].start, t.phrases[chunk[-1].phrase].end, answer) for chunk, answer in zip(chunks, answers)]
    answer = merge(t, parts, llm, merge_prompt, limit, max_new_tokens, ask)
    bar.total = bar.n
    bar.close()
    points = points_of(t, answer, options)
    info = {**t.info, "summary": {"model": llm.name, "context": context, "chunks": len(chunks),
                                  "generate_calls": calls, "batch": batch, "seconds": round(time.perf_counter() - started, 2)}}
    return replace(t, summary=points, info=info)


def merge(t: Transcript, parts: list[Part], llm: LLM, merge_prompt: str, limit: int, max_new_tokens: int,
          ask: Callable[[list[str], list[int]], list[str]]) -> str:
    """One summary from the partial ones: merged by the model, group by group, until one is left."""
    budget = merge_budget(t, llm, merge_prompt, limit, max_new_tokens) if len(parts) > 1 else 0
    while len(parts) > 1:
        groups = _groups(parts, [llm.count(_part_text(p)) + 2 for p in parts], budget)
        if len(groups) == len(parts):  # no two fit together: another round would change nothing
            raise IgotError("The partial summaries are too long to merge within the model's context.",
                            "Lower max_new_tokens, or use a model with a larger context.")
        # The groups of a round are independent: asked together. A last one left alone waits for the next round.
        read = [_merge_text(g) for g in groups if len(g) > 1]
        merged = iter(ask([fill_prompt(merge_prompt, t, text, "{summaries}") for text in read], [llm.count(x) for x in read]))
        parts = [group[0] if len(group) == 1 else Part(group[0].start, group[-1].end, next(merged)) for group in groups]
    return parts[0].text


def answer_room(read: list[int], options: SummaryOptions) -> int:
    """New tokens for one generate call whose rows read texts of `read` tokens: options.answer_share
    of the longest, within [options.least_new_tokens, options.max_new_tokens]."""
    return min(options.max_new_tokens, max(options.least_new_tokens, math.ceil(options.answer_share * max(read))))


def merge_budget(t: Transcript, llm: LLM, merge_prompt: str, limit: int, max_new_tokens: int) -> int:
    """Tokens a merge call has for the partial summaries: enough for two, so that every round
    merges at least two of them and the merging ends (each is at most max_new_tokens long)."""
    budget = limit - len(llm.prompt_ids(fill_prompt(merge_prompt, t, "", "{summaries}"))) - 8
    if budget < 2 * (max_new_tokens + 24):  # 24: the "Part from [..] to [..]:" line
        raise IgotError(f"The model's context is too small to merge two summaries of {max_new_tokens} tokens.",
                        "Lower max_new_tokens, or use a model with a larger context.")
    return budget


def _groups(parts: list[Part], costs: list[int], budget: int) -> list[list[Part]]:
    """Consecutive parts packed into groups that fit the budget."""
    groups: list[list[Part]] = [[]]
    used = 0
    for part, cost in zip(parts, costs):
        if groups[-1] and used + cost > budget:
            groups.append([])
            used = 0
        groups[-1].append(part)
        used += cost
    return groups


def _part_text(part: Part) -> str:
    return f"Part from [{format_clock(part.start)}] to [{format_clock(part.end)}]:\n{part.text.strip()}"


def _merge_text(group: list[Part]) -> str:
    return "\n\n".join(_part_text(p) for p in group)


# --- from the answer to checked points ----------------------------------------------------------
BULLET = re.compile(r"^\s*(?:[-*•‣◦▪]|\d{1,2}[.)])\s+")
TIME = r"\d{1,2}:\d{2}(?::\d{2})?"
# One or more times in brackets or parentheses: [12:34], (1:02:03), [12:34, 15:02], [12:34–13:10].
CITATION = re.compile(rf"[\[(]\s*{TIME}(?:\s*(?:[,;/–—-]|and|e|y|et)\s*{TIME})*\s*[\])]")
QUOTE = re.compile(r"“([^”\n]+)”|\"([^\"\n]+)\"|«([^»\n]+)»|„([^“”\n]+)[“”]")


def parse_bullets(answer: str) -> list[str]:
    """The bullets of an answer; a line that is not a bullet continues the one above it, or is a
    heading or a preamble ("Here is the summary:") and is left out. No bullets: one point a line."""
    lines = [line.strip() for line in answer.replace("**", "").replace("__", "").splitlines()]
    if not any(BULLET.match(line) for line in answer.splitlines()):
        return _unique([line for line in lines if line and not line.startswith("#")])
    bullets: list[str] = []
    open_bullet = False
    for raw, line in zip(answer.splitlines(), lines):
        match = BULLET.match(raw.replace("**", ""))
        if match:
            bullets.append(BULLET.sub("", line, count=1).strip())
            open_bullet = True
        elif not line:
            open_bullet = False
        elif open_bullet and not line.startswith("#") and not line.endswith(":"):
            bullets[-1] += " " + line
        else:
            open_bullet = False
    return _unique([b for b in bullets if b])


def _unique(items: list[str]) -> list[str]:
    """Without repeats: a small model stuck in a loop writes the same bullet again and again."""
    return list(dict.fromkeys(items))


def parse_time(text: str) -> Optional[float]:
    parts = [int(x) for x in text.split(":")]
    if parts[-1] >= 60 or (len(parts) == 3 and parts[1] >= 60):
        return None
    h, m, s = ([0] + parts)[-3:]
    return float(h * 3600 + m * 60 + s)


def points_of(t: Transcript, answer: str, options: Optional[SummaryOptions] = None) -> list[SummaryPoint]:
    """The summary points of the model's answer, checked. Left out: a bullet that was only its times
    (a model cut short, or listing moments), which has nothing to show, and a model's loop (one
    phrase said again and again, or what an earlier point said: igot.summary.loops)."""
    shown: list[SummaryPoint] = []
    for point in check_points(t, parse_bullets(answer), options):
        if clean_text(point.text) and not loops.repeats_itself(point.text) \
                and not loops.same_point(point.text, [p.text for p in shown]):
            shown.append(point)
    return shown


def check_points(t: Transcript, bullets: list[str], options: Optional[SummaryOptions] = None) -> list[SummaryPoint]:
    return [check_point(t, bullet, options) for bullet in bullets]


def check_point(t: Transcript, bullet: str, options: Optional[SummaryOptions] = None) -> SummaryPoint:
    """The bullet's times matched to phrases (the rest removed), its quotes looked up."""
    citations: list[Citation] = []
    removed: list[str] = []
    for match in CITATION.finditer(bullet):
        for written in re.findall(TIME, match.group()):
            seconds = parse_time(written)
            index = find_phrase(t, seconds, options) if seconds is not None else None
            if index is None:
                removed.append(f"[{written}]")
            else:
                _add(citations, _citation(t, index, seconds))
    text = _tidy(CITATION.sub("", bullet))
    unverified = []
    for quote, speaker in quotes_with_speakers(t, text):
        index = find_quote(t, quote, speaker, options)
        if index is None:
            unverified.append(quote)
        else:  # a quote found is evidence too: link it to where it was said
            _add(citations, _citation(t, index, t.phrases[index].start))
    return SummaryPoint(text, citations, unverified, removed)


def _add(citations: list[Citation], citation: Citation) -> None:
    """One citation a phrase: [0:10–0:12] inside one phrase is one moment to check."""
    if all(c.phrase != citation.phrase for c in citations):
        citations.append(citation)


def _citation(t: Transcript, index: int, seconds: float) -> Citation:
    p = t.phrases[index]
    at = min(max(seconds, p.start), max(p.end, p.start))  # within the phrase: the link shows it said
    return Citation(at, link_at(t.source.url, t.source.kind, at), index)


def _tidy(text: str) -> str:
    text = clean_text(text)
    text = re.sub(r"\s+([.,;:!?])", r"\1", text)
    return re.sub(r"([.,;:])\1+", r"\1", text).strip(" ,;:-–—")


def find_phrase(t: Transcript, seconds: float, options: Optional[SummaryOptions] = None) -> Optional[int]:
    """The phrase said at `seconds` (a time shown floored, so its whole second counts), else the one
    starting nearest to it within options.time_tolerance seconds; None when nobody speaks then."""
    nearest, distance = None, (options or SummaryOptions()).time_tolerance
    for i, p in enumerate(t.phrases):
        if not clean_text(p.text):
            continue
        if math.floor(p.start) <= seconds <= p.end:
            return i
        if abs(p.start - seconds) <= distance:
            nearest, distance = i, abs(p.start - seconds)
    return nearest


# --- quotes -------------------------------------------------------------------------------------
def _words(text: str) -> list[str]:
    """Lower case, no accents, no punctuation: how Whisper and a model may spell the same words."""
    text = unicodedata.normalize("NFKD", text.casefold())
    return re.findall(r"\w+", "".join(c for c in text if not unicodedata.combining(c)))


def quotes_with_speakers(t: Transcript, text: str) -> list[tuple[str, Optional[str]]]:
    """Each quote in the text, with the speaker id it is attributed to: the speaker named last
    before it (after the previous quote), else named just after it; None when no one is named."""
    matches = list(QUOTE.finditer(text))
    found = []
    for k, match in enumerate(matches):
        quote = next(g for g in match.groups() if g is not None).strip()
        before = text[matches[k - 1].end() if k else 0:match.start()]
        after = text[match.end():matches[k + 1].start() if k + 1 < len(matches) else len(text)][:40]
        speaker = _named(t, before, last=True) or _named(t, after, last=False)
        found.append((quote, speaker))
    return found


def _named(t: Transcript, text: str, last: bool) -> Optional[str]:
    words = _words(text)
    hits: list[tuple[int, str]] = []
    for speaker_id, name in _speaker_names(t):
        n = len(name)
        hits += [(i, speaker_id) for i in range(len(words) - n + 1) if words[i:i + n] == name]
    if not hits:
        return None
    return max(hits)[1] if last else min(hits)[1]


def _speaker_names(t: Transcript) -> list[tuple[str, list[str]]]:
    """(speaker id, name as words): full names, and first names that only one speaker has."""
    names = [(s.id, _words(s.name)) for s in t.speakers if _words(s.name)]
    firsts = [name[0] for _, name in names]
    extra = [(sid, name[:1]) for sid, name in names if len(name) > 1 and firsts.count(name[0]) == 1 and len(name[0]) > 2]
    return names + extra


def find_quote(t: Transcript, quote: str, speaker: Optional[str] = None,
               options: Optional[SummaryOptions] = None) -> Optional[int]:
    """The phrase where the quote starts, when its words were said in order (by `speaker`, when
    given); None when not found. A model that skipped words with "..." gives fragments: each one
    must be found."""
    fragments = [_words(f) for f in re.split(r"\.\.\.|…|\[\.\.\.\]", quote)]
    fragments = [f for f in fragments if f]
    if not fragments:
        return 0 if t.phrases else None
    first = None
    for fragment in fragments:
        index = _find_words(t, fragment, speaker, (options or SummaryOptions()).quote_match)
        if index is None:
            return None
        first = index if first is None else first
    return first


def _find_words(t: Transcript, quote: list[str], speaker: Optional[str], share: float) -> Optional[int]:
    # Short quotes must be exact; longer ones may miss a word or two (fillers, Whisper's spelling),
    # within a window only a little longer than the quote, so scattered common words don't count.
    short = len(quote) < 4
    need = len(quote) if short else math.ceil(share * len(quote))
    width = len(quote) if short else len(quote) + max(2, len(quote) // 4)
    wanted = set(quote)
    for run in _runs(t, speaker):
        words = [w for w, _ in run]
        for start in range(len(words)):
            if words[start] not in wanted:
                continue
            window = words[start:start + width]
            if sum(w in wanted for w in window) < need:
                continue
            blocks = SequenceMatcher(None, quote, window, autojunk=False).get_matching_blocks()
            if sum(b.size for b in blocks) >= need:
                return run[start][1]
    return None


def _runs(t: Transcript, speaker: Optional[str]) -> list[list[tuple[str, int]]]:
    """The words of consecutive phrases (of one speaker, when given), each with its phrase index:
    a quote may run over from one phrase into the next."""
    runs: list[list[tuple[str, int]]] = []
    previous = None
    for i, p in enumerate(t.phrases):
        if speaker is not None and p.speaker != speaker:
            previous = None
            continue
        words = [(w, i) for w in _words(p.text)]
        if previous is not None and (speaker is not None or p.speaker == previous):
            runs[-1] += words
        else:
            runs.append(words)
        previous = p.speaker
    return runs
