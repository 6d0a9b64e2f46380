"""One error type for everything a user can fix: what went wrong, and what to do."""

# iGot's name on PyPI ("igot" there is another project); the import name stays `igot`.
DISTRIBUTION = "igot-interviews"


def install_hint(extra: str = "") -> str:
    """The pip command that installs iGot with `extra` ("" for iGot itself, upgraded)."""
    return f"pip install '{DISTRIBUTION}[{extra}]'" if extra else f"pip install -U {DISTRIBUTION}"


class IgotError(Exception):
    """A problem with the user's input or set-up. The CLI prints it as one line, no traceback."""

    def __init__(self, problem: str, fix: str = ""):
        self.problem = problem
        self.fix = fix
        super().__init__(f"{problem} {fix}".strip())
