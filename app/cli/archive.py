"""`trecpool archive export|import|verify`: a campaign in one file (app/services/archive.py describes the format),
loaded into another server, or re-checked: its pools rebuilt from their seeds and its scores recomputed.

Exit status: 0 when done (verify: nothing differs), 1 when verify finds a difference, 2 for an archive or campaign
that cannot be used (one `error:` line on stderr naming the line of the archive at fault).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer

from app.cli.output import FORMAT_HELP, TextOrJson, fail, say

cli = typer.Typer(
    help="Campaign archives: export a campaign to one file, import it into another server, verify it bit for bit.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

SHOWN = 50  # differences printed as text (all of them are in --format json, up to the service's limit)


def default_name(campaign: str) -> str:
    """The file an export writes by default: the campaign's name made safe for a file name, with the suffix."""
    from app.services.archive import SUFFIX

    return (re.sub(r"[^A-Za-z0-9._-]+", "-", campaign).strip("-.") or "campaign") + SUFFIX


@cli.command("export")
def export(
    campaign: str = typer.Argument(..., help="The campaign: its id or its name"),
    output: Path | None = typer.Option(
        None, "-o", "--output", help="File to write (default: NAME.trecpool.jsonl.gz here); - for stdout"
    ),
) -> None:
    """Write a campaign to one file: collection, topics, teams, assessors, runs with their SHA-256, pools with seeds,
    strata and every item, judgements, model verdicts, every qrels version, evaluations and the code version."""
    from app.cli.common import open_database
    from app.services.archive import code_version, export_campaign, find_campaign
    from app.services.errors import ServiceError

    database = open_database()
    with database.sessions() as session:
        try:
            found = find_campaign(session, campaign)
            name = found.name
            target = output or Path(default_name(name))
            if str(target) == "-":
                counts = export_campaign(session, found.id, sys.stdout.buffer, code_version())
                sys.stdout.buffer.flush()
            else:
                part = target.with_name(target.name + ".part")  # renamed when complete: never half a file
                try:
                    with part.open("wb") as out:
                        counts = export_campaign(session, found.id, out, code_version())
                    part.replace(target)
                finally:
                    part.unlink(missing_ok=True)
        except ServiceError as exc:
            raise fail(exc.message) from None
        except OSError as exc:
            raise fail(f"cannot write {target}: {exc.strerror or exc}") from None
        finally:
            session.rollback()
    written = ", ".join(f"{n} {kind}" for kind, n in counts.items() if kind != "header")
    say(f"campaign {name!r} archived in {target}: {written}")


def _open(file: Path) -> Iterator[tuple[int, dict[str, object]]]:
    """The archive's records (an unreadable file is an error line and exit 2)."""
    from app.services.archive import read_records

    try:
        stream = file.open("rb")
    except OSError as exc:
        raise fail(f"cannot read {file}: {exc.strerror or exc}") from None
    with stream:
        yield from read_records(stream)


@cli.command("import")
def import_(
    file: Path = typer.Argument(..., help="The archive to load"),
    name: str | None = typer.Option(None, "--name", help="Import the campaign under this name instead of its own"),
    output_format: TextOrJson = typer.Option(TextOrJson.text, "--format", help=FORMAT_HELP),
) -> None:
    """Load an archived campaign into this server's database, all or nothing (run files checked by SHA-256)."""
    from app.cli.common import open_database
    from app.services.archive_import import import_campaign
    from app.services.errors import ServiceError
    from app.storage.database import session_scope

    database = open_database()
    try:
        with session_scope(database.sessions) as session:
            imported = import_campaign(session, _open(file), name=name)
    except ServiceError as exc:
        raise fail(f"{file}: {exc.message}; nothing was imported") from None
    assert imported.campaign is not None
    summary = {"campaign_id": imported.campaign.id, "name": imported.campaign.name, "counts": imported.counts}
    if output_format is TextOrJson.json:
        typer.echo(json.dumps(summary))
        return
    counts = ", ".join(f"{n} {kind}" for kind, n in imported.counts.items())
    typer.echo(f"imported campaign {imported.campaign.name!r} as campaign {imported.campaign.id}: {counts}")


@contextmanager
def scratch_database(url: str | None) -> Iterator[str]:
    """A database to verify in: the one given (migrated when empty, else it must be at the newest schema), or a
    fresh embedded PostgreSQL in a temporary directory, removed afterwards."""
    import tempfile

    from app.storage import migrations
    from app.storage.database import DatabaseUnavailable, check_connection, checked_url, make_engine, normalise_url

    if url:
        try:
            url = checked_url(url)
            engine = make_engine(url)
            check_connection(engine)
            if migrations.current_revision(engine) is None:
                migrations.upgrade(url)
            migrations.check_schema(engine)
        except (DatabaseUnavailable, migrations.SchemaOutOfDate) as exc:
            raise fail(str(exc)) from None
        engine.dispose()
        yield url
        return
    import pgserver

    with tempfile.TemporaryDirectory(prefix="trecpool-verify-") as data_dir:
        server = pgserver.get_server(data_dir, cleanup_mode="delete")
        try:
            fresh = normalise_url(server.get_uri())
            migrations.upgrade(fresh)
            yield fresh
        finally:
            server.cleanup()


@cli.command("verify")
def verify(
    file: Path = typer.Argument(..., help="The archive to check"),
    database_url: str | None = typer.Option(
        None,
        "--database-url",
        help="Verify in this PostgreSQL database instead of a fresh embedded one (the work is rolled back)",
    ),
    output_format: TextOrJson = typer.Option(TextOrJson.text, "--format", help=FORMAT_HELP),
    skip_analyses: bool = typer.Option(
        False, "--skip-analyses", help="Do not run the archived analyses again (each is listed as not recomputed)"
    ),
) -> None:
    """Import the archive into a fresh database, rebuild every pool from its seed and parameters, cut every qrels
    version again, re-run every finished evaluation and analysis, and report any difference from the archive (floats
    bit for bit): a summary per part (pools, qrels, evaluations, analyses), then the differences."""
    from app.services.archive import code_version
    from app.services.archive_verify import verify_campaign
    from app.services.errors import ServiceError
    from app.storage.database import make_engine, make_session_factory

    if not file.is_file():
        raise fail(f"cannot read {file}: no such file")
    with scratch_database(database_url) as url:
        engine = make_engine(url)
        try:
            with make_session_factory(engine)() as session:
                try:
                    found = verify_campaign(session, _open(file), analyses=not skip_analyses)
                except ServiceError as exc:
                    raise fail(f"{file}: {exc.message}") from None
                finally:
                    session.rollback()  # a scratch import: nothing stays
        finally:
            engine.dispose()
    code = code_version()
    if found.header.get("git_commit") and code.git_commit and found.header["git_commit"] != code.git_commit:
        found.notes.append(
            f"archived by trecpool {found.header.get('trecpool')} at commit {found.header['git_commit']}, "
            f"verified at commit {code.git_commit}"
        )
    if output_format is TextOrJson.json:
        typer.echo(json.dumps(found.to_dict(), default=str))
    else:
        _report(found)
    if not found.identical:
        raise typer.Exit(1)


def _report(found: object) -> None:
    """Verify's findings as lines on stdout: the verdict, one summary line per part, what was not recomputed and
    why, notes, then the differences."""
    from app.services.archive_format import Verification

    assert isinstance(found, Verification)
    compared = ", ".join(f"{n} {what}" for what, n in found.compared.items() if what != "differences")
    if found.identical:
        typer.echo(f"campaign {found.campaign!r}: identical ({compared} recomputed)")
    else:
        total = found.compared.get("differences", len(found.differences))
        typer.echo(f"campaign {found.campaign!r}: {total} difference(s) ({compared} compared)")
    for line in found.summary():
        typer.echo(line)
    for name, part in found.parts.items():
        for what in part.not_recomputed:
            typer.echo(f"not recomputed: {name}: {what}")
    for note in found.notes:
        typer.echo(f"note: {note}")
    for difference in found.differences[:SHOWN]:
        typer.echo(difference.line())
    total = found.compared.get("differences", 0)
    if total > SHOWN:
        typer.echo(f"... and {total - SHOWN} more (--format json lists up to {found.limit})")
