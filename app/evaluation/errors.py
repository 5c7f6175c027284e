"""Exceptions raised by the numeric core, and UTF-8 decoding that reports bad bytes as a line-numbered FormatError."""

from __future__ import annotations


class FormatError(ValueError):
    """A file did not parse; `errors` lists (line number, message) pairs, 1-based, in file order."""

    def __init__(self, errors: list[tuple[int, str]], *, source: str = "input") -> None:
        self.errors = list(errors)
        self.source = source
        head = "; ".join(f"line {n}: {m}" if n else m for n, m in self.errors[:5])
        more = f" (+{len(self.errors) - 5} more)" if len(self.errors) > 5 else ""
        super().__init__(f"{source}: {head}{more}")


class MeasureError(ValueError):
    """A measure name is unknown or its parameters are invalid."""


def decode_utf8(data: bytes | str, *, source: str = "input") -> str:
    """The text of `data`, or a FormatError naming the first line with bytes that are not UTF-8."""
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise FormatError([(line, f"bytes that are not UTF-8 at byte {exc.start}")], source=source) from None
