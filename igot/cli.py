"""Command line: `igot run SOURCE …`, `igot demo`, `igot index`, `igot search QUERY`, `igot ask QUESTION`,
`igot rename`, `igot voices`, `igot serve` and `igot tags`."""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence

from igot import __version__
from igot.errors import IgotError
from igot.pipeline import DEVICES, OUT_DIR, Models, RunOptions, RunResult, run
from igot.pipeline.flags import DEFAULTS, add_run_options, run_options_from
from igot.links import LocalLinks, is_url
from igot.media.recording import RECORDING_SUFFIXES
from igot.media.source import videos_of
from igot.search.ask import ASK_LIMIT
from igot.search.embed import DEFAULT_EMBEDDING_MODEL
from igot.search.meaning import MEANING_LIMIT
from igot.speakers.phrases import parse_names
from igot.summary.summarize import CPU_LLM, GPU_LLM
from igot.text import format_clock, shown, typed_line
from igot.team.cli import add_people_parser, add_workers_parser, run_people, run_workers
from igot.workspace import commands as workspace_commands
from igot.worker import add_worker_parser, run_worker

if TYPE_CHECKING:
    from igot.transcript import Transcript

DEMO_SAMPLE = Path(__file__).parent / "samples" / "radio_phone_in.flac"
DEMO_VIDEO_URL = "https://github.com/tyiannak/pyAudioAnalysis/raw/master/pyAudioAnalysis/data/diarizationExample.wav"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="igot", description="Interview recordings to speaker-labelled transcripts linked to the video.")
    parser.add_argument("--version", action="version", version=f"igot {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="transcribe interviews: video URLs or local audio/video files, one after another")
    r.add_argument("sources", nargs="+", metavar="source",
                   help="YouTube/Vimeo/any yt-dlp URL, a direct media link, a local file, or a folder of recordings; "
                        "several are one queue (the models load once)")
    r.add_argument("--name", help="interview name (default: the video title or file name)")
    r.add_argument("--language", help="language code such as pt or en (default: detected)")
    r.add_argument("--speakers", type=int, help="how many people speak, if you know it (default: detected); giving it took DER from 0.31 to 0.19 "
                   "and words on the right person from 77 %% to 86 %% on held-out dev recordings")
    r.add_argument("--names", help="speaker names in order of first appearance, 'Ana,Bruno', or 'Speaker 2=Bruno'")
    r.add_argument("--video-url", help="for a local file: the URL where the video lives, so phrases link to it")
    add_run_options(r)  # igot serve's too; its page gives each recording's name, language, speakers and names
    r.add_argument("--gdoc", metavar="FOLDER", help="also make a Google Doc in this Drive folder (path like 'Research/Onboarding', a folder link or ID)")
    r.add_argument("--client-secrets", type=Path, help="OAuth client file for Google sign-in (default ~/.config/igot/client_secret.json)")
    r.add_argument("--no-drive", action="store_true", help="an interview already in Google Drive: leave its Doc and Sheet row as they are")
    _common(r)

    d = sub.add_parser("demo", help="run the whole pipeline on a bundled sample with small offline models")
    _common(d)
    _library_parsers(sub)
    workspace_commands.add_parsers(sub, OUT_DIR)
    add_people_parser(sub, OUT_DIR)
    add_workers_parser(sub, OUT_DIR)
    add_worker_parser(sub)
    return parser


def _library_filters(p) -> None:
    """The library folder and the filters `igot search` and `igot ask` share."""
    p.add_argument("--out", type=Path, default=OUT_DIR, help=f"output folder (default: {OUT_DIR})")
    p.add_argument("--speaker", default="", help="only phrases of speakers whose name contains this")
    p.add_argument("--interview", default="", help="only interviews whose name contains this")


def _library_parsers(sub) -> None:
    i = sub.add_parser("index", help="(re)write OUT/index.html: every interview in the folder, searchable in the browser")
    i.add_argument("--out", type=Path, default=OUT_DIR, help=f"output folder (default: {OUT_DIR})")
    i.add_argument("--words-only", action="store_true", help="do not embed the interviews for search by meaning")
    s = sub.add_parser("search", help="find phrases in every interview of the output folder, by words and by meaning")
    s.add_argument("query", help='words in any order (accents and case don\'t matter), or "an exact phrase" in quotes')
    _library_filters(s)
    s.add_argument("--json", action="store_true", help="hits as JSON, for scripts")
    s.add_argument("--words-only", action="store_true", help="only phrases with the query's words, as before search by meaning")
    s.add_argument("--limit", type=int, default=MEANING_LIMIT, help=f"phrases found by meaning to add (default: {MEANING_LIMIT})")
    a = sub.add_parser("ask", help="ask every interview a question: the phrases that answer it, and the local LLM's answer with checked quotes")
    a.add_argument("question", help="a question in any language, such as 'what did people say about pricing?'")
    _library_filters(a)
    a.add_argument("--tag", default="", help="only phrases inside highlights with this tag (igot tags lists them)")
    a.add_argument("--limit", type=int, default=ASK_LIMIT, help=f"phrases the answer is written from (default: {ASK_LIMIT})")
    a.add_argument("--llm-model", help=f"LLM that writes the answer: hub id, folder or .gguf file (default: {GPU_LLM} on a GPU, {CPU_LLM} on CPU)")
    a.add_argument("--no-llm", dest="llm", action="store_false", help="the phrases alone, no written answer")
    a.add_argument("--device", default="auto", help="cpu, cuda or auto (for the LLM)")
    a.add_argument("--json", action="store_true", help="the answer as JSON, for scripts")
    for p in (i, s, a):
        p.add_argument("--embedding-model", help=f"model for search by meaning: hub id or folder (default: {DEFAULT_EMBEDDING_MODEL})")
    n = sub.add_parser("rename", help="name an interview's speakers again; give two the same name to make them one person")
    n.add_argument("interview", help="the interview: its JSON file, or its name or file name in the output folder")
    n.add_argument("--names", required=True, help="names in order of first appearance, 'Ana,Bruno,Ana', or 'Speaker 3=Ana'")
    n.add_argument("--out", type=Path, default=OUT_DIR, help=f"output folder (default: {OUT_DIR})")
    n.add_argument("--no-drive", action="store_true", help="leave the interview's Google Doc and Sheet row as they are")
    n.add_argument("--client-secrets", type=Path, help="OAuth client file for Google sign-in (default ~/.config/igot/client_secret.json)")
    n.add_argument("--no-voices", dest="voices", action="store_false", help="do not remember the voices of the speakers named")
    w = sub.add_parser("review", help="what to check in an interview: unsure words, speech with no words, phrases that sound like "
                       "another speaker, words close to the glossary")
    w.add_argument("interview", help="the interview: its JSON file, or its name or file name in the output folder")
    w.add_argument("--out", type=Path, default=OUT_DIR, help=f"output folder (default: {OUT_DIR})")
    w.add_argument("--json", action="store_true", help="the items as JSON (kind, start, end, text, speaker, why), for scripts")
    v = sub.add_parser("voices", help="the voices this output folder remembers: list them, forget one, rename one")
    actions = v.add_subparsers(dest="action")
    f = actions.add_parser("forget", help="delete a person's remembered voice (here and in the Drive folders it was copied to)")
    f.add_argument("name", help="the person's name, as igot voices lists it")
    m = actions.add_parser("rename", help="give a remembered person another name (joined with anyone who already has it)")
    m.add_argument("old", help="the name as igot voices lists it")
    m.add_argument("new", help="the new name")
    for p in (v, f, m):
        p.add_argument("--out", type=Path, default=Path("igot-output"), help="output folder (default: igot-output)")
    for p in (f, m):
        p.add_argument("--no-drive", action="store_true", help="change only this folder's copy, not the one in Google Drive")
        p.add_argument("--client-secrets", type=Path, help="OAuth client file for Google sign-in (default ~/.config/igot/client_secret.json)")


def library_command(args: argparse.Namespace) -> int:
    """`igot index` and `igot search`: 0 when done (search: hits found), 1 when nothing matched."""
    from igot.outputs import library
    from igot.search import commands, words

    try:
        if not args.out.is_dir():
            if args.command == "search":
                raise IgotError(f"No output folder {args.out}.", "Give the folder iGot wrote the interviews to (--out).")
            interviews, skipped = [], []
        else:
            interviews, skipped = library.load_library(args.out)
        for s in skipped:
            print(f"igot: {s.line()}", file=sys.stderr)
        if args.command == "index":
            path = library.write_library(args.out, interviews, skipped)
            print(f"Library: {len(interviews)} interviews -> {path}")
            if not args.words_only:
                commands.index_meaning(interviews, args.embedding_model)
            return 0
        if args.words_only:
            hits = words.search(interviews, args.query, speaker=args.speaker, interview=args.interview)
        else:
            hits = commands.search_both(interviews, args.query, args.embedding_model, speaker=args.speaker,
                                        interview=args.interview, limit=args.limit)
    except IgotError as exc:
        print(f"igot: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps([{**asdict(h), "link": h.link} for h in hits], ensure_ascii=False, indent=1))
    else:
        bold = sys.stdout.isatty()
        for h in hits:
            print(words.hit_line(h, bold=bold))
        print(f"{len(hits)} phrase{'s' * (len(hits) != 1)} found.", file=sys.stderr)
    return 0 if hits else 1


def ask_command(args: argparse.Namespace) -> int:
    """`igot ask`: 0 with an answer or phrases, 1 when no phrase answers, 2 on an error."""
    from igot.outputs import library
    from igot.search import ask, commands

    try:
        if not args.out.is_dir():
            raise IgotError(f"No output folder {args.out}.", "Give the folder iGot wrote the interviews to (--out).")
        interviews, skipped = library.load_library(args.out)
        for s in skipped:
            print(f"igot: {s.line()}", file=sys.stderr)
        only = ask.tag_phrases(interviews, args.tag) if args.tag else None
        if only == {}:
            raise IgotError(f"No highlight in {args.out} has the tag '{args.tag}'.", "See the tags with: igot tags")
        embedder, index = commands.meaning_parts(interviews, args.embedding_model)
        phrases = ask.find_phrases(interviews, args.question, embedder, index, speaker=args.speaker,
                                   interview=args.interview, limit=args.limit, only=only)
        llm = commands.llm_for(args.llm_model, args.device) if args.llm and phrases else None
        result = ask.answer(args.question, phrases, interviews, llm)
    except IgotError as exc:
        print(f"igot: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(asdict(result), ensure_ascii=False, indent=1))
    else:
        print("\n".join(ask.answer_lines(result)))
    return 0 if phrases else 1




def rename_command(args: argparse.Namespace) -> int:
    """`igot rename`: the names, the merge of speakers given one name, and every copy updated."""
    from igot.outputs import corrections
    from igot.outputs.store import Library
    from igot.speakers import voices

    read: dict[str, Transcript] = {}

    def make(now: Transcript) -> Transcript:
        # From the file as it is under the library's lock (a workspace correction made meanwhile
        # is kept), the naming kept in its history, so Undo in the workspace takes it back whole.
        read["before"] = now
        return corrections.named(now, names)

    def remembered(named: Transcript):
        # the voices of the people named, from the windows the run kept: naming loads no model
        return voices.after_naming(named, path.parent, path.stem, log=print, replaces=read["before"])

    try:
        names = parse_names(args.names)
        path, _ = read_interview(args.interview, args.out)
        saved = Library(path.parent).change_now(path.stem, make, remembered if args.voices else None,
                                                drive=not args.no_drive, client_secrets=args.client_secrets, log=print)
        before = read["before"]
    except IgotError as exc:
        print(f"igot: {exc}", file=sys.stderr)
        return 2
    t = saved.transcript
    # names of speakers not named now are as the file had them: shown escaped
    print("Speakers: " + shown(", ".join(f"{s.id[1:]} = {t.speaker_name(s.id)}" for s in t.speakers)))
    if len(t.speakers) < len(before.speakers):
        print(f"{len(before.speakers)} speakers, {len(t.speakers)} names: speakers with the same name are now one person.")
    if t.summary:
        print("The summary keeps the names it was written with: igot run again (same options) writes it anew.")
    if saved.doc:
        print(f"Google Doc updated: {saved.doc}")
    if saved.drive_problem:
        print(f"igot: {saved.drive_problem}", file=sys.stderr)
        return 2
    return 0


def voices_command(args: argparse.Namespace) -> int:
    """`igot voices`: the people whose voices the output folder remembers; `forget NAME`,
    `rename OLD NEW`. A change reaches the copies in Google Drive too, or nothing changes."""
    from igot.speakers import voices

    path = voices.voices_path(args.out)
    try:
        remembered = voices.load_voices(args.out)
        if args.action is None:
            if not remembered.people:
                print(f"No voices remembered in {args.out}: naming the speakers of an interview (--names, igot rename, "
                      "the notebook's naming cell) remembers theirs.")
                return 0
            print(f"Voices remembered in {args.out} ({path}):")
            for p in sorted(remembered.people, key=lambda p: p.name.casefold()):
                titles = shown(", ".join(dict.fromkeys(h.title for h in p.heard)))
                print(f"  {shown(p.name)}: {p.seconds:.0f} s of speech, heard in {len(p.heard)} interview"
                      f"{'s' * (len(p.heard) != 1)} ({titles})")
            if remembered.drive:
                print(f"A copy is kept in the .igot folder of {len(remembered.drive)} Google Drive folder"
                      f"{'s' * (len(remembered.drive) != 1)}; forget and rename change it too.")
            return 0
        if args.action == "forget":
            changed, done = voices.forget(remembered, args.name, path), f"Forgot {remembered.find(args.name).name}'s voice."
        else:
            new = typed_line(args.new)  # a person's name, kept without control characters like every name
            changed = voices.rename(remembered, args.old, new, path)
            done = f"{shown(remembered.find(args.old).name)} is now {shown(new)}."
        if changed.drive and not args.no_drive:
            from igot.outputs import gdoc

            try:  # Drive first: when it cannot be changed, nothing is
                service = gdoc.drive_service(gdoc.credentials(args.client_secrets))
                for folder_id in changed.drive:
                    gdoc.put_voices(service, folder_id, changed)
            except IgotError as exc:
                print(f"igot: the copy of the voices in Google Drive could not be changed, so nothing was: {exc} "
                      "To change only this folder's copy, add --no-drive.", file=sys.stderr)
                return 2
        voices.save_voices(args.out, changed)
    except IgotError as exc:
        print(f"igot: {exc}", file=sys.stderr)
        return 2
    print(done + (" The copy in Google Drive is left as it was (--no-drive)." if changed.drive and args.no_drive else ""))
    return 0


def read_interview(text: str, out: Path) -> tuple[Path, Transcript]:
    """The interview `text` names (find_interview) and its transcript; IgotError when unreadable."""
    from igot.transcript import Transcript

    path = find_interview(text, out)
    try:
        return path, Transcript.load(path)
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise IgotError(f"{path} is not an interview iGot can read ({err}).", "Run igot run again on its recording.") from None


def find_interview(text: str, out: Path) -> Path:
    """An interview's JSON: a path to it, or its name (or file name) in the output folder."""
    from igot.outputs import library

    given = Path(text).expanduser()
    if given.suffix == ".json" and given.is_file():
        return given
    interviews = library.load_interviews(out) if out.is_dir() else []
    wanted = " ".join(text.split()).casefold()
    for iv in interviews:
        if wanted in (" ".join(iv.name.split()).casefold(), iv.path.stem.casefold(), iv.path.name.casefold()):
            return iv.path
    names = [iv.name for iv in interviews]
    for_example = f" The interviews there: {', '.join(names[:8])}{'…' if len(names) > 8 else ''}." if names else ""
    raise IgotError(f"No interview '{text}' in {out}.{for_example}",
                    "Give its JSON file, or its name as igot search shows it (--out for another folder).")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", type=Path, default=OUT_DIR, help=f"output folder (default: {OUT_DIR})")
    p.add_argument("--device", default=DEFAULTS.device, help=f"{', '.join(DEVICES)} (or cuda:N)")
    p.add_argument("--force", action="store_true", help="redo every stage instead of reusing finished ones")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--debug", action="store_true", help="show full tracebacks")


def review_command(args: argparse.Namespace) -> int:
    """`igot review`: the interview's Review list, as the workspace shows it; 0 with items or none."""
    from igot.outputs import review
    from igot.outputs.store import Library

    try:
        path, t = read_interview(args.interview, args.out)
        found = review.items(t, Library(path.parent).kept_glossary().terms)
    except IgotError as exc:
        print(f"igot: {exc}", file=sys.stderr)
        return 2
    if args.json:
        keep = ("id", "kind", "start", "end", "text", "speaker", "why", "offer")
        print(json.dumps([{k: item[k] for k in keep} for item in review.as_dicts(found)], ensure_ascii=False, indent=1))
        return 0
    if not found:
        print(f"Nothing left to review in {path.stem}.")
        return 0
    for item in found:
        # words and names come from a file: shown escaped, never sent to the terminal to act on
        said = f" “{item.text}”" if item.text else ""
        print(shown(f"{format_clock(item.start)}  {item.kind:9}  {item.speaker}:{said}  {item.why}"))
    print(review.doubtful_words(found))
    print(f"{len(found)} to review in {path.stem}; fix or accept them in the workspace (igot serve).")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "review":
        return review_command(args)
    if args.command in ("index", "search"):
        return library_command(args)
    if args.command == "ask":
        return ask_command(args)
    if args.command == "rename":
        return rename_command(args)
    if args.command == "voices":
        return voices_command(args)
    if args.command in ("serve", "tags"):
        return workspace_commands.run_command(args)
    if args.command == "people":
        return run_people(args)
    if args.command == "workers":
        return run_workers(args)
    if args.command == "worker":
        return run_worker(args)
    try:
        if args.command == "demo":
            result = demo(args.out, device=args.device, force=args.force, progress=not args.quiet)
        else:
            return run_queue(args, run_command_options(args))
    except IgotError as exc:
        print(f"igot: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("igot: interrupted. Run the same command again to continue where it stopped.", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug, not a user error: say so plainly
        if args.debug:
            traceback.print_exc()
        print(f"igot: unexpected error ({type(exc).__name__}: {exc}). Run again with --debug and report it.", file=sys.stderr)
        return 1
    print(summary_line(result))
    if result.doc and args.command == "run" and args.gdoc:
        print(f"Google Doc: {result.doc}")
    if result.drive_problem:
        print(f"igot: {result.drive_problem}", file=sys.stderr)
        return 2
    return 0 if result.transcript.phrases else 3


ONE_INTERVIEW = ("name", "names", "video_url")  # options that describe one recording


def queued(sources: Sequence[str], allow_local_links: LocalLinks = False) -> list[str]:
    """The recordings `igot run` was given, in order: a folder stands for the recordings in it (A to
    Z), a playlist (or a page with several videos) for its videos (a local one's only when allowed)."""
    out: list[str] = []
    for source in sources:
        folder = Path(source)
        if is_url(source):
            out += [link for link, _ in videos_of(source, allow_local_links)]
        elif "://" not in source and folder.is_dir():
            found = sorted(str(p) for p in folder.iterdir() if p.is_file() and p.suffix.lower() in RECORDING_SUFFIXES)
            if not found:
                raise IgotError(f"The folder {folder} holds no recording ({', '.join(sorted(RECORDING_SUFFIXES))}).",
                                "Give the recordings themselves, or the folder they are in.")
            out += found
        else:
            out.append(source)
    return out


def run_command_options(args: argparse.Namespace) -> RunOptions:
    """`igot run`'s options: the flags it shares with `igot serve` and those of its recordings."""
    return replace(run_options_from(args), name=args.name, language=args.language, speakers=args.speakers,
                   names=parse_names(args.names) if args.names else None, video_url=args.video_url,
                   force=args.force, progress=not args.quiet, client_secrets=args.client_secrets,
                   drive=not args.no_drive, drive_folder=args.gdoc)


def run_queue(args: argparse.Namespace, options: RunOptions) -> int:
    """`igot run` over one or several sources, one after another, the models loaded once (kept
    between recordings; a GPU short of room frees them in order, igot.pipeline.models). A recording
    that fails is said in one line and the queue goes on; the end says which failed (exit 2)."""
    sources = queued(args.sources, options.allow_local_links)
    if len(sources) > 1:
        given = [f"--{o.replace('_', '-')}" for o in ONE_INTERVIEW if getattr(args, o)]
        if given:
            raise IgotError(f"{', '.join(given)} describe{'s' * (len(given) == 1)} one interview, and {len(sources)} were given.",
                            "Run those recordings one at a time with it, or leave it out (each is named by its title or file).")
    models = Models(keep=len(sources) > 1)  # one recording: each model freed once its stage is done
    failed: list[tuple[str, str]] = []
    code = 0
    for n, source in enumerate(sources, 1):
        if len(sources) > 1:
            print(f"igot: [{n} of {len(sources)}] {source}", file=sys.stderr)
        try:
            result = run(source, args.out, options, models=models)
        except IgotError as exc:
            if len(sources) == 1:
                raise
            print(f"igot: {source}: {exc}", file=sys.stderr)
            failed.append((source, str(exc).splitlines()[0]))
            continue
        print(summary_line(result))
        if result.doc and args.gdoc:
            print(f"Google Doc: {result.doc}")
        if result.drive_problem:
            print(f"igot: {result.drive_problem}", file=sys.stderr)
            code = 2
        elif not result.transcript.phrases and len(sources) == 1:
            code = 3
    if failed:
        print(f"igot: {len(failed)} of {len(sources)} recordings failed, the others are in {args.out}:", file=sys.stderr)
        for source, why in failed:
            print(f"  {source}: {why}", file=sys.stderr)
        return 2
    return code


def summary_line(result: RunResult) -> str:
    t = result.transcript
    html = result.files.get("html")
    if not t.phrases:
        return f"No speech found: empty transcript written to {html}." if html else "No speech found: nothing written."
    # Names recognised from remembered voices are shown, so the user sees them before trusting them.
    who = f" ({', '.join(t.speaker_name(s.id) for s in t.speakers)})" if any(s.recognised for s in t.speakers) else ""
    return (
        f"Done: {format_clock(t.duration)} of audio, {len(t.speakers)} speakers{who}, {len(t.phrases)} phrases "
        f"in {result.seconds:.1f} s (real-time factor {result.real_time_factor:.2f}) -> {html}{_untranscribed(t)}"
    )


def _untranscribed(t) -> str:
    """Speech no word covers, said in the last line so that nothing is lost silently."""
    from igot.asr.transcribe import UNTRANSCRIBED, untranscribed_seconds

    missed = untranscribed_seconds(t)
    if not missed:
        return ""
    where = ", ".join(format_clock(h["start"]) for h in t.info[UNTRANSCRIBED][:5])
    more = ", …" if len(t.info[UNTRANSCRIBED]) > 5 else ""
    return f". {missed:.0f} s of speech could not be transcribed (at {where}{more}): listen there"


def demo(out: Path, device: str = "auto", force: bool = False, progress: bool = True,
         models: Optional[Models] = None) -> RunResult:
    """A 42-second radio phone-in with four callers, through the small bundled models."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything the demo needs is on disk
    # No alignment, punctuation, instruction-tuned Gemma or multilingual embedding model ships as a
    # package: the offline demo keeps Whisper's times and punctuation, writes no summary and no meaning index.
    options = RunOptions(
        name="Demo: radio phone-in", language="en", model="bundled:tiny.en", video_url=DEMO_VIDEO_URL,
        word_timing="engine", punctuate=False, summary=False, meaning=False, device=device, force=force, progress=progress,
    )
    return run(str(DEMO_SAMPLE), out, options, models=models)


if __name__ == "__main__":
    sys.exit(main())
