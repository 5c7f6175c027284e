"""`trecpool measures`: the measure registry as a table (name, parameters, description, reference)."""

from __future__ import annotations

import json
import sys

import click


@click.command("measures")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="table, or json: a JSON list of {name, kind, parameters, description, reference, aliases} on stdout",
)
@click.option("--json", "as_json", is_flag=True, hidden=True, help="the same as --format json")
def cli(fmt: str, as_json: bool) -> None:
    """List every measure trecpool computes, with its parameters, a one-line description and its reference."""
    from app.evaluation.measures.registry import MEASURES

    rows = [
        {
            "name": m.name,
            "kind": m.kind,
            "parameters": m.parameters,
            "description": m.description,
            "reference": m.reference,
            "aliases": list(m.aliases),
        }
        for m in MEASURES
    ]
    if as_json or fmt == "json":
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    headings = {"trec": "TREC qrels", "sample_eval": "sample_eval (5-column) qrels", "moment": "moments (--moments)"}
    for kind, heading in headings.items():
        click.echo(f"{heading}:")
        for row in (r for r in rows if r["kind"] == kind):
            aliases = f" (also {', '.join(row['aliases'])})" if row["aliases"] else ""
            click.echo(f"  {row['name']}{aliases}")
            click.echo(f"      {row['description']}")
            if row["parameters"]:
                click.echo(f"      parameters: {row['parameters']}")
            click.echo(f"      reference:  {row['reference']}")
        click.echo("")
