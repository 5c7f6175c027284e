"""The `trecpool` command line: a click group that imports a command's module only when that command runs.

`trecpool --help` and `trecpool eval` must start in a fraction of a second, so nothing here imports the web stack,
the database layer, matplotlib or scipy: each entry of COMMANDS names the module that defines the command (a
module-level `cli`, a click command or a Typer app, with light top-level imports) and its line in the help.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

import click

COMMANDS: dict[str, tuple[str, str]] = {
    "eval": ("evaluate", "Evaluate runs against qrels, like trec_eval / sample_eval.pl."),
    "trec_eval": ("trec_eval", "Drop-in for NIST trec_eval 10.0: its command line, its output byte for byte."),
    "sample_eval": ("sample_eval", "Drop-in for NIST's sample_eval.pl: its command line, its output byte for byte."),
    "measures": ("measures", "List the measures with their parameters, descriptions and references."),
    "analyse": ("analyse", "Reusability and meta-evaluation analyses of a test collection."),
    "serve": ("server", "Start the service (embedded PostgreSQL when DATABASE_URL is unset)."),
    "worker": ("worker", "Run background job workers (evaluations, analyses) on the database."),
    "demo": ("demo", "Run the whole loop on a synthetic campaign, then keep serving its pages."),
    "db": ("database", "Database schema migrations."),
    "token": ("tokens", "API tokens: create, list, revoke."),
}


class LazyGroup(click.Group):
    """A group whose commands are imported on first use; the help lists them from COMMANDS without importing."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command name, in the order of COMMANDS."""
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """Import the command's module and convert its Typer app to a click command."""
        if cmd_name not in COMMANDS:
            return None
        module = importlib.import_module(f"app.cli.{COMMANDS[cmd_name][0]}")
        if isinstance(module.cli, click.Command):
            module.cli.name = cmd_name
            return module.cli
        return TyperCommand(cmd_name, module.cli)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List the commands with their one-line help, importing none of them."""
        with formatter.section("Commands"):
            formatter.write_dl([(name, summary) for name, (_, summary) in COMMANDS.items()])


class TyperCommand(click.Command):
    """A Typer app run as one command of the group: it gets every remaining argument (typer has its own click)."""

    def __init__(self, name: str, app: Callable[..., object]) -> None:
        super().__init__(
            name,
            add_help_option=False,
            context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
        )
        self.app = app

    def invoke(self, ctx: click.Context) -> None:
        """Run the Typer app on the remaining arguments; it exits with its own status."""
        self.app(args=list(ctx.args), prog_name=ctx.command_path)


cli = LazyGroup(
    name="trecpool",
    help="Run TREC/TRECVID-style pooled-judgement evaluation campaigns.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="trecpool")
