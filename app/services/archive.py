"""Campaign archives: one file with everything needed to re-create a shots campaign elsewhere and to re-check it.

Format `trecpool-archive`, version 1: a gzip-compressed file of JSON lines (UTF-8, one JSON object a line). Floats
are written as Python's repr, so every float64 reads back bit for bit (NaN and Infinity as the common JSON
extension `NaN`, `Infinity`). Each line has a `type`, in this order:

- `header`: `format` ("trecpool-archive"), `version` (1), `trecpool` (the package version), `git_commit` (null
  when not known), `schema` (the Alembic revision of the exporting database), `exported_at`, `campaign` (its name);
- `campaign`: its settings and status;
- `rows` of table `collection` (the master shot reference: shot_id, video_id, start, end);
- `topic` (number, title, description, guidelines, examples), `team` (its name), `assessor` (name, kind, a model's
  provenance); never a token or a judging link;
- `run`: its metadata, `sha256` of the file as uploaded and `content`, those bytes in base64 (checked on import);
- `pool`: kind, params (as stored: strata, depth, judging order, verification design), `seed`, `run_ids`; then
  `rows` of `pool_items` (per item its topic, docno, stratum, whether sampled, `inclusion_probability` (its
  stratum's sampling rate), best rank, runs, `judging_order` (-1 when not sampled) and the verification sample's
  probability and draw), `assignments`, `judging_tasks` (without leases), `judgements` (verdict, grade, round,
  assessor, seconds, times), `judgement_changes` and `model_verdicts` (grade, probability, configuration hash);
- `qrels_version` (label, kind, source, pool, judges, provenance, judging order...) and its `rows` of
  `qrels_entries` (topics by number, docnos byte-wise: evaluation reads a version's lines in that order whatever the
  rows' physical order, so its imputation's seeded draws and float sums reproduce); every version;
- `evaluation` (qrels version, measures, status) and its `rows` of `scores` (run, measure, topic, value) and
  `run_means` (value, interval, sampling standard error, estimator); `snapshot` (a publication's frozen content);
- `end`: `lines`, the number of lines before it, and `sha256`, the SHA-256 of their bytes: a truncated or altered
  file is refused.

A `rows` record holds at most BLOCK rows of one table: {"type": "rows", "table": ..., "columns": [...], "rows":
[[...], ...]}. Ids are the exporting database's: they only tie records together (a record refers to records before
it), and import gives everything new ids. Not archived: tokens and judging links, leases, the audit trail, analysis
jobs, campaign series and progress topics (migration 0014), and moment campaigns (refused).

Export streams (memory bounded by a block of rows or one run file, not by the campaign); import checks every run's
SHA-256 and writes the campaign in the caller's transaction, raising InvalidInput naming the line at the first
problem, so nothing is half-written; verify imports into a scratch database, rebuilds every pool from its seed and
parameters with the pool builder's code and re-runs every finished evaluation, comparing item by item and number by
number.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import math
import struct
import subprocess
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import numpy as np
import psycopg
from sqlalchemy import insert, select, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from app.evaluation.pools.builders import PoolTable, Stratum, build_pool
from app.evaluation.statistics.prediction_powered import inclusion_probabilities, verification_draw
from app.services import judging_orders
from app.services.errors import Conflict, InvalidInput, NotFound
from app.services.evaluations import run_evaluation
from app.services.pools import verification_of
from app.services.run_arrays import load_runs
from app.storage.audit import actor_of, set_actor
from app.storage.bulk import copy_rows
from app.storage.models import (
    Assessor,
    Campaign,
    CampaignStatus,
    Evaluation,
    LeaderboardSnapshot,
    Pool,
    PoolRun,
    QrelsVersion,
    Run,
    TaskKind,
    Team,
    TeamResults,
    Topic,
)

FORMAT = "trecpool-archive"
VERSION = 1
BLOCK = 10_000  # rows of a `rows` record
SUFFIX = ".trecpool.jsonl.gz"

CAMPAIGN_FIELDS = (
    "name", "description", "task_kind", "status", "max_results", "max_runs_per_team", "submission_opens_at",
    "submission_closes_at", "media_url_template", "team_results", "created_at", "max_grade", "anonymise_teams",
    "audio_on", "interleave_every",
)  # fmt: skip
RUN_FIELDS = (
    "id", "team_id", "name", "tag", "format", "system_type", "novelty", "training_type", "priority", "description",
    "n_entries", "n_topics", "elapsed_seconds", "sha256", "baseline", "created_at",
)  # fmt: skip
QRELS_FIELDS = (
    "id", "label", "kind", "source", "pool_id", "n_entries", "created_at", "judging_order", "unjudged_sampled",
    "combine", "unjudged_topics", "judges", "provenance",
)  # fmt: skip
EVALUATION_FIELDS = ("id", "qrels_version_id", "status", "measures", "error", "created_at", "finished_at")
TIMES = frozenset(
    {"created_at", "finished_at", "published_at", "submission_opens_at", "submission_closes_at"}
)  # fields read back as datetimes

# Each table of `rows` records: its archive columns and the query that exports them (`:c` the campaign, `:v` the
# pool, qrels version or evaluation). Import refuses a block whose columns differ.
TABLES: dict[str, tuple[tuple[str, ...], str]] = {
    "collection": (
        ("shot_id", "video_id", "start", "end"),
        'SELECT shot_id, video_id, start, "end" FROM collection_items WHERE campaign_id = :c ORDER BY shot_id',
    ),
    "pool_items": (
        tuple(
            "id pool_id topic docno stratum sampled inclusion_probability best_rank n_runs judging_order "
            "verification_probability verification_sampled".split()
        ),
        "SELECT i.id, i.pool_id, t.number, i.docno, i.stratum, i.sampled, NULL, i.best_rank, i.n_runs, "
        "i.judging_order, i.verification_probability, i.verification_sampled FROM pool_items i "
        "JOIN topics t ON t.id = i.topic_id WHERE i.pool_id = :v ORDER BY i.id",
    ),
    "assignments": (
        ("pool_id", "topic", "assessor_id", "created_at"),
        "SELECT a.pool_id, t.number, a.assessor_id, a.created_at FROM assignments a JOIN topics t ON t.id = a.topic_id "
        "WHERE a.pool_id = :v ORDER BY t.number, a.assessor_id",
    ),
    "judging_tasks": (
        ("pool_item_id", "round", "reason", "excluded_assessor_id", "done_at"),
        "SELECT k.pool_item_id, k.round, k.reason, k.excluded_assessor_id, k.done_at FROM judging_tasks k "
        "JOIN pool_items i ON i.id = k.pool_item_id WHERE i.pool_id = :v ORDER BY k.id",
    ),
    "judgements": (
        tuple("id pool_item_id assessor_id round verdict grade seconds_spent created_at updated_at".split()),
        "SELECT j.id, j.pool_item_id, j.assessor_id, j.round, j.verdict, j.grade, j.seconds_spent, j.created_at, "
        "j.updated_at FROM judgements j JOIN pool_items i ON i.id = j.pool_item_id WHERE i.pool_id = :v ORDER BY j.id",
    ),
    "judgement_changes": (
        ("judgement_id", "changed_by", "old_verdict", "new_verdict", "changed_at"),
        "SELECT c.judgement_id, c.changed_by, c.old_verdict, c.new_verdict, c.changed_at FROM judgement_changes c "
        "JOIN judgements j ON j.id = c.judgement_id JOIN pool_items i ON i.id = j.pool_item_id "
        "WHERE i.pool_id = :v ORDER BY c.id",
    ),
    "model_verdicts": (
        tuple("pool_item_id assessor_id grade probability config_hash created_at updated_at".split()),
        "SELECT v.pool_item_id, v.assessor_id, v.grade, v.probability, v.config_hash, v.created_at, v.updated_at "
        "FROM model_verdicts v JOIN pool_items i ON i.id = v.pool_item_id WHERE i.pool_id = :v ORDER BY v.id",
    ),
    "qrels_entries": (
        tuple(
            "qrels_version_id topic docno stratum grade model_grade model_probability human_grade "
            "verification_probability".split()
        ),
        "SELECT e.qrels_version_id, t.number, e.docno, e.stratum, e.grade, e.model_grade, e.model_probability, "
        "e.human_grade, e.verification_probability FROM qrels_entries e JOIN topics t ON t.id = e.topic_id "
        'WHERE e.qrels_version_id = :v ORDER BY length(t.number), t.number, e.docno COLLATE "C"',
    ),
    "scores": (
        ("evaluation_id", "run_id", "measure", "topic", "value"),
        "SELECT evaluation_id, run_id, measure, topic, value FROM scores WHERE evaluation_id = :v "
        "ORDER BY run_id, measure, topic",
    ),
    "run_means": (
        tuple("evaluation_id run_id measure value ci_low ci_high sampling_se estimator".split()),
        "SELECT evaluation_id, run_id, measure, value, ci_low, ci_high, sampling_se, estimator FROM run_means "
        "WHERE evaluation_id = :v ORDER BY run_id, measure",
    ),
}
# pool_items as import writes them (the archive's inclusion_probability follows from the pool's strata)
POOL_ITEM_COLUMNS = tuple(
    "id pool_id topic_id docno stratum sampled best_rank n_runs judging_order verification_probability "
    "verification_sampled".split()
)
POOL_TABLES = ("pool_items", "assignments", "judging_tasks", "judgements", "judgement_changes", "model_verdicts")


# ------------------------------------------------------------------------------------------------------- export


@dataclass(frozen=True)
class CodeVersion:
    """The code that wrote an archive: the package version and the git commit of its source tree, if known."""

    trecpool: str
    git_commit: str | None


def code_version() -> CodeVersion:
    """The installed trecpool version and, in a git checkout, its HEAD commit."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        number = version("trecpool")
    except PackageNotFoundError:
        number = "unknown"
    source = Path(__file__).resolve().parents[2]
    commit = None
    if (source / ".git").exists():
        try:
            done = subprocess.run(
                ["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=False
            )
            commit = done.stdout.strip() or None if done.returncode == 0 else None
        except OSError:
            commit = None
    return CodeVersion(number, commit)


def _json_default(value: object) -> object:
    """JSON for what json does not know: times as ISO 8601, enums by value, numpy numbers as Python's."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, np.generic):
        return value.item()
    if hasattr(value, "value"):
        return value.value
    raise TypeError(f"cannot archive {type(value).__name__}")


class ArchiveWriter:
    """Writes an archive's lines to a binary stream, gzip-compressed, hashing them for the end record."""

    def __init__(self, out: IO[bytes]) -> None:
        self.gzip = gzip.GzipFile(fileobj=out, mode="wb", mtime=0)  # no time stamp: the same campaign, the same bytes
        self.digest = hashlib.sha256()
        self.lines = 0
        self.counts: dict[str, int] = {}

    def write(self, record: Mapping[str, object]) -> None:
        """Write one record as a line."""
        line = (json.dumps(record, separators=(",", ":"), default=_json_default) + "\n").encode()
        self.digest.update(line)
        self.gzip.write(line)
        self.lines += 1
        kind = str(record["table"] if record["type"] == "rows" else record["type"])
        self.counts[kind] = self.counts.get(kind, 0) + (len(record["rows"]) if record["type"] == "rows" else 1)  # type: ignore[arg-type]  # a rows record's rows are a list

    def close(self) -> None:
        """Write the end record and finish the gzip stream (the underlying stream stays open)."""
        end = {"type": "end", "lines": self.lines, "sha256": self.digest.hexdigest()}
        self.gzip.write((json.dumps(end) + "\n").encode())
        self.gzip.close()


def write_records(records: Iterable[Mapping[str, object]], out: IO[bytes]) -> dict[str, int]:
    """Write records as an archive (with its end record); the count of each record type and table."""
    writer = ArchiveWriter(out)
    for record in records:
        writer.write(record)
    writer.close()
    return writer.counts


def find_campaign(session: Session, key: str) -> Campaign:
    """A campaign by id (digits) or by name (NotFound otherwise)."""
    campaign = session.get(Campaign, int(key)) if key.isdigit() else None
    campaign = campaign or session.scalar(select(Campaign).where(Campaign.name == key))
    if campaign is None:
        raise NotFound(f"no campaign {key!r} (give its id or its name)")
    return campaign


def export_campaign(session: Session, campaign_id: int, out: IO[bytes], code: CodeVersion) -> dict[str, int]:
    """Write the campaign's archive to `out`; the count of each record type and table written."""
    return write_records(campaign_records(session, campaign_id, code), out)


def _fields(obj: object, names: Sequence[str]) -> dict[str, object]:
    """The named attributes of a row."""
    return {name: getattr(obj, name) for name in names}


def _blocks(session: Session, table: str, **params: object) -> Iterator[dict[str, object]]:
    """`rows` records of one table's export query, BLOCK rows at a time from a server-side cursor."""
    columns, query = TABLES[table]
    result = session.connection().execution_options(yield_per=BLOCK).execute(text(query), params)
    for part in result.partitions():
        yield {"type": "rows", "table": table, "columns": list(columns), "rows": [list(row) for row in part]}


def _rates(pool: Pool) -> dict[int, float]:
    """Each stratum's sampling rate (1-based, as pool_items.stratum)."""
    return {i + 1: float(rate) for i, (_, _, rate) in enumerate(pool.params.get("strata") or [])}


def campaign_records(session: Session, campaign_id: int, code: CodeVersion) -> Iterator[dict[str, object]]:
    """The records of a campaign's archive, in file order (read from the database as they are written)."""
    campaign = session.get(Campaign, campaign_id)
    if campaign is None:
        raise NotFound(f"campaign {campaign_id} not found")
    if campaign.task_kind is not TaskKind.shots:
        raise Conflict(f"campaign {campaign.name!r} is a moment campaign: archives hold shots campaigns only (yet)")
    yield {
        "type": "header",
        "format": FORMAT,
        "version": VERSION,
        "trecpool": code.trecpool,
        "git_commit": code.git_commit,
        "schema": session.scalar(text("SELECT version_num FROM alembic_version")),
        "exported_at": datetime.now(UTC),
        "campaign": campaign.name,
    }
    yield {"type": "campaign", **_fields(campaign, CAMPAIGN_FIELDS)}
    yield from _blocks(session, "collection", c=campaign_id)
    for topic in session.scalars(select(Topic).where(Topic.campaign_id == campaign_id).order_by(Topic.id)):
        yield {"type": "topic", **_fields(topic, ("number", "title", "description", "guidelines", "examples"))}
    for team in session.scalars(select(Team).where(Team.campaign_id == campaign_id).order_by(Team.id)):
        yield {"type": "team", "id": team.id, "name": team.name}
    for assessor in session.scalars(select(Assessor).where(Assessor.campaign_id == campaign_id).order_by(Assessor.id)):
        yield {"type": "assessor", **_fields(assessor, ("id", "name", "kind", "provenance"))}
    run_ids = list(session.scalars(select(Run.id).where(Run.campaign_id == campaign_id).order_by(Run.id)))
    for run_id in run_ids:  # one run file in memory at a time
        run = session.get_one(Run, run_id)
        content = zlib.decompress(session.scalar(select(Run.content).where(Run.id == run_id)) or b"")
        yield {"type": "run", **_fields(run, RUN_FIELDS), "content": base64.b64encode(content).decode()}
        session.expunge(run)
    for pool in session.scalars(select(Pool).where(Pool.campaign_id == campaign_id).order_by(Pool.id)).all():
        pooled = session.scalars(select(PoolRun.run_id).where(PoolRun.pool_id == pool.id).order_by(PoolRun.run_id))
        yield {"type": "pool", **_fields(pool, ("id", "kind", "params", "seed", "created_at")), "run_ids": list(pooled)}
        rates = _rates(pool)
        for table in POOL_TABLES:
            for block in _blocks(session, table, v=pool.id):
                if table == "pool_items":
                    for row in block["rows"]:  # type: ignore[attr-defined]  # a list of rows
                        row[6] = rates.get(row[4], 1.0)
                yield block
    for version in session.scalars(
        select(QrelsVersion).where(QrelsVersion.campaign_id == campaign_id).order_by(QrelsVersion.id)
    ).all():
        yield {"type": "qrels_version", **_fields(version, QRELS_FIELDS)}
        yield from _blocks(session, "qrels_entries", v=version.id)
    for evaluation in session.scalars(
        select(Evaluation).where(Evaluation.campaign_id == campaign_id).order_by(Evaluation.id)
    ).all():
        yield {"type": "evaluation", **_fields(evaluation, EVALUATION_FIELDS)}
        yield from _blocks(session, "scores", v=evaluation.id)
        yield from _blocks(session, "run_means", v=evaluation.id)
    for snapshot in session.scalars(
        select(LeaderboardSnapshot)
        .where(LeaderboardSnapshot.campaign_id == campaign_id)
        .order_by(LeaderboardSnapshot.id)
    ).all():
        yield {"type": "snapshot", **_fields(snapshot, ("evaluation_id", "content", "published_at"))}


# ------------------------------------------------------------------------------------------------------ reading


def _bad(line: int, message: str) -> InvalidInput:
    """The error of an archive that cannot be imported, naming the line."""
    return InvalidInput(f"archive line {line}: {message}", [{"line": line, "message": message}])


def read_records(stream: IO[bytes]) -> Iterator[tuple[int, dict[str, Any]]]:
    """The archive's records with their line numbers, checked as they are read: gzip, JSON, the header's format
    and version, and at the end the line count and SHA-256 of the end record (InvalidInput naming the line)."""
    digest, count, ended, line_no = hashlib.sha256(), 0, False, 0
    try:
        for line_no, line in enumerate(gzip.GzipFile(fileobj=stream, mode="rb"), 1):
            if ended:
                raise _bad(line_no, "a line after the end record")
            try:
                record = json.loads(line)
            except ValueError as exc:
                raise _bad(line_no, f"not a JSON object ({exc})") from None
            if not isinstance(record, dict) or not isinstance(record.get("type"), str):
                raise _bad(line_no, "not a JSON object with a type")
            if record["type"] == "end":
                if record.get("lines") != count or record.get("sha256") != digest.hexdigest():
                    raise _bad(line_no, "the lines before the end record are not those written (altered or cut)")
                ended = True
                continue
            if line_no == 1 and (record["type"] != "header" or record.get("format") != FORMAT):
                raise _bad(1, f"not a trecpool campaign archive (the first line is no {FORMAT} header)")
            if line_no == 1 and record.get("version") != VERSION:
                raise _bad(1, f"archive version {record.get('version')!r}: this trecpool reads version {VERSION}")
            digest.update(line)
            count += 1
            yield line_no, record
    except (OSError, EOFError, zlib.error) as exc:
        raise _bad(line_no + 1, f"not a readable gzip file ({exc}): truncated or not an archive") from None
    if line_no == 0:
        raise _bad(1, "the archive is empty")
    if not ended:
        raise _bad(line_no + 1, "the archive ends without its end record: it is truncated")


# ------------------------------------------------------------------------------------------------------- import


@dataclass
class Imported:
    """What an import made: the new campaign and the archive ids mapped to the new ones, by record type."""

    campaign: Campaign | None = None
    header: dict[str, Any] = field(default_factory=dict)
    ids: dict[str, dict[int, int]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    evaluation_ids: list[int] = field(default_factory=list)  # new ids, in archive order


def _time(value: object) -> datetime | None:
    """An ISO 8601 time (None stays None)."""
    return None if value is None else datetime.fromisoformat(str(value))


def _row_fields(record: Mapping[str, Any], names: Sequence[str], skip: Iterable[str] = ()) -> dict[str, Any]:
    """A record's fields for a new row: times parsed, ids left out."""
    left_out = {"id", *skip}
    return {n: (_time(record[n]) if n in TIMES else record[n]) for n in names if n not in left_out}


class _Importer:
    """Writes an archive's records into the session as new rows, in one pass (references point backwards)."""

    def __init__(self, session: Session, name: str | None) -> None:
        self.session = session
        self.name = name
        self.done = Imported()
        self.topics: dict[str, int] = {}

    def ref(self, kind: str, old: object, line: int) -> int:
        """The new id of an archive id of `kind` (InvalidInput when the archive defines none before this line)."""
        found = self.done.ids.get(kind, {}).get(old) if isinstance(old, int) else None
        if found is None:
            raise _bad(line, f"refers to {kind} {old!r}, which the archive does not define before it")
        return found

    def opt(self, kind: str, old: object, line: int) -> int | None:
        """`ref`, with None for None."""
        return None if old is None else self.ref(kind, old, line)

    def topic(self, number: object, line: int) -> int:
        """A topic's new id by its number."""
        found = self.topics.get(str(number))
        if found is None:
            raise _bad(line, f"refers to topic {number!r}, which the archive does not define")
        return found

    def remember(self, kind: str, old: object, new: int) -> None:
        """Map an archive id to its new id."""
        self.done.ids.setdefault(kind, {})[int(old)] = new  # type: ignore[call-overload]  # ids are ints
        self.done.counts[kind] = self.done.counts.get(kind, 0) + 1

    def add(self, line: int, record: dict[str, Any]) -> None:
        """Write one record."""
        kind = record["type"]
        if kind == "header":
            self.done.header = record
            return
        if kind != "campaign" and self.done.campaign is None:
            raise _bad(line, f"a {kind} record before the campaign record")
        handler = getattr(self, f"_{kind}", None)
        if handler is None:
            raise _bad(line, f"unknown record type {kind!r}")
        try:
            handler(line, record)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise _bad(line, f"a malformed {kind} record ({type(exc).__name__}: {exc})") from None
        except (DBAPIError, psycopg.Error) as exc:
            reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
            raise _bad(line, f"the database refused the {kind} record: {reason}") from None

    @property
    def campaign_id(self) -> int:
        """The new campaign's id."""
        assert self.done.campaign is not None
        return self.done.campaign.id

    def _campaign(self, line: int, record: dict[str, Any]) -> None:
        if self.done.campaign is not None:
            raise _bad(line, "a second campaign record")
        values = _row_fields(record, CAMPAIGN_FIELDS)
        values["name"] = self.name or values["name"]
        if self.session.scalar(select(Campaign.id).where(Campaign.name == values["name"])) is not None:
            raise Conflict(f"a campaign named {values['name']!r} exists on this server: import it under another name")
        values["task_kind"] = TaskKind(values["task_kind"])
        if values["task_kind"] is not TaskKind.shots:
            raise _bad(line, "a moment campaign: archives hold shots campaigns only")
        values["status"] = CampaignStatus(values["status"])
        values["team_results"] = TeamResults(values["team_results"])
        campaign = Campaign(**values)
        self.session.add(campaign)
        self.session.flush()
        self.done.campaign = campaign

    def _topic(self, line: int, record: dict[str, Any]) -> None:
        fields = ("number", "title", "description", "guidelines", "examples")
        topic = Topic(campaign_id=self.campaign_id, **_row_fields(record, fields))
        self.session.add(topic)
        self.session.flush()
        self.topics[topic.number] = topic.id
        self.done.counts["topic"] = self.done.counts.get("topic", 0) + 1

    def _team(self, line: int, record: dict[str, Any]) -> None:
        team = Team(campaign_id=self.campaign_id, name=record["name"])
        self.session.add(team)
        self.session.flush()
        self.remember("team", record["id"], team.id)

    def _assessor(self, line: int, record: dict[str, Any]) -> None:
        assessor = Assessor(campaign_id=self.campaign_id, **_row_fields(record, ("name", "kind", "provenance")))
        self.session.add(assessor)
        self.session.flush()
        self.remember("assessor", record["id"], assessor.id)

    def _run(self, line: int, record: dict[str, Any]) -> None:
        data = base64.b64decode(record["content"], validate=True)
        found = hashlib.sha256(data).hexdigest()
        if found != record["sha256"]:
            raise _bad(
                line,
                f"run {record['name']!r}: its file's SHA-256 is {found}, the archive says {record['sha256']}: "
                "the file was changed",
            )
        values = _row_fields(record, RUN_FIELDS, skip=("team_id",))
        run = Run(campaign_id=self.campaign_id, team_id=self.ref("team", record["team_id"], line), **values)
        run.content = zlib.compress(data, 1)
        self.session.add(run)
        self.session.flush()
        self.remember("run", record["id"], run.id)
        self.session.expunge(run)  # its file is not kept in memory

    def _pool(self, line: int, record: dict[str, Any]) -> None:
        params = dict(record["params"] or {})
        if "run_ids" in params:
            params["run_ids"] = [self.ref("run", r, line) for r in params["run_ids"]]
        if isinstance(params.get("verification"), dict):
            design = dict(params["verification"])
            design["model_assessor_id"] = self.ref("assessor", design.get("model_assessor_id"), line)
            params["verification"] = design
        pool = Pool(
            campaign_id=self.campaign_id,
            kind=record["kind"],
            params=params,
            seed=int(record["seed"]),
            created_at=_time(record["created_at"]),
        )
        self.session.add(pool)
        self.session.flush()
        self.remember("pool", record["id"], pool.id)
        pooled = [{"pool_id": pool.id, "run_id": self.ref("run", r, line)} for r in record["run_ids"]]
        if pooled:
            self.session.execute(insert(PoolRun), pooled)

    def _new_ids(self, table: str, n: int) -> list[int]:
        """`n` new ids from the table's id sequence."""
        query = text(f"SELECT nextval(pg_get_serial_sequence('{table}', 'id')) FROM generate_series(1, :n)")
        return list(self.session.scalars(query, {"n": n}))

    def _rows(self, line: int, record: dict[str, Any]) -> None:
        table = record["table"]
        if table not in TABLES:
            raise _bad(line, f"rows of an unknown table {table!r}")
        if record["columns"] != list(TABLES[table][0]):
            raise _bad(line, f"{table} rows with columns {record['columns']}, expected {list(TABLES[table][0])}")
        rows = record["rows"]
        if not rows:
            return
        columns = list(zip(*rows, strict=True))
        getattr(self, f"_rows_{table}")(line, columns)
        self.done.counts[table] = self.done.counts.get(table, 0) + len(rows)

    def _copy(self, table: str, names: Sequence[str], columns: Sequence[Sequence[object]]) -> None:
        """COPY columns into a table (Python values; None is NULL)."""
        copy_rows(self.session, table, names, [np.array(list(c), dtype=object) for c in columns])

    def _refs(self, kind: str, values: Iterable[object], line: int, *, optional: bool = False) -> list[int | None]:
        """New ids of a column of archive ids."""
        get = self.opt if optional else self.ref
        return [get(kind, v, line) for v in values]

    def _topics(self, numbers: Iterable[object], line: int) -> list[int]:
        """New topic ids of a column of topic numbers."""
        return [self.topic(n, line) for n in numbers]

    def _rows_collection(self, line: int, c: Sequence[Sequence[object]]) -> None:
        campaign = [self.campaign_id] * len(c[0])
        self._copy("collection_items", ("campaign_id", "shot_id", "video_id", "start", "end"), [campaign, *c])

    def _rows_pool_items(self, line: int, c: Sequence[Sequence[object]]) -> None:
        old, pools, topics = c[0], self._refs("pool", c[1], line), self._topics(c[2], line)
        new = self._new_ids("pool_items", len(old))
        items = self.done.ids.setdefault("pool_item", {})
        for o, n in zip(old, new, strict=True):
            items[int(o)] = n  # type: ignore[call-overload]  # ids are ints
        self._copy("pool_items", POOL_ITEM_COLUMNS, [new, pools, topics, c[3], c[4], c[5], *c[7:]])

    def _rows_assignments(self, line: int, c: Sequence[Sequence[object]]) -> None:
        columns: list[Sequence[object]] = [self._refs("pool", c[0], line), self._topics(c[1], line)]
        columns += [self._refs("assessor", c[2], line), c[3]]
        self._copy("assignments", ("pool_id", "topic_id", "assessor_id", "created_at"), columns)

    def _rows_judging_tasks(self, line: int, c: Sequence[Sequence[object]]) -> None:
        columns = [self._refs("pool_item", c[0], line), c[1], c[2], self._refs("assessor", c[3], line, optional=True)]
        names = ("pool_item_id", "round", "reason", "excluded_assessor_id", "done_at")
        self._copy("judging_tasks", names, [*columns, c[4]])

    def _rows_judgements(self, line: int, c: Sequence[Sequence[object]]) -> None:
        new = self._new_ids("judgements", len(c[0]))
        judgements = self.done.ids.setdefault("judgement", {})
        for o, n in zip(c[0], new, strict=True):
            judgements[int(o)] = n  # type: ignore[call-overload]  # ids are ints
        items, assessors = self._refs("pool_item", c[1], line), self._refs("assessor", c[2], line, optional=True)
        names = ("id", "pool_item_id", "assessor_id", "round", "verdict", "grade", "seconds_spent")
        self._copy("judgements", (*names, "created_at", "updated_at"), [new, items, assessors, *c[3:]])

    def _rows_judgement_changes(self, line: int, c: Sequence[Sequence[object]]) -> None:
        columns: list[Sequence[object]] = [self._refs("judgement", c[0], line)]
        columns += [self._refs("assessor", c[1], line, optional=True), *c[2:]]
        self._copy(
            "judgement_changes", ("judgement_id", "changed_by", "old_verdict", "new_verdict", "changed_at"), columns
        )

    def _rows_model_verdicts(self, line: int, c: Sequence[Sequence[object]]) -> None:
        columns = [self._refs("pool_item", c[0], line), self._refs("assessor", c[1], line), *c[2:]]
        names = ("pool_item_id", "assessor_id", "grade", "probability", "config_hash", "created_at", "updated_at")
        self._copy("model_verdicts", names, columns)

    def _rows_qrels_entries(self, line: int, c: Sequence[Sequence[object]]) -> None:
        columns: list[Sequence[object]] = [self._refs("qrels_version", c[0], line), self._topics(c[1], line), *c[2:]]
        names = ("qrels_version_id", "topic_id", "docno", "stratum", "grade", "model_grade", "model_probability")
        self._copy("qrels_entries", (*names, "human_grade", "verification_probability"), columns)

    def _rows_scores(self, line: int, c: Sequence[Sequence[object]]) -> None:
        columns = [self._refs("evaluation", c[0], line), self._refs("run", c[1], line), *c[2:]]
        self._copy("scores", ("evaluation_id", "run_id", "measure", "topic", "value"), columns)

    def _rows_run_means(self, line: int, c: Sequence[Sequence[object]]) -> None:
        columns = [self._refs("evaluation", c[0], line), self._refs("run", c[1], line), *c[2:]]
        names = ("evaluation_id", "run_id", "measure", "value", "ci_low", "ci_high", "sampling_se", "estimator")
        self._copy("run_means", names, columns)

    def _qrels_version(self, line: int, record: dict[str, Any]) -> None:
        values = _row_fields(record, QRELS_FIELDS, skip=("pool_id",))
        provenance = values.get("provenance")
        if isinstance(provenance, dict) and isinstance(provenance.get("model_assessors"), list):
            models = [dict(m, id=self.ref("assessor", m.get("id"), line)) for m in provenance["model_assessors"]]
            values["provenance"] = {**provenance, "model_assessors": models}
        version = QrelsVersion(
            campaign_id=self.campaign_id, pool_id=self.opt("pool", record["pool_id"], line), **values
        )
        self.session.add(version)
        self.session.flush()
        self.remember("qrels_version", record["id"], version.id)

    def _evaluation(self, line: int, record: dict[str, Any]) -> None:
        values = _row_fields(record, EVALUATION_FIELDS, skip=("qrels_version_id",))
        evaluation = Evaluation(
            campaign_id=self.campaign_id,
            qrels_version_id=self.opt("qrels_version", record["qrels_version_id"], line),
            progress=1.0 if values["status"] == "done" else 0.0,
            **values,
        )
        self.session.add(evaluation)
        self.session.flush()
        self.remember("evaluation", record["id"], evaluation.id)
        self.done.evaluation_ids.append(evaluation.id)

    def _snapshot(self, line: int, record: dict[str, Any]) -> None:
        evaluation = self.ref("evaluation", record["evaluation_id"], line)
        content = record["content"]
        if isinstance(content, dict) and content.get("format") == 2:  # the ids a snapshot names, made new
            content = dict(content, evaluation_id=evaluation, campaign=dict(content["campaign"], id=self.campaign_id))
            content["qrels_version_id"] = self.opt("qrels_version", content.get("qrels_version_id"), line)
            content["runs"] = [
                dict(r, id=self.ref("run", r["id"], line), team_id=self.ref("team", r["team_id"], line))
                for r in content["runs"]
            ]
        self.session.add(
            LeaderboardSnapshot(
                campaign_id=self.campaign_id,
                evaluation_id=evaluation,
                content=content,
                published_at=_time(record["published_at"]),
            )
        )
        self.session.flush()
        self.done.counts["snapshot"] = self.done.counts.get("snapshot", 0) + 1


def import_campaign(
    session: Session, records: Iterable[tuple[int, dict[str, Any]]], *, name: str | None = None
) -> Imported:
    """Write an archive's campaign into the session's transaction under new ids (`name`: another name for it).

    InvalidInput names the line of the first problem (a run whose file does not match its SHA-256, a reference to
    something not defined before it, a malformed record, a cut or altered file); Conflict when the name is taken. The
    caller commits only when it returns, so a bad archive leaves nothing behind.
    """
    set_actor(session, actor_of("cli", command="archive import"))
    importer = _Importer(session, name)
    for line, record in records:
        importer.add(line, record)
    if importer.done.campaign is None:
        raise InvalidInput("the archive holds no campaign record")
    session.flush()
    return importer.done


# ------------------------------------------------------------------------------------------------------- verify


@dataclass(frozen=True)
class Difference:
    """Something recomputed that is not what the archive holds."""

    what: str  # pool_item | verification | score | run_mean | evaluation
    where: str  # e.g. "pool 3, topic 701, shot00012_4: stratum" or "evaluation 5, run alpha/alpha_run1, ..."
    archived: object
    recomputed: object

    def line(self) -> str:
        """The difference as one line of text."""
        return f"{self.what}: {self.where}: archive {self.archived!r}, recomputed {self.recomputed!r}"


@dataclass
class Verification:
    """What verify compared and every difference it found."""

    campaign: str
    header: dict[str, Any]
    compared: dict[str, int] = field(default_factory=dict)
    differences: list[Difference] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def count(self, what: str, n: int = 1) -> None:
        """Count compared things."""
        self.compared[what] = self.compared.get(what, 0) + n

    def to_dict(self) -> dict[str, object]:
        """The JSON form."""
        return {
            "campaign": self.campaign,
            "archive": {k: self.header.get(k) for k in ("format", "version", "trecpool", "git_commit", "schema")},
            "compared": self.compared,
            "differences": [d.__dict__ for d in self.differences],
            "notes": self.notes,
            "identical": not self.differences,
        }


def same_float(a: object, b: object) -> bool:
    """Whether two stored numbers are the same bit for bit (NaN equal to NaN; None only to None)."""
    if a is None or b is None:
        return a is None and b is None
    x, y = float(a), float(b)  # type: ignore[arg-type]  # stored numbers
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return struct.pack("<d", x) == struct.pack("<d", y)


def rebuild_pool(session: Session, pool: Pool) -> PoolTable:
    """A stored pool built again from its runs, seed and parameters, as `pools.create_pool` builds it: the builder
    over the runs in id order, then the pool's judging order planned from the same seed."""
    params = pool.params
    run_ids = [int(r) for r in params["run_ids"]]
    tables = load_runs(session, run_ids)
    strata = tuple(Stratum(int(a), int(b), float(r)) for a, b, r in params["strata"])
    if params.get("depths"):  # per-topic depths: a depth pool with a depth for each topic named
        table = build_pool(tables, depth=int(params["depth"]), depths=params["depths"], seed=int(pool.seed))
    else:
        table = build_pool(tables, strata=strata, seed=int(pool.seed))
    order = judging_orders.order_of(pool)
    planned, _ = judging_orders.initial_orders(tables, table, order, int(pool.seed), strata[-1].last)
    return replace(table, judging_order=planned)


_STORED_ITEMS = text(
    """
    SELECT t.number, i.docno, i.stratum, i.sampled, i.best_rank, i.n_runs, i.judging_order
    FROM pool_items i JOIN topics t ON t.id = i.topic_id WHERE i.pool_id = :pool
    """
)
ITEM_FIELDS = ("stratum", "sampled", "best_rank", "n_runs", "judging_order")


def _compare_pool(session: Session, pool: Pool, archive_id: int, found: Verification, limit: int) -> None:
    """Rebuild a pool and compare it item by item with the stored one."""
    table = rebuild_pool(session, pool)
    rebuilt = {
        (t, d): (s, bool(k), b, n, o)
        for t, d, s, k, b, n, o in zip(
            table.topics.tolist(),
            table.docs.tolist(),
            table.strata.tolist(),
            table.sampled.tolist(),
            table.best_ranks.tolist(),
            table.n_runs.tolist(),
            np.asarray(table.judging_order).tolist(),
            strict=True,
        )
    }
    random_order = judging_orders.is_random(judging_orders.order_of(pool))
    if not random_order:
        found.notes.append(
            f"pool {archive_id}: its judging order {judging_orders.order_of(pool)!r} is adaptive, rewritten by the "
            "verdicts as they came: the judging order is not compared, only the items"
        )
    fields = ITEM_FIELDS if random_order else ITEM_FIELDS[:-1]
    stored = 0
    for t, d, *values in session.execute(_STORED_ITEMS, {"pool": pool.id}):
        stored += 1
        key = (str(t), str(d))
        where = f"pool {archive_id}, topic {t}, {d}"
        again = rebuilt.pop(key, None)
        if again is None:
            _differ(found, limit, Difference("pool_item", where, "pooled", "not pooled"))
            continue
        for name, a, b in zip(fields, values, again, strict=False):
            if a != b:
                _differ(found, limit, Difference("pool_item", f"{where}: {name}", a, b))
    for t, d in sorted(rebuilt):
        _differ(found, limit, Difference("pool_item", f"pool {archive_id}, topic {t}, {d}", "not pooled", "pooled"))
    found.count("pool_items", stored)
    found.count("pools")
    _compare_draws(session, pool, archive_id, found, limit)


_DRAWN = text(
    """
    SELECT t.number, i.docno, v.probability, i.verification_probability, i.verification_sampled
    FROM pool_items i JOIN topics t ON t.id = i.topic_id
    LEFT JOIN model_verdicts v ON v.pool_item_id = i.id AND v.assessor_id = :model
    WHERE i.pool_id = :pool AND i.sampled AND i.verification_sampled IS NOT NULL
    ORDER BY t.number, i.docno COLLATE "C"
    """
)


def _compare_draws(session: Session, pool: Pool, archive_id: int, found: Verification, limit: int) -> None:
    """A model-assisted pool: each drawn topic's verification sample drawn again from the model's probabilities and
    the pool's seed (as services/verification.py draws it), compared item by item."""
    design = verification_of(pool)
    if design is None:
        return
    by_topic: dict[str, list[Any]] = {}
    for row in session.execute(_DRAWN, {"pool": pool.id, "model": design.model_assessor_id}):
        by_topic.setdefault(str(row[0]), []).append(row)
    for topic, rows in by_topic.items():
        probability = np.array([np.nan if r[2] is None else r[2] for r in rows], dtype=np.float64)
        pi = inclusion_probabilities(probability, design.human_share, stratify=design.stratify == "confidence")
        drawn = verification_draw(int(pool.seed), topic, [r[1] for r in rows], pi)
        for row, p, d in zip(rows, pi.tolist(), drawn.tolist(), strict=True):
            where = f"pool {archive_id}, topic {topic}, {row[1]}"
            if not same_float(row[3], p):
                _differ(found, limit, Difference("verification", f"{where}: inclusion probability", row[3], p))
            if row[4] != bool(d):
                _differ(found, limit, Difference("verification", f"{where}: drawn", row[4], bool(d)))
        found.count("verification_items", len(rows))


def _differ(found: Verification, limit: int, difference: Difference) -> None:
    """Record a difference (the first `limit`; the rest counted)."""
    found.count("differences")
    if len(found.differences) < limit:
        found.differences.append(difference)


_SCORES = text("SELECT run_id, measure, topic, value FROM scores WHERE evaluation_id = :e")
_MEANS = text(
    "SELECT run_id, measure, value, ci_low, ci_high, sampling_se, estimator FROM run_means WHERE evaluation_id = :e"
)


def _compare_evaluation(
    session: Session, evaluation: Evaluation, archive_id: int, found: Verification, limit: int
) -> None:
    """Run a finished evaluation again and compare every score and run mean bit for bit with the archived ones."""
    runs = {
        r.id: f"{r.team.name}/{r.name}"
        for r in session.scalars(select(Run).where(Run.campaign_id == evaluation.campaign_id))
    }
    scores = {(r, m, t): v for r, m, t, v in session.execute(_SCORES, {"e": evaluation.id})}
    means = {(r, m): tuple(rest) for r, m, *rest in session.execute(_MEANS, {"e": evaluation.id})}
    run_evaluation(session, evaluation.id)
    where = f"evaluation {archive_id}"
    again = {(r, m, t): v for r, m, t, v in session.execute(_SCORES, {"e": evaluation.id})}
    for key in sorted(set(scores) | set(again), key=lambda k: (runs.get(k[0], ""), k[1], k[2])):
        a, b = scores.get(key), again.get(key)
        if not same_float(a, b):
            run, measure, topic = key
            _differ(found, limit, Difference("score", f"{where}, run {runs.get(run)}, topic {topic}, {measure}", a, b))
    found.count("scores", len(scores))
    names = ("value", "ci_low", "ci_high", "sampling_se", "estimator")
    again_means = {(r, m): tuple(rest) for r, m, *rest in session.execute(_MEANS, {"e": evaluation.id})}
    for pair in sorted(set(means) | set(again_means), key=lambda k: (runs.get(k[0], ""), k[1])):
        a_row, b_row = means.get(pair), again_means.get(pair)
        for i, name in enumerate(names):
            a = a_row[i] if a_row else None
            b = b_row[i] if b_row else None
            same = a == b if name == "estimator" else same_float(a, b)
            if not same or (a_row is None) != (b_row is None):
                run, measure = pair
                where_mean = f"{where}, run {runs.get(run)}, mean of {measure}: {name}"
                _differ(found, limit, Difference("run_mean", where_mean, a, b))
    found.count("run_means", len(means))
    found.count("evaluations")


def verify_campaign(
    session: Session, records: Iterable[tuple[int, dict[str, Any]]], *, limit: int = 1000
) -> Verification:
    """Import an archive into the session (a scratch database: the caller rolls back), rebuild every pool from its
    seed and parameters and re-run every finished evaluation with its stored measures; every difference from the
    archive, pool item by item and number by number (floats bit for bit), the first `limit` of them listed."""
    imported = import_campaign(session, records, name=None)
    assert imported.campaign is not None
    found = Verification(imported.campaign.name, imported.header)
    back = {kind: {new: old for old, new in ids.items()} for kind, ids in imported.ids.items()}
    for pool_id in sorted(imported.ids.get("pool", {}).values()):
        pool = session.get_one(Pool, pool_id)
        _compare_pool(session, pool, back["pool"][pool_id], found, limit)
    for evaluation_id in imported.evaluation_ids:
        evaluation = session.get_one(Evaluation, evaluation_id)
        if evaluation.status != "done":
            found.notes.append(f"evaluation {back['evaluation'][evaluation_id]} is {evaluation.status}: not re-run")
            continue
        _compare_evaluation(session, evaluation, back["evaluation"][evaluation_id], found, limit)
    return found


def open_records(path: Path) -> Callable[[], Iterator[tuple[int, dict[str, Any]]]]:
    """A reader of an archive file's records (the file opened when iterated)."""

    def read() -> Iterator[tuple[int, dict[str, Any]]]:
        with path.open("rb") as stream:
            yield from read_records(stream)

    return read
