"""What the campaign archive's modules share: the error naming an archive line, the importer's interface its parts
write through, and verify's report (differences, floats compared bit for bit, a summary per part)."""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlalchemy.orm import Session

from app.services.errors import InvalidInput

Blocks = Callable[..., Iterator[dict[str, object]]]  # `rows` records of one table's export query: (session, table, **)
PARTS = ("pools", "qrels", "evaluations", "analyses")  # verify's summary, in this order


def bad(line: int, message: str) -> InvalidInput:
    """The error of an archive that cannot be imported, naming the line."""
    return InvalidInput(f"archive line {line}: {message}", [{"line": line, "message": message}])


class ImportContext(Protocol):
    """What an archive part's import handlers use of the importer."""

    session: Session
    topics: dict[str, int]

    @property
    def campaign_id(self) -> int:
        """The new campaign's id."""
        ...

    def ref(self, kind: str, old: object, line: int) -> int:
        """The new id of an archive id of `kind`."""
        ...

    def opt(self, kind: str, old: object, line: int) -> int | None:
        """`ref`, with None for None."""
        ...

    def remember(self, kind: str, old: object, new: int) -> None:
        """Map an archive id to its new id."""
        ...

    def new_ids(self, table: str, n: int) -> list[int]:
        """`n` new ids from the table's id sequence."""
        ...

    def copy(self, table: str, names: Sequence[str], columns: Sequence[Sequence[object]]) -> None:
        """COPY columns into a table."""
        ...

    def refs(self, kind: str, values: Iterable[object], line: int, *, optional: bool = False) -> list[int | None]:
        """New ids of a column of archive ids."""
        ...

    def topic_ids(self, numbers: Iterable[object], line: int) -> list[int]:
        """New topic ids of a column of topic numbers."""
        ...


def same_float(a: object, b: object) -> bool:
    """Whether two stored numbers are the same bit for bit (NaN equal to NaN; None only to None)."""
    if a is None or b is None:
        return a is None and b is None
    x, y = float(a), float(b)  # type: ignore[arg-type]  # stored numbers
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return struct.pack("<d", x) == struct.pack("<d", y)


@dataclass(frozen=True)
class Difference:
    """Something recomputed that is not what the archive holds."""

    what: str  # pool_item | moment_item | verification | qrels | score | run_mean | analysis
    where: str  # e.g. "pool 3, topic 701, shot00012_4: stratum" or "evaluation 5, run alpha/alpha_run1, ..."
    archived: object
    recomputed: object

    def line(self) -> str:
        """The difference as one line of text."""
        return f"{self.what}: {self.where}: archive {self.archived!r}, recomputed {self.recomputed!r}"


@dataclass
class Part:
    """Verify's tally of one part (pools, qrels, evaluations, analyses): things found identical, different (with
    the first difference), and not recomputed (each with why)."""

    identical: int = 0
    different: int = 0
    first: Difference | None = None
    not_recomputed: list[str] = field(default_factory=list)

    def line(self, name: str) -> str:
        """The part's summary as one line of text."""
        words = f"{name}: {self.identical} identical, {self.different} different"
        if self.not_recomputed:
            words += f", {len(self.not_recomputed)} not recomputed"
        if self.first is not None:
            words += f" (first: {self.first.line()})"
        return words

    def to_dict(self) -> dict[str, object]:
        """The JSON form."""
        first = None if self.first is None else self.first.__dict__
        return {
            "identical": self.identical,
            "different": self.different,
            "first_difference": first,
            "not_recomputed": self.not_recomputed,
        }


@dataclass
class Verification:
    """What verify compared and every difference it found, with a summary per part."""

    campaign: str
    header: dict[str, Any]
    limit: int = 1000  # differences listed (all are counted)
    compared: dict[str, int] = field(default_factory=dict)
    differences: list[Difference] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    parts: dict[str, Part] = field(default_factory=lambda: {name: Part() for name in PARTS})
    analyses: list[dict[str, object]] = field(default_factory=list)  # per archived analysis: its outcome
    current_first: Difference | None = None  # the first difference of the thing `checking` compares

    def count(self, what: str, n: int = 1) -> None:
        """Count compared things."""
        self.compared[what] = self.compared.get(what, 0) + n

    def differ(self, difference: Difference) -> None:
        """Record a difference (the first `limit` listed; the rest counted)."""
        self.count("differences")
        if self.current_first is None:
            self.current_first = difference
        if len(self.differences) < self.limit:
            self.differences.append(difference)

    @contextmanager
    def checking(self, part: str) -> Iterator[None]:
        """Compare one thing of a part: identical unless a difference is recorded meanwhile."""
        before, self.current_first = self.compared.get("differences", 0), None
        yield
        tally = self.parts.setdefault(part, Part())
        if self.compared.get("differences", 0) > before:
            tally.different += 1
            tally.first = tally.first or self.current_first
        else:
            tally.identical += 1

    def not_recomputed(self, part: str, what: str, why: str) -> None:
        """A thing of a part that verify could not recompute, and why (listed, never silently skipped)."""
        self.parts.setdefault(part, Part()).not_recomputed.append(f"{what}: {why}")

    @property
    def identical(self) -> bool:
        """Whether nothing differs."""
        return not self.compared.get("differences", 0)

    def summary(self) -> list[str]:
        """One line per part."""
        return [tally.line(name) for name, tally in self.parts.items()]

    def to_dict(self) -> dict[str, object]:
        """The JSON form."""
        return {
            "campaign": self.campaign,
            "archive": {k: self.header.get(k) for k in ("format", "version", "trecpool", "git_commit", "schema")},
            "compared": self.compared,
            "parts": {name: tally.to_dict() for name, tally in self.parts.items()},
            "analyses": self.analyses,
            "differences": [d.__dict__ for d in self.differences],
            "notes": self.notes,
            "identical": self.identical,
        }
