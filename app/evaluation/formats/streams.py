"""Reading files and uploads as streams: gzip decompressed a piece at a time (uploads within a size limit), text cut
into blocks of whole lines, so that a parser never needs a whole file's text, nor its compressed bytes, at once.

Gzip is recognised by its magic bytes, never by a file name. Decompression is incremental (`zlib.decompressobj`
with a bound on each output piece), so neither the compressed nor the decompressed data has to be in memory whole,
and a limit on the decompressed size is enforced before more than one piece past it has been produced.
Concatenated gzip members are read one after another and zero padding between or after them is skipped, as
`gzip -d` and Python's gzip module do; a truncated or corrupt stream is a FormatError naming the source.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path

from app.evaluation.errors import FormatError

GZIP_MAGIC = b"\x1f\x8b"
PIECE = 1 << 20  # bytes read from a file, and at most produced by one decompression step
BLOCK_BYTES = 1 << 24  # text handed to a parser at a time
_BOM = b"\xef\xbb\xbf"
_ENDS_EARLY = "it ends before its end-of-stream marker"
_GZIP_WINDOW = 16 + zlib.MAX_WBITS  # zlib's window bits for the gzip wrapper (header and CRC checked)


class TooLarge(ValueError):
    """Decompressed data beyond the allowed number of bytes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(f"the decompressed data is over the limit of {limit} bytes")


def is_gzip(head: bytes) -> bool:
    """Whether data starting with `head` is gzip-compressed (by its magic bytes)."""
    return head[:2] == GZIP_MAGIC


def file_pieces(path: str | Path, size: int | None = None) -> Iterator[bytes]:
    """The bytes of a file, `size` (default PIECE) bytes at a time."""
    size = size or PIECE
    with open(path, "rb") as handle:
        while piece := handle.read(size):
            yield piece


def gunzip_pieces(
    pieces: Iterable[bytes | memoryview], *, limit: int | None = None, source: str = "input"
) -> Iterator[bytes]:
    """The decompressed bytes of gzip data given in pieces, in pieces of at most PIECE bytes.

    Raises FormatError if the stream is corrupt or ends early, and TooLarge as soon as more than `limit` bytes came
    out (at most one byte more is ever produced).
    """
    inflater: zlib._Decompress | None = None
    produced = 0
    try:
        for piece in pieces:
            data = piece
            while data:
                if inflater is None:
                    if data[:1] == b"\x00":  # padding after a member
                        data = bytes(data).lstrip(b"\x00")
                        if not data:
                            break
                    inflater = zlib.decompressobj(_GZIP_WINDOW)
                out = inflater.decompress(data, _room(produced, limit))
                if inflater.eof:
                    data, inflater = inflater.unused_data, None
                else:
                    data = inflater.unconsumed_tail
                produced += len(out)
                if limit is not None and produced > limit:
                    raise TooLarge(limit)
                if out:
                    yield out
        while inflater is not None and not inflater.eof:  # output zlib still holds, then the end of the member
            out = inflater.decompress(b"", _room(produced, limit))
            if not out:
                raise FormatError([(0, f"not a complete gzip file ({_ENDS_EARLY})")], source=source)
            produced += len(out)
            if limit is not None and produced > limit:
                raise TooLarge(limit)
            yield out
    except zlib.error as exc:
        raise FormatError([(0, f"not a complete gzip file ({exc})")], source=source) from None


def _room(produced: int, limit: int | None) -> int:
    """How many bytes the next decompression step may produce: a piece, and never more than one byte past `limit`."""
    return PIECE if limit is None else max(1, min(PIECE, limit - produced + 1))  # PIECE read when called: tests set it


def decompressed_pieces(pieces: Iterable[bytes], *, limit: int | None = None, source: str = "input") -> Iterator[bytes]:
    """The pieces as given, or decompressed when the data starts with gzip's magic bytes."""
    iterator = iter(pieces)
    head = b""
    for piece in iterator:  # the first two bytes decide, whatever the size of the first pieces
        head += piece
        if len(head) >= len(GZIP_MAGIC):
            break
    if not is_gzip(head):
        if head:
            yield head
        yield from iterator
        return
    yield from gunzip_pieces(_chain(head, iterator), limit=limit, source=source)


def _chain(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    """`first`, then the pieces of `rest`."""
    yield first
    yield from rest


def gunzip_limited(data: bytes, limit: int, *, source: str = "input") -> bytes:
    """The decompressed bytes of gzip `data`; TooLarge past `limit` bytes (about `limit` bytes held at most)."""
    out = bytearray()
    for piece in gunzip_pieces(_slices(data), limit=limit, source=source):
        out += piece
    return bytes(out)


def _slices(data: bytes) -> Iterator[memoryview]:
    """`data` in PIECE-sized views (no copies)."""
    view = memoryview(data)
    for start in range(0, len(view), PIECE):
        yield view[start : start + PIECE]


def line_blocks(pieces: Iterable[bytes], block_bytes: int | None = None) -> Iterator[tuple[bytes, int]]:
    """Data cut into blocks of whole lines (about `block_bytes`, default BLOCK_BYTES, each; the last may lack its
    newline), each with the 1-based number of its first line; a leading UTF-8 byte-order mark is dropped."""
    block_bytes = block_bytes or BLOCK_BYTES
    buffer = bytearray()
    line = 1
    first = True
    for piece in pieces:
        buffer += piece
        if first and len(buffer) >= len(_BOM):
            if buffer.startswith(_BOM):
                del buffer[: len(_BOM)]
            first = False
        if len(buffer) < block_bytes:
            continue
        cut = buffer.rfind(b"\n") + 1
        if cut:
            with memoryview(buffer) as view:
                block = bytes(view[:cut])
            del buffer[:cut]
            yield block, line
            line += block.count(b"\n")
    if first and buffer.startswith(_BOM):
        del buffer[: len(_BOM)]
    if buffer:
        yield bytes(buffer), line


def file_blocks(path: str | Path, block_bytes: int | None = None) -> Iterator[tuple[bytes, int]]:
    """A file's text (gunzipped if it is gzip-compressed) in blocks of whole lines with their first line numbers."""
    return line_blocks(decompressed_pieces(file_pieces(path), source=str(path)), block_bytes)
