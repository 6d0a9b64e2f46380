"""A library folder is often a shared Drive folder: every file in it may come from a stranger. One
wrong value in one interview JSON costs that interview alone (listed as skipped, with why), a link
in the folder never brings in a file from elsewhere, and only a real recording of the interview's
length counts as its recording."""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import replace
from pathlib import Path

import pytest

from igot.media.recording import is_recording
from igot.outputs import library, store
from igot.search.words import search
from igot.transcript import Transcript, problem
from tests.test_highlights import interview
from tests.test_workspace import tone


def good(title: str) -> Transcript:
    return replace(interview(), source=replace(interview().source, title=title))


def with_word_start(d):
    d["phrases"][2]["words"][1]["start"] = "9.5"


def past_the_end(d):
    d["phrases"][3]["start"], d["phrases"][3]["end"] = 3614.0, 3617.0  # the recording lasts 20 s


def with_string_tag(d):
    d["highlights"] = [{"id": "h1", "start": 4.0, "end": 8.9, "quote": "Honestly", "tags": "pricing"}]


# (file stem, what is wrong, words the reason must have)
BAD = [
    ("language", lambda d: d.update(language=5), "language is 5"),
    ("nan", lambda d: d.update(duration=math.nan), "duration is nan"),
    ("url", lambda d: d.update(source={"title": "Interview with Joana", "url": 12345, "kind": "youtube"}), "url of 12345"),
    ("word", with_word_start, "word 2 of phrase 3 has a start of '9.5'"),
    ("late", past_the_end, "phrase 4 has a start of 3614.0 (past the recording's end at 20 s)"),
    ("tag", with_string_tag, "highlight 1 has a tags of 'pricing'"),
    ("surrogate", lambda d: d["phrases"][0].update(text="\ud800"), "phrase 1 has a text of"),
]


def bad_data(change) -> dict:
    data = json.loads(interview().to_json())
    change(data)
    return data


@pytest.fixture
def folder(tmp_path) -> Path:
    """Three good interviews and one bad file for each wrong value."""
    out = tmp_path / "library"
    out.mkdir()
    for stem in ("ana", "bruno", "carla"):
        store.save(good(f"Interview with {stem.title()}"), out, stem, drive=False)
    for stem, change, _ in BAD:
        # json.dumps writes NaN as the bare word NaN and a lone surrogate as \ud800, as a hand edit may
        (out / f"{stem}.json").write_text(json.dumps(bad_data(change)), encoding="utf-8")
    return out


def test_one_wrong_value_skips_that_interview_alone_and_says_what_is_wrong(folder):
    interviews, skipped = library.load_library(folder)
    assert sorted(iv.name for iv in interviews) == ["Interview with Ana", "Interview with Bruno", "Interview with Carla"]
    why = {s.path.stem: s.why for s in skipped}
    assert sorted(why) == sorted(stem for stem, _, _ in BAD)
    for stem, _, words in BAD:
        assert words in why[stem], why[stem]
        assert "igot run again" in why[stem]  # and what to do about it
    assert '"duration": NaN' in (folder / "nan.json").read_text()  # the raw word, as json.loads reads it
    # Read again from the listing's cache, and as a server does (its earlier listing known): the same
    again, skipped_again = library.load_library(folder)
    assert [iv.name for iv in again] == [iv.name for iv in interviews] and skipped_again == skipped
    known, skipped_known = library.load_library(folder, known=interviews)
    assert [iv.name for iv in known] == [iv.name for iv in interviews] and skipped_known == skipped
    # The page and the search over the others work, and each listed interview opens as a whole.
    page = library.write_library(folder).read_text(encoding="utf-8")
    assert page.count('class="skipped"') == len(BAD) and "3 interviews" in page
    assert len(search(interviews, "onboarding")) == 3
    assert all(Transcript.load(iv.path).phrases for iv in interviews)


@pytest.mark.parametrize("stem,change,words", BAD, ids=[b[0] for b in BAD])
def test_a_transcript_with_a_wrong_value_is_never_made(stem, change, words):
    data = bad_data(change)
    with pytest.raises(ValueError, match=re.escape(words)):
        Transcript.from_dict(data)
    assert words in problem(data)
    with pytest.raises(ValueError, match=re.escape(words)):  # as the workspace opens a file: the same words
        Transcript.from_json(json.dumps(data))


def test_what_igot_writes_passes_and_older_quirks_still_load():
    t = interview()
    assert problem(json.loads(t.to_json())) is None
    data = json.loads(t.to_json())
    data["phrases"][1]["words"][0]["start"], data["phrases"][1]["words"][0]["end"] = 4.4, 4.2  # older iGot wrote such words
    data["phrases"][3]["end"] = 20.0 + 12.5  # Whisper's last time may pass the end a little
    for key in ("speakers", "turns", "summary", "highlights", "info", "language"):
        data.pop(key)
    data["schema_version"] = 1
    assert Transcript.from_dict(data).phrases[3].end == 32.5


@pytest.mark.parametrize("change,words", [
    (lambda d: d.update(duration=-1), "duration is -1"),
    (lambda d: d.update(duration=True), "duration is True"),
    (lambda d: d["phrases"][0].update(end=math.inf), "phrase 1 has an end of inf"),
    (lambda d: d["phrases"][0].update(start=-3), "before the recording starts"),
    (lambda d: d.update(schema_version="2"), "schema_version is '2'"),
    (lambda d: d.update(speakers=[{"id": "S1"}]), "speaker 1 has no name"),
    (lambda d: d.update(info={"timings": {"asr": math.nan}}), "its info holds nan"),
    (lambda d: d.update(summary=[{"text": "x", "citations": [{"time": 1.0, "phrase": 9}]}]),
     "citation 1 of summary point 1 has a phrase of 9 (there are 4 phrases)"),
    (lambda d: d.update(highlights=[{"id": "h", "start": 9.0, "end": 4.0, "quote": "x"}]), "highlight 1 ends before it starts"),
    (lambda d: d.update(source={"title": "x", "path": "/tmp/a\x00b"}), "NUL"),
])
def test_more_wrong_values_are_named(change, words):
    with pytest.raises(ValueError) as err:
        Transcript.from_dict(bad_data(change))
    assert words in str(err.value)


def test_a_file_nested_without_end_is_skipped_not_a_crash(tmp_path):
    store.save(good("Interview with Ana"), tmp_path, "ana", drive=False)
    (tmp_path / "deep.json").write_text('{"source": {"title": "x"}, "phrases": ' + "[" * 100_000 + "]" * 100_000 + "}")
    interviews, skipped = library.load_library(tmp_path)
    assert [iv.name for iv in interviews] == ["Interview with Ana"]
    assert [s.path.name for s in skipped] == ["deep.json"] and "nested" in skipped[0].why


# --- links ------------------------------------------------------------------------------------------
def test_a_link_to_an_interview_outside_the_folder_is_neither_listed_nor_searched(folder, tmp_path):
    elsewhere = tmp_path / "private"
    elsewhere.mkdir()
    secret = good("Board meeting")
    secret = replace(secret, phrases=[replace(secret.phrases[0], text="The acquisition closes on Friday.")] + secret.phrases[1:])
    secret.save(elsewhere / "board.json")
    (folder / "leak.json").symlink_to(elsewhere / "board.json")
    (folder / "alias.json").symlink_to(folder / "ana.json")  # a link inside the folder is not read either
    interviews, skipped = library.load_library(folder)
    assert "Board meeting" not in [iv.name for iv in interviews] and len(interviews) == 3
    why = {s.path.name: s.why for s in skipped}
    assert why["leak.json"] == "it is a link to a file outside the library folder; move the file itself into the folder"
    assert "link" in why["alias.json"]
    assert search(interviews, "acquisition") == [] and search(library.load_interviews(folder), "friday") == []
    page = library.write_library(folder).read_text(encoding="utf-8")
    assert "acquisition" not in page and "Board meeting" not in page


# --- recordings ---------------------------------------------------------------------------------------


def test_only_a_real_recording_of_the_interviews_length_is_its_recording(tmp_path):
    wav = tone(tmp_path / "joana.wav", 20.0)
    assert is_recording(wav, 20.0) and is_recording(wav, 20.0 + 1.5)  # a header's length and the decoded one differ a little
    assert not is_recording(wav, 60.0)  # a real recording, but not this interview's
    renamed = tmp_path / "notes.wav"
    renamed.write_text("Passwords: hunter2\n" * 100)
    assert not is_recording(renamed, 20.0) and not is_recording(renamed, 0)
    riff = tmp_path / "fake.wav"
    riff.write_bytes(b"RIFF" + b"\x00" * 4000)  # the right first bytes, nothing playable after them
    assert not is_recording(riff, 20.0)
    assert not is_recording(tmp_path, 20.0) and not is_recording(tmp_path / "gone.wav", 20.0)
    assert is_recording(wav, 20.0)  # asked again: the kept answer


def test_without_ffprobe_nothing_is_a_recording(tmp_path, monkeypatch):
    wav = tone(tmp_path / "fresh.wav", 3.0)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    assert not is_recording(wav, 3.0)
    monkeypatch.undo()
    assert is_recording(wav, 3.0)  # not kept: asked again once ffprobe is there


def test_the_stored_duration_is_the_recordings_length(tmp_path):
    """What a run stores (igot.media.audio.convert_to_wav's seconds) is what is_recording compares."""
    from igot.media.audio import convert_to_wav

    source = tone(tmp_path / "talk.wav", 7.25, rate=44100)
    seconds = convert_to_wav(source, tmp_path / "audio.wav")
    assert abs(seconds - 7.25) < 0.01 and is_recording(source, seconds)
