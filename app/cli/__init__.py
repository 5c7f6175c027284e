"""The `trecpool` command line: a click group that imports a command's module only when that command runs.

`trecpool --help` and `trecpool eval` must start in a fraction of a second, so nothing here imports the web stack,
the database layer, matplotlib or scipy: each entry of COMMANDS names the module that defines the command (a
module-level `cli`, a click command or a Typer app, with light top-level imports) and its line in the help.

Conventions every command follows: `-h` and `--help` (given to every Typer app here, so its subcommands inherit
them); `--format json` writes one JSON document to stdout and nothing else there (notes and errors go to stderr);
an input error is one line on stderr, `error: ...`, with a non-zero status; and a closed stdout (`| head`) ends the
command quietly with status 141, as it does a C program killed by SIGPIPE (see `main`).
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from collections.abc import Callable
from typing import NoReturn, TextIO

import click

HELP_OPTIONS = ["-h", "--help"]
CLOSED_PIPE_STATUS = 141  # 128 + SIGPIPE: what the shell reports for trec_eval, cat or seq cut off by `| head`

COMMANDS: dict[str, tuple[str, str]] = {
    "eval": ("evaluate", "Evaluate runs against qrels, like trec_eval / sample_eval.pl."),
    "trec_eval": ("trec_eval", "Drop-in for NIST trec_eval 10.0: its command line, its output byte for byte."),
    "sample_eval": ("sample_eval", "Drop-in for NIST's sample_eval.pl: its command line, its output byte for byte."),
    "measures": ("measures", "List the measures with their parameters, descriptions and references."),
    "analyse": ("analyse", "Reusability and meta-evaluation analyses of a test collection."),
    "analyses": ("analyses", "List the analyses with their parameters, defaults, campaigns and papers."),
    "serve": ("server", "Start the service (embedded PostgreSQL when DATABASE_URL is unset)."),
    "worker": ("worker", "Run background job workers (evaluations, analyses) on the database."),
    "demo": ("demo", "Run the whole loop on a synthetic campaign, then keep serving its pages."),
    "db": ("database", "Database schema migrations."),
    "token": ("tokens", "API tokens: create, list, revoke."),
    "judge": ("judge", "Run a judge function as a model assessor against a server's batch judging API."),
    "archive": ("archive", "Campaign archives: export to one file, import into another server, verify bit for bit."),
    "datasets": ("datasets", "Import a past campaign's topics and qrels by ir_datasets id (the datasets extra)."),
    "storage": ("storage", "Run file storage: where run files are, and moving them to PostgreSQL, a directory or S3."),
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
        """Run the Typer app on the remaining arguments; it exits with its own status.

        The app's top context gets the group's help option names (-h, --help) and its subcommands inherit them;
        click drops a name that one of a command's own options uses, and an option's value is never read as one.
        """
        self.app(args=list(ctx.args), prog_name=ctx.command_path, help_option_names=ctx.help_option_names)


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """Print the installed package's version and exit (the --version option)."""
    if not value or ctx.resilient_parsing:
        return
    from importlib.metadata import PackageNotFoundError, version

    try:
        number = version("trecpool")
    except PackageNotFoundError:
        number = "unknown (the trecpool package is not installed: pip install -e .)"
    click.echo(f"trecpool {number}")
    ctx.exit()


cli = LazyGroup(
    name="trecpool",
    help="Run TREC/TRECVID-style pooled-judgement evaluation campaigns.",
    no_args_is_help=True,
    context_settings={"help_option_names": HELP_OPTIONS},
    params=[
        click.Option(
            ["--version"],
            is_flag=True,
            expose_value=False,
            is_eager=True,
            callback=_print_version,
            help="Print trecpool's version and exit.",
        )
    ],
)


class ClosedPipeGuard:
    """sys.stdout, except that a write or flush finding its reader gone (`| head`) ends the command quietly.

    The rest of the output then goes to os.devnull (so Python's own flush at exit finds nothing to complain about),
    and the main thread exits with status 141; another thread's output is dropped and it carries on. The exit is
    raised inside the write, so no command's `except OSError` turns the closed pipe into an error message.
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        """Write `text`; on a closed pipe, stop as the class says."""
        try:
            return self.stream.write(text)
        except BrokenPipeError:
            self.closed_pipe()
            return len(text)

    def writelines(self, lines: list[str]) -> None:
        """Write each of `lines`."""
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        """Flush the stream; on a closed pipe, stop as the class says."""
        try:
            self.stream.flush()
        except BrokenPipeError:
            self.closed_pipe()

    def closed_pipe(self) -> None:
        """Send the rest of the output to os.devnull (the Python documentation's recipe); exit 141 in the main
        thread."""
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, self.stream.fileno())
        finally:
            os.close(devnull)
        if threading.current_thread() is threading.main_thread():
            raise SystemExit(CLOSED_PIPE_STATUS)

    def __getattr__(self, name: str) -> object:
        """Everything else is the stream's (encoding, fileno, isatty, buffer...)."""
        return getattr(self.stream, name)


def main() -> NoReturn:
    """Console-script entry point: the group, with stdout guarded against a closed pipe (see ClosedPipeGuard)."""
    if sys.stdout is not None and not isinstance(sys.stdout, ClosedPipeGuard):
        sys.stdout = ClosedPipeGuard(sys.stdout)
    try:
        cli.main(prog_name="trecpool")
    finally:
        if sys.stdout is not None:
            sys.stdout.flush()  # what the command left buffered, while a closed pipe can still end it quietly
    raise SystemExit(0)  # cli.main always exits; this is for the type checker
