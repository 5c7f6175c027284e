"""Parsing moment runs and moment ground truth (whitespace columns or JSON lines) with line-numbered errors.

A JSON-lines moment run may give a result an `explanation` (`app.evaluation.explanations`): kept with the
table, never used in a score."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from app.evaluation import explanations as explaining
from app.evaluation.errors import FormatError
from app.evaluation.explanations import Explanation


@dataclass(frozen=True)
class MomentRunTable:
    """A parsed moment run: one row per returned moment, in file order."""

    tag: str | None
    topics: np.ndarray  # str per row
    videos: np.ndarray  # str per row
    starts: np.ndarray  # float64 seconds
    ends: np.ndarray  # float64 seconds
    scores: np.ndarray  # float64
    lines: np.ndarray  # int64, 1-based line numbers
    explanations: tuple[Explanation, ...] = ()  # of the rows that have one (JSON lines only), in file order

    def __len__(self) -> int:
        """Number of moments."""
        return len(self.topics)


@dataclass(frozen=True)
class MomentGroundTruth:
    """Parsed moment ground truth: one row per relevant segment, in file order."""

    topics: np.ndarray  # str per row
    videos: np.ndarray  # str per row
    starts: np.ndarray  # float64 seconds
    ends: np.ndarray  # float64 seconds
    lines: np.ndarray  # int64, 1-based line numbers

    def __len__(self) -> int:
        """Number of ground-truth segments."""
        return len(self.topics)


class _Errors:
    """Collects (line, message) pairs; `full` once `max_errors` are held."""

    def __init__(self, max_errors: int, source: str) -> None:
        self.items: list[tuple[int, str]] = []
        self.max_errors = max(1, int(max_errors))
        self.source = source

    def add(self, line: int, message: str) -> None:
        """Record one error unless the limit is reached."""
        if len(self.items) < self.max_errors:
            self.items.append((line, message))

    @property
    def full(self) -> bool:
        """True once no more errors are kept."""
        return len(self.items) >= self.max_errors

    def raise_if_any(self) -> None:
        """Raise one FormatError holding every collected error."""
        if self.items:
            raise FormatError(sorted(self.items, key=lambda e: e[0]), source=self.source)


def _lines(data: bytes | str, errors: _Errors) -> list[tuple[int, str]]:
    """Non-blank (1-based line number, text) pairs; undecodable lines become errors."""
    if isinstance(data, bytes):
        if data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            out: list[tuple[int, str]] = []
            for number, raw in enumerate(data.split(b"\n"), start=1):
                try:
                    out.append((number, raw.decode("utf-8")))
                except UnicodeDecodeError as exc:
                    errors.add(number, f"bytes that are not UTF-8 at column {exc.start + 1}")
            return [(n, t) for n, t in out if t.strip()]
    else:
        text = data[1:] if data.startswith("\ufeff") else data
    return [(n, t) for n, t in enumerate(text.split("\n"), start=1) if t.strip()]


def _number(value: object, what: str) -> float:
    """A finite float from a token or JSON value; ValueError with a message otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"{what} {value!r} is not a number")
    try:
        number = float(value)
    except (ValueError, OverflowError):
        raise ValueError(f"{what} {value!r} is not a number") from None
    if not math.isfinite(number):
        raise ValueError(f"{what} {value!r} is not a finite number")
    return number


def _segment(start: object, end: object) -> tuple[float, float]:
    """A validated (start, end): finite, non-negative, start < end."""
    s, e = _number(start, "start"), _number(end, "end")
    if s < 0 or e < 0:
        raise ValueError(f"negative time (start {s:g}, end {e:g})")
    if s >= e:
        raise ValueError(f"start {s:g} is not before end {e:g}")
    return s, e


def _ident(value: object, what: str) -> str:
    """A topic or video id from a JSON string or integer."""
    if isinstance(value, bool) or not isinstance(value, str | int) or str(value).strip() == "":
        raise ValueError(f"{what} {value!r} is not a non-empty string or integer")
    text = str(value).strip()
    if any(c.isspace() for c in text):
        raise ValueError(f"{what} {text!r} contains white space")
    return text


_Said = tuple[float | None, explaining.Box | None, str | None] | None  # a line's explanation: time, box, text
_Fields = tuple[str, str, object, object, object, str | None, _Said]  # topic, video, start, end, score, tag, why
_Row = tuple[int, str, str, float, float, float, str | None]  # line, topic, video, start, end, score, tag


def _json_fields(text: str, with_score: bool) -> _Fields:
    """(topic, video, start, end, score, tag, explanation) of one JSON line; ValueError on a bad line (a run's
    explanation is read, ground truth's ignored)."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    if not isinstance(obj, dict):
        raise ValueError("a JSON line must be an object")
    video_key = "video_id" if "video_id" in obj else "video"
    required = ["topic", video_key, "start", "end"] + (["score"] if with_score else [])
    missing = [k for k in required if k not in obj]
    if missing:
        raise ValueError("missing field(s) " + ", ".join(missing))
    tag = obj.get("tag")
    if tag is not None and (not isinstance(tag, str) or not tag.strip()):
        raise ValueError(f"tag {tag!r} is not a non-empty string")
    said = explaining.from_json(obj["explanation"]) if with_score and obj.get("explanation") is not None else None
    return (
        _ident(obj["topic"], "topic"),
        _ident(obj[video_key], "video_id"),
        obj["start"],
        obj["end"],
        obj.get("score"),
        tag.strip() if isinstance(tag, str) else None,
        said,
    )


def _column_fields(text: str, with_score: bool) -> _Fields:
    """(topic, video, start, end, score, tag, no explanation) of one whitespace-separated line; ValueError on a bad
    line."""
    parts = text.split()
    allowed = (5, 6) if with_score else (4,)
    if len(parts) not in allowed:
        expected = (
            "5 or 6 columns (topic video_id start end score [tag])"
            if with_score
            else "4 columns (topic video_id start end)"
        )
        raise ValueError(f"{len(parts)} columns, expected {expected}")
    score = parts[4] if with_score else None
    tag = parts[5] if len(parts) == 6 else None
    return parts[0], parts[1], parts[2], parts[3], score, tag, None


def _parse_rows(
    data: bytes | str, *, with_score: bool, max_errors: int, source: str
) -> tuple[list[_Row], _Errors, list[Explanation]]:
    """Rows of (line, topic, video, start, end, score, tag), the error collector and the rows' explanations."""
    errors = _Errors(max_errors, source)
    lines = _lines(data, errors)
    if not lines and not errors.items:
        raise FormatError([(0, "empty file: no moments")], source=source)
    is_json = bool(lines) and lines[0][1].lstrip().startswith("{")
    fields: Callable[[str, bool], _Fields] = _json_fields if is_json else _column_fields
    rows: list[_Row] = []
    said: list[Explanation] = []
    for number, text in lines:
        if errors.full:
            break
        try:
            topic, video, start, end, score, tag, why = fields(text, with_score)
            s, e = _segment(start, end)
            value = _number(score, "score") if with_score else 0.0
        except ValueError as exc:
            errors.add(number, str(exc))
            continue
        rows.append((number, topic, video, s, e, value, tag))
        if why is not None:
            said.append(Explanation(number, topic, video, None, *why))
    return rows, errors, said


def _columns(rows: list[_Row]) -> tuple[np.ndarray, ...]:
    """Column arrays (lines, topics, videos, starts, ends, scores) of parsed rows."""
    lines = np.array([r[0] for r in rows], dtype=np.int64)
    topics = np.array([r[1] for r in rows], dtype=str)
    videos = np.array([r[2] for r in rows], dtype=str)
    starts = np.array([r[3] for r in rows], dtype=np.float64)
    ends = np.array([r[4] for r in rows], dtype=np.float64)
    scores = np.array([r[5] for r in rows], dtype=np.float64)
    return lines, topics, videos, starts, ends, scores


def parse_moment_run(data: bytes | str, *, max_errors: int = 50, source: str = "run") -> MomentRunTable:
    """Parse a moment run (`topic video_id start end score [tag]` columns or JSON lines); FormatError on bad lines."""
    rows, errors, said = _parse_rows(data, with_score=True, max_errors=max_errors, source=source)
    tag: str | None = None
    tag_line = 0
    for number, *_, row_tag in rows:
        if tag_line == 0:
            tag, tag_line = row_tag, number
        elif row_tag != tag:
            errors.add(number, f"mixed tags: {row_tag!r} here, {tag!r} on line {tag_line}")
    errors.raise_if_any()
    lines, topics, videos, starts, ends, scores = _columns(rows)
    return MomentRunTable(
        tag=tag, topics=topics, videos=videos, starts=starts, ends=ends, scores=scores, lines=lines,
        explanations=tuple(said),
    )  # fmt: skip


def parse_moment_ground_truth(
    data: bytes | str, *, max_errors: int = 50, source: str = "ground truth"
) -> MomentGroundTruth:
    """Parse moment ground truth (`topic video_id start end` columns or JSON lines); FormatError on bad lines.

    Every segment needs 0 <= start < end: a zero-length segment could never overlap anything (IoU 0), so it is
    rejected like a reversed one. An exact duplicate of a segment of the same topic is rejected too (it would
    count twice as a positive in mAP).
    """
    rows, errors, _ = _parse_rows(data, with_score=False, max_errors=max_errors, source=source)
    seen: dict[tuple[str, str, float, float], int] = {}
    for number, topic, video, s, e, _, _ in rows:
        key = (topic, video, s, e)
        if key in seen:
            errors.add(number, f"duplicate segment of topic {topic!r} (first on line {seen[key]})")
        else:
            seen[key] = number
    errors.raise_if_any()
    lines, topics, videos, starts, ends, _ = _columns(rows)
    return MomentGroundTruth(topics=topics, videos=videos, starts=starts, ends=ends, lines=lines)
