"""Who said what: iGot's speakers next to senko alone and the simplest pipeline, on the "tune"
and "check" sides of the dev data (tests/data/recordings/split.json, issue 22's protocol: a
setting is chosen on "tune" and run once on "check").

    python -m benchmarks.speakers_accuracy [--side tune|check|both]
    python -m benchmarks.speakers_accuracy --side tune --sweep 0.3,0.4,0.5  # sherpa-onnx's threshold
    python -m benchmarks.speakers_accuracy --side tune --sweep window_shift=0.1,0.2,0.3  # another of its options
    python -m benchmarks.speakers_accuracy --side tune --sweep embed_every=0,5,10  # each value against the first
    python -m benchmarks.speakers_accuracy --side tune --sweep voices=window,pooled  # CAM++ once, pooled per window
    python -m benchmarks.speakers_accuracy --side tune --sweep voices=window,voices=pooled+threshold=0.4  # options together

Files per side: AMI meeting excerpts (real far-field meetings, reference turns, scored regions),
spliced clips, and every pair of the side's voices in a two-person interview with nothing said
twice (igot_dev/conversations.py side_interviews), English and Portuguese, clean and phone line.

Systems, per file and pooled per set and side:
- senko: `senko.Diarizer(device="cpu", warmup=False, quiet=True).diarize(wav)["merged_segments"]`,
  the library alone with its own defaults; its words each given to the turn that overlaps them
  most (the simplest pipeline).
- iGot: the product (igot.speakers.diarize.diarize, then igot.speakers.phrases.assign_speakers).
- count given: the product told the true number of speakers.
- sherpa-onnx, and sherpa-onnx count given: `--diarizer sherpa-onnx` (igot.speakers.sherpa:
  pyannote's segmentation-3.0 speaker outputs with overlap, CAM++ embeddings, sherpa-onnx's
  clustering and reconstruction), its words through the product's assign_speakers.
- by band, one voice: the diarizer chosen per recording from the audio (issue 40;
  igot.speakers.voices.is_phone_line over the whole recording): sherpa-onnx for a wide-band
  recording; senko (iGot) for one that came through a phone line, unless senko hears one voice
  (or none) there, when sherpa-onnx runs after it (an interview has two people at least).
  "count given": the same by band, each diarizer told the true count. Its turns are the systems'
  own above, so it costs their time plus one pass over the audio. Against today's `auto` (iGot)
  and sherpa-onnx, pooled and per set.
- by band, one voice, rejoined: the same turns, then the product's joining of small speakers to
  the bigger one whose voice they have (igot.speakers.rejoin, count not given; the voice windows
  are the ones a run makes for naming, igot.speakers.voices.heard_windows): `auto` since issue 40.
- With --candidates (for "tune"), the rules it was chosen from: "by band" (no second look on a
  phone line) and "counts differ" (both diarizers on every recording; sherpa-onnx's turns where
  the two find different numbers of speakers, senko's where they agree).
A rule of iGot's own on top of senko is added here as one more system, against iGot, and
stays in the product only if on "check" both pooled differences are better with intervals that
exclude zero (the rules tried so far: docs/findings.md).
Scores: DER with a 0.25 s collar and with none (NIST md-eval definitions, overlap scored),
speakers found / true, and the share of words on the right speaker (best one-to-one mapping).
Words are Whisper base's on the real recordings (true speaker at the word's middle) and the
words said on the simulated ones. "right words no other overlaps": the same, over the words that
no other word shares more than 20 ms with (igot_dev.evaluate.overlapped_words): every word of a
transcript decoded as one stream (Whisper's), the simulated words less those said over another's
(a back-channel inside an answer, the start of a turn before the other has finished). "right
words, Whisper's": over Whisper base's words on every file, as a user's transcript has them; on a
simulated one each is given the speaker of the said word the edit-distance alignment pairs it
with (igot_dev.evaluate.heard_speakers; a word no one said there is left out). The last
table: pooled differences against their baseline with a 95 % bootstrap interval over files (2000
draws, seed 0); then each system's diarization time in seconds per hour of audio (Whisper not
counted), on the machine's cores (2 here).
Per file, "band" is the recording's share of energy above 4.2 kHz among that above 300 Hz
(under igot.speakers.voices.WIDE: a phone line).
With --sweep, only sherpa-onnx runs, once per value given of one of its options
(igot.speakers.sherpa.SherpaOptions; the clustering threshold unless named), count not given:
the value is chosen on "tune" with it, and "check" is run once with the chosen one.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import fields, replace
from pathlib import Path

import numpy as np

from igot.asr.transcribe import load_whisper, transcribe
from igot.media.audio import convert_to_wav, wav_duration
from igot.speakers.diarize import diarize, load_diarizer
from igot.speakers.phrases import assign_speakers, speaker_at
from igot.speakers.rejoin import rejoin
from igot.speakers.sherpa import SherpaOptions, diarize_sherpa, load_sherpa
from igot.speakers.voices import heard_windows, is_phone_line, recording_band
from igot.transcript import Phrase, Source, SpeakerTurn, Transcript, Word
from igot_dev.conversations import RECORDINGS, SPLIT, long_interviews, side_interviews, words_to_speakers  # noqa: E402
from igot_dev.evaluate import (diarization_errors, heard_speakers, overlapped_words, read_rttm, read_rttm_files, read_uem,
                                right_speaker_words, speaker_of)


def senko_alone(diarizer, wav: Path) -> list[SpeakerTurn]:
    result = diarizer.diarize(str(wav))
    return [SpeakerTurn(s["speaker"], float(s["start"]), float(s["end"])) for s in (result or {}).get("merged_segments", [])]


def senko_runs_here() -> bool:
    """senko's own diarize() extracts features with its C++ library, which dies of an illegal
    instruction on CPUs without AVX-512 (docs/findings.md, "Speaker features in numpy"); iGot's
    turns are senko's own turn for turn (tests/test_diarize.py), so there "iGot" stands for it."""
    try:
        return "avx512f" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return True


def words_by_overlap(words: list[Word], turns: list[SpeakerTurn]) -> list[Word]:
    """The simplest pipeline: each word to the speaker who overlaps it most."""
    turns = sorted(turns, key=lambda t: t.start)
    starts, reach, latest = [t.start for t in turns], [], 0.0
    for t in turns:
        latest = max(latest, t.end)
        reach.append(latest)
    return [Word(w.text, w.start, w.end, speaker=speaker_at(turns, starts, reach, w.start, w.end)) for w in words]


def rejoined(words: list[Word], turns: list[SpeakerTurn], wav: Path, diarizer) -> tuple[list[Word], list[SpeakerTurn]]:
    """`words` with their speakers as a run gives them when the count is not given (assigned,
    then small speakers joined to the one whose voice they have: igot.speakers.rejoin), and the
    turns with the joined speakers' labels made one (for DER)."""
    plain = [Word(w.text, w.start, w.end) for w in words]
    t = assign_speakers(Transcript(Source("interview"), "en", phrases=[Phrase("", 0, 0, "", words=plain)]), turns)
    t = rejoin(t, heard_windows(t, wav, diarizer))
    said = {(w.start, w.end, w.text): w.speaker for p in t.phrases for w in p.words}
    return [Word(w.text, w.start, w.end, speaker=said[(w.start, w.end, w.text)]) for w in words], t.turns


def score(f: dict, turns: list[SpeakerTurn], assign) -> dict:
    found = assign(f["words"], turns)
    right = right_speaker_words([w.speaker for w in found], f["true"])
    alone = [not o for o in overlapped_words(f["words"])]
    heard = right_speaker_words([w.speaker for w in assign(f["heard"], turns)], f["heard true"])
    return {"der25": diarization_errors(f["truth"], turns, f["uem"], collar=0.25),
            "der0": diarization_errors(f["truth"], turns, f["uem"], collar=0.0),
            "found": len({t.speaker for t in turns}), "true": len({t.speaker for t in f["truth"]}),
            "right": sum(right), "words": len(right),
            # the words no other word overlaps: all of a Whisper transcript's, not a simulated
            # back-channel said over an answer (igot_dev.evaluate.overlapped_words)
            "right alone": sum(r and a for r, a in zip(right, alone)), "words alone": sum(alone),
            "right heard": sum(heard), "words heard": len(heard)}


def whisper_words(f: dict, whisper) -> dict:
    """A simulated file with Whisper base's words beside the words said: "heard", each with the
    speaker of the said word it is aligned with ("heard true"; igot_dev.evaluate.heard_speakers),
    the words no one said there left out, as a real recording's words are scored."""
    language = f["name"][:2]  # a simulated interview's name starts with its language: "pt-phone ..."
    heard = transcribe(f["wav"], whisper, language=language, progress=False).words
    true = heard_speakers(f["words"], f["true"], heard)
    return f | {"heard": [w for w, s in zip(heard, true) if s is not None], "heard true": [s for s in true if s is not None]}


def long_files(side: str, whisper, work: Path):
    """One side's long simulated interviews (igot_dev.conversations.long_interviews), as dev_files."""
    for name, c, wav in long_interviews(whisper, side, work):
        yield whisper_words({"set": "long-" + name.split(" ")[0], "name": name, "wav": wav, "truth": c.turns, "uem": None,
                             "words": [Word(w.text, w.start, w.end) for w in c.words], "true": [w.speaker for w in c.words]},
                            whisper)


def dev_files(side: str, whisper, work: Path):
    """Each file of one side: set, name, wav, truth, scored regions, scored words and their true
    speakers, every word of the transcript."""
    truth_all, uem_all = read_rttm_files(RECORDINGS / "ami_meetings/trn.rttm"), read_uem(RECORDINGS / "ami_meetings/trn.uem")
    real = [("ami", name, RECORDINGS / f"ami_meetings/{name}.flac", truth_all.get(name, []), uem_all.get(name))
            for name in SPLIT[side]["ami"]]
    real += [("spliced", Path(name).name, RECORDINGS / f"{name}.flac", read_rttm(RECORDINGS / f"{name}.DERIVED.rttm"), None)
             for name in SPLIT[side]["spliced"]]
    for kind, name, flac, truth, uem in real:
        wav = work / f"{name}.wav"
        convert_to_wav(flac, wav)
        words = transcribe(wav, whisper, language="en", progress=False).words
        kept = [(w, speaker_of(truth, (w.start + w.end) / 2)) for w in words]
        kept = [(w, s) for w, s in kept if s is not None]
        words, true = [w for w, _ in kept], [s for _, s in kept]
        yield {"set": kind, "name": name, "wav": wav, "truth": truth, "uem": uem, "words": words, "true": true,
               "heard": words, "heard true": true}  # a real recording's words are Whisper's already
    for name, c, wav in side_interviews(whisper, side, work):
        words = [Word(w.text, w.start, w.end) for w in c.words]
        yield whisper_words({"set": "sim-" + name.split(" ")[0], "name": name, "wav": wav, "truth": c.turns, "uem": None,
                             "words": words, "true": [w.speaker for w in c.words]}, whisper)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", choices=("tune", "check", "both"), default="both")
    parser.add_argument("--sweep", help="sherpa-onnx alone, one run per value: [OPTION=]V1,V2,... or OPTION=V+OPTION=V,... (an option of "
                        "SherpaOptions, the clustering threshold unless named; choose on tune)")
    parser.add_argument("--candidates", action="store_true", help="the other per-recording rules too (choose on tune)")
    parser.add_argument("--long", action="store_true", help="the side's long simulated interviews instead "
                        "(igot_dev.conversations.LONG_INTERVIEWS, 20-40 min): iGot, sherpa-onnx and the rule, count not given")
    args = parser.parse_args()
    diarizer = load_diarizer("cpu")  # the same object as senko.Diarizer(device="cpu", warmup=False, quiet=True)
    sherpa = load_sherpa()
    whisper = load_whisper("bundled:base", "faster-whisper", "cpu")
    work = Path(tempfile.mkdtemp(prefix="igot-speakers-"))
    sweep = {label: load_sherpa(options) for label, options in swept(sherpa.options, args.sweep).items()} if args.sweep else None
    alone = senko_runs_here()
    if not alone:
        print("senko alone left out: its C++ features need AVX-512; iGot's turns are senko's own.\n")
    for side in ("tune", "check") if args.side == "both" else (args.side,):
        rows = []  # (file, {system: scores})
        seconds: dict[str, float] = {}  # system -> time spent diarizing
        audio = 0.0
        for f in (long_files if args.long else dev_files)(side, whisper, work):
            started = time.perf_counter()
            count = max(1, len({t.speaker for t in f["truth"]}))
            audio += wav_duration(f["wav"])
            if sweep:
                runs = {label: (lambda d=swept_diarizer: diarize_sherpa(f["wav"], d), words_to_speakers)
                        for label, swept_diarizer in sweep.items()}
            elif args.long:  # senko alone is iGot's turns (tests/test_diarize.py); the counts given left out for time
                runs = {"iGot": (lambda: diarize(f["wav"], diarizer), words_to_speakers),
                        "sherpa-onnx": (lambda: diarize_sherpa(f["wav"], sherpa), words_to_speakers)}
            else:
                runs = {"senko": (lambda: senko_alone(diarizer, f["wav"]), words_by_overlap)} if alone else {}
                runs |= {"iGot": (lambda: diarize(f["wav"], diarizer), words_to_speakers),
                        "count given": (lambda: diarize(f["wav"], diarizer, num_speakers=count), words_to_speakers),
                        "sherpa-onnx": (lambda: diarize_sherpa(f["wav"], sherpa), words_to_speakers),
                        "sherpa-onnx count given": (lambda: diarize_sherpa(f["wav"], sherpa, num_speakers=count), words_to_speakers)}
            systems, found, spent = {}, {}, {}
            for name, (run, assign) in runs.items():
                begun = time.perf_counter()
                found[name] = run()
                spent[name] = time.perf_counter() - begun
                systems[name] = score(f, found[name], assign)
            if not sweep:
                for name, (turns, used) in per_recording(f, found, spent, args.candidates).items():
                    spent[name] = used
                    systems[name] = score(f, turns, words_to_speakers)
                    if name == "by band, one voice":
                        begun = time.perf_counter()
                        words, joined = rejoined(f["words"], turns, f["wav"], diarizer)
                        spent[REJOINED] = used + time.perf_counter() - begun
                        # Whisper's words of a simulated file are joined on their own transcript, as a run would
                        systems[REJOINED] = score(f, joined, lambda scored, _: words if scored is f["words"]
                                                  else rejoined(scored, turns, f["wav"], diarizer)[0])
            for name, used in spent.items():
                seconds[name] = seconds.get(name, 0.0) + used
            rows.append((f, systems))
            print(f"  {side} {f['set']} {f['name']}: {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
        print(f"## {side}\n")
        if sweep:
            print_pooled(rows)
            print()
            labels = list(sweep)
            print_differences(rows, [(label, labels[0]) for label in labels[1:]])  # each value against the first given
            print()
            print_speed(seconds, audio)
            continue
        print_files(rows)
        print()
        print_pooled(rows)
        print()
        senko = "senko" if "senko" in rows[0][1] else "iGot"
        print_differences(rows, [(a, b) for a, b in [("iGot", "senko")] * (senko == "senko") + [
            ("count given", senko), ("sherpa-onnx", senko), ("sherpa-onnx count given", "count given")]
            + [(rule, against) for rule in rules(rows) for against in AGAINST[rule]] if {a, b} <= set(rows[0][1])])
        print()
        for rule in rules(rows):
            for against in AGAINST[rule]:
                if against in rows[0][1]:
                    print_set_differences(rows, rule, against)
                    print()
        print_speed(seconds, audio)
        print()


def swept(options: SherpaOptions, spec: str) -> dict[str, SherpaOptions]:
    """--sweep's runs, by label: "0.4,0.5" (the clustering threshold), "window_shift=0.1,0.2" (a bare
    value is for the option named last), or "voices=window,voices=pooled+threshold=0.4" (several
    options at once, joined by +)."""
    known = {f.name for f in fields(options)}
    runs, name = {}, "threshold"
    for item in spec.split(","):
        changed = {}
        for part in item.split("+"):
            key, _, value = part.rpartition("=")
            name = key or name
            if name not in known:
                raise SystemExit(f"--sweep: sherpa-onnx has no option {name!r} (SherpaOptions: {', '.join(sorted(known))})")
            kind = type(getattr(options, name))
            changed[name] = value if kind is str else kind(float(value))
        runs[", ".join(f"{key} {value}" for key, value in changed.items())] = replace(options, **changed)
    return runs


# The rule chosen on "tune" (2026-11-27) first, with the count given beside it; then the candidates
# it was chosen from (--candidates).
RULES = ("by band, one voice", "by band, one voice, count given", "by band", "counts differ")
REJOINED = "by band, one voice, rejoined"  # `auto` since issue 40: the rule, then igot.speakers.rejoin
# Each against today's `auto` (senko's pipeline) and sherpa-onnx, told the count or not as it is.
AGAINST = {"by band, one voice": ("iGot", "sherpa-onnx"), "by band, one voice, count given": ("count given", "sherpa-onnx count given"),
           "by band": ("iGot", "sherpa-onnx"), "counts differ": ("iGot", "sherpa-onnx"),
           REJOINED: ("by band, one voice", "sherpa-onnx")}


def rules(rows) -> list[str]:
    """The per-recording rules this run scored."""
    return [r for r in (*RULES, REJOINED) if r in rows[0][1]]


def per_recording(f: dict, found: dict, spent: dict, candidates: bool) -> dict[str, tuple[list[SpeakerTurn], float]]:
    """The per-recording rules: each one's turns (those of the diarizer it picks, already found
    above) and its time (the band measure plus the diarizers it needed)."""
    begun = time.perf_counter()
    above, energy = recording_band(f["wav"])
    f["band"] = above / max(energy, 1e-12)
    band = time.perf_counter() - begun
    phone = is_phone_line(above, energy)
    voices = {name: len({t.speaker for t in found[name]}) for name in ("iGot", "sherpa-onnx")}
    one = phone and voices["iGot"] <= 1  # on a phone line senko heard one voice (or none): sherpa-onnx after it
    rules = {"by band, one voice": (found["sherpa-onnx"] if one or not phone else found["iGot"],
                                    band + spent["iGot"] * phone + spent["sherpa-onnx"] * (one or not phone))}
    if "count given" in found:
        rules["by band, one voice, count given"] = (found["count given"], band + spent["count given"]) if phone \
            else (found["sherpa-onnx count given"], band + spent["sherpa-onnx count given"])
    if candidates:
        rules["by band"] = (found["iGot"], band + spent["iGot"]) if phone else (found["sherpa-onnx"], band + spent["sherpa-onnx"])
        both = spent["iGot"] + spent["sherpa-onnx"]
        rules["counts differ"] = (found["iGot"] if voices["iGot"] == voices["sherpa-onnx"] else found["sherpa-onnx"], both)
    return rules


def print_speed(seconds: dict[str, float], audio: float) -> None:
    print(f"| system | diarization seconds per hour of audio ({os.cpu_count()} cores; {audio / 60:.1f} min of audio) |")
    print("|---|---|")
    for name, spent in seconds.items():
        print(f"| {name} | {spent / audio * 3600:.0f} |")


def _pool(results: list[dict]) -> dict:
    pooled = {"der25": sum((r["der25"] for r in results[1:]), results[0]["der25"]),
              "der0": sum((r["der0"] for r in results[1:]), results[0]["der0"]),
              **{k: sum(r[k] for r in results) for k in ("right", "words", "right alone", "words alone", "right heard", "words heard")}}
    pooled["exact"] = sum(r["found"] == r["true"] for r in results)
    return pooled


def _cells(r: dict) -> str:
    right = f"{r['right'] / r['words']:.1%}" if r["words"] else "-"
    alone = f"{r['right alone'] / r['words alone']:.1%}" if r["words alone"] else "-"
    heard = f"{r['right heard'] / r['words heard']:.1%}" if r["words heard"] else "-"
    return f"{r['der25'].der:.3f} | {r['der0'].der:.3f} | {right} | {alone} | {heard}"


def print_files(rows) -> None:
    senko = "senko" if "senko" in rows[0][1] else "iGot"
    found = [s for s in [senko] + ["iGot"] * (senko != "iGot") + ["count given", "sherpa-onnx", "sherpa-onnx count given"]
             + rules(rows) if s in rows[0][1]]
    shown = [s for s in [senko] + ["iGot"] * (senko != "iGot") + ["sherpa-onnx", "count given", "sherpa-onnx count given"]
             + rules(rows) if s in rows[0][1]]
    print("| set | file | band | true | " + " | ".join(f"{s} found" for s in found) + " | "
          + " | ".join(f"{s} DER 0.25 / right" for s in shown) + " |")
    print("|---" * (4 + len(found) + len(shown)) + "|")
    for f, r in rows:
        print(f"| {f['set']} | {f['name']} | {f['band']:.4f} | {r[senko]['true']} | " + " | ".join(str(r[s]["found"]) for s in found)
              + " | " + " | ".join(f"{r[s]['der25'].der:.3f} / {r[s]['right']}/{r[s]['words']}" for s in shown) + " |")


def print_pooled(rows, only_all: bool = False) -> None:
    systems = list(rows[0][1])
    print("| set | files | system | DER 0.25 | DER 0 | right words | right words no other overlaps | right words, Whisper's | exact count |")
    print("|---|---|---|---|---|---|---|---|---|")
    for kind in ([] if only_all else sorted({f["set"] for f, _ in rows})) + ["all"]:
        chosen = [r for f, r in rows if kind in ("all", f["set"])]
        for s in systems:
            p = _pool([r[s] for r in chosen])
            print(f"| {kind} | {len(chosen)} | {s} | {_cells(p)} | {p['exact']}/{len(chosen)} |")


def bootstrap(rows, a: str, b: str, draws: int = 2000, seed: int = 0):
    """Pooled (a - b) in DER 0.25 and in right words, with 95 % intervals over files drawn with replacement."""
    per = np.array([[r[s]["der25"].missed + r[s]["der25"].false_alarm + r[s]["der25"].confusion for s in (a, b)]
                    + [r[a]["der25"].speech, r[a]["right"], r[b]["right"], r[a]["words"]] for _, r in rows])

    def diffs(m):
        der = (m[:, 0].sum() - m[:, 1].sum()) / max(m[:, 2].sum(), 1e-9)
        right = (m[:, 3].sum() - m[:, 4].sum()) / max(m[:, 5].sum(), 1)
        return der, right

    rng = np.random.default_rng(seed)
    drawn = np.array([diffs(per[rng.integers(0, len(per), len(per))]) for _ in range(draws)])
    return diffs(per), np.percentile(drawn, [2.5, 97.5], axis=0)


def print_differences(rows, pairs) -> None:
    print("| system | against | DER 0.25 difference [95 %] | right words difference [95 %] | verdict |")
    print("|---|---|---|---|---|")
    for a, b in pairs:
        (der, right), ((der_lo, right_lo), (der_hi, right_hi)) = bootstrap(rows, a, b)
        better = der_hi < 0 and right_lo > 0
        print(f"| {a} | {b} | {der:+.3f} [{der_lo:+.3f}, {der_hi:+.3f}] | {right:+.1%} [{right_lo:+.1%}, {right_hi:+.1%}] | "
              f"{'better on both' if better else 'not better on both'} |")


def print_set_differences(rows, a: str, b: str) -> None:
    """(a - b) per set and pooled, with 95 % intervals over the set's files (a set of one file
    has no interval to speak of: it shows its one difference twice)."""
    print(f"| set | files | {a} against {b}: DER 0.25 difference [95 %] | right words difference [95 %] | worse beyond the noise |")
    print("|---|---|---|---|---|")
    for kind in sorted({f["set"] for f, _ in rows}) + ["all"]:
        chosen = [(f, r) for f, r in rows if kind in ("all", f["set"])]
        (der, right), ((der_lo, right_lo), (der_hi, right_hi)) = bootstrap(chosen, a, b)
        worse = [what for what, bad in (("DER", der_lo > 0), ("right words", right_hi < 0)) if bad]
        print(f"| {kind} | {len(chosen)} | {der:+.3f} [{der_lo:+.3f}, {der_hi:+.3f}] | {right:+.1%} [{right_lo:+.1%}, {right_hi:+.1%}] | "
              f"{', '.join(worse) or 'no'} |")


if __name__ == "__main__":
    main()
