"""Every window's local speakers' voices from one CAM++ pass over the recording.

sherpa-onnx's recipe embeds each (10 s window, local speaker) by running CAM++ over that speaker's
lone speech in the window, so each second of speech goes through CAM++ about ten times (76 % of its
time). CAM++ ends in a statistics pooling (the mean and standard deviation over time of its frame
outputs) and one dense layer. Here its frame outputs are computed once, over the recording in
CHUNK_SECONDS pieces, and each local speaker's voice is the dense layer over the statistics of the
frames where the segmentation hears that speaker alone in that window: the same model, split at its
pooling (igot.speakers.sherpa exports the two pieces). A frame near a piece's edge sees less
context than in a window-local pass, and CAM++'s context masks and the features' mean are the
piece's rather than the lone speech's; on 5 minutes of a dev interview the voices agree with the
per-window ones at a median cosine of 0.98, and their pairwise similarities correlate at 0.99;
still, two people's voices come closer, and on the dev data's check side it lost right words
(docs/findings.md), so it is an option (igot.speakers.sherpa.SherpaOptions.voices), not the default.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

# Seconds of features CAM++ runs over at once; each piece's features less their own mean, as
# sherpa-onnx's extractor does per embedding ("global-mean"). 10, 30 and 120 s gave the same
# agreement with the per-window voices (median cosine 0.979-0.983).
CHUNK_SECONDS = 30
FEATURE_HOP = 160  # samples between fbank frames (10 ms at 16 kHz)
SUBSAMPLING = 2  # CAM++'s first TDNN layer halves the frame rate


@dataclass
class VoiceModel:
    """CAM++ split at its pooling: `frames` (N, T, 80) fbank -> (N, C, T / 2); `head` (N, 2C) stats -> voice.
    `features` is a sherpa-onnx SpeakerEmbeddingExtractor, whose streams make the fbank it is fed."""

    frames: Any  # onnxruntime.InferenceSession
    head: Any  # onnxruntime.InferenceSession
    features: Any  # sherpa_onnx.SpeakerEmbeddingExtractor


def load_voice_model(frames: Path, head: Path, features: Any, threads: int) -> VoiceModel:
    """onnxruntime sessions over the two exported pieces (igot.speakers.sherpa.pooled_files)."""
    import onnxruntime as ort

    def session(path: Path, count: int) -> Any:
        options = ort.SessionOptions()
        options.intra_op_num_threads = count
        options.inter_op_num_threads = 1
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    return VoiceModel(session(frames, threads), session(head, 1), features)


def frame_outputs(samples: np.ndarray, model: VoiceModel, rate: int) -> np.ndarray:
    """CAM++'s frame outputs (C, T) over the recording, one every SUBSAMPLING * FEATURE_HOP samples."""
    stream = model.features.create_stream()
    stream.accept_waveform(rate, samples)
    stream.input_finished()
    # A finished stream holds (samples + hop / 2) // hop frames; one fewer at most is asked for,
    # since sherpa-onnx ends the process (it raises nothing) when asked for a frame it lacks.
    count = len(samples) // FEATURE_HOP
    if count < 1:
        return np.zeros((0, 0), dtype=np.float32)
    features = np.asarray(stream.get_frames(0, count), dtype=np.float32).reshape(count, -1)
    step = int(CHUNK_SECONDS * rate / FEATURE_HOP)
    step -= step % SUBSAMPLING  # each piece's outputs start on the whole recording's output grid
    pieces = []
    for at in range(0, count, step):
        piece = features[at:at + step]
        pieces.append(model.frames.run(None, {"x": (piece - piece.mean(axis=0))[None]})[0][0])
    return np.concatenate(pieces, axis=1)


def window_voices(outputs: np.ndarray, alone: np.ndarray, heard: np.ndarray, starts: list[int], window: int,
                  model: VoiceModel) -> dict[tuple[int, int], np.ndarray]:
    """The voice of each (window, local speaker) that `heard` marks: CAM++'s head over the mean and
    standard deviation of the frame outputs where `alone` (windows, frames, speakers) hears that
    speaker alone. A segmentation frame k of a window covers its samples k/frames to (k+1)/frames
    of the window, as igot.speakers.overlap cuts lone speech."""
    hop = SUBSAMPLING * FEATURE_HOP
    frames = alone.shape[1]
    found, stats = [], []
    for w in np.flatnonzero(heard.any(axis=1)):
        start = starts[w]
        lo, hi = -(-start // hop), min(outputs.shape[1], (start + window) // hop)
        if hi - lo < 2:
            continue
        centre = np.arange(lo, hi) * hop + hop // 2 - start
        which = np.minimum(centre * frames // window, frames - 1)
        mask = alone[w, which, :].T.astype(np.float32)  # (speakers, outputs)
        heard_outputs = outputs[:, lo:hi]
        count = mask.sum(axis=1)
        total, squares = mask @ heard_outputs.T, mask @ (heard_outputs * heard_outputs).T
        for s in np.flatnonzero(heard[w]):
            n = count[s]
            if n < 2:
                continue
            mean = total[s] / n
            spread = np.sqrt(np.maximum(squares[s] - n * mean * mean, 0.0) / (n - 1))  # unbiased, as CAM++'s pooling
            found.append((int(w), int(s)))
            stats.append(np.concatenate([mean, spread]))
    if not found:
        return {}
    voices = model.head.run(None, {"stats": np.stack(stats).astype(np.float32)})[0]
    return dict(zip(found, voices))
