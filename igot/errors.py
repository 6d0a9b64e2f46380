"""One error type for everything a user can fix: what went wrong, and what to do."""


class IgotError(Exception):
    """A problem with the user's input or set-up. The CLI prints it as one line, no traceback."""

    def __init__(self, problem: str, fix: str = ""):
        self.problem = problem
        self.fix = fix
        super().__init__(f"{problem} {fix}".strip())
