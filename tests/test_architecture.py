"""The house rules a reader relies on: no module of igot imports itself round a circle, and no
`_private` name of an igot module is used outside that module (by igot, tests, benchmarks or
scripts, igot_dev). Checked on the source text, so it needs none of the optional libraries."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def igot_modules() -> dict[str, Path]:
    found = {}
    for path in sorted((ROOT / "igot").rglob("*.py")):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


def imports(path: Path, modules: dict[str, Path]) -> tuple[set[str], list[tuple[int, str]]]:
    """(igot modules `path` imports anywhere in it, (line, module.name) of each private name it
    takes from another igot module: `from igot.m import _x` or `m._x` with m an igot module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    owner = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
    used, private, aliases = set(), [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "igot":
            if node.module in modules:
                used.add(node.module)
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if full in modules:
                    used.add(full)
                    aliases[alias.asname or alias.name] = full
                elif alias.name.startswith("_") and not alias.name.startswith("__") and node.module != owner:
                    private.append((node.lineno, full))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    used.add(alias.name)
                    aliases[alias.asname or alias.name] = alias.name
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                and node.attr.startswith("_") and not node.attr.startswith("__") and aliases[node.value.id] != owner):
            private.append((node.lineno, f"{aliases[node.value.id]}.{node.attr}"))
    used.discard(owner)
    return used, private


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    found, state = [], {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                found.append(path[path.index(nxt):] + [node, nxt] if nxt in path else [node, nxt])
            elif nxt not in state:
                visit(nxt, path + [node])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return found


def test_no_import_circle_in_igot():
    modules = igot_modules()
    graph = {name: imports(path, modules)[0] for name, path in modules.items()}
    assert circles(graph) == []


def test_no_private_name_used_outside_its_module():
    modules = igot_modules()
    files = list(modules.values()) + [p for folder in ("igot_dev", "tests", "benchmarks", "scripts") for p in sorted((ROOT / folder).rglob("*.py"))]
    found = [f"{path.relative_to(ROOT)}:{line} uses {name}" for path in files for line, name in imports(path, modules)[1]]
    assert found == []


def test_the_checks_see_a_circle_and_a_private_name(tmp_path):
    """The checker itself: a circle of two modules and a private name taken across them."""
    assert circles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) != []
    assert circles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []
    probe = ROOT / "tests" / f"_probe_{tmp_path.name}.py"
    try:
        probe.write_text("from igot.outputs.export import _secret\nimport igot.media.audio as audio\naudio._hidden()\n", encoding="utf-8")
        _, private = imports(probe, igot_modules())
    finally:
        probe.unlink()
    assert private == [(1, "igot.outputs.export._secret"), (3, "igot.media.audio._hidden")]


# The pipeline's order, as the layout shows it: a module imports from its own folder or from a
# folder before it, never from a later stage. The data model (transcript, text, links, errors) and
# runtime (devices, hub, bundled models, files) sit under every stage.
LAYERS = [
    {"igot", "igot.errors", "igot.transcript", "igot.text", "igot.links", "igot.runtime"},
    {"igot.media"},
    {"igot.asr"},
    {"igot.speakers"},
    {"igot.refine"},
    {"igot.summary"},
    {"igot.outputs"},
    {"igot.search"},  # search by meaning over the library the outputs write
    {"igot.pipeline"},
    # the team of a served library: people, sessions, roles, comments (over errors and runtime only)
    {"igot.team"},
    # the research workspace: over the library the outputs write, and a driver of the pipeline
    # (it makes the interviews added from its page, igot.workspace.queue)
    {"igot.workspace", "igot.worker"},  # igot.worker: a team's worker, a driver of the pipeline beside the workspace
    {"igot.cli", "igot.__main__"},
    {"igot.colab"},
]


def layer(module: str) -> int:
    home = ".".join(module.split(".")[:2])
    return next(i for i, names in enumerate(LAYERS) if home in names or module in names)


def backward_imports(graph: dict[str, set[str]]) -> list[str]:
    return sorted(f"{m} imports {u}" for m, used in graph.items() for u in used if layer(u) > layer(m))


def test_top_level_is_the_data_model_and_the_drivers():
    top = sorted(p.stem for p in (ROOT / "igot").glob("*.py"))
    folders = sorted(p.name for p in (ROOT / "igot").iterdir() if (p / "__init__.py").exists())
    assert top == ["__init__", "__main__", "cli", "colab", "errors", "links", "text", "transcript"]
    assert folders == ["asr", "media", "outputs", "pipeline", "refine", "runtime", "search", "speakers", "summary", "team", "worker", "workspace"]


def test_no_stage_imports_a_later_stage():
    modules = igot_modules()
    graph = {name: imports(path, modules)[0] for name, path in modules.items()}
    assert all(layer(m) >= 0 for m in graph)  # every module has a place in LAYERS
    assert backward_imports(graph) == []
    assert backward_imports({"igot.media.source": {"igot.outputs.export"}}) == ["igot.media.source imports igot.outputs.export"]


def test_the_team_package_stands_on_the_data_model_and_runtime_alone():
    """igot.team is the one place for people and sessions: the web routes call it, it calls none
    of them, and it needs only the standard library and argon2 (the `team` extra; Authlib is
    loaded by igot.team.oidc when a server signs people in with an identity provider)."""
    import sys

    modules = igot_modules()
    team = {name: path for name, path in modules.items() if name.startswith("igot.team")}
    used = {u for path in team.values() for u in imports(path, modules)[0]}
    assert {u for u in used if not u.startswith(("igot.team", "igot.errors", "igot.links", "igot.runtime"))} == set()
    outside = set()
    for path in team.values():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 else []
            outside |= {n.split(".")[0] for n in names} - set(sys.stdlib_module_names) - {"igot", "argon2", "__future__"} \
                - ({"authlib", "joserfc"} if path.name == "oidc.py" else set())  # the `team` extra, for OpenID Connect
    assert outside == set()
