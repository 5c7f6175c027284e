"""Campaign archives: one file with everything needed to re-create a campaign elsewhere and to re-check it.

Format `trecpool-archive`, version 1: a gzip-compressed file of JSON lines (UTF-8, one JSON object a line). Floats
are written as Python's repr, so every float64 reads back bit for bit (NaN and Infinity as the common JSON
extension `NaN`, `Infinity`). Each line has a `type`, in this order:

- `header`: `format` ("trecpool-archive"), `version` (1), `trecpool` (the package version), `git_commit` (null
  when not known), `schema` (the Alembic revision of the exporting database), `exported_at`, `campaign` (its name);
- `campaign`: its settings and status (shots or moments);
- `series` (when the campaign belongs to one): its name, description and progress sets, each with its topic numbers,
  `released_at` and `sealed` (an organiser's export holds sealed judgements: the sets named here and in the header's
  `sealed_sets` are the ones no team or public path may show);
- `rows` of table `collection` (the master shot reference: shot_id, video_id, start, end);
- `topic` (number, title, description, guidelines, examples, `progress_set`), `team` (its name), `assessor` (name,
  kind, a model's provenance); never a token or a judging link; `rows` of `ground_truth` (a moment campaign's
  uploaded segments);
- `run`: its metadata, `sha256` of the file as uploaded and `content`, those bytes in base64 (checked on import);
- `pool`: kind, params (as stored: strata, depth, judging order, verification design, a moment pool's IoU), `seed`,
  `run_ids`, `series_set` (a series pool's progress set); then `rows` of `pool_items` (per item its topic, docno,
  stratum, whether sampled, `inclusion_probability` (its stratum's sampling rate), best rank, runs, `judging_order`
  (-1 when not sampled) and the verification sample's probability and draw), `moment_pool_items` (a moment pool's
  proposals), `assignments`, `judging_tasks` (without leases), `judgements` (verdict, grade, round, assessor,
  seconds, times), `moment_judgements` (marked segments), `judgement_changes` and `model_verdicts` (grade,
  probability, configuration hash);
- `qrels_version` (label, kind, source, pool, judges, provenance, judging order, `sealed_sets`...) and its `rows` of
  `qrels_entries` (topics by number, docnos byte-wise: evaluation reads a version's lines in that order whatever the
  rows' physical order, so its imputation's seeded draws and float sums reproduce) or `moment_truth_segments`;
  every version;
- `evaluation` (qrels version, measures, status) and its `rows` of `scores` (run, measure, topic, value) and
  `run_means` (value, interval, sampling standard error, estimator);
- `analysis`: kind, params (as the job ran them, with the evaluation and qrels versions it read), status, `result`
  and `code` (the exporting code's version: a job row does not record the code that computed it);
- `snapshot` (a publication's frozen content);
- `end`: `lines`, the number of lines before it, and `sha256`, the SHA-256 of their bytes: a truncated or altered
  file is refused.

A `rows` record holds at most BLOCK rows of one table: {"type": "rows", "table": ..., "columns": [...], "rows":
[[...], ...]}. Ids are the exporting database's: they only tie records together (a record refers to records before
it), and import gives everything new ids. Not archived: tokens and judging links, leases, the audit trail, and the
runs of other campaigns a series pool pools (such a campaign is refused: archive each campaign of the series).

Export streams (memory bounded by a block of rows or one run file, not by the campaign); import
(`archive_import`) checks every run's SHA-256 and writes the campaign in the caller's transaction, raising
InvalidInput naming the line at the first problem, so nothing is half-written, and joins the series of the same name
or makes it; verify (`archive_verify`) imports into a scratch database, rebuilds every pool from its seed and
parameters with the pool builder's code, cuts every qrels version again from the judgements (or marks), re-runs
every finished evaluation and analysis, comparing item by item and number by number.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import subprocess
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import numpy as np
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from app.services import archive_analyses, archive_moments, archive_series, sealing
from app.services.archive_format import bad
from app.services.errors import NotFound
from app.services.run_arrays import stored_file
from app.storage.models import (
    Assessor,
    Campaign,
    Evaluation,
    LeaderboardSnapshot,
    Pool,
    PoolRun,
    QrelsVersion,
    Run,
    Team,
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
TOPIC_FIELDS = ("number", "title", "description", "guidelines", "examples", "progress_set")
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
POOL_TABLES = (
    "pool_items", "assignments", "judging_tasks", "judgements", "judgement_changes", "model_verdicts",
    *archive_moments.POOL_TABLES,
)  # fmt: skip
TABLES.update(archive_moments.TABLES)


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
    """The records of a campaign's archive, in file order (read from the database as they are written); Conflict for
    a campaign hosting a series pool over other campaigns' runs."""
    campaign = session.get(Campaign, campaign_id)
    if campaign is None:
        raise NotFound(f"campaign {campaign_id} not found")
    pools = list(session.scalars(select(Pool).where(Pool.campaign_id == campaign_id).order_by(Pool.id)))
    for pool in pools:
        archive_series.check_pool(session, campaign, pool)
    series = archive_series.series_record(session, campaign)
    yield {
        "type": "header",
        "format": FORMAT,
        "version": VERSION,
        "trecpool": code.trecpool,
        "git_commit": code.git_commit,
        "schema": session.scalar(text("SELECT version_num FROM alembic_version")),
        "exported_at": datetime.now(UTC),
        "campaign": campaign.name,
        "sealed_sets": archive_series.sealed_sets(series),
    }
    yield {"type": "campaign", **_fields(campaign, CAMPAIGN_FIELDS)}
    if series is not None:
        yield series
    yield from _blocks(session, "collection", c=campaign_id)
    for topic in session.scalars(select(Topic).where(Topic.campaign_id == campaign_id).order_by(Topic.id)):
        yield {"type": "topic", **_fields(topic, TOPIC_FIELDS)}
    for team in session.scalars(select(Team).where(Team.campaign_id == campaign_id).order_by(Team.id)):
        yield {"type": "team", "id": team.id, "name": team.name}
    for assessor in session.scalars(select(Assessor).where(Assessor.campaign_id == campaign_id).order_by(Assessor.id)):
        yield {"type": "assessor", **_fields(assessor, ("id", "name", "kind", "provenance"))}
    yield from _blocks(session, "ground_truth", c=campaign_id)
    run_ids = list(session.scalars(select(Run.id).where(Run.campaign_id == campaign_id).order_by(Run.id)))
    for run_id in run_ids:  # one run file in memory at a time
        run = session.get_one(Run, run_id)
        content = stored_file(session, run)
        yield {"type": "run", **_fields(run, RUN_FIELDS), "content": base64.b64encode(content).decode()}
        session.expunge(run)
    for pool in pools:
        pooled = session.scalars(select(PoolRun.run_id).where(PoolRun.pool_id == pool.id).order_by(PoolRun.run_id))
        yield {
            "type": "pool",
            **_fields(pool, ("id", "kind", "params", "seed", "created_at")),
            "run_ids": list(pooled),
            "series_set": archive_series.set_name(session, pool),
        }
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
        sealed = sealing.sealed_sets_of_version(session, version.id)
        yield {"type": "qrels_version", **_fields(version, QRELS_FIELDS), "sealed_sets": sealed}
        yield from _blocks(session, "qrels_entries", v=version.id)
        for table in archive_moments.VERSION_TABLES:
            yield from _blocks(session, table, v=version.id)
    for evaluation in session.scalars(
        select(Evaluation).where(Evaluation.campaign_id == campaign_id).order_by(Evaluation.id)
    ).all():
        yield {"type": "evaluation", **_fields(evaluation, EVALUATION_FIELDS)}
        yield from _blocks(session, "scores", v=evaluation.id)
        yield from _blocks(session, "run_means", v=evaluation.id)
    yield from archive_analyses.analysis_records(session, campaign_id, code.__dict__)
    for snapshot in session.scalars(
        select(LeaderboardSnapshot)
        .where(LeaderboardSnapshot.campaign_id == campaign_id)
        .order_by(LeaderboardSnapshot.id)
    ).all():
        yield {"type": "snapshot", **_fields(snapshot, ("evaluation_id", "content", "published_at"))}


# ------------------------------------------------------------------------------------------------------ reading


def read_records(stream: IO[bytes]) -> Iterator[tuple[int, dict[str, Any]]]:
    """The archive's records with their line numbers, checked as they are read: gzip, JSON, the header's format
    and version, and at the end the line count and SHA-256 of the end record (InvalidInput naming the line)."""
    digest, count, ended, line_no = hashlib.sha256(), 0, False, 0
    try:
        for line_no, line in enumerate(gzip.GzipFile(fileobj=stream, mode="rb"), 1):
            if ended:
                raise bad(line_no, "a line after the end record")
            try:
                record = json.loads(line)
            except ValueError as exc:
                raise bad(line_no, f"not a JSON object ({exc})") from None
            if not isinstance(record, dict) or not isinstance(record.get("type"), str):
                raise bad(line_no, "not a JSON object with a type")
            if record["type"] == "end":
                if record.get("lines") != count or record.get("sha256") != digest.hexdigest():
                    raise bad(line_no, "the lines before the end record are not those written (altered or cut)")
                ended = True
                continue
            if line_no == 1 and (record["type"] != "header" or record.get("format") != FORMAT):
                raise bad(1, f"not a trecpool campaign archive (the first line is no {FORMAT} header)")
            if line_no == 1 and record.get("version") != VERSION:
                raise bad(1, f"archive version {record.get('version')!r}: this trecpool reads version {VERSION}")
            digest.update(line)
            count += 1
            yield line_no, record
    except (OSError, EOFError, zlib.error) as exc:
        raise bad(line_no + 1, f"not a readable gzip file ({exc}): truncated or not an archive") from None
    if line_no == 0:
        raise bad(1, "the archive is empty")
    if not ended:
        raise bad(line_no + 1, "the archive ends without its end record: it is truncated")


def open_records(path: Path) -> Callable[[], Iterator[tuple[int, dict[str, Any]]]]:
    """A reader of an archive file's records (the file opened when iterated)."""

    def read() -> Iterator[tuple[int, dict[str, Any]]]:
        with path.open("rb") as stream:
            yield from read_records(stream)

    return read
