"""Reading TREC run files, TRECVID AVS XML runs, and TREC / sample_eval qrels into arrays, with line-numbered errors.

Files are read as streams (`streams.file_blocks`): gzip is decompressed a piece at a time and the text is parsed a
block of whole lines at a time, so neither a whole file's text nor its compressed bytes are held at once. A file the
block-wise fast path declines (a bad line, an odd width) is read again whole by the line-by-line pass, which names
every problem.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import TypeVar, overload

import numpy as np

from app.evaluation.errors import FormatError, decode_utf8
from app.evaluation.fast.columns import Columns, as_unicode, parse_floats, parse_ints, split_columns
from app.evaluation.fast.hashing import hash_codes, mix
from app.evaluation.formats import streams
from app.evaluation.formats.scanning import Errors as _Errors
from app.evaluation.formats.scanning import RunScan
from app.evaluation.formats.scanning import TooManyErrors as _TooManyErrors
from app.evaluation.formats.scanning import parse_finite as _parse_finite
from app.evaluation.formats.scanning import parse_int as _parse_int
from app.evaluation.formats.scanning import read_only as _read_only
from app.evaluation.formats.scanning import str_array as _str_array
from app.evaluation.formats.streams import byte_pieces, decompressed_pieces, file_blocks, file_pieces, line_blocks
from app.evaluation.formats.trecvid_xml import parse_trecvid_xml, scan_trecvid_xml, scan_trecvid_xml_blocks
from app.evaluation.records import Qrels, RunTable

__all__ = [
    "RunTable",
    "RunScan",
    "Qrels",
    "parse_trec_run",
    "scan_trec_run",
    "parse_trecvid_xml",
    "scan_trecvid_xml",
    "parse_trec_qrels",
    "parse_sample_eval_qrels",
    "parse_qrels",
    "read_qrels",
    "read_run",
    "read_bytes",
    "without_comment_lines",
]

_WHITESPACE = np.zeros(256, dtype=bool)
_WHITESPACE[[9, 10, 11, 12, 13, 32]] = True
_RUN_COLUMNS = "topic Q0 docno rank score tag"
_COMMENT_LINE = re.compile(r"^[ \t]*#[^\n]*", re.M)
# trec_eval 10.0's run reader (get_trec_results.c) skips a line whose first character after C's isspace blanks
# (space, \t, \v, \f, \r) is '#'; a leading byte-order mark is taken as part of such a line
_RUN_COMMENT_TEXT = re.compile(r"^\ufeff?[ \t\v\f\r]*#[^\n]*", re.M)
_RUN_COMMENT_BYTES = re.compile(rb"^(?:\xef\xbb\xbf)?[ \t\v\f\r]*#[^\n]*", re.M)
B = TypeVar("B", bytes, str)
_MAX_HASHED = 256  # docnos up to this many code points are hashed as fixed-width arrays
_PAIR_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)


def read_bytes(path: str | Path) -> bytes:
    """The bytes of a file, gunzipped if it is gzip-compressed (decompressed a piece at a time), without a leading
    byte-order mark.

    A truncated or corrupt gzip file is a FormatError naming the file, not a traceback.
    """
    out = bytearray()
    for piece in decompressed_pieces(file_pieces(path), source=str(path)):
        out += piece
    return _without_bom(bytes(out))


@overload
def _without_bom(data: bytes) -> bytes: ...
@overload
def _without_bom(data: str) -> str: ...
def _without_bom(data: bytes | str) -> bytes | str:
    """`data` without a leading UTF-8 byte-order mark: some editors add one, and it would become part of the first
    topic (trec_eval then silently finds no such topic)."""
    if isinstance(data, str):
        return data[1:] if data.startswith("\ufeff") else data
    return data[3:] if data.startswith(b"\xef\xbb\xbf") else data


def _without_comments(text: str) -> str:
    """Qrels text with `#` comment lines emptied (trec_eval skips them); line numbers stay as they were."""
    return _COMMENT_LINE.sub("", text) if "#" in text else text


def without_comment_lines(data: B) -> B:
    """Run text with its `#` comment lines emptied, as trec_eval 10.0's run reader skips them (a line whose first
    non-blank character is '#'); line numbers stay as they were, and a '#' inside a line (a docno) is kept."""
    if isinstance(data, str):
        return _RUN_COMMENT_TEXT.sub("", data) if "#" in data else data
    return _RUN_COMMENT_BYTES.sub(b"", data) if b"#" in data else data


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
    return scan_trec_run(data, max_errors=max_errors, source=source).checked(source).table


def scan_trec_run(data: bytes | str, *, max_errors: int = 50, source: str = "run") -> RunScan:
    """Read a TREC 6-column run as far as it goes: its well-formed rows and every problem, by line (at most
    `max_errors`; then `complete` is False)."""
    data = _without_bom(data)
    # a large file in blocks of whole lines: the parse's working arrays (about 3.5 times a line's kept columns) are
    # then a block's, not the whole file's (a stored run is read back this way for every evaluation)
    blocks: Iterable[tuple[bytes | str, int]] = [(data, 1)]
    if isinstance(data, bytes) and len(data) > streams.BLOCK_BYTES:
        blocks = line_blocks(byte_pieces(data))
    table = _run_from_blocks(blocks, source)
    if table is not None:
        return RunScan(table, [])
    return _scan_trec_run_slowly(data, max_errors=max_errors)


@dataclass
class _RunBlock:
    """The columns of one block of a well-formed run file (let go of one by one as they are joined)."""

    tag: str
    topics: np.ndarray  # unicode
    docs: np.ndarray  # unicode
    ranks: np.ndarray
    scores: np.ndarray
    lines: np.ndarray
    doc_hashes: np.ndarray
    pair_hashes: np.ndarray | None  # of (topic, docno); None when a topic is too long to hash as code points


def _run_from_blocks(blocks: Iterable[tuple[bytes | str, int]], source: str) -> RunTable | None:
    """The run table of well-formed 6-column text given in blocks of whole lines (with their first line numbers),
    without a Python object per token; None if something is off (the line-by-line pass then says what)."""
    parts: list[_RunBlock] = []
    for block, first_line in blocks:
        if not block.strip():
            continue
        try:
            columns = split_columns(block, 6, source=source)
        except FormatError:  # bytes that are not UTF-8: the line-by-line pass names every such line
            return None
        part = _run_block(columns, first_line - 1) if columns is not None else None
        if part is None or (parts and part.tag != parts[0].tag):
            return None
        parts.append(part)
    if not parts:
        return None
    tag = parts[0].tag
    hashed = all(p.pair_hashes is not None for p in parts)
    pairs = _joined(parts, "pair_hashes") if hashed else None
    topics, docs, ranks, scores, lines, doc_hashes = (
        _joined(parts, name) for name in ("topics", "docs", "ranks", "scores", "lines", "doc_hashes")
    )
    if pairs is not None:
        pairs.sort()
        if np.any(pairs[1:] == pairs[:-1]) and _has_duplicates(topics.tolist(), docs.tolist()):
            return None
    elif _has_duplicates(topics.tolist(), docs.tolist()):
        return None
    table = RunTable(tag, topics, docs, ranks, scores, lines)
    return _read_only(table).with_doc_hashes(doc_hashes)


def _joined(parts: list[_RunBlock], name: str) -> np.ndarray:
    """One column of all blocks end to end; the blocks let go of theirs, so that the column is never held twice."""
    pieces = [getattr(part, name) for part in parts]
    for part in parts:
        setattr(part, name, None)
    return pieces[0] if len(pieces) == 1 else np.concatenate(pieces)


def _run_block(columns: Columns, line_offset: int) -> _RunBlock | None:
    """The columns of one well-formed block, or None if something is off."""
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
    doc_hashes = hash_codes(doc_codes)
    pair_hashes = None
    if len(topic_codes[0]) <= _MAX_HASHED:
        pair_hashes = mix(doc_hashes ^ (hash_codes(topic_codes) * _PAIR_MULTIPLIER))
    lines = columns.lines + line_offset if line_offset else columns.lines
    tag = str(as_unicode(tag_codes[:1])[0])
    return _RunBlock(tag, as_unicode(topic_codes), as_unicode(doc_codes), ranks, scores, lines, doc_hashes, pair_hashes)


def _parse_trec_run_slowly(text: str, *, max_errors: int, source: str) -> RunTable:
    """Line-by-line pass that names every problem (used when the fast path finds one)."""
    return _scan_trec_run_slowly(text, max_errors=max_errors).checked(source).table


def _scan_trec_run_slowly(data: bytes | str, *, max_errors: int) -> RunScan:
    """Line-by-line pass that keeps the well-formed rows and names every problem; a line with bytes that are not
    UTF-8 is one of them (the other lines are still read)."""
    text = data if isinstance(data, str) else data.decode("utf-8", errors="surrogateescape")
    errors = _Errors(max_errors)
    topics: list[str] = []
    docs: list[str] = []
    ranks: list[int] = []
    scores: list[float] = []
    lines: list[int] = []
    tag: str | None = None
    tag_line = 0
    seen: dict[tuple[str, str], int] = {}
    complete = True
    try:
        for number, line in enumerate(text.split("\n"), 1):
            parts = line.split()
            if not parts:
                continue
            bad_at = None if line.isascii() else _not_utf8_at(line)
            if bad_at is not None:
                errors.add(number, f"bytes that are not UTF-8 at byte {bad_at} of the line")
                continue
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
            if ok and rank is not None and score is not None:
                topics.append(topic)
                docs.append(doc)
                ranks.append(rank)
                scores.append(score)
                lines.append(number)
    except _TooManyErrors:
        complete = False
    if not errors.items and tag is None:
        errors.items.append((0, "the run file holds no results"))
    table = RunTable(
        tag=tag or "",
        topics=_str_array(topics),
        docs=_str_array(docs),
        ranks=np.array(ranks, dtype=np.int64),
        scores=np.array(scores, dtype=np.float64),
        lines=np.array(lines, dtype=np.int64),
    )
    return RunScan(_read_only(table), errors.items, complete)


def _not_utf8_at(line: str) -> int | None:
    """The 1-based byte offset in `line` (decoded with surrogateescape) of its first byte that is not UTF-8, or None."""
    try:
        line.encode("utf-8")
    except UnicodeEncodeError as exc:
        return len(line[: exc.start].encode("utf-8", errors="surrogateescape")) + 1
    return None


def read_run(path: str | Path, *, max_errors: int = 50) -> RunTable:
    """Read a TREC or TRECVID XML run file (optionally gzipped), a block of lines at a time.

    The file readers of the command line (`trecpool eval`, `analyse`, `sample_eval`) skip `#` comment lines of TREC
    runs as trec_eval 10.0 does (`without_comment_lines`); uploads to the service are parsed by `scan_trec_run`,
    which keeps refusing them.
    """
    source = str(path)
    blocks = file_blocks(path)
    head: list[tuple[bytes, int]] = []
    for block in blocks:  # the first non-blank text decides the format
        head.append(block)
        if without_comment_lines(block[0]).strip():
            break
    if head and without_comment_lines(head[-1][0]).lstrip()[:1] == b"<":
        stream = chain(head, blocks)
        return scan_trecvid_xml_blocks(stream, max_errors=max_errors, source=source).checked(source).table
    uncommented = ((without_comment_lines(block), first) for block, first in chain(head, blocks))
    table = _run_from_blocks(uncommented, source)
    blocks.close()
    if table is not None:
        return table
    return parse_trec_run(without_comment_lines(read_bytes(path)), max_errors=max_errors, source=source)


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
    """Read a qrels file (optionally gzipped), a block of lines at a time: 5 columns means sample_eval, else TREC."""
    qrels = _qrels_from_blocks(file_blocks(path), None)
    if qrels is not None:
        return qrels
    return parse_qrels(read_bytes(path), max_errors=max_errors, source=str(path))


def _parse_qrels(data: bytes | str, width: int, *, max_errors: int, source: str) -> Qrels:
    """Parse 4-column (TREC) or 5-column (sample_eval) qrels."""
    text = decode_utf8(_without_bom(data), source=source)
    fast = _qrels_from_blocks([(text, 1)], width)
    if fast is not None:
        return fast
    return _parse_qrels_slowly(_without_comments(text), width, max_errors=max_errors, source=source)


def _qrels_from_blocks(blocks: Iterable[tuple[bytes | str, int]], width: int | None) -> Qrels | None:
    """The qrels in well-formed text given in blocks of whole lines (with their first line numbers), `#` comment
    lines skipped; None if something is off (the line-by-line pass then says what). `width` None: 5 columns if the
    first non-blank line has 5, else 4."""
    topics: list[str] = []
    docs: list[str] = []
    strata: list[str] = []
    grades: list[str] = []
    lines: list[np.ndarray] = []
    for block, first_line in blocks:
        try:
            text = decode_utf8(block)
        except FormatError:
            return None
        uncommented = _without_comments(text)
        raw = block if uncommented is text and isinstance(block, bytes) else _as_bytes(uncommented)
        if not uncommented.strip():
            continue
        if width is None:
            first = next(line.split() for line in uncommented.split("\n") if line.strip())
            width = 5 if len(first) == 5 else 4
        fast = _fast_columns(uncommented, raw, width)
        if fast is None:
            return None
        columns, block_lines = fast
        topics += columns[0]
        docs += columns[2]
        grades += columns[-1]
        if width == 5:
            strata += columns[3]
        lines.append(block_lines + (first_line - 1))
    if not lines:
        return None
    grade_values = _ints(grades)
    stratum_values = _ints(strata) if width == 5 else None
    if (
        grade_values is None
        or (width == 5 and (stratum_values is None or grade_values.min() < -1))
        or _has_duplicates(topics, docs)
    ):
        return None
    line_numbers = lines[0] if len(lines) == 1 else np.concatenate(lines)
    return Qrels(_str_array(topics), _str_array(docs), grade_values, stratum_values, line_numbers)


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
            if ok and grade is not None and stratum is not None:
                rows.append((parts[0], parts[2], grade, stratum, number))
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
