"""Output pieces the CLI commands share: the --format choice, a one-line error and a line on stderr."""

from __future__ import annotations

import enum

import typer


class TextOrJson(enum.StrEnum):
    """Output: lines of text, or one JSON document on stdout."""

    text = "text"
    json = "json"


FORMAT_HELP = "json: one JSON document on stdout (nothing else is printed there)"


def fail(message: str, status: int = 2) -> typer.Exit:
    """Print an error (one line on stderr) and return the exit to raise."""
    from rich.markup import escape

    from app.cli.common import console

    console.print(f"[red]error:[/] {escape(message)}", highlight=False)
    return typer.Exit(status)


def say(line: str) -> None:
    """A line on stderr, as written."""
    from app.cli.common import console

    console.print(line, highlight=False, markup=False)
