"""Progress bars measured in seconds of recording, with figures as a person reads them."""

from __future__ import annotations

from typing import Any


def advance_to(bar: Any, seconds: float) -> None:
    """Move a tqdm bar counted in seconds up to `seconds`, rounded to a tenth (adding float
    steps to a bar shows 30.999999999999996/42.0)."""
    if bar is not None and seconds > bar.n:
        bar.n = round(seconds, 1)
        bar.refresh()
