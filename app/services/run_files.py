"""Reading uploaded run files of every accepted format into one shape, and checking them against a campaign."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from app.storage.models import TaskKind


@dataclass(frozen=True)
class ParsedRun:
    """A parsed run of any format: shared columns plus the format's own table."""

    tag: str | None
    topics: np.ndarray
    lines: np.ndarray
    trec: Any = None  # app.evaluation RunTable for shot/document runs
    moments: Any = None  # app.evaluation.moments MomentRunTable for moment runs
    attributes: dict[str, str] | None = None  # run attributes found in an XML run

    @property
    def n_rows(self) -> int:
        """Number of ranked results."""
        return len(self.topics)


def detect_format(data: bytes, task_kind: TaskKind) -> str:
    """The format of an upload: moments for moment campaigns, xml if it starts with '<', else trec."""
    if task_kind is TaskKind.moments:
        return "moments"
    return "xml" if data.lstrip()[:1] == b"<" else "trec"


def parse(data: bytes, fmt: str, *, max_errors: int) -> ParsedRun:
    """Parse an upload in the given format; raises FormatError with line numbers."""
    if fmt == "moments":
        from app.evaluation.moments import parse_moment_run

        table = parse_moment_run(data, max_errors=max_errors, source="run file")
        return ParsedRun(tag=table.tag, topics=table.topics, lines=table.lines, moments=table)
    from app.evaluation.formats import trec_files

    if fmt == "xml":
        table, attributes = trec_files.parse_trecvid_xml(data, max_errors=max_errors, source="run file")
    else:
        table, attributes = trec_files.parse_trec_run(data, max_errors=max_errors, source="run file"), {}
    return ParsedRun(tag=table.tag, topics=table.topics, lines=table.lines, trec=table, attributes=attributes)


def check_against_campaign(parsed: ParsedRun, topic_ids: dict[str, int], max_results: int) -> list[tuple[int, str]]:
    """Line errors for unknown topics and topics with more than `max_results` results."""
    errors: list[tuple[int, str]] = []
    names, first, counts = np.unique(parsed.topics.astype(str), return_index=True, return_counts=True)
    for name, index, count in zip(names.tolist(), first.tolist(), counts.tolist(), strict=True):
        line = int(parsed.lines[index])
        if name not in topic_ids:
            errors.append((line, f"unknown topic {name!r} ({count} line(s), the first here)"))
        elif count > max_results:
            errors.append((line, f"topic {name!r} has {count} results, more than the {max_results} allowed"))
    return sorted(errors)


def topic_id_column(topics: np.ndarray, topic_ids: dict[str, int]) -> np.ndarray:
    """Topic row ids for a column of topic numbers, mapped once per distinct topic."""
    names, inverse = np.unique(topics.astype(str), return_inverse=True)
    return np.array([topic_ids[name] for name in names.tolist()], dtype=np.int64)[inverse.reshape(-1)]
