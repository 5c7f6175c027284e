"""`trecpool analyses`: the analysis registry as a listing (kind, description, paper, campaigns, parameters)."""

from __future__ import annotations

import json
import sys

import click


@click.command("analyses")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "markdown"]),
    default="table",
    show_default=True,
    help="table; json: a JSON list of {name, description, reproduces, task_kinds, reads, needs, parameters, core, "
    "figure} on stdout; markdown: the README's table of analyses",
)
def cli(fmt: str) -> None:
    """List every analysis `trecpool analyse` and the REST API run: what it computes and reproduces, the campaigns
    it applies to, what it reads, and its parameters with their CLI options and defaults."""
    from app.services.analysis_registry import ANALYSES, NEEDS, READS, listing, markdown_table, parameters

    if fmt == "json":
        sys.stdout.write(json.dumps([listing(a) for a in ANALYSES.values()], indent=2) + "\n")
        return
    if fmt == "markdown":
        sys.stdout.write(markdown_table())
        return
    for record in ANALYSES.values():
        click.echo(f"{record.name} ({', '.join(record.task_kinds)})")
        click.echo(f"      {record.description}")
        click.echo(f"      reproduces: {record.reproduces}")
        click.echo(f"      reads:      {READS[record.reads]}")
        for need in record.needs:
            click.echo(f"      and:        {NEEDS[need]}")
        for p in parameters(record):
            option = "/".join(p.options) if p.options else "(REST only)"
            click.echo(f"      {p.name} [{option}] {p.type_name()}, default {p.default_words}: {p.description}")
        click.echo("")
