"""Filling the Colab notebook's form fields, for the notebook test and scripts/run_notebook.py."""

from __future__ import annotations

import re


def fill_form(nb, **values) -> None:
    """Set form fields (`name = value  #@param …`) the way a user types into them."""
    for name, value in values.items():
        pattern = re.compile(rf"^{name} = .*?(  #@param.*)$", re.M)
        cells = [c for c in nb.cells if c.cell_type == "code" and pattern.search(c.source)]
        assert len(cells) == 1, f"form field {name} not found once"
        cells[0].source = pattern.sub(lambda m: f"{name} = {value!r}{m.group(1)}", cells[0].source)
