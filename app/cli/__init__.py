"""The `trecpool` command line: each module in this package registers its own commands."""

from __future__ import annotations

import importlib

import typer

cli = typer.Typer(
    name="trecpool",
    help="Run TREC/TRECVID-style pooled-judgement evaluation campaigns.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Each module defines `register(cli: typer.Typer) -> None`.
_COMMAND_MODULES = ("evaluate", "analyse", "demo", "server", "database", "tokens")


def _register_all() -> None:
    """Import every command module and let it add its commands."""
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(f"app.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"app.cli.{name}":
                raise
            continue
        module.register(cli)


_register_all()


def main() -> None:
    """Console-script entry point."""
    cli()
