"""Topics in natural order: numbers by their value ("2" before "10"), other text by its characters ("T2" before "T10").

Evaluation results hold topics in string order ("1", "10", "11", ..., "2"); what a person reads (a chart's x axis, a
per-topic table) follows the numbers instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_PARTS = re.compile(r"(\d+)")


def natural_key(topic: str) -> tuple[tuple[int, int | str], ...]:
    """A sort key reading each run of digits in `topic` as a number (numbers first, then text, part by part)."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in _PARTS.split(str(topic)) if part != "")


def natural_order(topics: Sequence[str]) -> list[int]:
    """Indices of `topics` in natural order (stable: equal keys keep their order)."""
    return sorted(range(len(topics)), key=lambda i: natural_key(topics[i]))
