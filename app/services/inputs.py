"""Typed, bounded input values shared by the API and the web pages: ids as stored, text PostgreSQL can hold."""

from __future__ import annotations

from typing import Annotated

from annotated_types import Interval
from pydantic import AfterValidator

INT32_MAX = 2**31 - 1
ECHO_CHARS = 200


def _no_nul(value: str) -> str:
    """The value, refused if it holds a NUL character (PostgreSQL text cannot)."""
    if "\x00" in value:
        raise ValueError("NUL characters (\\x00) are not allowed")
    return value


Id = Annotated[int, Interval(ge=1, le=INT32_MAX)]
"""A row id: a positive PostgreSQL integer."""
Int32 = Annotated[int, Interval(ge=0, le=INT32_MAX)]
"""A non-negative PostgreSQL integer (seeds, counts)."""
Text = Annotated[str, AfterValidator(_no_nul)]
"""A string without NUL characters."""


def echo(value: object, limit: int = ECHO_CHARS) -> str:
    """The value as text for an error message, cut to `limit` characters."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"
