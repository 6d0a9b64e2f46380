"""Punctuation and sentence capitals for Whisper's words, from a token-classification model.

Whisper often writes long stretches with few full stops; people reading an interview need
sentences. The default model, kredor/punctuate-all (XLM-RoBERTa base fine-tuned on Europarl
in 12 languages), gives every sub-token the mark that follows its word: "0" (none), ".", ",",
"?", "-" or ":". Only the words' text changes here: their number, order and times never do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from igot.errors import IgotError
from igot.runtime.devices import pick_device
from igot.runtime.progress import Bar, Progress
from igot.text import join_words
from igot.transcript import Transcript

PUNCTUATION_MODEL = "kredor/punctuate-all"
# The languages punctuate-all was trained on (its model card).
PUNCTUATION_LANGUAGES = frozenset({"en", "de", "fr", "es", "bg", "it", "pl", "nl", "cs", "pt", "sk", "sl"})

# What each label writes after its word. "-" is Europarl's dash between clauses (" - "): it is
# right only 60 % of the time (model card) and half the real dashes come out as ",", so a comma
# reads best, and it keeps words free of spaces, which the exports need to find each word.
MARKS = {"0": "", "O": "", ".": ".", ",": ",", "?": "?", "-": ",", ":": ":", "!": "!", ";": ";"}
SENTENCE_END = (".", "?", "!")
TRAILING_MARKS = ".,;:!?…-–—"  # Whisper's marks after a word: the model decides them again
LEADING_MARKS = ".,;:…"  # "...so": a mark glued before a word; ¿ ¡ « ( stay, the model can't restore them
CLOSERS = "\"'”’»)]"  # kept, with the new mark after them
ABBREVIATION = re.compile(r"(?:[^\W\d_]\.)+[^\W\d_]")  # "U.S.A", "e.g": the last dot is part of the word

Predict = Callable[[list[list[str]]], list[list[str]]]  # windows of words -> one label per word


@dataclass(frozen=True)
class PunctuationOptions:
    """The tuned values of punctuation; a sweep is replace(PunctuationOptions(), window=256)."""

    # Sub-tokens per model call (the model reads at most 512), and the words two neighbouring
    # windows share, so every word is judged with context on both sides. Not swept on a table.
    window: int = 384
    overlap: int = 64
    # Windows per model call: a GPU is 2.4x faster with 64 than with 16 (H200, not kept in a
    # table; the stage's time in the whole run: benchmarks/README.md, "A user's hour on a GPU");
    # a CPU does not care.
    gpu_batch: int = 64
    cpu_batch: int = 16


@dataclass
class Punctuator:
    name: str  # hub id or folder, recorded in the transcript's info
    tokenizer: Any  # a fast (tokenizers-backed) tokenizer: word_ids() maps sub-tokens to words
    model: Any  # transformers token classifier
    device: str


# --- loading ---------------------------------------------------------------------------------
def load_punctuator(model: str = PUNCTUATION_MODEL, device: str = "auto", local_files_only: bool = False) -> Punctuator:
    """A hub id or a folder saved with save_pretrained: the same call loads both. local_files_only:
    from the hub's local cache, without asking the hub."""
    try:
        import torch
        from transformers import AutoModelForTokenClassification, AutoTokenizer
    except ImportError:
        raise IgotError("Punctuation needs PyTorch and transformers.", "Run: pip install torch transformers") from None
    device = pick_device(device)
    try:
        tokenizer = AutoTokenizer.from_pretrained(model, local_files_only=local_files_only)
        network = AutoModelForTokenClassification.from_pretrained(model, local_files_only=local_files_only)
    except Exception as exc:  # missing files, no network, a damaged download: all fixed the same way
        raise _load_error(model, exc) from None
    if not getattr(tokenizer, "is_fast", False) or not set(network.config.id2label.values()) & {".", "?"}:
        raise IgotError(f"'{model}' is not a punctuation model iGot can use.",
                        f"Use {PUNCTUATION_MODEL} or a token classifier with the same labels.")
    # Half precision on a GPU: twice as fast, and the argmax of 6 labels does not notice.
    dtype = torch.float16 if device.startswith("cuda") else torch.float32
    return Punctuator(model, tokenizer, network.to(device=device, dtype=dtype).eval(), device)


def _load_error(model: str, exc: Exception) -> IgotError:
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if Path(model).expanduser().exists():
        return IgotError(f"Could not read the punctuation model at '{model}': {reason}.",
                         "Check that the folder holds a complete model saved with save_pretrained.")
    return IgotError(f"Could not download the punctuation model '{model}' ({reason}).",
                     "Check the internet connection, or download the model once and pass its folder.")


# --- the model's labels, window by window ------------------------------------------------------
def model_text(word: str) -> str:
    """What the model reads: no edge punctuation, lower case, like the Europarl words of the
    SEPP-NLG recipe it was trained with (lower-cased, marks removed); "3.5", "d'água" stay whole."""
    return re.sub(r"^\W+|\W+$", "", word).lower()


def predict_labels(words: Sequence[str], punctuator: Punctuator, progress: Progress = False,
                   options: Optional[PunctuationOptions] = None) -> list[str]:
    """One label per word: the mark the model puts after it ("0" for none), read in overlapping
    windows (`options`). Words with no letter or digit are not shown to the model and get "0".
    """
    options = options or PunctuationOptions()
    batch_size = options.gpu_batch if punctuator.device.startswith("cuda") else options.cpu_batch
    texts = [model_text(w) for w in words]
    kept = [i for i, text in enumerate(texts) if text]
    shown = [texts[i] for i in kept]
    found = windowed_labels(shown, token_counts(shown, punctuator), lambda batch: _predict(batch, punctuator),
                            options.window, options.overlap, batch_size, progress)
    labels = ["0"] * len(words)
    for i, label in zip(kept, found, strict=True):
        labels[i] = label
    if kept and MARKS.get(labels[kept[-1]], "") not in SENTENCE_END:
        labels[kept[-1]] = "."  # the recording's end ends a sentence
    return labels


def token_counts(words: Sequence[str], punctuator: Punctuator) -> list[int]:
    """Sub-tokens per word. With is_split_into_words each word is tokenized alone, so these
    counts hold in any window."""
    counts = [0] * len(words)
    if not words:
        return counts
    encoding = punctuator.tokenizer(list(words), is_split_into_words=True, add_special_tokens=False, verbose=False)
    for word in encoding.word_ids():
        if word is not None:
            counts[word] += 1
    return counts


def plan_windows(sizes: Sequence[int], window: int, overlap: int) -> list[range]:
    """Word ranges of at most `window` sub-tokens (a longer single word gets its own range),
    each sharing `overlap` words with the next, but never more than half its words."""
    spans: list[range] = []
    start = 0
    while start < len(sizes):
        end, used = start, 0
        while end < len(sizes) and (end == start or used + sizes[end] <= window):
            used += sizes[end]
            end += 1
        spans.append(range(start, end))
        if end == len(sizes):
            break
        start = max(end - overlap, (start + end + 1) // 2)
    return spans


def windowed_labels(words: Sequence[str], sizes: Sequence[int], predict: Predict, window: int, overlap: int,
                    batch_size: int, progress: Progress = False) -> list[str]:
    """Run `predict` over overlapping windows (`batch_size` a call). A word seen by two windows keeps
    the label from the one where it sits further from an edge, where the model saw more
    context, so nothing is judged at a cut."""
    spans = plan_windows(sizes, window, overlap)
    labels, margins = ["0"] * len(words), [-1] * len(words)
    with Bar(progress, len(spans), "Punctuation", unit="window") as bar:
        for b in range(0, len(spans), batch_size):
            batch = spans[b:b + batch_size]
            for span, found in zip(batch, predict([list(words[s.start:s.stop]) for s in batch]), strict=True):
                _keep_inner(span, found, labels, margins)
            bar.update(len(batch))
    return labels


def _keep_inner(span: range, found: Sequence[str], labels: list[str], margins: list[int]) -> None:
    if len(found) != len(span):
        raise ValueError(f"predict gave {len(found)} labels for a window of {len(span)} words")
    for position, (i, label) in enumerate(zip(span, found)):
        margin = min(position, len(span) - 1 - position)
        if margin > margins[i]:
            labels[i], margins[i] = label, margin


def _predict(batch: list[list[str]], punctuator: Punctuator) -> list[list[str]]:
    import torch

    tokenizer, model = punctuator.tokenizer, punctuator.model
    encoding = tokenizer(batch, is_split_into_words=True, padding=True, truncation=True,
                         max_length=min(tokenizer.model_max_length, 512), return_tensors="pt")
    with torch.inference_mode():
        logits = model(input_ids=encoding["input_ids"].to(punctuator.device),
                       attention_mask=encoding["attention_mask"].to(punctuator.device)).logits
    best = logits.argmax(-1).tolist()
    results = []
    for row, words in enumerate(batch):
        labels = ["0"] * len(words)
        # Training gave every sub-token its word's label; the last one wins here: it sits
        # where the mark goes, and a word's first sub-token is often a bare "▁".
        for token, word in enumerate(encoding.word_ids(row)):
            if word is not None:
                labels[word] = model.config.id2label[best[row][token]]
        results.append(labels)
    return results


# --- labels to text ------------------------------------------------------------------------------
def apply_labels(words: Sequence[str], labels: Sequence[str]) -> list[str]:
    """Each word with Whisper's marks replaced by its label's, and a capital after . ? !

    Words that are only marks or symbols stay as they are. Capitals are only ever added:
    Whisper's own ("I", names, "iPhone") are kept.
    """
    if len(words) != len(labels):
        raise ValueError(f"{len(labels)} labels for {len(words)} words")
    texts: list[str] = []
    capital = True
    for word, label in zip(words, labels):
        if not any(c.isalnum() for c in word):
            texts.append(word)
            continue
        mark = MARKS.get(label, "")
        text = restyle(word, mark)
        texts.append(capitalise(text) if capital else text)
        capital = mark in SENTENCE_END
    return texts


def restyle(word: str, mark: str) -> str:
    """'bem...' + '?' -> 'bem?'; inner marks stay ('3.5', 'R$1.200,00', 'fazê-lo')."""
    core = word.lstrip(LEADING_MARKS)
    end = len(core)
    while end and core[end - 1] in TRAILING_MARKS + CLOSERS:
        end -= 1
    core, tail = core[:end], core[end:]
    closers = "".join(c for c in tail if c in CLOSERS)
    old = "".join(c for c in tail if c not in CLOSERS)
    if old == "-" and not closers and core[-1:].isalpha():
        # "consegu-": a word cut off mid-way keeps its hyphen, and only a sentence end after it.
        return core + "-" + (mark if mark in SENTENCE_END else "")
    if old.startswith(".") and ABBREVIATION.fullmatch(core):
        core += "."
    if mark == "." and "!" in old:
        mark = "!"  # the model's "." stands for "!" too (Europarl's "!" became "." in training)
    if mark == "." and core.endswith("."):
        mark = ""
    return core + closers + mark


def capitalise(text: str) -> str:
    """Upper-case the first letter of an all-lower-case word ('você' -> 'Você', '¿qué' -> '¿Qué')."""
    if any(c.isupper() for c in text):
        return text
    for i, c in enumerate(text):
        if c.isalnum():
            upper = c.upper()
            # Not for a number ("3g"), nor a letter whose capital is two ("ß" -> "SS").
            return text[:i] + upper + text[i + 1:] if c.isalpha() and len(upper) == 1 else text
    return text


# --- the stage -----------------------------------------------------------------------------------
def punctuate(t: Transcript, punctuator: Optional[Punctuator], progress: Progress = False,
              options: Optional[PunctuationOptions] = None) -> Transcript:
    """Restore punctuation and sentence capitals in the words and phrases of a transcript.

    Languages the model does not cover (or no model) keep Whisper's punctuation. Word times,
    count and order never change; phrases keep their words, their text is rebuilt from them.
    """
    if punctuator is None or t.language not in PUNCTUATION_LANGUAGES:
        return replace(t, info={**t.info, "punctuation": "whisper"})
    originals = [w.text for w in t.words]
    texts = iter(apply_labels(originals, predict_labels(originals, punctuator, progress, options)))
    phrases = []
    for phrase in t.phrases:
        words = [replace(w, text=next(texts)) for w in phrase.words]
        text = join_words(words, t.language) if words else phrase.text
        phrases.append(replace(phrase, words=words, text=text))
    return replace(t, phrases=phrases, info={**t.info, "punctuation": punctuator.name})
