"""Punctuation restoration: a tiny random model saved like a download, the exact label-to-text
rules, the windowing over long streams, and languages the model does not cover."""

from __future__ import annotations

import random
import re
from dataclasses import replace

import pytest

from igot.errors import IgotError
from igot.refine.punctuate import (
    PUNCTUATION_MODEL,
    apply_labels,
    load_punctuator,
    plan_windows,
    predict_labels,
    punctuate,
    token_counts,
    windowed_labels,
)
from igot.text import join_words
from igot.transcript import Phrase, Source, Transcript, Word
from igot_dev.tiny_models import PUNCTUATION_LABELS as ID2LABEL
from igot_dev.tiny_models import SENTENCES, save_tiny_punctuator


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return save_tiny_punctuator(tmp_path_factory.mktemp("models") / "punctuate-tiny")


@pytest.fixture(scope="module")
def punctuator(model_dir):
    return load_punctuator(str(model_dir), device="cpu")


def transcript(texts: list[list[str]], language: str = "pt") -> Transcript:
    """Phrases of words 0.5 s apart, text as Whisper would give it."""
    phrases, clock = [], 0.0
    for phrase_words in texts:
        words = []
        for text in phrase_words:
            words.append(Word(text, round(clock, 3), round(clock + 0.4, 3), probability=0.9))
            clock += 0.5
        phrases.append(Phrase("", words[0].start, words[-1].end, join_words(words, language), words=words))
    return Transcript(Source("interview"), language=language, duration=clock, phrases=phrases, info={"engine": "x"})


def plain(text: str) -> str:
    """A word without its edge punctuation and case, to compare word streams."""
    return re.sub(r"^\W+|\W+$", "", text).lower()


def times(t: Transcript) -> list[tuple[float, float]]:
    return [(w.start, w.end) for w in t.words]


# --- 1. the whole stage through a model folder ---------------------------------------------------
def test_punctuate_with_a_model_folder(punctuator, model_dir):
    t = transcript([["olá", "tudo", "bem", "com", "você?"], ["eu", "acho", "que", "o", "aplicativo", "é", "bom,"],
                    ["mas", "o", "cadastro", "demorou", "uns", "dois", "minutos."]])
    out = punctuate(t, punctuator)
    originals = [w.text for w in t.words]
    assert [w.text for w in out.words] == apply_labels(originals, predict_labels(originals, punctuator))
    assert [plain(w.text) for w in out.words] == [plain(x) for x in originals]
    assert times(out) == times(t)
    assert [len(p.words) for p in out.phrases] == [len(p.words) for p in t.phrases]
    assert all(p.text == join_words(p.words, "pt") for p in out.phrases)
    assert out.info == {"engine": "x", "punctuation": str(model_dir)}
    assert out.words[-1].text.endswith((".", "?"))  # the recording's end ends a sentence
    assert set(predict_labels(originals, punctuator)) <= set(ID2LABEL.values())


@pytest.mark.parametrize("label, expected", [
    ("?", ["Olá?", "Tudo?", "Bem?", "Você?"]),
    (",", ["Olá,", "tudo,", "bem,", "você."]),  # the last word always ends a sentence
    ("-", ["Olá,", "tudo,", "bem,", "você."]),
    ("0", ["Olá", "tudo", "bem", "você."]),
])
def test_model_label_to_text(punctuator, label, expected):
    """A model that always says `label` gives exactly the text the rules say."""
    import torch

    classifier = punctuator.model.classifier
    saved = classifier.weight.detach().clone(), classifier.bias.detach().clone()
    with torch.no_grad():
        classifier.weight.zero_()
        classifier.bias.copy_(torch.tensor([10.0 if ID2LABEL[i] == label else 0.0 for i in range(6)]))
    try:
        out = punctuate(transcript([["olá,", "tudo"], ["bem", "você..."]]), punctuator)
    finally:
        with torch.no_grad():
            classifier.weight.copy_(saved[0])
            classifier.bias.copy_(saved[1])
    assert [w.text for w in out.words] == expected
    assert [p.text for p in out.phrases] == [" ".join(expected[:2]), " ".join(expected[2:])]


def test_load_errors(tmp_path, model_dir):
    with pytest.raises(IgotError, match="Could not read the punctuation model"):
        load_punctuator(str(tmp_path), device="cpu")  # an empty folder
    with pytest.raises(IgotError, match="Could not download"):
        load_punctuator("igot-test/no-such-model", device="cpu")  # the tests run with HF_HUB_OFFLINE=1
    from transformers import AutoTokenizer, XLMRobertaConfig, XLMRobertaForTokenClassification

    AutoTokenizer.from_pretrained(model_dir).save_pretrained(tmp_path)
    config = XLMRobertaConfig(vocab_size=150, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                              intermediate_size=64)
    XLMRobertaForTokenClassification(config).save_pretrained(tmp_path)
    with pytest.raises(IgotError, match="not a punctuation model"):
        load_punctuator(str(tmp_path), device="cpu")  # labels LABEL_0, LABEL_1
    assert PUNCTUATION_MODEL == "kredor/punctuate-all"


# --- 2. labels to text, exactly ------------------------------------------------------------------
@pytest.mark.parametrize("words, labels, expected", [
    # capitals after . and ?, and at the start
    ("olá tudo bem com você", "0 0 0 0 ?", "Olá tudo bem com você?"),
    ("foi bom mas demorou sim", "0 . 0 ? 0", "Foi bom. Mas demorou? Sim"),
    # Whisper's marks replaced, not added to
    ("Foi. tranquilo, o cadastro... levou", "0 , 0 0 .", "Foi tranquilo, o cadastro levou."),
    ("é... né? então", "? , .", "É? Né, então."),
    # "!" kept where the model ends the sentence; gone where it does not
    ("que legal! muito bom!", "0 . 0 0", "Que legal! Muito bom"),
    # names and "I" keep Whisper's capitals; capitals are only added
    ("and I told Ana yesterday", "0 0 0 0 .", "And I told Ana yesterday."),
    ("iPhone é bom", ". 0 .", "iPhone. É bom."),
    # numbers: decimal and thousands marks inside stay
    ("custa R$1.200,00 ou 3.5%.", "0 , 0 .", "Custa R$1.200,00, ou 3.5%."),
    ("são 3. e 2,5", "0 , 0 .", "São 3, e 2,5."),
    # apostrophes, inner hyphens, accents
    ("don't go 'cause it's fazê-lo", "0 0 0 , .", "Don't go 'cause it's, fazê-lo."),
    ("d'água é você", "0 . ?", "D'água é. Você?"),
    ("ça va être", ". 0 0", "Ça. Va être"),
    # ":" and "-" (rendered as a comma)
    ("ele disse sim", "0 : .", "Ele disse: sim."),
    ("eu acho quer dizer", "0 - 0 .", "Eu acho, quer dizer."),
    # a cut-off word keeps its hyphen; a dash is re-decided
    ("eu consegu- consegui", "0 , .", "Eu consegu- consegui."),
    ("eu consegu- consegui", "0 . 0", "Eu consegu-. Consegui"),
    ("isso— aquilo", ", .", "Isso, aquilo."),
    # abbreviations keep their dots; quotes and brackets keep their place
    ("nos U.S.A. e.g. aqui", "0 0 , .", "Nos U.S.A. e.g., aqui."),
    ('ele disse "sim." (risos)', "0 0 . .", 'Ele disse "sim". (Risos).'),
    # Spanish openers stay; leading "..." goes; lone marks stay as they are and pass the capital on
    ("¿qué tal ...bueno", "0 ? .", "¿Qué tal? Bueno."),
    ("então - é isso", ". 0 0 .", "Então. - É isso."),
    # unknown labels write nothing
    ("sim claro", "LABEL_7 .", "Sim claro."),
])
def test_apply_labels(words, labels, expected):
    assert " ".join(apply_labels(words.split(), labels.split())) == expected


def test_apply_labels_needs_one_label_per_word():
    with pytest.raises(ValueError):
        apply_labels(["a", "b"], ["0"])


# --- 3. long streams and windows -----------------------------------------------------------------
def test_a_long_stream_keeps_every_word_in_order(punctuator):
    rng = random.Random(1)
    vocabulary = " ".join(SENTENCES).split() + ["Ana", "I", "3.5", "R$1.200,00", "você?", "bem.", "-", "fazê-lo,"]
    texts = [rng.choice(vocabulary) for _ in range(20_000)]
    t = transcript([texts[i:i + 25] for i in range(0, len(texts), 25)])
    out = punctuate(t, punctuator)
    assert len(out.words) == 20_000
    assert [plain(w.text) for w in out.words] == [plain(x) for x in texts]
    assert times(out) == times(t)
    shown = [plain(x) for x in texts if plain(x)]
    sizes = token_counts(shown, punctuator)
    spans = plan_windows(sizes, 384, 64)
    assert len(spans) > 50
    for span in spans[:3]:  # a word's sub-tokens do not depend on its neighbours
        assert token_counts(shown[span.start:span.stop], punctuator) == sizes[span.start:span.stop]


def test_windows_overlap_and_words_keep_their_inner_prediction():
    rng = random.Random(2)
    words = [f"w{i}" for i in range(20_000)]
    sizes = [rng.choice([1, 1, 1, 2, 3, 7]) for _ in words]
    spans = plan_windows(sizes, 100, 12)
    calls = []

    def fake_predict(batch: list[list[str]]) -> list[list[str]]:
        """Each word's label says which window judged it and where: 'first word|position|length'."""
        calls.append(len(batch))
        return [[f"{window[0]}|{p}|{len(window)}" for p in range(len(window))] for window in batch]

    labels = windowed_labels(words, sizes, fake_predict, 100, 12, batch_size=8)

    assert sum(calls) == len(spans) and max(calls) == 8  # batched
    assert all(sum(sizes[i] for i in s) <= 100 for s in spans)
    assert spans[0].start == 0 and spans[-1].stop == len(words)
    assert all(b.start < a.stop for a, b in zip(spans, spans[1:]))  # neighbours overlap
    assert all(a.stop - b.start == min(12, len(a) // 2) for a, b in zip(spans, spans[1:]))
    for i, label in enumerate(labels):
        first, position, length = label.split("|")
        assert words[int(position) + int(first[1:])] == words[i]  # the label is this word's
        margin = min(int(position), int(length) - 1 - int(position))
        best = max(min(i - s.start, s.stop - 1 - i) for s in spans if i in s)
        assert margin == best
    # At each seam, the words on the left half of the overlap came from the earlier window.
    a, b = spans[0], spans[1]
    assert labels[b.start].startswith(f"w{a.start}|") and labels[a.stop - 1].startswith(f"w{b.start}|")


def test_plan_windows_edge_cases():
    assert plan_windows([], 100, 10) == []
    assert plan_windows([5, 500, 5], 100, 10) == [range(0, 1), range(1, 2), range(2, 3)]  # one huge word alone
    assert plan_windows([1] * 10, 100, 10) == [range(0, 10)]
    assert plan_windows([1] * 10, 4, 3) == [range(0, 4), range(2, 6), range(4, 8), range(6, 10)]  # overlap ≤ half


# --- 4. languages the model does not cover ---------------------------------------------------------
@pytest.mark.parametrize("language", ["ja", "ru", None])
def test_uncovered_language_keeps_whisper_punctuation(punctuator, language):
    t = transcript([["Привет,", "как", "дела?"], ["Хорошо."]], language or "ru")
    t = replace(t, language=language)
    out = punctuate(t, punctuator)
    assert [w.text for w in out.words] == [w.text for w in t.words]
    assert [p.text for p in out.phrases] == [p.text for p in t.phrases]
    assert times(out) == times(t)
    assert out.info["punctuation"] == "whisper"


def test_no_punctuator_keeps_whisper_punctuation():
    t = transcript([["olá,", "tudo", "bem?"]])
    out = punctuate(t, None)
    assert out.phrases == t.phrases and out.info["punctuation"] == "whisper"


def test_empty_transcript(punctuator):
    t = Transcript(Source("empty"), language="pt")
    assert punctuate(t, punctuator).phrases == []
