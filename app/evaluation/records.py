"""Array representations of parsed run and qrels files."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")
ROWS_ONLY = "rows:"  # a `Qrels.derived` key of a value worked out of the rows (topics, docs, strata), not the grades


@dataclass(frozen=True)
class RunTable:
    """One run file's rows, in file order.

    The arrays are never changed once a table exists: values worked out from them (the ranking order, docno hashes,
    ranked keys) are kept in `derived`, the table's explicit cache, so a table evaluated twice sorts once. The
    parsers hand out read-only arrays; a table built from a caller's own arrays leaves their flags alone, and the
    caller then must not change them (build a new table, or `dataclasses.replace` one, which starts an empty cache).
    """

    tag: str  # the run tag (6th column), one per file
    topics: np.ndarray  # str per row (a numpy unicode array from the parsers; object arrays of str work too)
    docs: np.ndarray  # str per row (likewise)
    ranks: np.ndarray  # int64, the submitted rank column (not used for ordering)
    scores: np.ndarray  # float64
    lines: np.ndarray  # int64, 1-based line number of each row
    derived: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __len__(self) -> int:
        """Number of rows."""
        return len(self.docs)

    def with_doc_hashes(self, hashes: np.ndarray) -> RunTable:
        """This table carrying `fast.hashing.hash_codes` of its docs (kept in `derived`)."""
        self.derived["doc_hashes"] = hashes
        return self

    def cached(self, key: str, compute: Callable[[RunTable], T]) -> T:
        """`compute(self)`, worked out once per table and kept in `derived` under `key`."""
        if key not in self.derived:
            self.derived[key] = compute(self)
        value: T = self.derived[key]
        return value

    @property
    def doc_hashes(self) -> np.ndarray | None:
        """The docs' code-point hashes if the parser left them, else None."""
        hashes = self.derived.get("doc_hashes")
        return hashes if hashes is not None and len(hashes) == len(self.docs) else None


@dataclass(frozen=True)
class Qrels:
    """Relevance judgements: one row per (topic, doc); strata only for sample_eval (stratified) qrels."""

    topics: np.ndarray  # str per row
    docs: np.ndarray  # str per row
    grades: np.ndarray  # int64; >= 1 relevant, 0 not relevant, -1 pooled but not judged
    strata: np.ndarray | None = None  # int64 stratum per row, or None for plain TREC qrels
    lines: np.ndarray | None = None  # int64 1-based line numbers, when read from a file
    derived: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __len__(self) -> int:
        """Number of judgement rows."""
        return len(self.docs)

    def cached(self, key: str, compute: Callable[[Qrels], T]) -> T:
        """`compute(self)`, worked out once per qrels and kept in `derived` (the arrays, like a run table's, are
        never changed once the qrels exist: `subset` and `dataclasses.replace` make new qrels, with no cache)."""
        if key not in self.derived:
            self.derived[key] = compute(self)
        value: T = self.derived[key]
        return value

    def regraded(self, grades: np.ndarray) -> Qrels:
        """These rows with other grades (imputed or re-graded copies): the copy shares the row arrays and what was
        worked out of them alone (`derived` keys starting with ROWS_ONLY), so that copies group their rows once."""
        copy = Qrels(topics=self.topics, docs=self.docs, grades=grades, strata=self.strata, lines=self.lines)
        copy.derived.update({key: value for key, value in self.derived.items() if key.startswith(ROWS_ONLY)})
        return copy

    @property
    def stratified(self) -> bool:
        """Whether the qrels carry strata (sample_eval format)."""
        return self.strata is not None

    def topic_names(self) -> list[str]:
        """The distinct topics, sorted."""
        names: list[str] = np.unique(self.topics.astype(str)).tolist()
        return names

    def subset(self, keep: np.ndarray) -> Qrels:
        """The qrels restricted to the rows where the boolean mask `keep` is true."""
        return Qrels(
            topics=self.topics[keep],
            docs=self.docs[keep],
            grades=self.grades[keep],
            strata=None if self.strata is None else self.strata[keep],
            lines=None if self.lines is None else self.lines[keep],
        )
