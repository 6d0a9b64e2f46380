"""`igot serve` (the workspace) and `igot tags` (list the library's tags, rename or merge one, export
one's quotes) in a terminal."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from igot.errors import IgotError
from igot.pipeline import DEVICES, check_options
from igot.pipeline.flags import DEFAULTS, add_run_options, run_options_from
from igot.text import shown

if TYPE_CHECKING:
    from igot.workspace.tags import Quote


def add_parsers(sub, out_dir: Path) -> None:
    """The `serve` and `tags` commands; `out_dir`: the CLI's default output folder."""
    s = sub.add_parser("serve", help="the research workspace: watch, highlight and tag every interview in your browser")
    s.add_argument("--out", type=Path, default=out_dir, help=f"library folder (default: {out_dir})")
    s.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (default: 8765)")
    s.add_argument("--no-browser", dest="browser", action="store_false", help="do not open the browser")
    s.add_argument("--no-llm", dest="llm", action="store_false", help="Ask shows the phrases alone, with no written answer")
    s.add_argument("--device", default=DEFAULTS.device, help=f"{', '.join(DEVICES)} (or cuda:N): where the interviews added "
                   "are made and the search's and Ask's models run")
    add_run_options(s, workspace=True)  # igot run's: how the interviews added from the page are made
    t = sub.add_parser("tags", help="the tags of the library's highlights; igot tags rename OLD NEW")
    actions = t.add_subparsers(dest="action")
    r = actions.add_parser("rename", help="rename a tag in every interview (a name already used merges the two)")
    r.add_argument("old", help="the tag, as igot tags lists it (any case)")
    r.add_argument("new", help="its new name")
    x = actions.add_parser("export", help="a tag's quotes from every interview, as Markdown (or CSV), to the terminal")
    x.add_argument("tag", help="the tag, as igot tags lists it (any case)")
    x.add_argument("--csv", action="store_true", help="CSV, one row per quote, for a spreadsheet")
    for p in (t, r, x):
        p.add_argument("--out", type=Path, default=out_dir, help=f"library folder (default: {out_dir})")


def run_command(args: argparse.Namespace) -> int:
    try:
        if args.command == "serve":
            from igot.workspace import server

            server.serve(args.out, **serve_settings(args))
            return 0
        return tags_command(args)
    except IgotError as exc:  # it may quote a tag or name from a file
        print("igot: " + shown(str(exc), keep="\n"), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0


def serve_settings(args: argparse.Namespace) -> dict:
    """`igot serve`'s flags as server.serve's settings, checked first: a wrong flag is said now,
    not at each recording the page adds."""
    check_library(args.out)  # before a --glossary is written there
    options = run_options_from(args)
    check_options(options)
    return dict(port=args.port, open_browser=args.browser, embedding_model=args.embedding_model, llm_model=args.llm_model,
                use_llm=args.llm, device=args.device, run_options=options)


def check_library(out: Path) -> None:
    if not out.is_dir():
        raise IgotError(f"No library folder {out}.", "Give the folder iGot wrote the interviews to (--out).")


def tags_command(args: argparse.Namespace) -> int:
    """Every tag, name and note printed comes from files anyone may have written: a control
    character in one is shown escaped (text.shown), never sent to the terminal to act on."""
    from igot.outputs.highlights import clean_tag
    from igot.workspace import tags
    from igot.outputs.store import Library

    check_library(args.out)
    lib = Library(args.out)
    interviews, skipped = lib.listing()
    for s in skipped:
        print(f"igot: {shown(s.line())}", file=sys.stderr)
    if args.action == "rename":
        changed = lib.rename_tag(args.old, args.new)
        if not changed:
            raise IgotError(f"No highlight in {args.out} has the tag '{args.old}'.", "See the tags with: igot tags")
        print(f"'{shown(args.old)}' is now '{shown(clean_tag(args.new))}' in {len(changed)} interview{'s' * (len(changed) != 1)}.")
        return 0
    if args.action == "export":
        found = tags.quotes(interviews, args.tag)
        if not found:
            raise IgotError(f"No highlight in {args.out} has the tag '{args.tag}'.", "See the tags with: igot tags")
        found = [_shown_quote(q) for q in found]
        sys.stdout.write(tags.quotes_csv(found) if args.csv else tags.quotes_markdown(shown(args.tag), found))
        return 0
    rows = tags.board(interviews)
    if not rows:
        print(f"No highlights in {args.out} yet: open the workspace (igot serve) and highlight what matters.")
        return 0
    names = [shown(r.tag) for r in rows]
    width = max(len(name) for name in names)
    print(f"{'tag':<{width}}  highlights  interviews  people")
    for name, r in zip(names, rows):
        print(f"{name:<{width}}  {r.highlights:>10}  {r.interviews:>10}  {r.people:>6}")
    return 0


def _shown_quote(q: Quote) -> Quote:
    """A quote with its text fields escaped for a terminal (a note keeps its lines and tabs); the
    escaping is done field by field so the CSV's own line ends stay."""
    return replace(q, tag=shown(q.tag), interview=shown(q.interview), speaker=shown(q.speaker), quote=shown(q.quote),
                   note=shown(q.note, keep="\n\t"), video=shown(q.video) if q.video else q.video)
