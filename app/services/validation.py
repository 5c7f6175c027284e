"""Turning parser errors into the service's InvalidInput with line-numbered entries."""

from __future__ import annotations

from app.evaluation.errors import FormatError
from app.services.errors import InvalidInput


def line_errors(pairs: list[tuple[int, str]], cap: int) -> list[dict[str, object]]:
    """(line, message) pairs as API error entries, at most `cap` of them."""
    return [{"line": line or None, "message": message} for line, message in pairs[:cap]]


def invalid_file(what: str, pairs: list[tuple[int, str]], cap: int) -> InvalidInput:
    """An InvalidInput for a file with these line errors."""
    shown = line_errors(pairs, cap)
    more = "" if len(pairs) <= cap else f" (showing the first {cap})"
    return InvalidInput(f"{what} has {len(pairs)} error(s){more}; nothing was stored", shown)


def from_format_error(what: str, exc: FormatError, cap: int) -> InvalidInput:
    """An InvalidInput from a parser's FormatError."""
    return invalid_file(what, exc.errors, cap)
