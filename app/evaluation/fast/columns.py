"""Vectorised splitting of whitespace-separated text files into fixed columns (no Python object per token).

The rules are those of the line-by-line parsers: lines are separated by '\\n' only, tokens by `str.split()`'s white
space (ASCII and Unicode), blank lines are skipped. `split_columns` returns None whenever the file is not a plain
table of `width` columns (or is awkward to hold in fixed-width arrays); the callers then take their slow paths,
which name the problems. Token text is handled as code points: ASCII files in a uint8 buffer, other files in a
UTF-32 buffer, so a gathered column is a numpy unicode array without decoding each value.

ASCII text laid out the usual way (tokens one tab or space apart, lines ended by one '\\n', none blank) is split from
its separators alone; any other layout takes the general split over a white-space mask.

Invariants: a file holding a NUL code point is declined (fixed-width unicode arrays would drop it); `parse_ints`
gives int(token) for plain decimals below 10**18 and None otherwise; `parse_floats` gives float(token) bit for bit
(decimals m / 10**k in doubles where m < 2**53, the rest of up to 19 digits in extended precision with the halfway
cases checked, or of up to 15 digits where long double is no wider; everything else through numpy's cast, which calls
float()).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from app.evaluation.errors import decode_utf8

# Code points that str.split() treats as white space.
_ASCII_SPACE = (9, 10, 11, 12, 13, 28, 29, 30, 31, 32)
_OTHER_SPACE = np.array([133, 160, 5760, *range(8192, 8203), 8232, 8233, 8239, 8287, 12288], dtype=np.uint32)
_SPACE_TABLE = np.zeros(256, dtype=bool)
_SPACE_TABLE[list(_ASCII_SPACE)] = True
_MAX_PADDING = 8  # a column is gathered into a fixed-width matrix only if that costs <= 8x its text (+ 1 MiB)
_LITTLE_ENDIAN = sys.byteorder == "little"  # a uint64 read from bytes holds the first byte in its low bits
_LOW_BYTES = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)  # the first k bytes of a uint64
_DIGITS_EXACT = 15  # a decimal with at most 15 digits is exactly m / 10**k with m < 2**53: IEEE division rounds it
_EXACT_MANTISSA = 2**53  # below it m is an exact double, and so is 10**k for k <= 22: one division, one rounding
_POWERS_OF_TEN = np.array([float(f"1e{k}") for k in range(19 + 1)])  # all exact doubles (up to 1e22 are)
# x87 extended (64-bit significand) or quad long doubles hold every m < 10**19 and 10**k for k <= 27 exactly
_EXTENDED = np.finfo(np.longdouble).nmant >= 63
_MAX_DIGITS = 19 if _EXTENDED else _DIGITS_EXACT
_EXTENDED_POWERS = np.array([10**k for k in range(_MAX_DIGITS + 1)], dtype=np.longdouble)


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
        if self.buffer.dtype == np.uint8 and _LITTLE_ENDIAN and width:
            return _gathered_bytes(self.buffer, starts, lengths, width)
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


def _gathered_bytes(buffer: np.ndarray, starts: np.ndarray, lengths: np.ndarray, width: int) -> np.ndarray:
    """`Columns.matrix` for a byte buffer: each token read 8 bytes at a time as one unaligned uint64 (a single
    gather per 8 bytes instead of a row copy per token), the bytes past its end masked off."""
    words = -(-width // 8)
    need = int(starts.max()) + 8 * words
    if need > len(buffer):
        buffer = np.concatenate((buffer, np.zeros(need - len(buffer), dtype=np.uint8)))
    as_words = np.ndarray(shape=(len(buffer) - 7,), dtype=np.uint64, buffer=buffer, strides=(1,))
    out = np.empty((len(starts), words), dtype=np.uint64)
    for word in range(words):
        kept = np.clip(lengths - 8 * word, 0, 8)
        np.bitwise_and(as_words[starts + 8 * word], _LOW_BYTES[kept], out=out[:, word])
    return np.ascontiguousarray(out.view(np.uint8)[:, :width])


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
        single = _single_separated(np.frombuffer(data, dtype=np.uint8), width)
        if single is not None:
            return single
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


def _single_separated(buffer: np.ndarray, width: int) -> Columns | None:
    """The table of ASCII text laid out the usual way (tokens one tab or space apart, each line ended by one '\\n',
    none blank), found from its separators alone; None for any other layout, which the general split then reads."""
    separators = np.flatnonzero(buffer <= 32)  # every byte str.split() could take for white space, NUL included
    if len(buffer) and buffer[-1] != 10:  # the last line without its newline
        separators = np.append(separators, len(buffer))
    if len(separators) == 0 or len(separators) % width:
        return None
    rows = separators.reshape(-1, width)
    inside = buffer[rows[:, :-1]]
    if not np.all((inside == 9) | (inside == 32)):
        return None
    line_ends = rows[:-1, -1]
    if not np.all(buffer[line_ends] == 10):
        return None
    starts = np.empty_like(separators)
    starts[0] = 0
    starts[1:] = separators[:-1] + 1
    lengths = separators - starts
    if not lengths.all():  # two separators in a row: a blank line, or a wider gap
        return None
    return Columns(
        buffer=buffer,
        starts=starts.reshape(-1, width),
        lengths=lengths.reshape(-1, width),
        lines=np.arange(1, len(rows) + 1, dtype=np.int64),
    )


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


@dataclass(frozen=True)
class _Decimals:
    """Each token of a column read as [+-]digits[.digits]: its digits as one integer, and what else it holds."""

    mantissa: np.ndarray  # uint64: the digits, the point left out (meaningful where `plain`)
    fraction: np.ndarray  # int64: digits after the point
    dots: np.ndarray  # int64: number of '.'
    plain: np.ndarray  # bool: nothing but digits, at most one '.', an optional leading sign, 1 to `max_digits` digits
    negative: np.ndarray  # bool: a leading '-'


def _decimals(codes: np.ndarray, max_digits: int) -> _Decimals:
    """Read every token of a zero-padded code-point matrix as a decimal (see `_Decimals`), a column at a time."""
    columns = np.ascontiguousarray(codes.T)  # [position, token]: each step below works on whole rows
    digits = columns - np.asarray(48, dtype=columns.dtype)  # wraps around for code points below '0'
    is_digit = digits < 10
    is_dot = columns == 46
    negative = columns[0] == 45
    other = ~(is_digit | is_dot) & (columns != 0)
    other[0] &= ~(negative | (columns[0] == 43))
    dots = np.count_nonzero(is_dot, axis=0)
    n_digits = np.count_nonzero(is_digit, axis=0)
    plain = ~other.any(axis=0) & (dots <= 1) & (n_digits >= 1) & (n_digits <= max_digits)
    mantissa = np.zeros(columns.shape[1], dtype=np.uint64)
    for digit, here in zip(digits, is_digit, strict=True):  # Horner's rule over the digits, the point skipped
        np.multiply(mantissa, 10, out=mantissa, where=here)
        np.add(mantissa, digit, out=mantissa, where=here, casting="unsafe")
    point = np.add.reduce(is_dot * np.arange(len(columns), dtype=np.int64)[:, None], axis=0)  # where dots == 1
    fraction = np.where(dots == 1, np.count_nonzero(columns, axis=0) - point - 1, 0)
    return _Decimals(mantissa, fraction, dots, plain, negative)


def parse_ints(codes: np.ndarray | None) -> np.ndarray | None:
    """int64 values of a column of plain decimal integers ([+-]digits, < 10**18), or None if some is not one."""
    if codes is None or codes.shape[1] == 0:
        return None
    read = _decimals(codes, 18)
    if not read.plain.all() or read.dots.any():
        return None
    values = read.mantissa.astype(np.int64)
    return np.where(read.negative, -values, values)


def parse_floats(codes: np.ndarray | None) -> np.ndarray | None:
    """float64 values of a column of numbers exactly as Python's float() reads them, or None if one is not a number.

    A plain decimal m / 10**k with m < 2**53 is divided in doubles (both exact, one rounding); a longer one in extended
    precision where the platform has it (m < 10**19 and 10**k are exact there, and the quotient is then rounded once
    more, to a double: right unless the extended quotient lies exactly halfway between two doubles, which is
    checked), else it must have at most 15 digits. Every other token (exponents, longer mantissas, inf, a halfway
    case) goes through numpy's string cast, which calls float() itself; a token with an underscore (a digit separator
    to float(), not to C's atof) gives None.
    """
    if codes is None or codes.shape[1] == 0:
        return None
    read = _decimals(codes, _MAX_DIGITS)
    fraction = np.minimum(read.fraction, _MAX_DIGITS)
    rest = ~read.plain
    values: np.ndarray = read.mantissa.astype(np.float64) / _POWERS_OF_TEN[fraction]  # exact where m < 2**53
    if _EXTENDED:  # the longer mantissas (a plain one has at most 19 digits) in extended precision
        wide = np.flatnonzero(read.plain & (read.mantissa >= _EXACT_MANTISSA))
        if len(wide):
            quotient = read.mantissa[wide].astype(np.longdouble) / _EXTENDED_POWERS[fraction[wide]]
            values[wide] = rounded = quotient.astype(np.float64)
            rest[wide[_halfway(quotient, rounded)]] = True
    np.negative(values, out=values, where=read.negative)
    if rest.any():
        if (codes[rest] == ord("_")).any():  # float() reads 1_5 as 15.0, C's atof as 1.0: let the caller refuse it
            return None
        try:
            values[rest] = as_unicode(codes[rest]).astype(np.float64)
        except (ValueError, OverflowError):
            return None
    return values


def _halfway(quotient: np.ndarray, rounded: np.ndarray) -> np.ndarray:
    """Where an extended-precision quotient may lie exactly halfway between its double and a neighbour: half an ulp
    away, or a quarter (the ulp below a power of two is half the one above); a few more are flagged than need be."""
    off = np.abs(quotient - rounded)  # exact in extended precision
    half = np.spacing(np.abs(rounded)) / 2
    halfway: np.ndarray = (off == half) | (off == half / 2)
    return halfway
