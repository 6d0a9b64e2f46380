"""The benchmarks' one way of printing a table: a column per key, padded to the widest value."""

from __future__ import annotations

from typing import Optional


def table(rows: list[dict], title: Optional[str] = None) -> None:
    if title:
        print(f"\n{title}")
    keys = list(rows[0])
    widths = [max(len(k), *(len(str(r[k])) for r in rows)) for k in keys]
    print("  ".join(k.ljust(w) for k, w in zip(keys, widths)))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(str(r[k]).ljust(w) for k, w in zip(keys, widths)), flush=True)
