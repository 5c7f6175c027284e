"""Reading files and uploads as streams: gzip decompressed a piece at a time (uploads within a size limit), text cut
into blocks of whole lines, so that a parser never needs a whole file's text, nor its compressed bytes, at once.

Compression is recognised by its magic bytes, never by a file name: gzip, bzip2 and xz are read; zstd and zip are
refused with a FormatError saying how to decompress them. Decompression is incremental (a bound on each output
piece), so neither the compressed nor the decompressed data has to be in memory whole, and a limit on the
decompressed size is enforced before more than one piece past it has been produced. Concatenated members (gzip) or
streams (bzip2, xz) are read one after another and zero padding between or after them is skipped, as `gzip -d` and
Python's gzip module do; a truncated or corrupt stream is a FormatError naming the source.

A file that cannot be opened (missing, a directory, not readable) is a FormatError naming it, in one line.
"""

from __future__ import annotations

import errno
import os
import stat
import zlib
from collections.abc import Callable, Generator, Iterable, Iterator
from pathlib import Path
from typing import BinaryIO, Protocol

from app.evaluation.errors import FormatError

GZIP_MAGIC = b"\x1f\x8b"
BZIP2_MAGIC = b"BZh"  # then the block size, a digit 1-9, then a block's or the end's 48-bit magic
_BZIP2_BLOCKS = (b"\x31\x41\x59\x26\x53\x59", b"\x17\x72\x45\x38\x50\x90")
XZ_MAGIC = b"\xfd7zXZ\x00"
_REFUSED = {  # compressed formats recognised only to say what to do
    b"\x28\xb5\x2f\xfd": "zstd-compressed: decompress it first (zstd -d)",
    b"PK\x03\x04": "a zip archive: extract the file first (unzip)",
}
_HEAD_BYTES = 10  # enough to tell every format above
PIECE = 1 << 20  # bytes read from a file, and at most produced by one decompression step
BLOCK_BYTES = 1 << 22  # text handed to a parser at a time (its working arrays are a few times this)
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


def compression(head: bytes) -> str | None:
    """ "gzip", "bzip2" or "xz" when data starting with `head` (its first 10 bytes or all of it) is so compressed,
    else None; refused formats (zstd, zip) are a FormatError saying how to decompress them."""
    if is_gzip(head):
        return "gzip"
    if head[:3] == BZIP2_MAGIC and head[3:4].isdigit() and head[3:4] != b"0" and head[4:10] in _BZIP2_BLOCKS:
        return "bzip2"
    if head.startswith(XZ_MAGIC):
        return "xz"
    for magic, advice in _REFUSED.items():
        if head.startswith(magic):
            raise FormatError([(0, f"{advice}; trecpool reads text, gzip, bzip2 and xz files")])
    return None


_OPEN_ERRORS = {
    errno.ENOENT: "no such file",
    errno.EISDIR: "is a directory, not a file",
    errno.EACCES: "not readable (permission denied)",
    errno.EPERM: "not readable (permission denied)",
    errno.ENOTDIR: "no such file (a part of its path is not a directory)",
}


def open_error(path: str | Path, exc: OSError) -> FormatError:
    """The one-line FormatError naming `path` for an error opening it for reading."""
    return FormatError([(0, _OPEN_ERRORS.get(exc.errno or 0, exc.strerror or str(exc)))], source=str(path))


def check_readable(path: str | Path) -> bool:
    """Whether `path` is a regular file (True) or something read once, such as a pipe (False); a FormatError naming
    it when it is missing, a directory or not readable."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise open_error(path, exc) from None
    if stat.S_ISDIR(mode):
        raise open_error(path, IsADirectoryError(errno.EISDIR, "is a directory"))
    if not os.access(path, os.R_OK):
        raise open_error(path, PermissionError(errno.EACCES, "permission denied"))
    return stat.S_ISREG(mode)


def open_binary(path: str | Path) -> BinaryIO:
    """`path` opened for reading bytes; a FormatError naming it when it is missing, a directory or not readable."""
    try:
        return open(path, "rb")  # noqa: SIM115 - the caller closes it
    except OSError as exc:
        raise open_error(path, exc) from None


def file_pieces(path: str | Path, size: int | None = None) -> Iterator[bytes]:
    """The bytes of a file, `size` (default PIECE) bytes at a time (a FormatError if it cannot be opened)."""
    size = size or PIECE
    with open_binary(path) as handle:
        while piece := handle.read(size):
            yield piece


def first_line(path: str | Path, *, comment: bytes = b"#", limit: int = 1 << 16) -> bytes:
    """The first line of a file (decompressed, without a byte-order mark) that is neither blank nor a `comment`
    line, stripped and cut at `limit` bytes; b"" if there is none. Reads only about as far as that line."""
    pieces = decompressed_pieces(file_pieces(path, limit), source=str(path))
    buffer = b""
    try:
        for number, piece in enumerate(pieces):
            buffer += piece
            if number == 0:
                buffer = buffer.removeprefix(_BOM)
            *lines, buffer = buffer.split(b"\n")
            if len(buffer) > limit:  # a very long line: its start is enough
                lines.append(buffer)
            for line in lines:
                stripped = line.strip()
                if stripped and not stripped.startswith(comment):
                    return stripped[:limit]
            if len(buffer) > limit:
                return b""
    finally:
        pieces.close()
    stripped = buffer.strip()
    return b"" if stripped.startswith(comment) else stripped[:limit]


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


class _Decompressor(Protocol):
    """What bz2.BZ2Decompressor and lzma.LZMADecompressor share."""

    @property
    def eof(self) -> bool:
        """Whether the end of the stream was reached."""
        ...

    @property
    def needs_input(self) -> bool:
        """Whether more input is needed before more output can come."""
        ...

    @property
    def unused_data(self) -> bytes:
        """The input after the end of the stream."""
        ...

    def decompress(self, data: bytes, max_length: int = -1) -> bytes:
        """Decompressed bytes of `data` (and of input held back), at most `max_length`."""
        ...


def unpacked_pieces(
    pieces: Iterable[bytes | memoryview],
    kind: str,
    *,
    limit: int | None = None,
    source: str = "input",
) -> Iterator[bytes]:
    """The decompressed bytes of bzip2 or xz (`kind`) data given in pieces, in pieces of at most PIECE bytes.

    Streams follow one another; zero padding between or after them is skipped. Raises FormatError if the data is
    corrupt or ends early, and TooLarge as soon as more than `limit` bytes came out.
    """
    new, errors = _unpacker(kind)
    decompressor: _Decompressor | None = None
    produced = 0
    try:
        for piece in pieces:
            data = bytes(piece)
            while data:
                if decompressor is None:
                    data = data.lstrip(b"\x00")  # padding after a stream
                    if not data:
                        break
                    decompressor = new()
                out = decompressor.decompress(data, _room(produced, limit))
                data = b""
                while True:  # the output held back by the bound on each step, then the next stream's input
                    produced += len(out)
                    if limit is not None and produced > limit:
                        raise TooLarge(limit)
                    if out:
                        yield out
                    if decompressor.eof:
                        data, decompressor = decompressor.unused_data, None
                        break
                    if decompressor.needs_input:
                        break
                    out = decompressor.decompress(b"", _room(produced, limit))
        if decompressor is not None:
            raise FormatError([(0, f"not a complete {kind} file ({_ENDS_EARLY})")], source=source)
    except errors as exc:
        raise FormatError([(0, f"not a complete {kind} file ({exc})")], source=source) from None


def _unpacker(kind: str) -> tuple[Callable[[], _Decompressor], type[Exception] | tuple[type[Exception], ...]]:
    """A new decompressor of `kind` (bzip2 or xz), and the exceptions it raises on bad data (imported when used)."""
    if kind == "bzip2":
        import bz2

        return bz2.BZ2Decompressor, (OSError, EOFError)
    import lzma

    return lzma.LZMADecompressor, (lzma.LZMAError, EOFError)


def decompressed_pieces(
    pieces: Iterable[bytes], *, limit: int | None = None, source: str = "input"
) -> Generator[bytes, None, None]:
    """The pieces as given, or decompressed when the data starts with the magic bytes of gzip, bzip2 or xz."""
    iterator = iter(pieces)
    head = b""
    for piece in iterator:  # the first bytes decide, whatever the size of the first pieces
        head += piece
        if len(head) >= _HEAD_BYTES:
            break
    try:
        kind = compression(head)
    except FormatError as exc:
        raise FormatError(exc.errors, source=source) from None
    if kind is None:
        if head:
            yield head
        yield from iterator
    elif kind == "gzip":
        yield from gunzip_pieces(_chain(head, iterator), limit=limit, source=source)
    else:
        yield from unpacked_pieces(_chain(head, iterator), kind, limit=limit, source=source)


def _chain(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    """`first`, then the pieces of `rest`."""
    yield first
    yield from rest


def gunzip_limited(data: bytes, limit: int, *, source: str = "input") -> bytes:
    """The decompressed bytes of gzip `data`; TooLarge past `limit` bytes (about `limit` bytes held at most)."""
    out = bytearray()
    for piece in gunzip_pieces(byte_pieces(data), limit=limit, source=source):
        out += piece
    return bytes(out)


def byte_pieces(data: bytes) -> Iterator[memoryview]:
    """`data` in PIECE-sized views (no copies)."""
    view = memoryview(data)
    for start in range(0, len(view), PIECE):
        yield view[start : start + PIECE]


def line_blocks(
    pieces: Iterable[bytes | memoryview], block_bytes: int | None = None
) -> Generator[tuple[bytes, int], None, None]:
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


def file_blocks(path: str | Path, block_bytes: int | None = None) -> Generator[tuple[bytes, int], None, None]:
    """A file's text (decompressed if it is gzip, bzip2 or xz) in blocks of whole lines with their first line
    numbers."""
    return line_blocks(decompressed_pieces(file_pieces(path), source=str(path)), block_bytes)
