"""Reading uploaded run files of every accepted format into one shape, and checking them against a campaign."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from isal import isal_zlib

from app.evaluation.errors import FormatError
from app.evaluation.explanations import Explanation
from app.evaluation.fast.hashing import code_matrix, hash_codes
from app.services.validation import in_line_order
from app.storage.models import TaskKind

SOURCE = "run file"
_EMPTY_TEXT = np.zeros(0, dtype=object)
_EMPTY_LINES = np.zeros(0, dtype=np.int64)
_NO_IDS = (_EMPTY_TEXT.astype(str), np.zeros(0, dtype=np.uint64), _EMPTY_LINES)  # ids, their hashes, id of each row
STORED_LEVEL = 1  # ISA-L's levels are 0-3: 1 stores 11.4 bytes per line of a 50 x 1000 run (zlib's level 1: 12.2)
HASHED_WIDTH = 256  # ids are keyed by the hash of their first this many code points (the run parser's docno hashes)


@dataclass(frozen=True)
class ParsedRun:
    """A parsed run of any format: shared columns plus the format's own table, and what reading the file found.

    `errors` are the file's own problems (syntax, repeated docnos, mixed tags), by line; the rows are the lines that
    are well-formed, so the campaign's checks can run on them in the same pass. `complete` is False when reading
    stopped early (at the error cap, or at XML that is not well-formed).
    """

    tag: str | None
    topics: np.ndarray
    lines: np.ndarray
    trec: Any = None  # app.evaluation RunTable for shot/document runs
    moments: Any = None  # app.evaluation.moments MomentRunTable for moment runs
    attributes: dict[str, str] = field(default_factory=dict)  # run attributes found in an XML run
    elapsed: dict[str, float] = field(default_factory=dict)  # seconds per topic, from an XML run's elapsedTime
    errors: list[tuple[int, str]] = field(default_factory=list)
    complete: bool = True
    explanations: Sequence[Explanation] = ()  # of rows kept, in file order (XML and JSON-lines moment runs)

    @property
    def n_rows(self) -> int:
        """Number of ranked results."""
        return len(self.topics)


@dataclass(frozen=True)
class UploadReport:
    """What storing a run upload needs of its file, read and checked in one pass (in a parse process): small and
    cheap to send back, with no per-row Python objects."""

    tag: str | None
    attributes: dict[str, str]  # run attributes found in an XML run
    elapsed: dict[str, float]  # seconds per topic, from an XML run's elapsedTime
    errors: list[tuple[int, str]]  # the file's own problems and those against the campaign's topics, by line
    complete: bool  # False when reading stopped early
    n_rows: int
    n_topics: int
    ids: np.ndarray  # distinct shot (or video) ids, fixed-width text
    id_hashes: np.ndarray  # per distinct id, its `id_hashes` key (uint64)
    id_of_row: np.ndarray  # per row, its index in `ids`
    lines: np.ndarray  # per row, its line in the file
    id_kind: str  # "shot" or "video"
    sha256: str  # of the (decompressed) file
    content: bytes  # the file, zlib-compressed, as runs.content stores it


def inspect_upload(
    data: bytes, fmt: str, *, max_errors: int, topic_numbers: frozenset[str], max_results: int, with_ids: bool = True
) -> UploadReport:
    """Read an upload and check it against the campaign's topics and result limit, and compress it for storage.

    The file is hashed and compressed in a second thread while it is read (ISA-L and hashlib let go of the GIL).
    `with_ids`: work out the distinct shot (or video) ids, which only a check against a collection needs (else
    `ids` and `id_of_row` are empty).
    """
    stored: dict[str, Any] = {}
    packing = threading.Thread(target=_pack, args=(data, stored), name="compress-upload")
    packing.start()
    try:
        parsed = scan(data, fmt, max_errors=max_errors)
        against_campaign = check_against_campaign(parsed, topic_numbers, max_results)
        kind = "video" if parsed.moments is not None else "shot"
        ids, hashes, id_of_row = distinct_ids(parsed) if with_ids else _NO_IDS
        topics = parsed.topics.astype(str)
    finally:
        packing.join()
    if "content" not in stored:  # the thread failed: again here, to raise what it met
        _pack(data, stored)
    return UploadReport(
        tag=parsed.tag,
        attributes=parsed.attributes,
        elapsed=parsed.elapsed,
        errors=in_line_order(parsed.errors, against_campaign),
        complete=parsed.complete,
        n_rows=parsed.n_rows,
        n_topics=len(np.unique(topics)),
        ids=ids,
        id_hashes=hashes,
        id_of_row=id_of_row,
        lines=np.asarray(parsed.lines, dtype=np.int64),
        id_kind=kind,
        sha256=stored["sha256"],
        content=stored["content"],
    )


def _pack(data: bytes, into: dict[str, Any]) -> None:
    """The upload's SHA-256 and its bytes as stored, into `into`: a zlib stream (any zlib reads it back) made by ISA-L,
    about 5x faster than zlib's own level 1 and a little smaller."""
    into["sha256"] = hashlib.sha256(data).hexdigest()
    into["content"] = isal_zlib.compress(data, STORED_LEVEL)


def distinct_ids(parsed: ParsedRun) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct shot (or video) ids of a parsed run, their `id_hashes` and per row its index among them.

    Grouped by hash (the parser's docno hashes where it left them), the ids in hash order: several times faster than
    sorting the strings; the rows are checked against their group's id, and if two ids share a hash they are grouped
    by the strings instead (their hashes may then repeat).
    """
    values = np.asarray(parsed.moments.videos if parsed.moments is not None else _docs(parsed))
    if values.dtype.kind != "U":
        values = values.astype(str)
    given = parsed.trec.doc_hashes if parsed.trec is not None else None
    row_hashes = given if given is not None and values.dtype.itemsize <= 4 * HASHED_WIDTH else id_hashes(values)
    hashes, first, inverse = np.unique(row_hashes, return_index=True, return_inverse=True)
    ids = values[first]
    inverse = inverse.reshape(-1)
    if not np.array_equal(ids[inverse], values):
        ids, inverse = np.unique(values, return_inverse=True)
        hashes, inverse = id_hashes(ids), inverse.reshape(-1)
    return ids, hashes, inverse.astype(np.int64)


def code_hashes(codes: np.ndarray) -> np.ndarray:
    """The key of each row of a zero-padded code-point matrix: `hash_codes` of its first HASHED_WIDTH code points, as
    the run parser hashes docnos (equal ids have equal keys; different ones may share one)."""
    return hash_codes(codes[:, :HASHED_WIDTH])


def id_hashes(values: np.ndarray) -> np.ndarray:
    """`code_hashes` of an array of ids."""
    codes = code_matrix(np.asarray(values, dtype=str))
    assert codes is not None  # a unicode array has its matrix
    return code_hashes(codes)


@dataclass(frozen=True)
class KnownIds:
    """A collection's distinct shot (or video) ids, for checking run uploads against it: their `code_hashes` sorted,
    and their code points in the same order (zero-padded rows, in the smallest unsigned dtype holding them), against
    which a hash found is confirmed. `hashes.itemsize + codes.shape[1] * codes.itemsize` bytes per id."""

    hashes: np.ndarray
    codes: np.ndarray

    @classmethod
    def of_codes(cls, codes: np.ndarray) -> KnownIds:
        """The known ids of a code-point matrix of distinct ids (one row each)."""
        hashes = code_hashes(codes)
        order = np.argsort(hashes, kind="stable")
        top = int(codes.max()) if codes.size else 0
        narrow = np.uint8 if top < 1 << 8 else np.uint16 if top < 1 << 16 else np.uint32
        return cls(hashes[order], np.ascontiguousarray(codes[order], dtype=narrow))

    @property
    def nbytes(self) -> int:
        """Bytes held."""
        return int(self.hashes.nbytes + self.codes.nbytes)

    def absent(self, ids: np.ndarray, hashes: np.ndarray) -> np.ndarray:
        """Which of `ids` (a unicode array, with their `id_hashes`) are not among the known ids, as a mask: a binary
        search of each hash, then the code points of the ids whose hash was found compared with the known id's."""
        n = len(self.hashes)
        if n == 0:
            return np.ones(len(ids), dtype=bool)
        at = np.minimum(np.searchsorted(self.hashes, hashes), n - 1)
        found = np.flatnonzero(self.hashes[at] == hashes)
        absent = np.ones(len(ids), dtype=bool)
        codes = code_matrix(np.ascontiguousarray(ids[found]))
        assert codes is not None
        same = _same_rows(codes, self.codes[at[found]])
        absent[found[same]] = False
        for slot in np.flatnonzero(~same).tolist():  # another id has this hash: compare with each known id of it
            index = int(found[slot])
            key = hashes[index : index + 1]
            lo, hi = int(np.searchsorted(self.hashes, key)[0]), int(np.searchsorted(self.hashes, key, side="right")[0])
            rows = self.codes[lo:hi]
            absent[index] = not _same_rows(np.repeat(codes[slot : slot + 1], len(rows), axis=0), rows).any()
        return absent


def _same_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per row, whether two zero-padded code-point matrices of equal height hold the same string."""
    width = min(a.shape[1], b.shape[1])
    same = np.all(a[:, :width] == b[:, :width], axis=1)
    for wider in (a, b):
        if wider.shape[1] > width:
            same &= ~np.any(wider[:, width:], axis=1)
    return same


def _docs(parsed: ParsedRun) -> np.ndarray:
    """The docno column of a parsed shot run (empty when it has no rows)."""
    return parsed.trec.docs if parsed.trec is not None else _EMPTY_TEXT


def detect_format(data: bytes, task_kind: TaskKind) -> str:
    """The format of an upload: moments for moment campaigns, xml if it starts with '<', else trec."""
    if task_kind is TaskKind.moments:
        return "moments"
    return "xml" if data.lstrip()[:1] == b"<" else "trec"


def parse(data: bytes, fmt: str, *, max_errors: int) -> ParsedRun:
    """Parse an upload in the given format; raises FormatError with line numbers."""
    parsed = scan(data, fmt, max_errors=max_errors)
    if parsed.errors:
        raise FormatError(parsed.errors, source=SOURCE)
    return parsed


def scan(data: bytes, fmt: str, *, max_errors: int) -> ParsedRun:
    """Read an upload in the given format as far as it goes: its well-formed rows and every problem, by line."""
    if fmt == "moments":
        return _scan_moments(data, max_errors)
    from app.evaluation.formats import trec_files

    if fmt == "xml":
        found = trec_files.scan_trecvid_xml(data, max_errors=max_errors, source=SOURCE)
    else:
        found = trec_files.scan_trec_run(data, max_errors=max_errors, source=SOURCE)
    table = found.table
    return ParsedRun(
        tag=table.tag,
        topics=table.topics,
        lines=table.lines,
        trec=table,
        attributes=found.attributes,
        elapsed=found.elapsed,
        errors=found.errors,
        complete=found.complete,
        explanations=found.explanations,
    )


def _scan_moments(data: bytes, max_errors: int) -> ParsedRun:
    """A moment run's rows and errors. The moment parser raises on any error; its well-formed rows are then those of
    the file with the lines it named emptied (line numbers kept), and up to its last error when it stopped early."""
    from app.evaluation.moments import parse_moment_run

    try:
        return _moment_rows(parse_moment_run(data, max_errors=max_errors, source=SOURCE))
    except FormatError as exc:
        errors = exc.errors
    complete = len(errors) < max(1, max_errors)
    bad = {line for line, _ in errors}
    if 0 in bad:  # a whole-file error (an empty file): no rows
        return ParsedRun(tag=None, topics=_EMPTY_TEXT, lines=_EMPTY_LINES, errors=errors, complete=complete)
    rows = data.split(b"\n")
    if not complete:
        rows = rows[: max(bad)]
    kept = b"\n".join(b"" if number in bad else row for number, row in enumerate(rows, 1))
    try:
        table = parse_moment_run(kept, max_errors=1, source=SOURCE)
    except FormatError:  # nothing well-formed is left, or it reads differently without those lines
        return ParsedRun(tag=None, topics=_EMPTY_TEXT, lines=_EMPTY_LINES, errors=errors, complete=False)
    return _moment_rows(table, errors, complete)


def _moment_rows(table: Any, errors: list[tuple[int, str]] | None = None, complete: bool = True) -> ParsedRun:
    """A ParsedRun of a moment run table."""
    return ParsedRun(
        tag=table.tag,
        topics=table.topics,
        lines=table.lines,
        moments=table,
        errors=errors or [],
        complete=complete,
        explanations=table.explanations,
    )


def check_against_campaign(parsed: ParsedRun, topic_ids: Collection[str], max_results: int) -> list[tuple[int, str]]:
    """Line errors, by line, for unknown topics (at a topic's first line) and for topics with more than
    `max_results` results (at the first line beyond the limit)."""
    errors: list[tuple[int, str]] = []
    topics = parsed.topics.astype(str)
    names, inverse, counts = np.unique(topics, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    order = np.lexsort((parsed.lines, inverse))  # each topic's rows together, in file order
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    for index, (name, count) in enumerate(zip(names.tolist(), counts.tolist(), strict=True)):
        if name not in topic_ids:
            line = int(parsed.lines[order[starts[index]]])
            errors.append((line, f"unknown topic {name!r} ({count} line(s), the first here)"))
        elif count > max_results:
            line = int(parsed.lines[order[starts[index] + max_results]])
            beyond = f"result {max_results + 1} here"
            errors.append((line, f"topic {name!r} has {count} results, more than the {max_results} allowed: {beyond}"))
    return sorted(errors)


def topic_id_column(topics: np.ndarray, topic_ids: dict[str, int]) -> np.ndarray:
    """Topic row ids for a column of topic numbers, mapped once per distinct topic."""
    names, inverse = np.unique(topics.astype(str), return_inverse=True)
    return np.array([topic_ids[name] for name in names.tolist()], dtype=np.int64)[inverse.reshape(-1)]
