"""Timing statistics and the markdown tables every benchmark prints."""

from __future__ import annotations

import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    """Latency statistics of one measured operation, in milliseconds."""

    p50: float
    p95: float
    mean: float
    n: int

    @classmethod
    def of(cls, seconds: Sequence[float]) -> Timing:
        ms = sorted(s * 1000 for s in seconds)
        return cls(
            p50=_quantile(ms, 0.50), p95=_quantile(ms, 0.95), mean=statistics.fmean(ms), n=len(ms)
        )


def _quantile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile of already sorted values."""
    if not sorted_values:
        return float("nan")
    position = (len(sorted_values) - 1) * q
    low = int(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def print_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """A markdown table, columns padded to their widest cell."""
    cells = [[str(h) for h in headers]] + [[_cell(v) for v in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        return (
            "| "
            + " | ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
            + " |"
        )

    print()
    print(title)
    print()
    print(line(cells[0]))
    print(
        "|"
        + "|".join("-" * (w + 2) if i == 0 else "-" * (w + 1) + ":" for i, w in enumerate(widths))
        + "|"
    )
    for row in cells[1:]:
        print(line(row))
    sys.stdout.flush()


def _cell(value: object) -> str:
    if isinstance(value, float):
        if value != value:  # NaN
            return "-"
        return f"{value:,.1f}" if abs(value) >= 100 else f"{value:.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)
