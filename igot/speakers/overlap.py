"""Who spoke when, people talking at once included: pyannote's recipe as sherpa-onnx runs it, with
each local speaker's voice computed once instead of once a window.

sherpa-onnx's offline diarization (igot.speakers.sherpa) segments 10 s windows every second and
then embeds every local speaker of every window: each second of speech goes through CAM++ about
ten times, 76 % of its time (docs/findings.md). Here the same steps run with the same models and
the same numbers (its segmentation outputs, its powerset decoding, its embedding extractor and
clustering, its reconstruction of each frame's speakers), except:
- the segmentation windows go through onnxruntime in batches (3 times faster than one by one);
- only the local speakers of one window in `embed_every` are embedded ("key" windows, laid end to
  end when `embed_every` windows make one window's length, so each second is embedded once). A
  local speaker of any other window takes the voice of the key window's local speaker it is heard
  with (the most frames where both are active, alone, in the two windows' common stretch); one
  that matches none is embedded itself. `embed_every` 1 (the default) is sherpa-onnx's own recipe,
  and gives its turns (exactly on the dev recordings tried up to 5 min; 190 turns against 189 on
  20 min); 10 (each second embedded once, 0.03 of the recording) lost on the
  dev data's tune side (igot.speakers.sherpa.SherpaOptions.embed_every).
The local speakers' voices are clustered as sherpa-onnx clusters them, and every window's local
speakers, matched ones included, carry their voice's cluster into the reconstruction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

# pyannote segmentation-3.0's 7 powerset classes as its 3 local speakers: none, each alone, each pair.
POWERSET = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [1, 0, 1], [0, 1, 1]], dtype=np.int8)
# A local speaker heard alone for fewer frames than this in a window gets no voice (sherpa-onnx's rule).
MIN_FRAMES = 10
# Segmentation windows run through the model at once.
BATCH = 8
# Key windows whose local speakers' pieces go to `embed` together (each piece still embedded alone:
# several extractors take them at once, igot.speakers.sherpa.SherpaDiarizer.extractors).
EMBED_GROUP = 16


@dataclass(frozen=True)
class Segmentation:
    """The segmentation model's shape, from the metadata sherpa-onnx reads."""

    window: int  # samples
    shift: int  # samples between windows
    frame_shift: int  # samples between output frames (receptive field shift)
    frame_size: int  # receptive field size, samples
    rate: int


def segmentation_model(path: str, threads: int) -> tuple[Any, dict]:
    """An onnxruntime session on the exported segmentation model, and its metadata."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    return session, dict(session.get_modelmeta().custom_metadata_map)


def window_starts(n: int, shape: Segmentation) -> list[int]:
    """Where each window starts, as sherpa-onnx lays them: whole windows every shift, then one
    padded window over what is left."""
    if n <= shape.window:
        return [0]
    count = (n - shape.window) // shape.shift + 1
    starts = [i * shape.shift for i in range(count)]
    if (n - shape.window) % shape.shift:
        starts.append(count * shape.shift)
    return starts


def local_speakers(session: Any, samples: np.ndarray, shape: Segmentation, tick: Callable[[], None]) -> np.ndarray:
    """(windows, frames, 3) 0/1: who of each window's three local speakers is active, frame by frame."""
    starts = window_starts(len(samples), shape)
    found = []
    for at in range(0, len(starts), BATCH):
        batch = np.zeros((len(starts[at:at + BATCH]), 1, shape.window), dtype=np.float32)
        for row, start in enumerate(starts[at:at + BATCH]):
            piece = samples[start:start + shape.window]
            batch[row, 0, :len(piece)] = piece
        scores = session.run(None, {"x": batch})[0]
        found.append(POWERSET[scores.argmax(axis=-1)])
        tick()
    return np.concatenate(found)


def diarize_windows(samples: np.ndarray, labels: np.ndarray, shape: Segmentation,
                    embed: Callable[[list[np.ndarray]], list[np.ndarray]],
                    cluster: Callable[[np.ndarray], list[int]], embed_every: int, min_on: float, min_off: float,
                    tick: Callable[[], None] = lambda: None,
                    pooled: Optional[Callable[[np.ndarray, np.ndarray], dict]] = None) -> list[tuple[float, float, int]]:
    """(start, end, speaker) turns from the windows' local speakers (`labels`, local_speakers'):
    `embed(pieces)` gives the voices of local speakers' lone speech, in order, `cluster(voices)` a cluster
    per voice. `pooled(alone, heard)`, when given, gives every voice at once instead, by (window,
    local speaker) (igot.speakers.pooled), and `embed` and `embed_every` are not used. In time
    order of speaker, as sherpa-onnx returns them."""
    n = len(samples)
    windows, frames, _ = labels.shape
    if windows == 1:  # one window: its local speakers are the speakers (sherpa-onnx's special case)
        return _turns(labels[0], shape, min_on, min_off)
    first = (np.arange(windows) * shape.shift / shape.frame_shift + 0.5).astype(np.int64)  # each window's first frame
    total = (shape.window + (windows - 1) * shape.shift) // shape.frame_shift + 1
    per_frame = _speakers_per_frame(labels, first, total)
    if per_frame.max() == 0:
        return []
    alone = labels * (labels.sum(axis=2, keepdims=True) < 2)  # overlap left out of every voice
    heard = alone.sum(axis=1) >= MIN_FRAMES  # (windows, people): who has a voice to give
    owner = {}  # (window, local speaker) -> index of the voice it takes
    voices: list[np.ndarray] = []
    if pooled is not None:
        for key, vector in pooled(alone, heard).items():
            if np.isfinite(vector).all():
                owner[key] = len(voices)
                voices.append(vector)
        tick()
    else:
        _embed_windows(samples, alone, heard, first, shape, embed, embed_every, owner, voices, tick)
    if not voices:
        return []
    clusters = np.asarray(cluster(np.stack(voices).astype(np.float32)))
    count = np.zeros((total, int(clusters.max()) + 1), dtype=np.int32)
    for (w, s), v in owner.items():
        count[first[w]:first[w] + frames, clusters[v]] += labels[w, :, s]
    if (n - shape.window) % shape.shift > 0:
        count = count[:min(n // shape.frame_shift, len(count) - 1) + 1]
    return _turns(_top(count, per_frame), shape, min_on, min_off)


def _embed_windows(samples: np.ndarray, alone: np.ndarray, heard: np.ndarray, first: np.ndarray, shape: Segmentation,
                   embed: Callable[[list[np.ndarray]], list[np.ndarray]], embed_every: int, owner: dict, voices: list,
                   tick: Callable[[], None]) -> None:
    """Each local speaker of one window in `embed_every` embedded from its lone speech; the others
    take the voice of the key window's local speaker they are heard with, or are embedded
    themselves. Fills `owner` ((window, local speaker) -> index in `voices`) and `voices`."""
    windows, frames, _ = alone.shape
    keys = np.zeros(windows, dtype=bool)
    keys[::embed_every] = True

    def kept(vector: np.ndarray) -> Optional[int]:
        if not np.isfinite(vector).all():
            return None
        voices.append(vector)
        return len(voices) - 1

    def lone(w: int, s: int) -> np.ndarray:
        return _lone_samples(samples, alone[w, :, s], w * shape.shift, shape)

    key_windows = [int(w) for w in np.flatnonzero(keys)]
    for at in range(0, len(key_windows), EMBED_GROUP):  # a group's pieces embedded together, in order
        group = [(w, int(s)) for w in key_windows[at:at + EMBED_GROUP] for s in np.flatnonzero(heard[w])]
        for key, vector in zip(group, embed([lone(w, s) for w, s in group])):
            found = kept(vector)
            if found is not None:
                owner[key] = found
        for _ in key_windows[at:at + EMBED_GROUP]:
            tick()
    for w in np.flatnonzero(~keys):
        for s in np.flatnonzero(heard[w]):
            match = _heard_with(alone, first, w, s, keys, owner, frames, shape)
            found = owner.get(match) if match is not None else kept(embed([lone(int(w), int(s))])[0])
            if found is not None:
                owner[(int(w), int(s))] = found


def _heard_with(alone: np.ndarray, first: np.ndarray, w: int, s: int, keys: np.ndarray, owner: dict,
                frames: int, shape: Segmentation) -> Optional[tuple[int, int]]:
    """The key window's local speaker (with a voice) heard alone on the most of the same frames
    as local speaker `s` of window `w`, when that is at least half of `s`'s lone frames in the two
    windows' common stretch and MIN_FRAMES; else None."""
    reach = shape.window // shape.shift + 1
    best, best_frames = None, 0
    mine = alone[w, :, s]
    for k in range(max(0, w - reach), min(len(keys), w + reach + 1)):
        if not keys[k]:
            continue
        shift = int(first[k] - first[w])  # frame f of w is frame f - shift of k
        lo, hi = max(0, shift), min(frames, frames + shift)
        if hi <= lo:
            continue
        common = mine[lo:hi]
        for t in range(alone.shape[2]):
            if (k, t) not in owner:
                continue
            both = int((common & alone[k, lo - shift:hi - shift, t]).sum())
            if both > best_frames and both >= MIN_FRAMES and 2 * both >= int(common.sum()):
                best, best_frames = (k, t), both
    return best


def _lone_samples(samples: np.ndarray, active: np.ndarray, offset: int, shape: Segmentation) -> np.ndarray:
    """The samples of a local speaker's lone speech in one window, one stretch after another, cut
    where sherpa-onnx cuts them (frame k at k / frames of the window)."""
    frames = len(active)
    edges = np.flatnonzero(np.diff(np.concatenate(([0], active.astype(np.int8), [0]))))
    pieces = []
    for a, b in zip(edges[::2], edges[1::2]):
        end_frame = b if b < frames else frames - 1
        start = int(np.float32(a) / np.float32(frames) * np.float32(shape.window)) + offset
        end = int(np.float32(end_frame) / np.float32(frames) * np.float32(shape.window)) + offset
        end = min(end, len(samples))
        if end > start:
            pieces.append(samples[start:end])
    return np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.float32)


def _speakers_per_frame(labels: np.ndarray, first: np.ndarray, total: int) -> np.ndarray:
    count, weight = np.zeros(total, dtype=np.float32), np.zeros(total, dtype=np.float32)
    frames = labels.shape[1]
    sums = labels.sum(axis=2)
    for w in range(len(labels)):
        count[first[w]:first[w] + frames] += sums[w]
        weight[first[w]:first[w] + frames] += 1
    return (count / (weight + np.float32(1e-12)) + np.float32(0.5)).astype(np.int32)


def _top(count: np.ndarray, per_frame: np.ndarray) -> np.ndarray:
    """Each frame's `per_frame` speakers with the most votes."""
    order = np.argsort(-count, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(count.shape[1])[None, :], axis=1)
    return (ranks < per_frame[:len(count), None]).astype(np.int8)


def _turns(final: np.ndarray, shape: Segmentation, min_on: float, min_off: float) -> list[tuple[float, float, int]]:
    """Frames to turns as sherpa-onnx makes them: a frame's time from the receptive field, one
    speaker's turns less than `min_off` apart joined, turns of `min_on` or less dropped."""
    scale = shape.frame_shift / shape.rate
    offset = 0.5 * shape.frame_size / shape.rate
    out = []
    last = len(final) - 1
    for speaker in range(final.shape[1]):
        active = final[:, speaker] > 0
        edges = np.flatnonzero(np.diff(np.concatenate(([0], active.astype(np.int8), [0]))))
        runs = []
        for a, b in zip(edges[::2], edges[1::2]):
            end = b if b <= last else last
            runs.append([a * scale + offset, end * scale + offset])
        joined: list[list[float]] = []
        for start, end in runs:
            if joined and start > joined[-1][1] and joined[-1][1] + min_off >= start:
                joined[-1][1] = end
            else:
                joined.append([start, end])
        out += [(start, end, speaker) for start, end in joined if end - start > min_on]
    return out
