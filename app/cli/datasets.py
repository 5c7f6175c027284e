"""`trecpool datasets import DATASET_ID --campaign ID`: a past campaign's topics and qrels from ir_datasets (the
optional extra `pip install trecpool[datasets]`), stored as the campaign's topics and a qrels version
(app/services/datasets.py).

Exit status: 0 when stored, 2 when it cannot be (the extra missing, an unknown dataset, a campaign that refuses the
topics, a qrels line the parser refuses: one `error:` line on stderr, nothing stored).
"""

from __future__ import annotations

import enum
import json

import typer

cli = typer.Typer(
    help="Topics and qrels of past campaigns by ir_datasets id (pip install 'trecpool[datasets]').",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


class TextOrJson(enum.StrEnum):
    """Output: a line of text, or one JSON document on stdout."""

    text = "text"
    json = "json"


def _fail(message: str) -> typer.Exit:
    """Print an error (one line on stderr) and return the exit to raise."""
    from rich.markup import escape

    from app.cli.common import console

    console.print(f"[red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(2)


@cli.callback()
def datasets() -> None:
    """Import topics and qrels from ir_datasets into a campaign."""


@cli.command("import")
def import_(
    dataset_id: str = typer.Argument(..., help="An ir_datasets id, e.g. cord19/trec-covid/round1"),
    campaign: int = typer.Option(..., "--campaign", help="The campaign to add the topics and qrels to"),
    label: str | None = typer.Option(None, "--label", help="The qrels version's label (default: the dataset id)"),
    topics: bool = typer.Option(True, "--topics/--no-topics", help="Add the dataset's topics"),
    qrels: bool = typer.Option(True, "--qrels/--no-qrels", help="Store the dataset's qrels as a version"),
    output_format: TextOrJson = typer.Option(
        TextOrJson.text, "--format", help="json: one JSON document on stdout (nothing else is printed there)"
    ),
) -> None:
    """Add a dataset's topics and store its qrels as a version, all or nothing (the same checks as uploaded files)."""
    from app.services import datasets as service
    from app.services.errors import InvalidInput, ServiceError

    try:
        dataset = service.load_dataset(dataset_id)  # before the database: without the extra, say so at once
    except ServiceError as exc:
        raise _fail(exc.message) from None
    from app.cli.common import open_database
    from app.services.auth import Principal
    from app.storage.audit import actor_of, set_actor
    from app.storage.database import session_scope
    from app.storage.models import Role

    database = open_database()
    try:
        with session_scope(database.sessions) as session:
            set_actor(session, actor_of("cli"))
            principal = Principal(role=Role.organiser, token_id=0)  # the server's own operator, as `token create`
            done = service.import_dataset(
                session, principal, campaign, dataset_id, dataset, label=label, topics=topics, qrels=qrels
            )
            summary = {
                "dataset": dataset_id,
                "campaign_id": campaign,
                "topics": len(done.topics),
                "qrels_version_id": done.qrels.id if done.qrels else None,
                "qrels_label": done.qrels.label if done.qrels else None,
                "qrels_entries": done.qrels.n_entries if done.qrels else 0,
            }
    except ServiceError as exc:
        details = exc.errors[:5] if isinstance(exc, InvalidInput) else []
        where = "; ".join(f"{e.get('line', e.get('field', ''))}: {e.get('message', '')}" for e in details)
        tail = "" if "nothing was" in exc.message else "; nothing was imported"
        raise _fail(f"{dataset_id}: {exc.message}{' (' + where + ')' if where else ''}{tail}") from None
    if output_format is TextOrJson.json:
        typer.echo(json.dumps(summary))
        return
    stored = f"qrels version {summary['qrels_label']!r} ({summary['qrels_entries']} judgements)" if qrels else ""
    added = f"{summary['topics']} topics" if topics else ""
    typer.echo(f"campaign {campaign}: {' and '.join(x for x in (added, stored) if x)} from {dataset_id}")
