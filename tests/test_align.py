"""Word alignment: exact CTC Viterbi, exact word times from an oracle model, and the real load path."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from igot.errors import IgotError
from igot.media.audio import SAMPLE_RATE
from igot.refine.align import (
    Aligner,
    align,
    align_with,
    forced_align,
    load_aligner,
    spell,
)
from igot.text import ends_sentence
from igot.transcript import Phrase, Source, Transcript, Word
from igot_dev.tiny_models import save_tiny_wav2vec2

LETTERS = "abcdefghijklmnopqrstuvwxyz"
# A wav2vec2-style character vocabulary: <pad> is the CTC blank, "|" separates words.
VOCAB = {"<pad>": 0, "<s>": 1, "</s>": 2, "<unk>": 3, "|": 4, "'": 5, **{c: 6 + i for i, c in enumerate(LETTERS)}}
BLANK, DELIMITER = VOCAB["<pad>"], VOCAB["|"]
RATIO = 320  # samples per frame, as in wav2vec2
FRAME_S = RATIO / SAMPLE_RATE


# --- forced_align: hand-made emissions -------------------------------------------------------------


def favour(frames: str, classes: str = "-abehlo") -> torch.Tensor:
    """Log-probabilities where frame t clearly prefers the class frames[t] ('-' is blank, id 0)."""
    logits = torch.full((len(frames), len(classes)), -6.0)
    for t, c in enumerate(frames):
        logits[t, classes.index(c)] = 0.0
    return logits.log_softmax(dim=-1)


def ids(text: str, classes: str = "-abehlo") -> list[int]:
    return [classes.index(c) for c in text]


@pytest.mark.parametrize(
    "frames, text, spans",
    [
        ("-aa-b", "ab", [(1, 3), (4, 5)]),
        ("--ab--", "ab", [(2, 3), (3, 4)]),  # blanks at both ends
        ("ll-l-", "ll", [(0, 2), (3, 4)]),  # a repeated letter, blank between
        ("lll", "ll", [(0, 1), (2, 3)]),  # the blank between equal letters is forced
        ("-hel-lo--", "hello", [(1, 2), (2, 3), (3, 4), (5, 6), (6, 7)]),
        ("ab", "ba", [(0, 1), (1, 2)]),  # the text wins over what the frames prefer
    ],
)
def test_forced_align_hand_cases(frames, text, spans):
    result = forced_align(favour(frames), ids(text), blank=0)
    assert [(a, b) for a, b, _ in result] == spans
    assert all(0 < p <= 1 for _, _, p in result)


def test_forced_align_too_few_frames():
    with pytest.raises(ValueError):
        forced_align(favour("ll"), ids("ll"), blank=0)  # "l-l" needs three frames
    assert forced_align(favour("ab"), [], blank=0) == []


def brute_force(lp: np.ndarray, tokens: list[int], blank: int, edge: int | None = None):
    """Best (score, spans) over every frame labelling that CTC-collapses to `tokens`, or None.

    With `edge`, the frames before the first token and after the last score class `edge`."""
    frames, classes = lp.shape[0], lp.shape[1] - (edge is not None)
    paths = np.stack(np.unravel_index(np.arange(classes**frames), (classes,) * frames), axis=1)
    previous = np.concatenate([np.full((len(paths), 1), -1), paths[:, :-1]], axis=1)
    new_token = (paths != blank) & (paths != previous)  # collapse: merge repeats, drop blanks
    paths, new_token = paths[new_token.sum(1) == len(tokens)], new_token[new_token.sum(1) == len(tokens)]
    spelled = (paths[new_token].reshape(-1, len(tokens)) == tokens).all(axis=1)
    if not spelled.any():
        return None
    paths, new_token = paths[spelled], new_token[spelled]
    picked = lp[np.arange(frames), paths]
    if edge is not None:
        speech = paths != blank
        first, last = speech.argmax(axis=1), frames - 1 - speech[:, ::-1].argmax(axis=1)
        outside = (np.arange(frames) < first[:, None]) | (np.arange(frames) > last[:, None])
        picked = np.where(outside, lp[:, edge], picked)
    scores = picked.sum(axis=1)
    best = int(scores.argmax())
    spans: list[list[int]] = []
    for t, (label, new) in enumerate(zip(paths[best], new_token[best])):
        if new:
            spans.append([t, t + 1])
        elif label != blank:
            spans[-1][1] = t + 1
    return float(scores[best]), [tuple(s) for s in spans]


def path_score(lp: np.ndarray, spans, tokens: list[int], blank: int, edge: int | None = None) -> float:
    labels = np.full(len(lp), blank if edge is None else edge)
    labels[spans[0][0] : spans[-1][1]] = blank
    for (a, b, _), token in zip(spans, tokens):
        labels[a:b] = token
    return float(lp[np.arange(len(lp)), labels].sum())


@pytest.mark.parametrize("with_edge", [False, True])
def test_forced_align_equals_brute_force(with_edge):
    rng = np.random.default_rng(int(with_edge))
    checked = infeasible = 0
    for _ in range(150):
        frames, classes, n = int(rng.integers(1, 9)), int(rng.integers(2, 5)), int(rng.integers(1, 4))
        blank = int(rng.integers(0, classes))
        tokens = [int(c) for c in rng.choice([c for c in range(classes) if c != blank], size=n)]
        lp = torch.from_numpy(rng.normal(0, 2, (frames, classes))).log_softmax(dim=-1)
        edge = None
        if with_edge:  # an extra class that only the frames outside the tokens may score
            lp, edge = torch.cat([lp, torch.from_numpy(rng.normal(-1, 1, (frames, 1)))], dim=1), classes
        expected = brute_force(lp.numpy(), tokens, blank, edge)
        if expected is None:
            infeasible += 1
            with pytest.raises(ValueError):
                forced_align(lp, tokens, blank, edge)
            continue
        spans = forced_align(lp, tokens, blank, edge)
        assert path_score(lp.numpy(), spans, tokens, blank, edge) == pytest.approx(expected[0], abs=1e-9)
        assert [(a, b) for a, b, _ in spans] == expected[1]
        checked += 1
    assert checked > 80 and infeasible > 5  # both kinds of case really were exercised


# --- spelling in the model's alphabet --------------------------------------------------------------


def test_spell_follows_the_vocabulary():
    upper = {c.upper(): i for c, i in VOCAB.items() if c in LETTERS} | {"'": 5, "|": 4}
    assert spell("Hello,", upper) == list("HELLO")
    assert spell("don't?", VOCAB) == list("don't")
    assert spell("Café", VOCAB) == list("cafe")  # no "é" in the vocabulary: the bare letter
    assert spell("Café", VOCAB | {"é": 40}) == list("café")  # accent kept where it has one
    assert spell("ｆｉｎｅ", VOCAB) == list("fine")  # NFKC: full-width letters
    assert spell("well-known", VOCAB) == list("wellknown")
    for unspellable in ("2023", "$1,200", "R$50", "東京", "%"):
        assert spell(unspellable, VOCAB) == []


def test_no_delimiter_for_languages_without_spaces():
    assert oracle_aligner("zh").delimiter is None
    assert oracle_aligner("pt").delimiter == "|"


# --- the oracle: a perfect model built from the synthetic recording's exact word times -------------


def oracle_aligner(language: str = "en") -> Aligner:
    return Aligner(model=None, vocabulary=VOCAB, blank=BLANK, frame_s=FRAME_S, device="cpu", language=language, name="oracle")


def oracle(truth: list[tuple[str, float, float]], seed: int = 0):
    """Emissions of an ideal CTC model: a word's letters spread over the frames inside its exact
    span (a blank between equal letters, as CTC needs), "|" in the middle of each gap, blank
    elsewhere, blank the runner-up everywhere, Gaussian noise on every logit."""
    rng = np.random.default_rng(seed)

    def emissions(first: int, last: int) -> torch.Tensor:
        n = (last - first) // RATIO
        centres = (first + (np.arange(n) + 0.5) * RATIO) / SAMPLE_RATE
        target = np.full(n, BLANK)
        for text, start, end in truth:
            inside = np.flatnonzero((centres >= start) & (centres < end))
            # A word with no letters ("$1,200") is still spoken: some letters, as "twelve hundred…".
            letters = [VOCAB[c] for c in text.lower() if c in LETTERS + "'"] or list(rng.integers(6, 32, 4))
            if len(inside) == 0:
                continue
            which = np.arange(len(inside)) * len(letters) // len(inside)
            labels = np.array(letters)[which]
            repeat = np.r_[False, (which[1:] != which[:-1]) & (labels[1:] == labels[:-1])]
            labels[repeat] = BLANK
            target[inside] = labels
        for (_, _, end), (_, start, _) in zip(truth, truth[1:]):
            j = int(((end + start) / 2 * SAMPLE_RATE - first) // RATIO)
            if 0 <= j < n and target[j] == BLANK:
                target[j] = DELIMITER
        logits = rng.normal(0, 0.5, (n, len(VOCAB)))
        logits[:, BLANK] += 4
        logits[np.arange(n), target] += 8
        return torch.from_numpy(logits).log_softmax(dim=-1)

    return emissions


def whisper_like(words: list[Word], shift: float) -> Transcript:
    """A transcript as Whisper gives it: one phrase per sentence, every time `shift` s off."""
    shifted = [Word(w.text, round(w.start + shift, 3), round(w.end + shift, 3)) for w in words]
    phrases, current = [], []
    for w in shifted:
        current.append(w)
        if ends_sentence(w.text):
            phrases.append(current)
            current = []
    if current:
        phrases.append(current)
    return Transcript(
        source=Source(title="test"),
        language="en",
        phrases=[Phrase("", p[0].start, p[-1].end, " ".join(w.text for w in p), link="https://x#t=1", words=p) for p in phrases],
        info={"engine": "faster-whisper"},
    )


def assert_well_formed(aligned: Transcript, original: Transcript, duration: float) -> None:
    assert [p.text for p in aligned.phrases] == [p.text for p in original.phrases]
    assert [p.link for p in aligned.phrases] == [p.link for p in original.phrases]
    assert [w.text for w in aligned.words] == [w.text for w in original.words]
    previous_end = 0.0
    for w in aligned.words:
        assert previous_end <= w.start <= w.end <= duration, w
        previous_end = w.end
    for p in aligned.phrases:
        assert (p.start, p.end) == (p.words[0].start, p.words[-1].end)


def test_oracle_recovers_exact_word_times(conversation):
    wav, spoken = conversation
    duration = sf_duration(wav)
    truth = [Word(w.text, w.start, w.end) for w in spoken]
    late = whisper_like(truth, shift=0.3)
    assert all(abs(w.start - t.start) > 0.29 for w, t in zip(late.words, truth))  # really wrong before

    aligned = align_with(late, oracle([(w.text, w.start, w.end) for w in truth]), oracle_aligner(), duration)

    assert_well_formed(aligned, late, duration)
    starts = np.array([w.start - t.start for w, t in zip(aligned.words, truth)])
    ends = np.array([w.end - t.end for w, t in zip(aligned.words, truth)])
    # Exact up to the frame grid: a frame counts for a word when its centre is inside the word.
    assert np.abs(starts).max() <= FRAME_S / 2 + 0.001, starts
    assert np.abs(ends).max() <= FRAME_S / 2 + 0.001, ends
    assert aligned.info == {"engine": "faster-whisper", "alignment": "oracle"}


def test_oracle_from_early_times_too(conversation):
    wav, spoken = conversation
    truth = [Word(w.text, w.start, w.end) for w in spoken]
    early = whisper_like(truth, shift=-0.3)
    aligned = align_with(early, oracle([(w.text, w.start, w.end) for w in truth], seed=1), oracle_aligner(), sf_duration(wav))
    assert max(abs(w.start - t.start) for w, t in zip(aligned.words, truth)) <= 0.02


def test_numbers_and_symbols_keep_their_place():
    # "$1,200" is said as "twelve hundred dollars": sounds the alphabet cannot be matched to.
    truth = [("we", 1.0, 1.2), ("paid", 1.32, 1.6), ("$1,200", 1.72, 2.6), ("in", 2.72, 2.85), ("2023.", 2.97, 3.6)]
    words = [Word(text, start + 0.25, end + 0.25) for text, start, end in truth]
    phrase = Phrase("", words[0].start, words[-1].end, "we paid $1,200 in 2023.", words=words)
    t = Transcript(Source("numbers"), "en", 4.5, phrases=[phrase])

    aligned = align_with(t, oracle(truth), oracle_aligner(), 4.5)

    assert_well_formed(aligned, t, 4.5)
    got = {w.text: w for w in aligned.words}
    for text, start, end in truth:
        if spell(text, VOCAB):
            assert abs(got[text].start - start) <= 0.02 and abs(got[text].end - end) <= 0.02
    # Unspellable words fill the gap their aligned neighbours leave, without overlapping them.
    assert got["paid"].end <= got["$1,200"].start < got["$1,200"].end <= got["in"].start
    assert got["in"].end <= got["2023."].start < got["2023."].end <= 4.5


def test_phrases_that_cannot_be_aligned_keep_whisper_times():
    words = [Word("2023", 0.5, 0.9), Word("$5", 1.0, 1.4)]  # nothing spellable
    text = "this sentence has far too many letters for so little time"
    many = [Word(w, 2.0 + i * 0.01, 2.005 + i * 0.01) for i, w in enumerate(text.split())]
    t = Transcript(Source("x"), "en", 2.2, phrases=[
        Phrase("", 0.5, 1.4, "2023 $5", words=words),
        Phrase("", 2.0, 2.105, text, words=many),  # 0.7 s of audio (with padding): too short for its letters
    ])

    aligned = align_with(t, oracle([]), oracle_aligner(), duration=2.2)

    assert [(w.start, w.end) for w in aligned.words] == [(w.start, w.end) for w in t.words]


# --- the real path: a tiny random wav2vec2 saved and loaded like a downloaded one --------------------


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    return save_tiny_wav2vec2(tmp_path_factory.mktemp("models") / "tiny-wav2vec2", VOCAB)


def test_tiny_model_through_load_aligner(tiny_model, conversation):
    wav, spoken = conversation
    aligner = load_aligner("en", model=str(tiny_model), device="cpu")
    assert aligner is not None
    assert (aligner.blank, aligner.frame_s, aligner.vocabulary, aligner.delimiter) == (BLANK, 0.02, VOCAB, "|")
    assert aligner.precision == "float32" and not aligner.model.training

    t = whisper_like([Word(w.text, w.start, w.end) for w in spoken], shift=0.3)
    t.phrases = t.phrases[:6]  # enough for the code path; a forward pass is slow on a busy CPU
    aligned = align(t, wav, aligner)

    duration = sf_duration(wav)
    assert_well_formed(aligned, t, duration)
    assert aligned.info["alignment"] == str(tiny_model)
    assert [(w.start, w.end) for w in aligned.words] != [(w.start, w.end) for w in t.words]  # it did align


def test_long_phrase_goes_through_the_model_in_chunks(tiny_model):
    from igot.refine.align import AlignOptions, model_log_probs

    aligner = load_aligner("en", model=str(tiny_model), device="cpu")
    samples = np.random.default_rng(0).normal(0, 0.1, SAMPLE_RATE * 7).astype(np.float32)
    whole = model_log_probs(aligner, samples)
    chunked = model_log_probs(aligner, samples, AlignOptions(chunk_seconds=2.0, context_seconds=0.5))
    assert abs(len(chunked) - len(whole)) <= 1  # frame i stays at i * 20 ms
    assert len(whole) == pytest.approx(7 / 0.02, abs=2)


def test_unreadable_or_missing_model(tmp_path):
    with pytest.raises(IgotError, match="Could not download the alignment model"):
        load_aligner("en", model="nobody/no-such-model", device="cpu")
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(IgotError, match="Could not read the alignment model"):
        load_aligner("en", model=str(tmp_path), device="cpu")


def test_no_model_for_the_language(conversation):
    wav, spoken = conversation
    assert load_aligner("xx") is None
    t = whisper_like([Word(w.text, w.start, w.end) for w in spoken], shift=0.3)
    assert align(t, wav, None) is t


def sf_duration(wav) -> float:
    import wave

    with wave.open(str(wav), "rb") as w:
        return w.getnframes() / w.getframerate()


def test_whole_recording_in_batches_gives_the_same_frames(tiny_model, conversation):
    """The GPU path hears the recording once, in batches of chunks, and cuts each phrase's frames
    out of it: the frames are those of one pass over the whole recording."""
    from igot.media.audio import load_audio, read_window, wav_duration
    from igot.refine.align import AlignOptions, model_log_probs, recording_log_probs

    wav, spoken = conversation
    aligner = load_aligner("en", model=str(tiny_model), device="cpu")
    whole = recording_log_probs(aligner, lambda a, b: read_window(wav, a, b), wav_duration(wav), AlignOptions(batch=3))
    one_go = model_log_probs(aligner, load_audio(wav))
    assert whole.shape == one_go.shape and torch.allclose(whole, one_go, atol=1e-4)
    t = whisper_like([Word(w.text, w.start, w.end) for w in spoken], shift=0.3)
    assert_well_formed(align(t, wav, aligner, whole=True), t, wav_duration(wav))
