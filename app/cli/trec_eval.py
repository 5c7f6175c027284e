"""`trecpool trec_eval`: a drop-in for NIST trec_eval 10.0 (its command line, its output byte for byte)."""

from __future__ import annotations

import sys

import click


# trec_eval's options are not click's (-mall_trec, -M100, options after the files): the command takes every word as
# it comes and app.evaluation.trec_eval reads them as trec_eval's getopt_long does.
@click.command(
    "trec_eval",
    add_help_option=False,
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "allow_interspersed_args": False},
    help="A drop-in for trec_eval 10.0: trec_eval's options and output (trecpool trec_eval --help).",
)
@click.argument("arguments", nargs=-1, type=click.UNPROCESSED)
def cli(arguments: tuple[str, ...]) -> None:
    """Run trec_eval's command line."""
    from app.evaluation.trec_eval import main

    sys.exit(main(list(arguments)))
