"""How a stage says how far it is: one progress hook for every stage (a bar in the terminal, or a
function the workspace's queue gives the run), with figures as a person reads them."""

from __future__ import annotations

from typing import Any, Callable, Optional, Union

from tqdm.auto import tqdm

# Told (what the stage is doing, done, total) as the stage's work goes on, in the stage's own unit
# (seconds of recording, phrases, windows, tokens). It may raise to stop the run there: the
# workspace's Cancel does, so a long transcription stops within its next step.
Hook = Callable[[str, float, float], None]
# What a stage is given: True, a bar in the terminal; a Hook, told instead; False, nothing said.
Progress = Union[bool, Hook]


class Bar:
    """A stage's progress: a tqdm bar when `progress` is True, the hook told the same counts when
    it is a Hook, nothing when False. Used as tqdm is (update, n, total, close)."""

    def __init__(self, progress: Progress, total: float, desc: str, unit: str = "it", leave: bool = False):
        self.desc = desc
        self.hook: Optional[Hook] = progress if callable(progress) else None
        self.shown = tqdm(total=total, desc=desc, unit=unit, leave=leave) if progress is True else None
        self._n, self._total = 0, total  # whole counts stay whole ("80/80", not "80/80.0")

    @property
    def n(self) -> float:
        return self._n

    @n.setter
    def n(self, value: float) -> None:
        self._n = value
        if self.shown is not None:
            self.shown.n = value
            self.shown.refresh()
        self._tell()

    @property
    def total(self) -> float:
        return self._total

    @total.setter
    def total(self, value: float) -> None:
        self._total = value
        if self.shown is not None:
            self.shown.total = value

    def update(self, amount: float = 1) -> None:
        self._n += amount
        if self.shown is not None:
            self.shown.update(amount)
        self._tell()

    def note(self, text: str) -> None:
        """A few words beside the bar (the terminal's only)."""
        if self.shown is not None:
            self.shown.set_postfix_str(text, refresh=False)

    def close(self) -> None:
        if self.shown is not None:
            self.shown.close()

    def _tell(self) -> None:
        if self.hook is not None:
            self.hook(self.desc, self._n, self._total)

    def __enter__(self) -> "Bar":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def advance_to(bar: Any, seconds: float) -> None:
    """Move a bar counted in seconds up to `seconds`, rounded to a tenth (adding float steps to a
    bar shows 30.999999999999996/42.0)."""
    if bar is not None and seconds > bar.n:
        bar.n = round(seconds, 1)
