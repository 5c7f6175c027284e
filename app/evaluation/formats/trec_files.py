"""Reading TREC run files, TRECVID AVS XML runs, and TREC / sample_eval qrels into arrays, with line-numbered errors."""

from __future__ import annotations

import gzip
import math
import re
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar
from xml.parsers import expat

import numpy as np

from app.evaluation.errors import FormatError
from app.evaluation.fast.columns import Columns, as_unicode, parse_floats, parse_ints, split_columns
from app.evaluation.fast.hashing import hash_codes, mix
from app.evaluation.formats.text import decode_utf8
from app.evaluation.records import Qrels, RunTable

__all__ = [
    "RunTable",
    "Qrels",
    "parse_trec_run",
    "parse_trecvid_xml",
    "parse_trec_qrels",
    "parse_sample_eval_qrels",
    "parse_qrels",
    "read_qrels",
    "read_run",
    "read_bytes",
]

_WHITESPACE = np.zeros(256, dtype=bool)
_WHITESPACE[[9, 10, 11, 12, 13, 32]] = True
_RUN_COLUMNS = "topic Q0 docno rank score tag"
_COMMENT_LINE = re.compile(r"^[ \t]*#[^\n]*", re.M)
B = TypeVar("B", bytes, str)
_MAX_HASHED = 256  # docnos up to this many code points are hashed as fixed-width arrays
_PAIR_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)


class _TooManyErrors(Exception):
    """Raised inside a slow pass once `max_errors` errors are collected."""


class _Errors:
    """An error list that stops the pass at `max_errors`."""

    def __init__(self, max_errors: int) -> None:
        self.items: list[tuple[int, str]] = []
        self.max_errors = max(1, max_errors)

    def add(self, line: int, message: str) -> None:
        """Record one error; raise _TooManyErrors when the limit is reached."""
        self.items.append((line, message))
        if len(self.items) >= self.max_errors:
            raise _TooManyErrors


def read_bytes(path: str | Path) -> bytes:
    """The bytes of a file, gunzipped if it is gzip-compressed, without a leading byte-order mark.

    A truncated or corrupt gzip file is a FormatError naming the file, not a traceback.
    """
    raw = Path(path).read_bytes()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (EOFError, OSError, zlib.error) as exc:
            raise FormatError([(0, f"not a complete gzip file ({exc})")], source=str(path)) from None
    return _without_bom(raw)


def _without_bom(data: B) -> B:
    """`data` without a leading UTF-8 byte-order mark: some editors add one, and it would become part of the first
    topic (trec_eval then silently finds no such topic)."""
    if isinstance(data, str):
        return data[1:] if data.startswith("\ufeff") else data  # type: ignore[return-value]
    return data[3:] if data.startswith(b"\xef\xbb\xbf") else data  # type: ignore[return-value]


def _without_comments(text: str) -> str:
    """Qrels text with `#` comment lines emptied (trec_eval skips them); line numbers stay as they were."""
    return _COMMENT_LINE.sub("", text) if "#" in text else text


def _as_bytes(data: bytes | str) -> bytes:
    """UTF-8 bytes of `data`."""
    return data.encode("utf-8") if isinstance(data, str) else data


def _token_counts(raw: bytes) -> np.ndarray:
    """Number of whitespace-separated tokens on each '\\n'-terminated line (ASCII whitespace)."""
    if not raw:
        return np.zeros(0, dtype=np.int64)
    buf = np.frombuffer(raw, dtype=np.uint8)
    space = _WHITESPACE[buf]
    starts = ~space
    starts[1:] &= space[:-1]
    line_starts = np.concatenate(([0], np.flatnonzero(buf == 10) + 1))
    if line_starts[-1] == len(buf):
        line_starts = line_starts[:-1]
    # uint8 sums wrap past 255 tokens; such a line then fails the caller's total-token check
    return np.add.reduceat(starts.view(np.uint8), line_starts).astype(np.int64)


def _fast_columns(text: str, raw: bytes, width: int) -> tuple[list[list[str]], np.ndarray] | None:
    """Columns (lists of str) and 1-based line numbers if every non-blank line has `width` tokens, else None."""
    counts = _token_counts(raw)
    nonblank = np.flatnonzero(counts)
    if len(nonblank) == 0 or not np.all(counts[nonblank] == width):
        return None
    tokens = text.split()
    if len(tokens) != width * len(nonblank):  # non-ASCII whitespace splits differently: take the slow path
        return None
    return [tokens[i::width] for i in range(width)], nonblank.astype(np.int64) + 1


def _ints(column: list[str]) -> np.ndarray | None:
    """An int64 array of the column, or None if some value is not an integer."""
    if "_" in "".join(column):  # int() reads 1_5 as 15, C's atoi as 1: refuse rather than guess
        return None
    try:
        return np.fromiter(map(int, column), dtype=np.int64, count=len(column))
    except (ValueError, OverflowError):
        return None


def _finite_floats(column: list[str]) -> np.ndarray | None:
    """A float64 array of the column, or None if some value is not a finite number."""
    if "_" in "".join(column):  # float() reads 1_5 as 15.0, C's atof (trec_eval) as 1.0: refuse rather than guess
        return None
    try:
        values = np.fromiter(map(float, column), dtype=np.float64, count=len(column))
    except ValueError:
        return None
    return values if np.all(np.isfinite(values)) else None


def _has_duplicates(topics: list[str], docs: list[str]) -> bool:
    """Whether some (topic, doc) pair occurs twice."""
    return len(set(zip(topics, docs, strict=True))) != len(docs)


def _str_array(column: list[str]) -> np.ndarray:
    """A numpy object array of a column of strings (cheaper to build than a unicode array)."""
    out = np.empty(len(column), dtype=object)
    out[:] = column
    return out


def _parse_int(token: str) -> int | None:
    """The integer in `token` if it fits int64, or None (digit separators such as 1_5 are not read)."""
    if "_" in token:
        return None
    try:
        value = int(token)
    except ValueError:
        return None
    return value if -(2**63) <= value < 2**63 else None


def _parse_finite(token: str) -> float | None:
    """The finite float in `token`, or None (digit separators such as 1_5 are not read)."""
    if "_" in token:
        return None
    try:
        value = float(token)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _nonblank_lines(text: str) -> list[tuple[int, list[str]]]:
    """(1-based line number, tokens) of each non-blank line."""
    return [(number, parts) for number, line in enumerate(text.split("\n"), 1) if (parts := line.split())]


# --------------------------------------------------------------------------------------------------------- runs


def parse_trec_run(data: bytes | str, *, max_errors: int = 50, source: str = "run") -> RunTable:
    """Parse a TREC 6-column run (`topic Q0 docno rank score tag`); all errors are raised in one FormatError.

    One parser, two passes: the vectorised columns pass (`columns.split_columns`) takes well-formed files; anything
    it declines (a bad line, a repeated docno, an odd width) goes through the line-by-line pass that names every
    problem with its line number. Tests compare both with a plain list-based reference.
    """
    data = _without_bom(data)
    columns = split_columns(data, 6, source=source)
    table = _run_from_columns(columns) if columns is not None else None
    if table is not None:
        return table
    return _parse_trec_run_slowly(decode_utf8(data, source=source), max_errors=max_errors, source=source)


def _run_from_columns(columns: Columns) -> RunTable | None:
    """The run table of a well-formed 6-column file, without a Python object per token; None if something is off."""
    topic_codes, doc_codes, tag_codes = columns.matrix(0), columns.matrix(2), columns.matrix(5)
    if topic_codes is None or doc_codes is None or tag_codes is None or len(doc_codes[0]) > _MAX_HASHED:
        return None
    if not np.array_equal(columns.lengths[:, 5], np.full(len(columns), columns.lengths[0, 5])) or not np.all(
        tag_codes == tag_codes[0]
    ):
        return None
    rank_codes = columns.matrix(3)
    ranks = parse_ints(rank_codes)
    if ranks is None and rank_codes is not None:
        ranks = _ints(as_unicode(rank_codes).tolist())
    scores = parse_floats(columns.matrix(4))
    if ranks is None or scores is None or not np.all(np.isfinite(scores)):
        return None
    topics, docs = as_unicode(topic_codes), as_unicode(doc_codes)
    doc_hash = hash_codes(doc_codes)
    if len(topic_codes[0]) <= _MAX_HASHED:
        pair_hash = np.sort(mix(doc_hash ^ (hash_codes(topic_codes) * _PAIR_MULTIPLIER)))
        if np.any(pair_hash[1:] == pair_hash[:-1]) and _has_duplicates(topics.tolist(), docs.tolist()):
            return None
    elif _has_duplicates(topics.tolist(), docs.tolist()):
        return None
    tag = str(as_unicode(tag_codes[:1])[0])
    return _read_only(RunTable(tag, topics, docs, ranks, scores, columns.lines)).with_doc_hashes(doc_hash)


def _read_only(table: RunTable) -> RunTable:
    """The parser's own table with its arrays made read-only (values derived from them are cached on the table)."""
    for values in (table.topics, table.docs, table.ranks, table.scores, table.lines):
        values.flags.writeable = False
    return table


def _parse_trec_run_slowly(text: str, *, max_errors: int, source: str) -> RunTable:
    """Line-by-line pass that names every problem (used when the fast path finds one)."""
    errors = _Errors(max_errors)
    topics: list[str] = []
    docs: list[str] = []
    ranks: list[int] = []
    scores: list[float] = []
    lines: list[int] = []
    tag: str | None = None
    tag_line = 0
    seen: dict[tuple[str, str], int] = {}
    try:
        for number, parts in _nonblank_lines(text):
            if len(parts) != 6:
                errors.add(number, f"expected 6 columns ({_RUN_COLUMNS}), found {len(parts)}")
                continue
            topic, _, doc, rank_text, score_text, row_tag = parts
            rank = _parse_int(rank_text)
            score = _parse_finite(score_text)
            ok = True
            if rank is None:
                errors.add(number, f"rank {rank_text!r} is not an integer")
                ok = False
            if score is None:
                errors.add(number, f"score {score_text!r} is not a finite number")
                ok = False
            if tag is None:
                tag, tag_line = row_tag, number
            elif row_tag != tag:
                errors.add(number, f"run tag {row_tag!r} differs from {tag!r} on line {tag_line}")
                ok = False
            first = seen.setdefault((topic, doc), number)
            if first != number:
                errors.add(number, f"docno {doc!r} appears twice for topic {topic!r} (lines {first} and {number})")
                ok = False
            if ok:
                topics.append(topic)
                docs.append(doc)
                ranks.append(rank)  # type: ignore[arg-type]
                scores.append(score)  # type: ignore[arg-type]
                lines.append(number)
    except _TooManyErrors:
        pass
    if not errors.items and tag is None:
        errors.items.append((0, "the run file holds no results"))
    if errors.items:
        raise FormatError(errors.items, source=source)
    return _read_only(
        RunTable(
            tag=tag or "",
            topics=_str_array(topics),
            docs=_str_array(docs),
            ranks=np.array(ranks, dtype=np.int64),
            scores=np.array(scores, dtype=np.float64),
            lines=np.array(lines, dtype=np.int64),
        )
    )


# ------------------------------------------------------------------------------------------------------ XML runs

_RUN_TAG_ATTRIBUTES = ("runId", "runid", "run_id", "runID", "id", "name", "tag")


def parse_trecvid_xml(
    data: bytes | str, *, max_errors: int = 50, source: str = "run"
) -> tuple[RunTable, dict[str, str]]:
    """Parse a TRECVID AVS XML run; returns the table (rank = seqNum, score = -seqNum) and the run attributes."""
    raw = _as_bytes(data)
    decode_utf8(raw, source=source)
    reader = _AvsXmlReader(max_errors)
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    reader.attach(parser)
    try:
        parser.Parse(raw, True)
    except _TooManyErrors:
        pass
    except _ForbiddenMarkup as exc:
        reader.errors.items.append((parser.CurrentLineNumber, str(exc)))
    except expat.ExpatError as exc:
        reader.errors.items.append((exc.lineno, f"not well-formed XML: {expat.errors.messages[exc.code]}"))
    if not reader.errors.items and not reader.docs:
        reader.errors.items.append((0, "the XML run holds no <item> results"))
    if reader.errors.items:
        raise FormatError(reader.errors.items[: max(1, max_errors)], source=source)
    attributes = reader.attributes
    tag = next((attributes[k] for k in _RUN_TAG_ATTRIBUTES if attributes.get(k)), None)
    if tag is None:
        tag = "_".join(attributes[k] for k in ("pid", "priority") if attributes.get(k)) or source
    seq = np.array(reader.ranks, dtype=np.int64)
    table = RunTable(
        tag=tag,
        topics=_str_array(reader.topics),
        docs=_str_array(reader.docs),
        ranks=seq,
        scores=-seq.astype(np.float64),
        lines=np.array(reader.lines, dtype=np.int64),
    )
    return _read_only(table), attributes


class _ForbiddenMarkup(Exception):
    """A DTD or entity declaration in an uploaded XML run."""


def _local(name: str) -> str:
    """An element name without namespace."""
    return name.rsplit("}", 1)[-1].rsplit(":", 1)[-1]


class _AvsXmlReader:
    """Expat callbacks collecting TRECVID AVS items with their line numbers."""

    def __init__(self, max_errors: int) -> None:
        self.errors = _Errors(max_errors)
        self.attributes: dict[str, str] = {}
        self.topics: list[str] = []
        self.docs: list[str] = []
        self.ranks: list[int] = []
        self.lines: list[int] = []
        self.topic: str | None = None
        self.seen: dict[tuple[str, str], int] = {}
        self.seen_seq: dict[tuple[str, int], int] = {}
        self.parser: expat.XMLParserType | None = None

    def attach(self, parser: expat.XMLParserType) -> None:
        """Install the callbacks on an expat parser."""
        self.parser = parser
        parser.StartElementHandler = self.start
        parser.EndElementHandler = self.end
        parser.StartDoctypeDeclHandler = self.doctype
        parser.EntityDeclHandler = self.forbid
        parser.ExternalEntityRefHandler = self.forbid

    def doctype(self, name: str, system_id: str | None, public_id: str | None, internal_subset: bool) -> None:
        """Accept a DOCTYPE that only names an external DTD, as NIST's runs carry (expat never fetches it); refuse one
        with an internal subset, where entities could be declared."""
        if internal_subset:
            raise _ForbiddenMarkup("DTDs with declarations of their own are not accepted in XML runs")

    def forbid(self, *args: object) -> None:
        """Refuse entity declarations and references."""
        raise _ForbiddenMarkup("DTDs and entity declarations are not accepted in XML runs")

    def line(self) -> int:
        """The current line number."""
        return self.parser.CurrentLineNumber if self.parser is not None else 0

    def start(self, name: str, attrs: dict[str, str]) -> None:
        """Handle an opening tag."""
        tag = _local(name)
        if tag.endswith("RunResult") or (tag.endswith("Run") and not self.attributes):
            self.attributes.update({_local(k): v for k, v in attrs.items()})
        elif tag.endswith("TopicResult") or tag == "topic":
            number = attrs.get("tNum") or attrs.get("tnum") or attrs.get("num") or attrs.get("topic")
            if not number:
                self.errors.add(self.line(), f"<{tag}> has no tNum attribute")
            self.topic = number.strip() if number else None
        elif tag == "item":
            self.item(attrs)

    def item(self, attrs: dict[str, str]) -> None:
        """Handle one <item seqNum=.. shotId=../>."""
        line = self.line()
        if self.topic is None:
            self.errors.add(line, "<item> outside a topic result with a tNum")
            return
        shot = (attrs.get("shotId") or attrs.get("shotid") or attrs.get("docno") or "").strip()
        seq_text = attrs.get("seqNum") or attrs.get("seqnum") or attrs.get("rank") or ""
        seq = _parse_int(seq_text.strip())
        ok = True
        if not shot:
            self.errors.add(line, "<item> has no shotId attribute")
            ok = False
        if seq is None:
            self.errors.add(line, f"seqNum {seq_text!r} is not an integer")
            ok = False
        if ok:
            first = self.seen.setdefault((self.topic, shot), line)
            if first != line:
                where = f"(lines {first} and {line})"
                self.errors.add(line, f"shot {shot!r} appears twice for topic {self.topic!r} {where}")
                return
            first = self.seen_seq.setdefault((self.topic, seq), line)  # type: ignore[arg-type]
            if first != line:
                self.errors.add(line, f"seqNum {seq} appears twice for topic {self.topic!r} (lines {first} and {line})")
                return
            self.topics.append(self.topic)
            self.docs.append(shot)
            self.ranks.append(seq)  # type: ignore[arg-type]
            self.lines.append(line)

    def end(self, name: str) -> None:
        """Handle a closing tag."""
        tag = _local(name)
        if tag.endswith("TopicResult") or tag == "topic":
            self.topic = None


def read_run(path: str | Path, *, max_errors: int = 50) -> RunTable:
    """Read a TREC or TRECVID XML run file (optionally gzipped)."""
    data = read_bytes(path)
    if data.lstrip()[:1] == b"<":
        return parse_trecvid_xml(data, max_errors=max_errors, source=str(path))[0]
    return parse_trec_run(data, max_errors=max_errors, source=str(path))


# --------------------------------------------------------------------------------------------------------- qrels


def parse_trec_qrels(data: bytes | str, *, max_errors: int = 50, source: str = "qrels") -> Qrels:
    """Parse TREC qrels: `topic iteration docno grade` (the iteration column is ignored)."""
    return _parse_qrels(data, 4, max_errors=max_errors, source=source)


def parse_sample_eval_qrels(data: bytes | str, *, max_errors: int = 50, source: str = "qrels") -> Qrels:
    """Parse sample_eval qrels: `topic iteration docno stratum grade` (grade -1 = pooled, not sampled)."""
    return _parse_qrels(data, 5, max_errors=max_errors, source=source)


def parse_qrels(data: bytes | str, *, max_errors: int = 50, source: str = "qrels") -> Qrels:
    """Parse qrels of either kind, choosing by the column count of the first non-blank line."""
    text = _without_comments(decode_utf8(_without_bom(data), source=source))
    first = next((line.split() for line in text.split("\n") if line.strip()), [])
    width = 5 if len(first) == 5 else 4
    return _parse_qrels(text, width, max_errors=max_errors, source=source)


def read_qrels(path: str | Path, *, max_errors: int = 50) -> Qrels:
    """Read a qrels file (optionally gzipped): 5 columns means sample_eval format, else TREC."""
    return parse_qrels(read_bytes(path), max_errors=max_errors, source=str(path))


def _parse_qrels(data: bytes | str, width: int, *, max_errors: int, source: str) -> Qrels:
    """Parse 4-column (TREC) or 5-column (sample_eval) qrels."""
    text = decode_utf8(_without_bom(data), source=source)
    uncommented = _without_comments(text)
    if uncommented is not text:
        text = data = uncommented
    fast = _fast_columns(text, _as_bytes(_without_bom(data)), width)
    if fast is not None:
        columns, lines = fast
        topics, docs = columns[0], columns[2]
        grades = _ints(columns[-1])
        strata = _ints(columns[3]) if width == 5 else None
        if (
            grades is not None
            and (width == 4 or (strata is not None and grades.min() >= -1))
            and not _has_duplicates(topics, docs)
        ):
            return Qrels(_str_array(topics), _str_array(docs), grades, strata, lines)
    return _parse_qrels_slowly(text, width, max_errors=max_errors, source=source)


def _parse_qrels_slowly(text: str, width: int, *, max_errors: int, source: str) -> Qrels:
    """Line-by-line qrels pass that names every problem."""
    layout = "topic iteration docno stratum grade" if width == 5 else "topic iteration docno grade"
    errors = _Errors(max_errors)
    rows: list[tuple[str, str, int, int, int]] = []
    seen: dict[tuple[str, str], int] = {}
    check: Callable[[int], bool] = (lambda g: g >= -1) if width == 5 else (lambda g: True)
    try:
        for number, parts in _nonblank_lines(text):
            if len(parts) != width:
                errors.add(number, f"expected {width} columns ({layout}), found {len(parts)}")
                continue
            grade = _parse_int(parts[-1])
            stratum = _parse_int(parts[3]) if width == 5 else 0
            ok = True
            if grade is None or not check(grade):
                errors.add(number, f"grade {parts[-1]!r} is not an integer" + (" >= -1" if width == 5 else ""))
                ok = False
            if stratum is None:
                errors.add(number, f"stratum {parts[3]!r} is not an integer")
                ok = False
            first = seen.setdefault((parts[0], parts[2]), number)
            if first != number:
                where = f"(lines {first} and {number})"
                errors.add(number, f"docno {parts[2]!r} judged twice for topic {parts[0]!r} {where}")
                ok = False
            if ok:
                rows.append((parts[0], parts[2], grade, stratum, number))  # type: ignore[arg-type]
    except _TooManyErrors:
        pass
    if not errors.items and not rows:
        errors.items.append((0, "the qrels file holds no judgements"))
    if errors.items:
        raise FormatError(errors.items, source=source)
    topics, docs, grades, strata, lines = zip(*rows, strict=True)
    return Qrels(
        topics=_str_array(list(topics)),
        docs=_str_array(list(docs)),
        grades=np.array(grades, dtype=np.int64),
        strata=np.array(strata, dtype=np.int64) if width == 5 else None,
        lines=np.array(lines, dtype=np.int64),
    )
