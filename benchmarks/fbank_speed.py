"""Speaker features (the filterbank CAM++ reads): igot.speaker_features (numpy) against senko's C++ library,
on the first 30 s of a 4-speaker dev recording, with senko's own windows over detected speech.

senko's wheel library crashes on CPUs without AVX-512, so it runs in a child process here; on
such a CPU its row says so (build senko from source to time it).

    python benchmarks/fbank_speed.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import wave
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from igot.audio import convert_to_wav, read_window  # noqa: E402
from igot.speaker_features import window_features  # noqa: E402

RECORDING = ROOT / "tests/data/recordings/pyaudioanalysis/diarizationExample.flac"


def best_of(run, times: int = 7) -> float:
    took = []
    for _ in range(times):
        start = time.perf_counter()
        run()
        took.append(time.perf_counter() - start)
    return min(took)


def main(engine: str = "both") -> None:
    import senko

    diarizer = senko.Diarizer(device="cpu", warmup=False, quiet=True)
    with tempfile.TemporaryDirectory() as folder:
        wav = Path(folder) / "a.wav"
        convert_to_wav(RECORDING, wav)
        clip = Path(folder) / "clip.wav"
        samples = read_window(wav, 0.0, 30.0)
        with wave.open(str(clip), "wb") as w:
            w.setnchannels(1), w.setsampwidth(2), w.setframerate(16000)
            w.writeframes((samples * 32768).astype("<i2").tobytes())
        windows = diarizer._generate_subsegments(diarizer._perform_vad(str(clip)), None)
        if engine == "cpp":
            print(f"| senko C++ library | {best_of(lambda: diarizer._extract_fbank_features(str(clip), windows)):.3f} |")
            return
        print(f"30 s of speech, {len(windows)} windows of 1.5 s, best of 7, {os.cpu_count()} CPU cores\n")
        print("| features | seconds |\n|---|---|")
        print(f"| igot.speaker_features (numpy) | {best_of(lambda: window_features(samples, windows)):.3f} |", flush=True)
    child = subprocess.run([sys.executable, __file__, "cpp"], capture_output=True, text=True)
    if child.returncode == 0:
        print(child.stdout.strip().splitlines()[-1])
    else:
        print(f"| senko C++ library | crashed (exit {child.returncode}; -4 or 132 = Illegal instruction) |")


if __name__ == "__main__":
    main(*sys.argv[1:])
