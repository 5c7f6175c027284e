"""Exceptions raised by the numeric core."""

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
