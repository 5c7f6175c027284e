"""Schema migrations (Alembic) run from code, new revisions, and the checks that the schema is current and whole.

Released revisions are never edited (tests/storage/test_migrations.py pins them), but some were before that rule:
0002-0005 were released as empty placeholders and filled in later, so a database made in between is stamped at
a revision whose tables and functions it lacks, and the first later revision that needs them fails (0007:
`function trecpool_audit() does not exist`). `repair_released_revisions` runs before every upgrade or downgrade
(migrations/env.py): it applies such a placeholder revision again when none of its objects exist, and stops
with SchemaDrift, naming what is missing, when a revision was applied in a form it cannot restore.
"""

from __future__ import annotations

import logging
import re
from argparse import Namespace
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.operations import Operations
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, text

from app.storage.database import normalise_url


def _migrations_dir() -> Path:
    """The Alembic folder: `app/migrations` when installed (setuptools maps the checkout's `migrations/` there),
    else `migrations/` beside `app/` (a checkout, installed editable or not at all)."""
    app = Path(__file__).resolve().parents[1]
    packaged = app / "migrations"
    return packaged if (packaged / "env.py").is_file() else app.parent / "migrations"


MIGRATIONS_DIR = _migrations_dir()
FILE_TEMPLATE = "%%(rev)s_%%(slug)s"  # 0009_audit_runs_topics_collection_truth.py
REVISION_ID = re.compile(r"\d{4}")

log = logging.getLogger("trecpool.migrations")


class SchemaOutOfDate(RuntimeError):
    """The database schema is not at the revision this code expects."""


class SchemaDrift(RuntimeError):
    """The database is stamped at a revision whose objects it lacks, in a way no revision can mend."""


class RowsInTheWay(SchemaDrift):
    """A revision would drop rows that no trecpool code made (someone put them there by hand): the message says how
    to keep them. Reported as SchemaDrift is, in one line."""


def alembic_config(url: str) -> Config:
    """An Alembic config pointing at this project's migrations and `url`."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("sqlalchemy.url", normalise_url(url).replace("%", "%%"))
    return config


def _column(table: str, column: str) -> str:
    """SQL that is true when `table` has `column`."""
    return (
        "EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() "
        f"AND table_name = '{table}' AND column_name = '{column}')"
    )


def _table(name: str) -> str:
    """SQL that is true when the table exists."""
    return f"to_regclass('{name}') IS NOT NULL"


@dataclass(frozen=True)
class Fingerprint:
    """How to tell whether a released revision's objects are in a database stamped at or after it.

    `made`: SQL true when they are. `untouched`: SQL true when none is, as after the empty placeholder the revision
    once was (then it is applied again); None for revisions that never were a placeholder. `lacks`: what is missing,
    in words.
    """

    revision: str
    made: str
    untouched: str | None
    lacks: str


FINGERPRINTS = (
    Fingerprint(
        "0001",
        " AND ".join([_table("judging_tasks"), _table("leaderboard_snapshots"), _table("analysis_jobs")])
        + " AND "
        + _column("runs", "content"),
        None,
        "the judging tasks, snapshots, analysis jobs or stored uploads of the released 0001",
    ),
    Fingerprint(
        "0002",
        f"{_table('run_means')} AND NOT {_table('run_entries')}",
        f"NOT {_table('run_means')} AND {_table('run_entries')} AND {_table('moment_entries')}",
        "run_means (or still has run_entries)",
    ),
    Fingerprint(
        "0003",
        f"{_table('procrastinate_jobs')} AND {_column('evaluations', 'attempts')}",
        f"NOT {_table('procrastinate_jobs')} AND NOT {_column('evaluations', 'attempts')}",
        "the job queue (procrastinate_jobs, evaluations.attempts)",
    ),
    Fingerprint(
        "0004",
        f"{_table('audit_events')} AND {_table('judge_links')} AND to_regprocedure('trecpool_audit()') IS NOT NULL",
        " AND ".join(
            [
                f"NOT {_table('audit_events')}",
                f"NOT {_table('judge_links')}",
                "to_regprocedure('trecpool_audit()') IS NULL",
                f"NOT {_column('api_tokens', 'expires_at')}",
                f"NOT {_column('judgement_changes', 'changed_by_token_id')}",
            ]
        ),
        "the audit trail (audit_events, trecpool_audit()) or judging links",
    ),
    Fingerprint(
        "0005",
        _column("campaigns", "team_results"),
        f"NOT {_column('campaigns', 'team_results')} AND to_regtype('team_results') IS NULL",
        "campaigns.team_results",
    ),
    Fingerprint("0006", _column("runs", "elapsed_seconds"), None, "runs.elapsed_seconds"),
    Fingerprint(
        "0007",
        f"{_table('moment_pool_items')} AND {_table('moment_judgements')} AND {_table('moment_truth_segments')}",
        None,
        "the moment pool tables",
    ),
    Fingerprint("0008", _column("qrels_versions", "judging_order"), None, "qrels_versions.judging_order"),
)


def repair_released_revisions(
    context: MigrationContext, script: ScriptDirectory, fingerprints: Sequence[Fingerprint] = FINGERPRINTS
) -> list[str]:
    """Make a database whole up to the revision it is stamped at: apply again each released revision that was an
    empty placeholder when the database was made (none of its objects exist); SchemaDrift when a revision's objects
    are partly there or never were restorable. Returns the revisions applied again."""
    current = context.get_current_revision()
    if current is None:
        return []
    applied = {r.revision for r in script.iterate_revisions(current, "base")}
    bind = context.bind
    assert bind is not None, "repairs need a database connection"
    repaired: list[str] = []
    for print_ in fingerprints:
        if print_.revision not in applied or bind.execute(text(f"SELECT {print_.made}")).scalar():
            continue
        if print_.untouched is not None and bind.execute(text(f"SELECT {print_.untouched}")).scalar():
            log.warning(
                "the database is at revision %s but revision %s was an empty placeholder when it was made: applying it",
                current,
                print_.revision,
            )
            revision = script.get_revision(print_.revision)
            assert revision is not None
            with Operations.context(context):
                revision.module.upgrade()
            repaired.append(print_.revision)
            continue
        raise SchemaDrift(
            f"the database is at revision {current} but lacks {print_.lacks} of revision {print_.revision}: it was "
            f"made by an edited copy of revision {print_.revision} and cannot be upgraded in place; dump its data, "
            "create a new database with `trecpool db upgrade` and load the data into it"
        )
    return repaired


def changes_schema(context: MigrationContext) -> bool:
    """Whether the Alembic command behind `context` moves the database (upgrade, downgrade, stamp), not a read."""
    return "destination_rev" in context.opts and not context.opts.get("dont_mutate")


def next_revision_id(script: ScriptDirectory) -> str:
    """The number after the newest numbered revision, as four digits ("0010" after "0009")."""
    numbers = [int(r.revision) for r in script.walk_revisions() if REVISION_ID.fullmatch(r.revision)]
    return f"{max(numbers, default=0) + 1:04d}"


def number_revision(context: MigrationContext, revision: Any, directives: list[Any]) -> None:
    """Alembic's `process_revision_directives`: a new revision gets the next number as its id (our `NNNN_words.py`
    naming) unless it was given a four-digit one."""
    if directives and not REVISION_ID.fullmatch(directives[0].rev_id or ""):
        script = context.script
        if script is None:
            assert context.config is not None
            script = ScriptDirectory.from_config(context.config)
        directives[0].rev_id = next_revision_id(script)


def new_revision(message: str, directory: Path | None = None) -> Path:
    """Write the next numbered revision file (`NNNN_words.py`, revision id "NNNN", from script.py.mako) into the
    migrations folder of the source tree; ValueError for an empty message or an installed (not source) package."""
    if not message.strip():
        raise ValueError("give the revision a message: trecpool db revision -m 'what it changes'")
    folder = directory or MIGRATIONS_DIR
    if not (folder.parent / "pyproject.toml").is_file():
        raise ValueError(
            f"{folder} is not in a source tree (no pyproject.toml beside it): write revisions in a checkout, "
            "installed with `pip install -e .`"
        )
    config = Config(cmd_opts=Namespace(quiet=True))  # the caller says where the file is
    config.set_main_option("script_location", str(folder))
    config.set_main_option("file_template", FILE_TEMPLATE)
    script = command.revision(config, message=message.strip(), rev_id=next_revision_id(ScriptDirectory(str(folder))))
    assert script is not None and not isinstance(script, list)
    return Path(script.path)


def include_name(name: str | None, type_: str, parent_names: object) -> bool:
    """Whether autogenerate compares a schema object: procrastinate's queue tables (migration 0003) are not ours."""
    return not (type_ == "table" and name is not None and name.startswith("procrastinate_"))


def upgrade(url: str, revision: str = "head") -> None:
    """Apply migrations up to `revision`."""
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str = "base") -> None:
    """Revert migrations down to `revision`."""
    command.downgrade(alembic_config(url), revision)


def head_revision() -> str:
    """The newest revision in the migrations folder."""
    script = ScriptDirectory(str(MIGRATIONS_DIR))
    head = script.get_current_head()
    assert head is not None, "no migrations found"
    return head


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at, or None for an empty database."""
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def check_schema(engine: Engine) -> None:
    """Raise SchemaOutOfDate, naming the fix, unless the database is at the head revision."""
    current, head = current_revision(engine), head_revision()
    if current != head:
        raise SchemaOutOfDate(
            f"database schema is at revision {current or 'none (empty database)'}, this code needs {head}: "
            "run `trecpool db upgrade` first"
        )
