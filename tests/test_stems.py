"""Nothing lost: a new interview never replaces another. Titles in every script keep their letters
(three Russian interviews are three, not one "interview"), two recordings of one name are two
interviews and the second never gets the first's highlights, a recording called "plan" or "Index"
leaves the user's plan.json and the library page alone, and a run of the same recording again
updates its own interview."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from pathlib import Path
from typing import Optional
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from igot.cli import main
from igot.errors import IgotError
from igot.outputs import corrections, export, highlights, library, store
from igot.outputs.store import Library
from igot.pipeline import Models, RunContext, RunOptions, make_plan, stages, work_dir_for
from igot.runtime.hub import Hub
from igot.transcript import Source, Transcript
from igot.workspace import server
from igot.workspace.guard import Door
from tests.test_cli import ffmpeg
from tests.test_highlights import interview
from tests.test_workspace import HOME, PORT, tone


def recording(folder: Path, name: str) -> Path:
    """A recording file the user has (its bytes do not matter: nothing here listens to it)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(b"not listened to")
    return path.resolve()


def of_file(title: str, path: Path) -> Transcript:
    """A finished transcript of the recording at `path`, as a run makes it (no highlights yet)."""
    return replace(interview(), source=Source(title, None, str(path), "file"), highlights=None)


def of_link(title: str, video_id: str) -> Transcript:
    url = f"https://www.youtube.com/watch?v={video_id}"
    return replace(interview(), source=Source(title, url, None, "youtube"), highlights=None)


def run_save(folder: Path, t: Transcript, *, force: bool = False, name: Optional[str] = None) -> Path:
    """The end of `igot run` (igot.pipeline.stages.save), models left out: the interview's JSON."""
    options = RunOptions(voices=False, progress=False, force=force, name=name)
    ctx = RunContext(options, make_plan(options, lambda m: None, gpus=[], library=folder), Models(), Hub(),
                     lambda m: None, folder / ".igot" / "work")
    result = stages.save(ctx, t, t.source.path or t.source.url, folder, 1.0, folder / "audio.wav", None)
    return result.files["json"]


def interviews(folder: Path) -> dict[str, Transcript]:
    """Every interview the library lists, by stem."""
    found, skipped = Library(folder).listing()
    return {iv.path.stem: Transcript.load(iv.path) for iv in found}


# --- every script ---------------------------------------------------------------------------------
def test_three_russian_interviews_and_a_japanese_one_are_four_interviews(tmp_path):
    out, calls = tmp_path / "library", tmp_path / "calls"
    made = [run_save(out, of_file(title, recording(calls, name))) for title, name in [
        ("Интервью с Анной", "anna.mp4"), ("Интервью с Борисом", "boris.mp4"),
        ("Интервью с Анной", "anna-again.mp4"), ("ユーザーインタビュー", "user.mp4")]]
    assert [p.name for p in made] == ["интервью-с-анной.json", "интервью-с-борисом.json", "интервью-с-анной-2.json",
                                      "ユーザーインタビュー.json"]
    kept = interviews(out)
    assert {stem: Path(t.source.path).name for stem, t in kept.items()} == {
        "интервью-с-анной": "anna.mp4", "интервью-с-борисом": "boris.mp4", "интервью-с-анной-2": "anna-again.mp4",
        "ユーザーインタビュー": "user.mp4"}
    page = (out / library.INDEX).read_text(encoding="utf-8")
    for stem in kept:  # the library page links each one's page, and each page is there
        assert f'href="{stem}.html"' in page and (out / f"{stem}.html").is_file()


@pytest.mark.parametrize("title,stem", [
    ("Интервью с Анной", "интервью-с-анной"),
    ("ユーザーインタビュー", "ユーザーインタビュー"),
    ("用户访谈 第二次", "用户访谈-第二次"),
    ("사용자 인터뷰", "사용자-인터뷰"),
    ("مقابلة مع المستخدم", "مقابلة-مع-المستخدم"),
    ("Συνέντευξη ΟΔΟΣ", "συνέντευξη-οδος"),  # lower case as Greek writes it: a final sigma stays final
    ("उपयोगकर्ता साक्षात्कार", "उपयोगकर्ता-साक्षात्कार"),  # the vowel signs and virama stay on their letters
    ("Entrevista com a Joana — São Paulo", "entrevista-com-a-joana-sao-paulo"),  # Latin: the stems iGot always gave
    ("İstanbul kullanıcı görüşmesi", "istanbul-kullanici-gorusmesi"),
    ("CON", "con-interview"),  # Windows refuses these, whatever the extension
])
def test_a_title_in_any_script_names_its_files_with_its_own_letters(tmp_path, title, stem):
    saved = run_save(tmp_path, of_file(title, recording(tmp_path / "calls", "call.mp4")))
    assert saved.name == f"{stem}.json"
    assert Transcript.load(saved).source.title == title


def test_a_long_title_fits_every_file_system_and_a_second_of_its_name_still_does(tmp_path):
    title = "Интервью с пользователем о первом месяце работы с приложением и о том, что было дальше " * 4
    japanese = "ユーザーインタビュー" * 30  # no spaces to cut at
    files = [run_save(tmp_path, of_file(t, recording(tmp_path / "calls", name)))
             for t, name in [(title, "a.mp4"), (title, "b.mp4"), (japanese, "c.mp4"), (japanese, "d.mp4")]]
    assert len({p.stem for p in files}) == 4
    for path in files:
        # Each name, and the temp name written beside it first (".NAME.1a2b3c4d.tmp"), within the
        # 143 bytes of eCryptfs (255 on most file systems).
        for fmt in export.FORMATS:
            assert len(f".{path.stem}.{fmt}.12345678.tmp".encode()) <= 143
        assert not path.stem.endswith("-")
    assert files[1].stem == f"{files[0].stem}-2" and files[0].stem.startswith("интервью-с-пользователем")
    assert files[2].stem.startswith("ユーザーインタビュー")


# --- two recordings of one name ---------------------------------------------------------------------
def test_a_second_recording_of_one_name_is_an_interview_of_its_own_without_the_firsts_highlights(tmp_path):
    out, calls = tmp_path / "library", tmp_path / "calls"
    first = run_save(out, of_file("Onboarding call", recording(calls / "monday", "call.mp4")))
    lib = Library(out)
    lib.change(first.stem, lib.open(first.stem).version,
               lambda t: highlights.with_highlight(t, highlights.new_highlight(t, 4.0, 8.9, ["pricing"], "too expensive")))
    before = first.read_bytes()

    second = run_save(out, of_file("Onboarding call", recording(calls / "tuesday", "call.mp4")))
    assert (first.name, second.name) == ("onboarding-call.json", "onboarding-call-2.json")
    assert first.read_bytes() == before  # the first interview as it was, its highlight with it
    assert not Transcript.load(second).highlights
    assert "pricing" not in (out / "onboarding-call-2.md").read_text(encoding="utf-8")
    assert "too expensive" not in (out / "onboarding-call-2.html").read_text(encoding="utf-8")

    # Even written over the first one's files by name (a caller that names the stem), the second
    # recording's words never carry the first one's highlights.
    over = store.save(of_file("Onboarding call", recording(calls / "tuesday", "call.mp4")), out, first.stem, drive=False)
    assert not over.transcript.highlights


def test_two_links_with_one_title_are_two_interviews(tmp_path):
    a = run_save(tmp_path, of_link("Weekly research call", "aaaaaaaaaaa"))
    b = run_save(tmp_path, of_link("Weekly research call", "bbbbbbbbbbb"))
    assert (a.stem, b.stem) == ("weekly-research-call", "weekly-research-call-2")
    assert {t.source.url for t in interviews(tmp_path).values()} == {
        "https://www.youtube.com/watch?v=aaaaaaaaaaa", "https://www.youtube.com/watch?v=bbbbbbbbbbb"}
    assert run_save(tmp_path, of_link("Weekly research call", "bbbbbbbbbbb")) == b  # its own again


def test_two_runs_at_once_with_one_title_take_two_stems(tmp_path):
    """Four recordings of one name saved at the same moment (two `igot serve`, a CLI run beside):
    the stem is chosen under the library's lock with the write, so none takes another's."""
    calls = [recording(tmp_path / "calls", f"call-{i}.mp4") for i in range(4)]
    start = threading.Barrier(len(calls))
    saved: list[Path] = []

    def one(path: Path) -> None:
        t = of_file("Interview", path)
        start.wait()
        saved.append(run_save(tmp_path / "library", t))

    threads = [threading.Thread(target=one, args=(path,)) for path in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(p.stem for p in saved) == ["interview", "interview-2", "interview-3", "interview-4"]
    assert sorted(Path(t.source.path).name for t in interviews(tmp_path / "library").values()) == [p.name for p in calls]


# --- names the folder already holds -------------------------------------------------------------------
def test_a_recording_called_plan_leaves_the_users_plan_alone(tmp_path):
    out = tmp_path / "library"
    out.mkdir()
    (out / "plan.json").write_text('{"tasks": ["call Ana", "call Bruno"]}', encoding="utf-8")
    (out / "notes.docx").write_bytes(b"PK the user's notes")
    saved = run_save(out, of_file("Plan", recording(tmp_path, "plan.mp4")))
    notes = run_save(out, of_file("Notes", recording(tmp_path, "notes.mp4")))
    assert json.loads((out / "plan.json").read_text(encoding="utf-8")) == {"tasks": ["call Ana", "call Bruno"]}
    assert (out / "notes.docx").read_bytes() == b"PK the user's notes"
    assert (saved.name, notes.name) == ("plan-2.json", "notes-2.json")


@pytest.mark.parametrize("title,stem", [("Index", "index-2"), ("Glossary", "glossary-2"),
                                        ("Summary prompt", "summary-prompt-2")])
def test_a_recording_named_like_igots_own_files_leaves_them_alone(tmp_path, title, stem):
    out = tmp_path / "library"
    run_save(out, of_file("Interview with Joana", recording(tmp_path, "joana.mp4")))
    Library(out).set_glossary(["Pix"], Library(out).kept_glossary().version)
    saved = run_save(out, of_file(title, recording(tmp_path, "other.mp4")))
    assert saved.name == f"{stem}.json"
    page = (out / library.INDEX).read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and 'href="interview-with-joana.html"' in page and f'href="{stem}.html"' in page
    assert (out / "glossary.txt").read_text(encoding="utf-8").split() == ["Pix"]
    assert sorted(interviews(out)) == sorted(["interview-with-joana", stem])


def test_a_stem_whose_phrase_vectors_are_still_kept_is_not_taken(tmp_path):
    """The vectors of an interview whose files were moved away stay in .igot/embeddings: a new
    interview must not be searched by another's phrases."""
    vectors = tmp_path / ".igot" / "embeddings" / "interview-with-ana.json"
    vectors.parent.mkdir(parents=True)
    vectors.write_text("{}", encoding="utf-8")
    assert run_save(tmp_path, of_file("Interview with Ana", recording(tmp_path, "ana.mp4"))).name == "interview-with-ana-2.json"


# --- the same recording again --------------------------------------------------------------------------
def test_running_the_same_recording_again_updates_its_interview_and_keeps_its_highlights(tmp_path):
    out = tmp_path / "library"
    anna = recording(tmp_path / "calls", "anna.mp4")
    first = run_save(out, of_file("Интервью с Анной", anna))
    other = run_save(out, of_file("Интервью с Анной", recording(tmp_path / "calls", "anna-2.mp4")))
    lib = Library(out)
    for saved in (first, other):
        lib.change(saved.stem, lib.open(saved.stem).version,
                   lambda t: highlights.with_highlight(t, highlights.new_highlight(t, 4.0, 8.9, [f"tag-{saved.stem}"])))

    again = run_save(out, of_file("Интервью с Анной", anna))  # e.g. with another Whisper model
    assert again == first and sorted(interviews(out)) == ["интервью-с-анной", "интервью-с-анной-2"]
    assert [h.tags for h in Transcript.load(first).highlights] == [["tag-интервью-с-анной"]]
    assert run_save(out, of_file("Интервью с Анной", recording(tmp_path / "calls", "anna-2.mp4"))) == other
    assert [h.tags for h in Transcript.load(other).highlights] == [["tag-интервью-с-анной-2"]]

    # Another name given (--name): an interview of its own; the first stays.
    renamed = run_save(out, of_file("Anna, first call", anna), name="Anna, first call")
    assert renamed.name == "anna-first-call.json" and first.is_file()


def test_a_run_again_still_refuses_to_replace_corrections_unless_forced(tmp_path):
    anna = recording(tmp_path / "calls", "anna.mp4")
    first = run_save(tmp_path, of_file("Interview with Anna", anna))
    lib = Library(tmp_path)
    lib.change(first.stem, lib.open(first.stem).version, lambda t: corrections.corrected(t, 0, "Corrected by hand."))
    corrected = first.read_bytes()
    with pytest.raises(IgotError, match="1 correction made in the workspace"):
        run_save(tmp_path, of_file("Interview with Anna", anna))
    assert first.read_bytes() == corrected
    assert run_save(tmp_path, of_file("Interview with Anna", anna), force=True) == first
    assert not Transcript.load(first).edits


def test_an_interview_named_before_stems_kept_every_script_is_found_again(tmp_path):
    """iGot named a Russian interview "interview" before: running its recording again updates
    that one, and makes no second copy beside it."""
    anna = recording(tmp_path / "calls", "anna.mp4")
    store.save(of_file("Интервью с Анной", anna), tmp_path, "interview", drive=False)
    assert run_save(tmp_path, of_file("Интервью с Анной", anna)).name == "interview.json"
    assert list(interviews(tmp_path)) == ["interview"]


# --- the work folder --------------------------------------------------------------------------------
def test_two_recordings_of_one_russian_name_never_share_a_work_folder(tmp_path):
    a = recording(tmp_path / "monday", "Интервью.mp4")
    b = recording(tmp_path / "tuesday", "Интервью.mp4")
    out = tmp_path / "library"
    assert work_dir_for(str(a), out) != work_dir_for(str(b), out)
    assert work_dir_for(str(a), out) == work_dir_for(str(a), out)
    # Named as before the update: a run after it finds the stages it kept.
    assert work_dir_for(str(recording(tmp_path, "São Paulo.mp4")), out).name.startswith("sao-paulo-")
    assert work_dir_for(str(a), out).name.startswith("interview-")


# --- the workspace ------------------------------------------------------------------------------------
def test_the_workspace_opens_and_changes_an_interview_with_a_russian_name(tmp_path):
    out = tmp_path / "library"
    out.mkdir()
    sound = tone(out / "анна.wav")
    saved = run_save(out, of_file("Интервью с Анной", sound))
    stem = saved.stem
    assert stem == "интервью-с-анной"
    door = Door(PORT)
    client = TestClient(server.create_app(Library(out), door), base_url=HOME, headers={"X-iGot-Token": door.token})

    assert [iv["stem"] for iv in client.get("/api/library").json()["interviews"]] == [stem]
    opened = client.get(f"/api/interviews/{quote(stem)}")
    assert opened.status_code == 200 and opened.json()["title"] == "Интервью с Анной"
    body = opened.json()
    assert body["player"] == {"kind": "audio", "src": f"media/{quote(stem)}"}
    assert client.get(f"/{body['player']['src']}").content == sound.read_bytes()
    for fmt, link in body["files"].items():
        got = client.get(f"/{link}")
        assert got.status_code == 200 and got.content == (out / f"{stem}.{fmt}").read_bytes()
    added = client.post(f"/api/interviews/{quote(stem)}/highlights",
                        json={"version": body["version"], "start": 4.0, "end": 8.9, "tags": ["цена"]})
    assert added.status_code == 201
    assert [h.tags for h in Transcript.load(saved).highlights] == [["цена"]]
    assert "цена" in (out / f"{stem}.md").read_text(encoding="utf-8")


# --- the real `igot run` ------------------------------------------------------------------------------
def test_igot_run_of_two_recordings_of_one_russian_name_keeps_both(tmp_path, capsys):
    out = tmp_path / "out"
    runs = []
    for day in ("monday", "tuesday"):
        (tmp_path / day).mkdir()
        silence = tmp_path / day / "Интервью с Анной.wav"  # no speech: the run is quick, and still saves
        ffmpeg("-f", "lavfi", "-i", "anullsrc=r=16000:cl=mono", "-t", "2", str(silence))
        runs.append(main(["run", str(silence), "--model", "bundled:tiny.en", "--out", str(out), "--quiet"]))
    capsys.readouterr()
    kept = interviews(out)
    assert sorted(kept) == ["интервью-с-анной", "интервью-с-анной-2"]
    assert sorted(Path(t.source.path).parent.name for t in kept.values()) == ["monday", "tuesday"]
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    # The first one again: still no speech, and its interview is the one kept as it was.
    assert main(["run", str(tmp_path / "monday" / "Интервью с Анной.wav"), "--model", "bundled:tiny.en",
                 "--out", str(out), "--quiet"]) == 3
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
