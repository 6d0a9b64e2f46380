"""The time left that a long CPU run says after each stage (igot.runtime.pace)."""

from igot.pipeline import RunOptions, make_plan
from igot.runtime.pace import CPU_PACE, estimate_line, speed, time_left

HOUR = 3600.0
PACE = {"transcription": 0.3, "alignment": 0.1, "punctuation": 0.01, "diarization": 0.05, "summary": 0.3}


def test_a_computer_twice_as_slow_is_told_twice_the_time():
    done = {"source": 2.0, "transcription": 0.6 * HOUR}  # transcription took twice its pace
    assert speed(done, HOUR, PACE) == 2.0
    assert time_left(done, ["diarization", "summary"], HOUR, PACE) == 2 * (0.05 + 0.3) * HOUR
    line = estimate_line(done, ["diarization", "summary"], HOUR, PACE)
    assert line == "Time left: about 42 min (speakers, summary)"


def test_a_stage_reused_from_an_earlier_run_says_nothing_of_the_speed():
    # Transcription came from the work folder in a second; punctuation ran at half its pace.
    done = {"transcription": 1.0, "punctuation": 0.005 * HOUR}
    assert speed(done, HOUR, PACE) == 0.5
    assert speed({"transcription": 1.0}, HOUR, PACE) == 1.0  # nothing ran yet: the table's pace


def test_no_line_when_little_is_left_or_nothing_comes():
    assert estimate_line({"transcription": 60.0}, ["punctuation"], 600.0, PACE) is None  # 6 s left
    assert estimate_line({"transcription": 0.3 * HOUR}, [], HOUR, PACE) is None
    assert "1 h" in estimate_line({}, ["transcription", "summary"], 2 * HOUR, PACE)


def test_the_stages_to_come_follow_the_options():
    def stages(options):
        return list(make_plan(options, gpus=[]).stages)

    # A laptop times the words with the engine (no wav2vec2 stage); a GPU, or precise asked for, aligns them.
    assert stages(RunOptions()) == ["transcription", "punctuation", "diarization", "summary", "meaning"]
    assert list(make_plan(RunOptions(), gpus=[15.0]).stages) == ["transcription", "alignment", "punctuation", "diarization",
                                                                 "summary", "meaning"]
    assert stages(RunOptions(word_timing="precise", summary=False, meaning=False)) == ["transcription", "alignment", "punctuation",
                                                                                      "diarization"]
    assert set(stages(RunOptions())) <= set(CPU_PACE)
