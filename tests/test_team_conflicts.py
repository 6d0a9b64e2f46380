"""A team on one interview: two people whose pages read the same version both change it. Changes
of different things (phrases, highlights, speakers) are both kept; a change of the very thing
another person just changed is refused, saying who changed it and what is there now; every
correction and highlight says who made it (Edit.by, Highlight.by)."""

from __future__ import annotations

import json
import threading
from collections import Counter

import pytest

from igot.outputs import conflicts, corrections, highlights, review, store
from igot.outputs.store import Library, Stale
from igot.transcript import Phrase, Source, Speaker, Transcript, Word

STEM = "team"
TEXTS = ["How much would you pay for this", "Honestly the price is too high", "And the onboarding took a week",
         "Tell me more about that week", "We read the manual twice", "Then we called support",
         "What did support say", "They said to wait", "How long did you wait", "Nine days in all",
         "That is a long time", "It was too long"]


def interview() -> Transcript:
    phrases = []
    for i, text in enumerate(TEXTS):
        start = i * 4.0
        words = [Word(w, start + k * 0.5, start + k * 0.5 + 0.45, "S1" if i % 2 == 0 else "S2", 0.5 + 0.04 * k)
                 for k, w in enumerate(text.split())]
        phrases.append(Phrase(words[0].speaker, start, words[-1].end, text, None, words))
    return Transcript(Source("Team interview"), language="en", duration=len(TEXTS) * 4.0,
                      speakers=[Speaker("S1", "Speaker 1"), Speaker("S2", "Speaker 2")], phrases=phrases)


@pytest.fixture
def lib(tmp_path) -> Library:
    t = interview()
    t = highlights.with_highlight(t, highlights.new_highlight(t, 4.0, 6.0, ["pricing"], by="Ana"))
    t = highlights.with_highlight(t, highlights.new_highlight(t, 16.0, 18.0, ["manual"], by="Bruno"))
    store.save(t, tmp_path / "library", STEM, drive=False)
    return Library(tmp_path / "library")


def on_disk(lib: Library) -> Transcript:
    return Transcript.load(lib.folder / f"{STEM}.json")


def correct(lib: Library, version: str, who: str, **asked) -> store.Opened:
    """A correction as a route makes it: made by `who`, on the version the page read."""
    return lib.change(STEM, version, lambda t: corrections.correction(t, asked, by=who),
                      touches=corrections.touches(asked))


def ids(t: Transcript) -> list[str]:
    return [h.id for h in t.highlights or []]


def test_two_people_correct_different_phrases_of_one_version_and_both_are_kept(lib):
    v = lib.open(STEM).version
    assert not correct(lib, v, "Ana", kind="words", phrase=3, text="Tell me more about that long week").merged
    # made over Ana's version: the answer says so (the page reads the interview again to show hers)
    assert correct(lib, v, "Bruno", kind="words", phrase=7, text="They told us to wait").merged
    assert not lib.open(STEM).merged
    t = on_disk(lib)
    assert t.phrases[3].text == "Tell me more about that long week"
    assert t.phrases[7].text == "They told us to wait"
    assert [(e.kind, e.at, e.by) for e in t.edits] == [("words", 3, "Ana"), ("words", 7, "Bruno")]


def test_two_people_highlight_different_moments_of_one_version_and_both_are_kept(lib):
    v = lib.open(STEM).version
    before = ids(lib.open(STEM).transcript)
    for who, start in (("Ana", 24.0), ("Bruno", 36.0)):
        lib.change(STEM, v, lambda t, who=who, start=start: highlights.with_highlight(
            t, highlights.new_highlight(t, start, start + 2.0, ["waiting"], by=who)), touches=highlights.TOUCHES_NEW)
    t = on_disk(lib)
    added = [h for h in t.highlights if h.id not in before]
    assert sorted((h.start, h.by) for h in added) == [(24.0, "Ana"), (36.0, "Bruno")]


def test_one_edits_a_highlight_while_another_deletes_another_and_both_are_kept(lib):
    opened = lib.open(STEM)
    x, y = opened.transcript.highlights  # Ana's (4 s), Bruno's (16 s)
    lib.change(STEM, opened.version, lambda t: highlights.edited(t, x.id, ["pricing", "budget"]),
               touches=highlights.touches_highlight(x.id))
    lib.change(STEM, opened.version, lambda t: highlights.without_highlight(t, y.id),
               touches=highlights.touches_highlight(y.id))
    t = on_disk(lib)
    assert [(h.id, h.tags, h.by) for h in t.highlights] == [(x.id, ["pricing", "budget"], "Ana")]


def test_a_highlight_edited_by_one_and_then_by_another_from_the_old_version_is_refused(lib):
    opened = lib.open(STEM)
    x = opened.transcript.highlights[0]
    lib.change(STEM, opened.version, lambda t: highlights.edited(t, x.id, note="too expensive"),
               touches=highlights.touches_highlight(x.id))
    with pytest.raises(Stale) as err:
        lib.change(STEM, opened.version, lambda t: highlights.edited(t, x.id, ["other"]),
                   touches=highlights.touches_highlight(x.id))
    assert err.value.thing == f"highlight {x.id}"
    assert err.value.now["note"] == "too expensive" and err.value.now["tags"] == ["pricing"]
    assert "Ana's highlight" in err.value.problem and "too expensive" in err.value.problem
    assert on_disk(lib).highlights[0].tags == ["pricing"]
    # deleted meanwhile: refused, the thing gone
    v = lib.open(STEM).version
    lib.change(STEM, v, lambda t: highlights.without_highlight(t, x.id), touches=highlights.touches_highlight(x.id))
    with pytest.raises(Stale) as err:
        lib.change(STEM, v, lambda t: highlights.edited(t, x.id, ["other"]), touches=highlights.touches_highlight(x.id))
    assert err.value.thing == f"highlight {x.id}" and err.value.now is None and "deleted" in err.value.problem


def test_a_correction_of_the_phrase_another_just_corrected_is_refused_naming_them(lib):
    v = lib.open(STEM).version
    correct(lib, v, "Ana", kind="words", phrase=3, text="Tell me about that week")
    with pytest.raises(Stale) as err:
        correct(lib, v, "Bruno", kind="words", phrase=3, text="Tell me everything about the week")
    e = err.value
    assert e.status == 409
    assert e.thing == "phrase 3" and e.by == "Ana"
    assert e.now["text"] == "Tell me about that week" and e.now["speaker"] == "S2"
    assert e.problem.startswith("Ana changed this phrase a moment ago: it now reads “Tell me about that week”")
    assert "Your change was not made." in e.problem and e.fix
    json.dumps(e.now)  # the page is sent it as it is
    t = on_disk(lib)
    assert "everything" not in t.to_json()
    assert [(x.at, x.by) for x in t.edits] == [(3, "Ana")]


def test_without_a_name_the_refusal_says_the_phrase_changed(lib):
    v = lib.open(STEM).version
    correct(lib, v, "", kind="words", phrase=3, text="Tell me about that week")
    with pytest.raises(Stale) as err:
        correct(lib, v, "", kind="words", phrase=3, text="Tell me everything")
    assert err.value.by == ""
    assert err.value.problem.startswith("This phrase was changed since your page read it: it now reads "
                                        "“Tell me about that week”")


def test_a_split_elsewhere_refuses_a_correction_by_index_and_keeps_the_split(lib):
    v = lib.open(STEM).version
    correct(lib, v, "Ana", kind="split", phrase=2, word=3)
    with pytest.raises(Stale) as err:
        correct(lib, v, "Bruno", kind="words", phrase=7, text="They told us to wait")
    assert err.value.thing == "phrases" and err.value.by == "Ana"
    assert err.value.now == {"phrases": len(TEXTS) + 1}
    assert err.value.problem.startswith("Ana split a phrase a moment ago")
    t = on_disk(lib)
    assert len(t.phrases) == len(TEXTS) + 1
    assert [p.text for p in t.phrases[2:4]] == ["And the onboarding", "took a week"]
    assert "told us" not in t.to_json()


def test_naming_the_speakers_and_correcting_a_phrase_from_one_version_are_both_kept(lib):
    v = lib.open(STEM).version
    correct(lib, v, "Ana", kind="names", names={"S1": "Carla", "S2": "Joana"})
    correct(lib, v, "Bruno", kind="words", phrase=5, text="Then we phoned support")
    t = on_disk(lib)
    assert [s.name for s in t.speakers] == ["Carla", "Joana"]
    assert t.phrases[5].text == "Then we phoned support"
    assert [(e.kind, e.by) for e in t.edits] == [("names", "Ana"), ("words", "Bruno")]
    # the other way round: a naming from an older version after a correction
    v = lib.open(STEM).version
    correct(lib, v, "Bruno", kind="words", phrase=9, text="Nine whole days")
    correct(lib, v, "Ana", kind="names", names={"S2": "Joana Silva"})
    t = on_disk(lib)
    assert t.phrases[9].text == "Nine whole days" and t.speakers[1].name == "Joana Silva"


def test_two_namings_of_one_version_the_second_is_refused_saying_the_names_now(lib):
    v = lib.open(STEM).version
    correct(lib, v, "Ana", kind="names", names={"S1": "Carla"})
    with pytest.raises(Stale) as err:
        correct(lib, v, "Bruno", kind="names", names={"S1": "Carol"})
    assert err.value.thing == "speakers" and err.value.by == "Ana"
    assert err.value.now == {"speakers": [{"id": "S1", "name": "Carla"}, {"id": "S2", "name": "Speaker 2"}]}
    assert "Carla (S1)" in err.value.problem
    assert on_disk(lib).speakers[0].name == "Carla"


def test_giving_a_phrase_to_a_speaker_whose_id_a_merge_renumbered_is_refused(tmp_path):
    t = interview()
    t = corrections.given(t, 0, corrections.NEW_SPEAKER)  # S3 exists; S1, S2, S3 in the speakers
    store.save(t, tmp_path, STEM, drive=False)
    lib = Library(tmp_path)
    v = lib.open(STEM).version
    # Ana makes S1 and S2 one: S3 becomes S2
    correct(lib, v, "Ana", kind="names", names={"S1": "Carla", "S2": "Carla"})
    assert [s.id for s in on_disk(lib).speakers] == ["S1", "S2"]
    with pytest.raises(Stale):
        correct(lib, v, "Bruno", kind="speaker", phrase=11, speaker="S2")


def test_undo_after_someone_elses_correction_is_refused(lib):
    v = lib.open(STEM).version
    mine = correct(lib, v, "Ana", kind="words", phrase=1, text="Honestly the price is high")
    correct(lib, v, "Bruno", kind="words", phrase=8, text="How long did you wait then")
    with pytest.raises(Stale) as err:
        correct(lib, mine.version, "Ana", kind="undo")
    assert err.value.thing == "corrections" and err.value.by == "Bruno"
    assert "Undo would now take back that one" in err.value.problem
    t = on_disk(lib)
    assert len(t.edits) == 2
    # from the version now, undo takes back Bruno's (undo is the interview's, not a person's)
    correct(lib, lib.open(STEM).version, "Ana", kind="undo")
    assert on_disk(lib).phrases[8].text == TEXTS[8]


def test_every_correction_and_highlight_made_carries_who_made_it(lib):
    v = lib.open(STEM).version
    for asked in ({"kind": "words", "phrase": 0, "text": "How much would you pay"},
                  {"kind": "speaker", "phrase": 4, "speaker": "S2"},
                  {"kind": "speaker", "phrase": 6, "speaker": corrections.NEW_SPEAKER, "first": 0, "last": 1},
                  {"kind": "join", "phrase": 10},
                  {"kind": "names", "names": {"S1": "Carla", "S2": "Carla"}}):
        v = correct(lib, v, "Dora", **asked).version
    t = on_disk(lib)
    assert t.edits and {e.by for e in t.edits} == {"Dora"}
    assert {h.by for h in t.highlights} == {"Ana", "Bruno"}
    assert corrections.correction(interview(), {"kind": "words", "phrase": 0, "text": "x"}).edits[0].by == ""
    assert highlights.new_highlight(interview(), 0.0, 1.0).by == ""


def test_a_file_without_by_loads_and_by_must_be_text(tmp_path):
    t = corrections.corrected(interview(), 1, "Honestly the price is high")
    t = highlights.with_highlight(t, highlights.new_highlight(t, 4.0, 6.0, ["pricing"]))
    data = json.loads(t.to_json())
    for record in data["highlights"] + data["edits"]:
        del record["by"]
    loaded = Transcript.from_dict(data)
    assert loaded.highlights[0].by == "" and loaded.edits[0].by == ""
    data["highlights"][0]["by"] = 3
    with pytest.raises(ValueError, match="highlight 1 has a by of 3"):
        Transcript.from_dict(data)
    data["highlights"][0]["by"] = "Ana"
    data["edits"][0]["by"] = ["Ana"]
    with pytest.raises(ValueError, match="correction 1 has a by"):
        Transcript.from_dict(data)


def test_a_version_not_kept_in_memory_is_refused_as_before(lib):
    v = lib.open(STEM).version
    correct(lib, v, "Ana", kind="words", phrase=3, text="Tell me about that week")
    other = Library(lib.folder)  # another server: it never saw version v
    with pytest.raises(Stale, match="changed since this page read it") as err:
        other.change(STEM, v, lambda t: corrections.correction(t, {"kind": "words", "phrase": 7, "text": "x y"}),
                     touches=corrections.touches({"kind": "words", "phrase": 7, "text": "x y"}))
    assert err.value.thing is None
    # evicted: refused alike
    lib = Library(lib.folder, keep_versions=1)
    v2 = lib.open(STEM).version
    correct(lib, v2, "Ana", kind="words", phrase=4, text="We read the manual")
    assert lib.version_at(STEM, v2) is None
    with pytest.raises(Stale, match="changed since this page read it"):
        correct(lib, v2, "Bruno", kind="words", phrase=9, text="Nine days")


def test_the_versions_of_an_interview_no_longer_kept_parsed_are_forgotten_with_it(lib):
    """Each interview's first version in memory is the whole hour (~50 MB): versions are kept only
    for the interviews kept parsed (KEEP_READ, more while their phrases fit KEEP_PHRASES: none here),
    and a change on a forgotten one is refused as before."""
    lib = Library(lib.folder, keep_phrases=0)
    v = lib.open(STEM).version
    for k in range(store.KEEP_READ):
        store.save(interview(), lib.folder, f"other{k}", drive=False)
        lib.open(f"other{k}")
    assert lib.version_at(STEM, v) is None
    lib.open(STEM)
    correct(lib, v, "Ana", kind="words", phrase=3, text="Tell me about that week")  # still the version read
    v2 = lib.open(STEM).version
    correct(lib, v2, "Ana", kind="words", phrase=4, text="We read the manual")
    for k in range(store.KEEP_READ):
        lib.open(f"other{k}")
    lib.open(STEM)
    with pytest.raises(Stale, match="changed since this page read it"):
        correct(lib, v2, "Bruno", kind="words", phrase=9, text="Nine days")


def test_without_touches_any_newer_version_is_refused_as_in_a_one_person_library(lib):
    v = lib.open(STEM).version
    correct(lib, v, "", kind="words", phrase=3, text="Tell me about that week")
    with pytest.raises(Stale, match="changed since this page read it"):
        lib.change(STEM, v, lambda t: corrections.correction(t, {"kind": "words", "phrase": 7, "text": "x y"}))
    with pytest.raises(Stale):
        lib.opened_at(STEM, v)


def test_a_summary_may_start_from_an_older_version_when_only_a_highlight_changed(lib):
    v = lib.open(STEM).version
    lib.change(STEM, v, lambda t: highlights.with_highlight(t, highlights.new_highlight(t, 24.0, 26.0)),
               touches=highlights.TOUCHES_NEW)
    assert lib.opened_at(STEM, v, touches=store.SUMMARY_TOUCHES).version == lib.open(STEM).version
    correct(lib, lib.open(STEM).version, "Ana", kind="words", phrase=3, text="Tell me about that week")
    with pytest.raises(Stale) as err:
        lib.opened_at(STEM, v, touches=store.SUMMARY_TOUCHES)
    assert err.value.thing == "summary"


def test_accepting_a_review_item_kept_beside_a_correction_elsewhere_refused_on_its_phrase(lib):
    opened = lib.open(STEM)
    found = review.items(opened.transcript)
    first, last = found[0], found[-1]
    assert first.phrase != last.phrase
    other = next(k for k in range(len(TEXTS)) if k not in (first.phrase, last.phrase))
    correct(lib, opened.version, "Ana", kind="speaker", phrase=other,
            speaker="S1" if opened.transcript.phrases[other].speaker == "S2" else "S2")
    lib.change(STEM, opened.version, lambda t: review.accepted(t, first.id), touches=review.touches(first.id))
    assert first.id in on_disk(lib).reviewed
    # the phrase of the last item given to the other speaker by Ana: Bruno's accept of it refused
    v = lib.open(STEM).version
    p = opened.transcript.phrases[last.phrase]
    correct(lib, v, "Ana", kind="speaker", phrase=last.phrase, speaker="S1" if p.speaker == "S2" else "S2")
    with pytest.raises(Stale) as err:
        lib.change(STEM, v, lambda t: review.accepted(t, last.id), touches=review.touches(last.id))
    assert err.value.thing == f"phrase {last.phrase}" and err.value.by == "Ana"
    assert last.id not in on_disk(lib).reviewed


def test_eight_people_correcting_their_own_phrases_at_once_keep_every_acknowledged_change(lib):
    start = lib.open(STEM).version
    acknowledged: dict[int, list[str]] = {k: [] for k in range(8)}
    refused: list[Exception] = []

    def person(k: int) -> None:
        version = start  # read once; every answer's version goes stale as the others write
        for n in range(20):
            text = f"p{k} n{n}"
            try:
                version = correct(lib, version, f"person {k}", kind="words", phrase=k, text=text).version
            except Stale as err:
                refused.append(err)
                continue
            acknowledged[k].append(text)

    threads = [threading.Thread(target=person, args=(k,)) for k in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not refused  # each touched only their own phrase
    t = on_disk(lib)
    by = Counter(e.by for e in t.edits if e.kind == "words")
    for k in range(8):
        assert acknowledged[k] and t.phrases[k].text == acknowledged[k][-1]
        assert by[f"person {k}"] == len(acknowledged[k])
    assert [p.text for p in t.phrases[8:]] == TEXTS[8:]


def test_when_says_how_long_ago():
    from datetime import datetime, timezone

    now = datetime(2025, 5, 1, 12, 0, tzinfo=timezone.utc)
    assert conflicts.when("2025-05-01T11:59:30Z", now) == "a moment ago"
    assert conflicts.when("2025-05-01T11:50:00Z", now) == "10 minutes ago"
    assert conflicts.when("2025-04-30T08:05:00Z", now) == "at 08:05 UTC on 2025-04-30"
    assert conflicts.when("", now) == "since your page read it"
