"""`trecpool storage status|migrate|gc`: where run files are stored, moving them to another store, and deleting the
files no run names.

Stores are named as TRECPOOL_RUN_STORAGE names them: `postgres`, `dir:/path` or `s3://bucket/prefix` (endpoint and
credentials from TRECPOOL_S3_* or boto3's environment). Exit status: 0 when done, 1 when a file could not be moved
(the others are; run the command again to retry), 2 for a store or database that cannot be used.
"""

from __future__ import annotations

import json

import typer

from app.cli.output import FORMAT_HELP, TextOrJson, fail, say

cli = typer.Typer(
    help="Run file storage: where run files are, moving them between PostgreSQL, a directory and S3, and gc.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@cli.command("status")
def status(output_format: TextOrJson = typer.Option(TextOrJson.text, "--format", help=FORMAT_HELP)) -> None:
    """Runs and distinct files per store, and where new files go."""
    from app.cli.common import open_database
    from app.config import get_settings
    from app.storage.run_migration import by_store

    database = open_database()
    with database.sessions() as session:
        stores = by_store(session)
    configured = get_settings().run_storage
    if output_format is TextOrJson.json:
        found = [{"storage": s, "runs": runs, "files": files} for s, runs, files in stores]
        typer.echo(json.dumps({"configured": configured, "stores": found}))
        return
    typer.echo(f"new run files go to {configured}")
    for storage, runs, files in stores:
        typer.echo(f"{storage}: {runs} run(s), {files} file(s)")


@cli.command("migrate")
def migrate(
    to: str | None = typer.Option(
        None, "--to", help="The store to move every run file to (default: TRECPOOL_RUN_STORAGE, where new ones go)"
    ),
    output_format: TextOrJson = typer.Option(TextOrJson.text, "--format", help=FORMAT_HELP),
) -> None:
    """Move every run file to one store, a file at a time: copied, checked by SHA-256 at both ends, recorded, and
    only then deleted from its old store. Safe to stop and run again (it resumes); files already there are skipped.
    Set TRECPOOL_RUN_STORAGE to the same store first, so that new uploads go there too."""
    from app.cli.common import open_database
    from app.config import check_location, get_settings
    from app.storage.run_migration import migrate as move_all
    from app.storage.run_store import RunStoreError

    configured = get_settings().run_storage
    try:
        target = check_location(to or configured)
    except ValueError as exc:
        raise fail(f"--to: {exc}") from None
    if target != configured:
        say(f"note: new uploads still go to {configured} (TRECPOOL_RUN_STORAGE); set it to {target} as well")
    database = open_database()
    try:
        moved = move_all(database.sessions, target, say)
    except RunStoreError as exc:
        raise fail(str(exc)) from None
    if output_format is TextOrJson.json:
        failed = [{"storage": s, "key": k, "error": why} for s, k, why in moved.failed]
        summary = {"target": target, "files": moved.files, "runs": moved.runs, "bytes": moved.bytes}
        typer.echo(json.dumps({**summary, "failed": failed}))
    else:
        typer.echo(f"moved {moved.files} file(s) of {moved.runs} run(s), {moved.bytes} bytes, to {target}")
        for storage, key, why in moved.failed:
            typer.echo(f"not moved: {key} in {storage}: {why}")
    if moved.failed:
        raise typer.Exit(1)


@cli.command("gc")
def gc(
    dry_run: bool = typer.Option(False, "--dry-run", help="List and count the orphan files, delete nothing"),
    store: str | None = typer.Option(
        None, "--store", help="The directory or S3 store to sweep (default: TRECPOOL_RUN_STORAGE)"
    ),
    min_age: float | None = typer.Option(
        None,
        "--min-age",
        min=0,
        help="Keep files written in the last so many minutes (default: TRECPOOL_RUN_STORAGE_GC_MINUTES, 60)",
    ),
    output_format: TextOrJson = typer.Option(TextOrJson.text, "--format", help=FORMAT_HELP),
) -> None:
    """Delete the files of a directory or S3 store that no run names (deleted runs, rolled-back uploads and
    imports), keeping files shared with a run that still names them and files written in the last --min-age minutes
    (an upload whose run is not committed yet). Each deletion is recorded in the audit trail (table run_files)."""
    from app.cli.common import open_database
    from app.config import check_location, get_settings
    from app.storage.run_gc import collect
    from app.storage.run_store import RunStoreError

    settings = get_settings()
    try:
        location = check_location(store or settings.run_storage)
    except ValueError as exc:
        raise fail(f"--store: {exc}") from None
    minutes = settings.run_storage_gc_minutes if min_age is None else min_age
    if location == "postgres":
        say("note: PostgreSQL keeps each run's file in the run's row, so it has no orphan files")
    database = open_database()
    try:
        done = collect(database.sessions, location, min_age_minutes=minutes, dry_run=dry_run, say=say)
    except RunStoreError as exc:
        raise fail(str(exc)) from None
    parts = {"listed": done.listed, "referenced": done.referenced, "deleted": done.deleted}
    parts |= {"kept_recent": done.recent, "kept_busy": done.busy}
    if output_format is TextOrJson.json:
        summary = {"store": location, "dry_run": dry_run, "min_age_minutes": minutes}
        typer.echo(json.dumps(summary | {name: counted.as_dict() for name, counted in parts.items()}))
        return
    verb = "would delete" if dry_run else "deleted"
    typer.echo(f"{location}: {done.listed.files} file(s), {done.listed.bytes} bytes")
    typer.echo(f"named by runs: {done.referenced.files} file(s), {done.referenced.bytes} bytes")
    typer.echo(f"{verb}: {done.deleted.files} orphan file(s), {done.deleted.bytes} bytes")
    typer.echo(f"kept, written in the last {minutes:g} minutes: {done.recent.files} file(s), {done.recent.bytes} bytes")
    if done.busy.files:
        typer.echo(f"kept, being written: {done.busy.files} file(s), {done.busy.bytes} bytes")
