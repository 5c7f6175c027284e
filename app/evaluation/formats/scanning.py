"""What the line-by-line run parsers share: the capped error list, the result of reading a run as far as it goes,
and the readers of one integer or number."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from app.evaluation.errors import FormatError
from app.evaluation.explanations import Explanation
from app.evaluation.records import RunTable


class TooManyErrors(Exception):
    """Raised inside a line-by-line pass once `max_errors` errors are collected."""


class Errors:
    """An error list that stops the pass at `max_errors`."""

    def __init__(self, max_errors: int) -> None:
        self.items: list[tuple[int, str]] = []
        self.max_errors = max(1, max_errors)

    def add(self, line: int, message: str) -> None:
        """Record one error; raise TooManyErrors when the limit is reached."""
        self.items.append((line, message))
        if len(self.items) >= self.max_errors:
            raise TooManyErrors


@dataclass(frozen=True)
class RunScan:
    """A run file read as far as it goes: the rows that are well-formed, and every problem met, by line.

    `complete` is False when reading stopped early (at `max_errors` errors, or at XML that is not well-formed): lines
    after the last error were not checked, so a caller adding errors of its own keeps only those before that line.
    `attributes` and `elapsed` (seconds per topic) are an XML run's, and so are `explanations` (of the rows kept, in
    file order); a TREC run has none of them.
    """

    table: RunTable
    errors: list[tuple[int, str]]
    complete: bool = True
    attributes: dict[str, str] = field(default_factory=dict)
    elapsed: dict[str, float] = field(default_factory=dict)
    explanations: list[Explanation] = field(default_factory=list)

    def checked(self, source: str) -> RunScan:
        """This scan, or a FormatError with its errors if it has any."""
        if self.errors:
            raise FormatError(self.errors, source=source)
        return self


def parse_int(token: str) -> int | None:
    """The integer in `token` if it fits int64, or None (digit separators such as 1_5 are not read)."""
    if "_" in token:
        return None
    try:
        value = int(token)
    except ValueError:
        return None
    return value if -(2**63) <= value < 2**63 else None


def parse_finite(token: str) -> float | None:
    """The finite float in `token`, or None (digit separators such as 1_5 are not read)."""
    if "_" in token:
        return None
    try:
        value = float(token)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def str_array(column: list[str]) -> np.ndarray:
    """A numpy object array of a column of strings (cheaper to build than a unicode array)."""
    out = np.empty(len(column), dtype=object)
    out[:] = column
    return out


def read_only(table: RunTable) -> RunTable:
    """The parser's own table with its arrays made read-only (values derived from them are cached on the table)."""
    for values in (table.topics, table.docs, table.ranks, table.scores, table.lines):
        values.flags.writeable = False
    return table
