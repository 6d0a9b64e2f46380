"""Highlights in the transcript: anchored by time, kept through every save, carried by the exports."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from igot.outputs import export, highlights, library, store
from igot.outputs.highlights import HighlightError
from igot.speakers.phrases import name_speakers
from igot.transcript import SCHEMA_VERSION, Highlight, Phrase, Source, Speaker, Transcript, Word

VIDEO = "https://www.youtube.com/watch?v=abc123XYZ_0"


def words(text: str, start: float, step: float = 0.5) -> list[Word]:
    return [Word(w, start + i * step, start + (i + 0.9) * step) for i, w in enumerate(text.split())]


def interview() -> Transcript:
    texts = [("S1", 0.0, "How much would you pay for this?"),
             ("S2", 4.0, "Honestly the price is too high for a small team."),
             ("S2", 9.0, "And the onboarding took me a whole week."),
             ("S1", 14.0, "Tell me more about that week.")]
    phrases = []
    for speaker, start, text in texts:
        w = words(text, start)
        phrases.append(Phrase(speaker, start, w[-1].end, text, f"{VIDEO}&t={int(start)}s", w))
    return Transcript(Source("Interview with Joana", VIDEO, None, "youtube"), language="en", duration=20.0,
                      speakers=[Speaker("S1", "Ana"), Speaker("S2", "Joana")], phrases=phrases)


def test_a_highlight_of_words_inside_a_phrase_keeps_those_words_and_its_speaker():
    t = interview()
    # "the onboarding took": words 2 to 4 of the third phrase (9.5 s to 10.95 s)
    h = highlights.new_highlight(t, 9.5, 10.95, ["Onboarding ", "onboarding", "pain"], "  a whole week!  ")
    assert (h.quote, h.speaker, h.tags, h.note) == ("the onboarding took", "S2", ["Onboarding", "pain"], "a whole week!")
    assert highlights.quote_between(t, 4.0, 13.0) == ("Honestly the price is too high for a small team. "
                                                     "And the onboarding took me a whole week.")


@pytest.mark.parametrize("start,end,tags,note,message", [
    (5, 4, [], "", "is not a stretch of this recording"),
    (-1, 3, [], "", "is not a stretch of this recording"),
    (1, 99, [], "", "is not a stretch of this recording"),
    ("nan", 3, [], "", "not numbers"),
    (None, 3, [], "", "not numbers"),
    (18.5, 19.5, [], "", "No words are said"),
    (0, 3, ["x" * 61], "", "characters long"),
    (0, 3, [f"t{i}" for i in range(21)], "", "21 tags"),
    (0, 3, "pricing", "", "must be a list"),
    (0, 3, ["a\u200bb"], "", "does not print"),
    (0, 3, [], "n" * 2001, "Keep a note to 2000"),
])
def test_a_bad_highlight_is_refused_with_what_to_do(start, end, tags, note, message):
    with pytest.raises(HighlightError, match=message) as err:
        highlights.new_highlight(interview(), start, end, tags, note)
    assert err.value.fix


def test_highlights_round_trip_and_older_files_load_as_they_are():
    t = interview()
    t = highlights.with_highlight(t, highlights.new_highlight(t, 4.0, 8.9, ["pricing"], "too expensive"))
    again = Transcript.from_json(t.to_json())
    assert again.highlights == t.highlights and again.schema_version == SCHEMA_VERSION == 3
    old = json.loads(interview().to_json())
    old.pop("highlights")
    old["schema_version"] = 1
    loaded = Transcript.from_dict(old)
    assert loaded.highlights is None and loaded.phrases == interview().phrases
    # A file from a newer iGot that added fields to a highlight still loads.
    newer = json.loads(t.to_json())
    newer["highlights"][0]["colour"] = "red"
    assert Transcript.from_dict(newer).highlights == t.highlights


def test_the_speaker_follows_a_merge_and_a_rename():
    t = interview()
    t = highlights.with_highlight(t, highlights.new_highlight(t, 4.0, 8.9, ["pricing"]))
    renamed = name_speakers(t, ["Ana", "Joana Silva"])
    assert renamed.speaker_name(renamed.highlight_speaker(renamed.highlights[0])) == "Joana Silva"
    merged = name_speakers(t, ["Ana", "Ana"])  # one person split in two: S2 is S1 now
    assert merged.speaker_name(merged.highlight_speaker(merged.highlights[0])) == "Ana"


def test_edit_delete_and_rename_a_tag():
    t = interview()
    a = highlights.new_highlight(t, 4.0, 8.9, ["pricing", "Cost"])
    b = highlights.new_highlight(t, 9.0, 13.0, ["cost"])
    t = highlights.with_highlight(highlights.with_highlight(t, a), b)
    t = highlights.edited(t, a.id, note="kept")
    assert highlights.find(t, a.id).note == "kept" and highlights.find(t, a.id).tags == ["pricing", "Cost"]
    merged = highlights.tags_renamed(t, "COST", "pricing")  # a merge: "pricing" once on a
    assert [h.tags for h in merged.highlights] == [["pricing"], ["pricing"]]
    assert highlights.tags_renamed(t, "nothing", "x") is None
    with pytest.raises(HighlightError):
        highlights.tags_renamed(t, "cost", "  ")
    gone = highlights.without_highlight(t, a.id)
    assert [h.id for h in gone.highlights] == [b.id]
    with pytest.raises(HighlightError, match="reload"):
        highlights.without_highlight(gone, a.id)
    assert highlights.without_highlight(gone, b.id).highlights == []


def with_two_highlights() -> Transcript:
    t = interview()
    t = highlights.with_highlight(t, highlights.new_highlight(t, 4.0, 13.0, ["pricing"], "price & <week>"))
    return highlights.with_highlight(t, highlights.new_highlight(t, 9.5, 10.95, ["onboarding"]))


def test_html_marks_the_highlighted_words_and_lists_them_by_tag():
    page = export.to_html(with_two_highlights())
    section = page[page.index('<section class="highlights">'):page.index('<section class="transcript">')]
    assert section.index("<h3>onboarding") < section.index("<h3>pricing")
    assert "<q>the onboarding took</q>" in section and "Joana" in section and "price &amp; &lt;week&gt;" in section
    assert 'href="https://www.youtube.com/watch?v=abc123XYZ_0&amp;t=9s"' in section
    transcript = page[page.index('<section class="transcript">'):]
    assert '<mark class="hl" title="pricing">Honestly the price is too high for a small team.</mark>' in transcript
    # Three words inside a phrase the pricing highlight also covers: their own mark, both tags.
    assert ('<mark class="hl" title="pricing">And</mark> <mark class="hl" title="pricing, onboarding">'
            'the onboarding took</mark> <mark class="hl" title="pricing">me a whole week.</mark>') in transcript
    assert "<mark" not in export.to_html(interview())


def test_markdown_marks_the_highlighted_words_and_lists_them_by_tag():
    md = export.to_markdown(with_two_highlights())
    assert "## Highlights" in md and "### pricing (1)" in md and "### onboarding (1)" in md
    assert "- “the onboarding took” — Joana, [0:09](https://www.youtube.com/watch?v=abc123XYZ_0&t=9s)" in md
    assert "[**Honestly the price is too high for a small team.**](" in md
    assert md.index("## Highlights") < md.index("## Transcript")
    assert "Highlights" not in export.to_markdown(interview())


def test_save_keeps_the_highlights_a_rerun_never_made(tmp_path):
    t = with_two_highlights()
    store.save(t, tmp_path, "joana", drive=False)
    rerun = replace(interview(), highlights=None)  # a run knows nothing of highlights
    saved = store.save(rerun, tmp_path, "joana", drive=False)
    assert saved.transcript.highlights == t.highlights
    assert Transcript.load(tmp_path / "joana.json").highlights == t.highlights
    assert "<mark class=\"hl\"" in (tmp_path / "joana.html").read_text()
    # Every highlight deleted: [] is kept as it is.
    store.save(replace(t, highlights=[]), tmp_path, "joana", drive=False)
    assert Transcript.load(tmp_path / "joana.json").highlights == []


def test_a_damaged_highlight_list_skips_the_file_with_why(tmp_path):
    data = json.loads(with_two_highlights().to_json())
    data["highlights"][0]["start"] = "soon"
    (tmp_path / "bad.json").write_text(json.dumps(data))
    interviews, skipped = library.load_library(tmp_path)
    assert interviews == [] and "highlights are not in the form" in skipped[0].why


def test_the_google_doc_opens_with_the_highlights_and_marks_the_words():
    """What is uploaded for Drive to convert (recorded exchanges: tests/test_gdoc.py)."""
    import googleapiclient  # noqa: F401  (the Google client, as every Doc test needs)

    from igot.outputs import gdoc
    from tests.test_gdoc import DOC, NEW_FOLDER, ROOT_LIST, drive, multipart, read_doc, reply

    t = with_two_highlights()
    service, http = drive(reply(ROOT_LIST), reply("files-list-empty.json"), reply("folder-created.json"), reply("doc-created.json"))
    assert gdoc.export_to_google_doc(t, "Research/Onboarding", service=service, repository=False).startswith(
        f"https://docs.google.com/document/d/{DOC}/")
    meta, _, media = multipart(http.sent[-1])
    assert meta["parents"] == [NEW_FOLDER]
    page = media.decode("ascii")
    assert read_doc(page).headings == ["Interview with Joana", "Highlights", "Transcript"]
    highlights_part = page[page.index("<h2>Highlights</h2>"):page.index("<h2>Transcript</h2>")]
    assert highlights_part.index("<h3>onboarding (1)</h3>") < highlights_part.index("<h3>pricing (1)</h3>")
    assert "&#8220;the onboarding took&#8221;" in highlights_part and "&amp; &lt;week&gt;" in highlights_part  # ASCII, as sent
    assert f'href="{VIDEO}&amp;t=9s"' in highlights_part
    transcript = page[page.index("<h2>Transcript</h2>"):]
    assert f'<span style="background-color:{gdoc.HIGHLIGHT}">the onboarding took</span>' in transcript
    assert "background-color" not in gdoc.doc_html(interview())


from tests.test_gdoc import sleeps  # noqa: E402,F401  (the fixture: backoff sleeps recorded, not slept)


def test_the_highlights_sheet_gets_the_interviews_rows_in_place_of_its_old_ones(sleeps):
    """Recorded Drive exchanges: the first time the Sheet is made from a CSV; next time this
    interview's rows are replaced and another interview's stay."""
    import csv
    import io

    from igot.outputs import gdoc
    from tests.test_drive_repository import DOC_URL, sent_rows
    from tests.test_gdoc import RESEARCH, drive, multipart, reply

    t = with_two_highlights()
    service, http = drive(reply("files-list-empty.json"), reply("sheet-created.json"))
    gdoc.update_highlights_sheet(service, RESEARCH, t, DOC_URL)
    look, make = http.sent
    assert f"name = 'iGot highlights' and '{RESEARCH}' in parents" in look.query["q"]
    assert multipart(make)[0] == {"name": "iGot highlights", "mimeType": gdoc.GOOGLE_SHEET, "parents": [RESEARCH]}
    rows = sent_rows(make)
    assert rows[0] == gdoc.HIGHLIGHT_COLUMNS
    assert rows[1] == ["Interview with Joana", "Joana", "0:00:04", f"{VIDEO}&t=4s",
                       "Honestly the price is too high for a small team. And the onboarding took me a whole week.",
                       "pricing", "price & <week>", DOC_URL]
    assert rows[2][4:6] == ["the onboarding took", "onboarding"]
    other = ["Another interview", "Ana", "0:01:00", "https://example.com", "=SUM(A1)", "trust", "", "https://docs.google.com/document/d/other/edit"]
    sheet_now = io.StringIO()
    csv.writer(sheet_now).writerows([gdoc.HIGHLIGHT_COLUMNS, rows[1], ["'" + c if c.startswith("=") else c for c in other]])
    exported = ({"status": "200", "content-type": "text/csv"}, sheet_now.getvalue().encode("utf-8"))
    one_left = highlights.without_highlight(t, t.highlights[0].id)
    service, http = drive(reply("files-list-sheet-found.json"), exported, reply("sheet-created.json"))
    gdoc.update_highlights_sheet(service, RESEARCH, one_left, DOC_URL)
    rows = sent_rows(http.sent[-1])
    # This interview's rows replaced; the other interview's kept, still text (not a formula).
    assert [r[4] for r in rows[1:]] == ["the onboarding took", "'=SUM(A1)"]
    assert sleeps == []
