"""Decoding uploaded bytes with line-numbered errors."""

from __future__ import annotations

from app.evaluation.errors import FormatError


def decode_utf8(data: bytes | str, *, source: str = "input") -> str:
    """The text of `data`, or a FormatError naming the first line with bytes that are not UTF-8."""
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise FormatError([(line, f"bytes that are not UTF-8 at byte {exc.start}")], source=source) from None
