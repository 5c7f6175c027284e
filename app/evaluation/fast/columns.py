"""Vectorised splitting of whitespace-separated text files into fixed columns (no Python object per token).

The rules are those of the line-by-line parsers: lines are separated by '\\n' only, tokens by `str.split()`'s white
space (ASCII and Unicode), blank lines are skipped. `split_columns` returns None whenever the file is not a plain
table of `width` columns (or is awkward to hold in fixed-width arrays); the callers then take their slow paths,
which name the problems. Token text is handled as code points: ASCII files in a uint8 buffer, other files in a
UTF-32 buffer, so a gathered column is a numpy unicode array without decoding each value.

Invariants: a file holding a NUL code point is declined (fixed-width unicode arrays would drop it); `parse_ints`
gives int(token) for plain decimals below 10**18 and None otherwise; `parse_floats` gives float(token) bit for bit
(short decimals as m / 10**k, both exact doubles; everything else through numpy's cast, which calls float()).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.evaluation.errors import decode_utf8

# Code points that str.split() treats as white space.
_ASCII_SPACE = (9, 10, 11, 12, 13, 28, 29, 30, 31, 32)
_OTHER_SPACE = np.array([133, 160, 5760, *range(8192, 8203), 8232, 8233, 8239, 8287, 12288], dtype=np.uint32)
_SPACE_TABLE = np.zeros(256, dtype=bool)
_SPACE_TABLE[list(_ASCII_SPACE)] = True
_MAX_PADDING = 8  # a column is gathered into a fixed-width matrix only if that costs <= 8x its text (+ 1 MiB)
_DIGITS_EXACT = 15  # a decimal with at most 15 digits is exactly m / 10**k with m < 2**53: IEEE division rounds it
_POWERS_OF_TEN = np.array([float(f"1e{k}") for k in range(_DIGITS_EXACT + 1)])  # all exact doubles


@dataclass(frozen=True)
class Columns:
    """A table of `width` tokens per non-blank line, as offsets into a code-point buffer."""

    buffer: np.ndarray  # uint8 (ASCII text) or uint32 (code points)
    starts: np.ndarray  # int64 [n_rows, width] token start offsets
    lengths: np.ndarray  # int64 [n_rows, width] token lengths (code points)
    lines: np.ndarray  # int64 [n_rows] 1-based line numbers

    def __len__(self) -> int:
        """Number of rows."""
        return len(self.lines)

    def matrix(self, column: int) -> np.ndarray | None:
        """The column's code points as a zero-padded [n_rows, max_length] matrix, or None if too sparse to hold."""
        starts, lengths = self.starts[:, column], self.lengths[:, column]
        width = int(lengths.max()) if len(lengths) else 0
        if width * len(lengths) > _MAX_PADDING * int(lengths.sum()) + (1 << 20):
            return None
        buffer = self.buffer
        need = int(starts.max()) + width if len(starts) else 0
        if need > len(buffer):
            buffer = np.concatenate((buffer, np.zeros(need - len(buffer), dtype=buffer.dtype)))
        out = np.lib.stride_tricks.sliding_window_view(buffer, max(width, 1))[starts, :width]
        out *= np.arange(width) < lengths[:, None]
        return out

    def strings(self, column: int) -> np.ndarray | None:
        """The column as a numpy unicode array, or None (see `matrix`)."""
        codes = self.matrix(column)
        return None if codes is None else as_unicode(codes)


def as_unicode(codes: np.ndarray) -> np.ndarray:
    """A [n, width] code-point matrix (zero-padded) as a unicode array of n strings."""
    n, width = codes.shape
    wide = np.ascontiguousarray(codes, dtype=np.uint32)
    return wide.view(f"<U{max(width, 1)}").reshape(n) if width else np.zeros(n, dtype="<U1")


def split_columns(data: bytes | str, width: int, *, source: str) -> Columns | None:
    """The table in `data` if every non-blank line has exactly `width` tokens, else None (UTF-8 errors raise)."""
    if isinstance(data, str):
        buffer, space = _ascii(data.encode("ascii")) if data.isascii() else _code_points(data)
    elif data.isascii():
        buffer, space = _ascii(data)
    else:
        buffer, space = _code_points(decode_utf8(data, source=source))
    if space is None or len(buffer) == 0:  # a NUL code point: fixed-width arrays would drop it
        return None
    # Token boundaries: where the white-space mask changes (tokens and gaps alternate).
    changes = np.flatnonzero(space[1:] != space[:-1]) + 1
    if not space[0]:
        changes = np.concatenate(([0], changes))
    if not space[-1]:
        changes = np.concatenate((changes, [len(buffer)]))
    starts, ends = changes[0::2], changes[1::2]
    if len(starts) == 0 or len(starts) % width:
        return None
    starts, ends = starts.reshape(-1, width), ends.reshape(-1, width)
    # Each row's tokens on one line, each row on its own line: newlines before its first and last token agree,
    # and strictly increase from row to row.
    newlines = np.flatnonzero(buffer == 10)
    before_first = np.searchsorted(newlines, starts[:, 0])
    if not np.array_equal(before_first, np.searchsorted(newlines, starts[:, -1])):
        return None
    if len(before_first) > 1 and not np.all(before_first[1:] > before_first[:-1]):
        return None
    return Columns(buffer=buffer, starts=starts, lengths=ends - starts, lines=before_first + 1)


def _ascii(raw: bytes) -> tuple[np.ndarray, np.ndarray | None]:
    """The bytes of ASCII text and their white-space mask (None if the text holds a NUL)."""
    buffer = np.frombuffer(raw, dtype=np.uint8)
    space = buffer <= 32
    controls = buffer[buffer < 32]
    if not _SPACE_TABLE[controls].all():  # control characters other than str.split()'s white space
        if not buffer.all():
            return buffer, None
        space = _SPACE_TABLE[buffer]
    return buffer, space


def _code_points(text: str) -> tuple[np.ndarray, np.ndarray | None]:
    """A UTF-32 code-point buffer of `text` and its white-space mask (None if the text holds a NUL)."""
    buffer = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    if not buffer.all():
        return buffer, None
    space = _SPACE_TABLE[np.minimum(buffer, 255)] & (buffer < 128)
    wide = buffer >= 128
    if wide.any():
        space[wide] = np.isin(buffer[wide], _OTHER_SPACE)
    return buffer, space


def parse_ints(codes: np.ndarray | None) -> np.ndarray | None:
    """int64 values of a column of plain decimal integers ([+-]digits, < 10**18), or None if some is not one."""
    scan = _scan(codes, 18)
    if scan is None:
        return None
    value, n_digits, n_dots, bad, negative = scan
    if bad.any() or n_dots.any() or not n_digits.all():
        return None
    return np.where(negative, -value, value)


def parse_floats(codes: np.ndarray | None) -> np.ndarray | None:
    """float64 values of a column of numbers exactly as Python's float() reads them, or None if one is not a number.

    Plain decimals with at most 15 digits are computed as m / 10**k (exact: both are doubles and IEEE division rounds
    correctly, like float()); other tokens (exponents, long mantissas, inf) go through numpy's string cast, which calls
    float() itself; a token with an underscore (a digit separator to float(), not to C's atof) gives None.
    """
    scan = _scan(codes, _DIGITS_EXACT)
    if scan is None:
        return None
    assert codes is not None
    value, n_digits, n_dots, bad, negative = scan
    simple = ~bad & (n_dots <= 1) & (n_digits >= 1)
    quotient = value.astype(np.float64) / _POWERS_OF_TEN[np.minimum(scan_fraction(codes, n_dots), _DIGITS_EXACT)]
    values: np.ndarray = np.where(negative, -quotient, quotient)
    rest = ~simple
    if rest.any():
        if (codes[rest] == ord("_")).any():  # float() reads 1_5 as 15.0, C's atof as 1.0: let the caller refuse it
            return None
        try:
            values[rest] = as_unicode(codes[rest]).astype(np.float64)
        except (ValueError, OverflowError):
            return None
    return values


def scan_fraction(codes: np.ndarray, n_dots: np.ndarray) -> np.ndarray:
    """Number of digits after the (first) decimal point of each token."""
    columns = codes.T
    seen_dot = np.zeros(len(codes), dtype=bool)
    fraction = np.zeros(len(codes), dtype=np.int64)
    if not n_dots.any():
        return fraction
    for c in columns:
        fraction += seen_dot & ((c - np.asarray(48, c.dtype)) < 10)
        seen_dot |= c == 46
    return fraction


def _scan(codes: np.ndarray | None, max_digits: int) -> tuple[np.ndarray, ...] | None:
    """Per token: digits as an int64, digit count, '.' count, a bad-character flag (also set past `max_digits`
    digits) and a leading '-' flag; a leading '+' or '-' is allowed."""
    if codes is None or codes.shape[1] == 0:
        return None
    columns = np.ascontiguousarray(codes.T)
    n = len(codes)
    first = columns[0]
    negative = first == 45
    signed = negative | (first == 43)
    value = np.zeros(n, dtype=np.int64)
    n_digits = np.zeros(n, dtype=np.int64)
    n_dots = np.zeros(n, dtype=np.int64)
    bad = np.zeros(n, dtype=bool)
    zero = np.asarray(48, dtype=columns.dtype)
    for j, c in enumerate(columns):
        digit = c - zero  # wraps around for code points below '0'
        is_digit = digit < 10
        is_dot = c == 46
        other = ~is_digit & ~is_dot & (c != 0)
        if j == 0:
            other &= ~signed
        bad |= other
        n_dots += is_dot
        if is_digit.any():
            n_digits += is_digit
            value = np.where(is_digit, value * 10 + digit, value)
    bad |= n_digits > max_digits
    return value, n_digits, n_dots, bad, negative
