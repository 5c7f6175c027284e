"""Turning parser errors into the service's InvalidInput with line-numbered entries."""

from __future__ import annotations

from app.evaluation.errors import FormatError
from app.services.errors import InvalidInput


def line_errors(pairs: list[tuple[int, str]], cap: int) -> list[dict[str, object]]:
    """(line, message) pairs as API error entries, at most `cap` of them."""
    return [{"line": line or None, "message": message} for line, message in pairs[:cap]]


def invalid_file(what: str, pairs: list[tuple[int, str]], cap: int, *, at_least: bool = False) -> InvalidInput:
    """An InvalidInput for a file with these line errors (`at_least`: reading stopped before the end)."""
    shown = line_errors(pairs, cap)
    return InvalidInput(f"{what} {_count(pairs, cap, at_least)}; nothing was stored", shown)


def invalid_upload(
    what: str, fields: list[dict[str, object]], pairs: list[tuple[int, str]], cap: int, *, at_least: bool = False
) -> InvalidInput:
    """An InvalidInput for an upload whose fields and file lines have problems: the field errors first, then the line
    errors in line order, at most `cap` entries in all."""
    shown = fields[:cap] + line_errors(pairs, max(0, cap - len(fields)))
    parts = []
    if fields:
        parts.append("invalid run metadata")
    if pairs:
        parts.append(f"{what} {_count(pairs, max(0, cap - len(fields)), at_least)}")
    return InvalidInput(f"{'; '.join(parts)}; nothing was stored", shown)


def _count(pairs: list[tuple[int, str]], shown: int, at_least: bool) -> str:
    """'has N error(s)', saying when only the first are shown or more may follow."""
    more = f" (showing the first {shown})" if len(pairs) > shown else ""
    if at_least:
        return f"has at least {len(pairs)} errors{more or ' (reading stopped there)'}"
    return f"has {len(pairs)} error(s){more}"


def in_line_order(*groups: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Errors of several checks of one file as one list by line (a line's errors keep their order)."""
    return sorted((pair for group in groups for pair in group), key=lambda pair: pair[0])


def from_format_error(what: str, exc: FormatError, cap: int) -> InvalidInput:
    """An InvalidInput from a parser's FormatError."""
    return invalid_file(what, exc.errors, cap)
