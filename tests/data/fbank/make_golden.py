"""Write golden.npz: senko 0.2.2's own C++ filterbank output, which tests/test_fbank.py compares
igot.speakers.features against.

senko's PyPI wheel crashes on CPUs without AVX-512, so this needs senko built from source
(`pip install --no-binary senko --no-deps --force-reinstall senko==0.2.2`), or a machine with
AVX-512. Run from the repository root: python -m tests.data.fbank.make_golden

Windows: 3 of senko's own 1.5 s windows over detected speech in a 4-speaker dev recording, and
the edge cases (very start, cut by the end, shorter than one 25 ms frame, starting before 0 s,
past the end, empty). Stored per window in time order (the C++ library orders its output by
whichever thread finished first).
"""

from __future__ import annotations

import tempfile
import wave
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]

from igot.media.audio import convert_to_wav  # noqa: E402

RECORDING = "pyaudioanalysis/diarizationExample.flac"


def main() -> None:
    import senko

    diarizer = senko.Diarizer(device="cpu", warmup=False, quiet=True)
    with tempfile.TemporaryDirectory() as folder:
        wav = Path(folder) / "a.wav"
        convert_to_wav(ROOT / "tests/data/recordings" / RECORDING, wav)
        with wave.open(str(wav)) as w:
            n = w.getnframes() / 16000
        speech = diarizer._generate_subsegments(diarizer._perform_vad(str(wav)), None)
        picked = [speech[int(len(speech) * f)] for f in (0.1, 0.5, 0.9)]
        edges = [(0.0, 1.5), (n - 1.0, n), (n - 0.7, n + 0.8), (n - 0.01, n), (2.0, 2.01), (3.0, 3.0255),
                 (-0.6, 0.9), (n + 1.0, n + 2.5), (5.0, 5.0)]
        windows = np.asarray(picked + edges, dtype=np.float32)  # what senko hands its C++ code
        flat, frames, offsets, dim = diarizer._extract_fbank_features(str(wav), [tuple(w) for w in windows])
    frames, offsets = frames.astype(np.int64), offsets.astype(np.int64)
    in_order = np.concatenate([flat[o : o + f * dim] for f, o in zip(frames, offsets)])
    out = Path(__file__).with_name("golden.npz")
    np.savez_compressed(out, recording=RECORDING, windows=windows, frames=frames, features=in_order.astype(np.float32),
                        dim=dim, senko=senko.__version__ if hasattr(senko, "__version__") else "0.2.2")
    print(f"{out}: {len(windows)} windows, {frames.sum()} frames, {out.stat().st_size // 1024} KB")


if __name__ == "__main__":
    main()
