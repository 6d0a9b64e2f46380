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
from igot.workspace.guard import DEFAULT_PORT

if TYPE_CHECKING:
    from igot.workspace.tags import Quote


def add_parsers(sub, out_dir: Path) -> None:
    """The `serve` and `tags` commands; `out_dir`: the CLI's default output folder."""
    s = sub.add_parser("serve", help="the research workspace: watch, highlight and tag every interview in your browser")
    s.add_argument("--out", type=Path, default=out_dir, help=f"library folder (default: {out_dir})")
    s.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default: {DEFAULT_PORT}; with --team 8443)")
    s.add_argument("--no-browser", dest="browser", action="store_false", help="do not open the browser")
    s.add_argument("--no-llm", dest="llm", action="store_false", help="Ask shows the phrases alone, with no written answer")
    s.add_argument("--device", default=DEFAULTS.device, help=f"{', '.join(DEVICES)} (or cuda:N): where the interviews added "
                   "are made and the search's and Ask's models run")
    add_run_options(s, workspace=True)  # igot run's: how the interviews added from the page are made
    team = s.add_argument_group("a team's server (README: a team server)")
    team.add_argument("--team", action="store_true", help="serve the library to a team: people sign in (igot people add), "
                      "each with a role checked on every request")
    team.add_argument("--no-embedded-worker", dest="embedded_worker", action="store_false",
                      help="with --team: this server makes no interviews itself; workers (igot worker) take the queue's jobs")
    team.add_argument("--host", default="127.0.0.1", help="with --team: the address to listen on, such as 0.0.0.0 for "
                      "every network (default: 127.0.0.1, this computer only)")
    team.add_argument("--tls-cert", type=Path, help="with --team: the HTTPS certificate (PEM) for this machine's name")
    team.add_argument("--tls-key", type=Path, help="with --team: the certificate's private key (PEM)")
    team.add_argument("--behind-proxy", metavar="PROXY_ADDRESS", nargs="?", const="127.0.0.1",
                      help="with --team: a reverse proxy at this address (default 127.0.0.1) does HTTPS in front of iGot")
    team.add_argument("--public-url", help="with --team: the address people open, such as https://igot.example.com")
    team.add_argument("--oidc-issuer", help="with --team: sign in with your company's identity provider (OpenID Connect), "
                      "such as https://accounts.google.com")
    team.add_argument("--oidc-client-id", help="with --oidc-issuer: this server's client id at the provider")
    team.add_argument("--oidc-client-secret-file", type=Path, help="with --oidc-issuer: a file holding the client secret "
                      "(a file, so the secret is not in the shell's history or the process list)")
    team.add_argument("--oidc-domain", action="append", default=[], metavar="DOMAIN",
                      help="with --oidc-issuer: an e-mail domain allowed to sign in, such as example.com (repeat for more)")
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
        if args.command == "serve" and args.team:
            from igot.workspace import team_server

            settings = serve_settings(args)
            where = team_server.address(args.host, args.port if args.port != DEFAULT_PORT else team_server.DEFAULT_PORT,
                                        args.tls_cert, args.tls_key, args.behind_proxy, args.public_url)
            team_server.serve_team(args.out, where, oidc_from(args), run_options=settings["run_options"],
                                   embedded_worker=args.embedded_worker)
            return 0
        if args.command == "serve":
            from igot.workspace import server

            if args.host != "127.0.0.1" or args.tls_cert or args.behind_proxy or args.oidc_issuer \
                    or not args.embedded_worker:
                raise IgotError("--host, --tls-cert, --behind-proxy, --oidc-issuer and --no-embedded-worker are for a "
                                "team's server.",
                                "Add --team (people then sign in), or leave them out (this computer only).")
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


def oidc_from(args: argparse.Namespace):
    """The identity provider `igot serve --team` signs people in with, or None (passwords only)."""
    if not args.oidc_issuer:
        if args.oidc_client_id or args.oidc_domain or args.oidc_client_secret_file:
            raise IgotError("--oidc-client-id, --oidc-client-secret-file and --oidc-domain need --oidc-issuer.",
                            "Give the provider's address with --oidc-issuer, or leave them out.")
        return None
    from igot.team.oidc import Oidc, OidcSettings

    if not args.oidc_client_id or not args.oidc_client_secret_file:
        raise IgotError("Signing in with an identity provider needs this server's client id and secret.",
                        "Give --oidc-client-id and --oidc-client-secret-file (register iGot at the provider first).")
    try:
        secret = args.oidc_client_secret_file.read_text(encoding="utf-8").strip()
    except OSError as err:
        raise IgotError(f"The client secret file {args.oidc_client_secret_file} cannot be read ({err.strerror or err}).",
                        "Give the file the provider's client secret is in.") from None
    settings = OidcSettings(args.oidc_issuer, args.oidc_client_id, secret, tuple(d.lower() for d in args.oidc_domain))
    settings.check()
    return Oidc(settings)


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
