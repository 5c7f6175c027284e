"""Importing a campaign archive (the format: `archive`): every record written into the caller's transaction under
new ids, in one pass (a record refers only to records before it); run files checked against their SHA-256 and
stored where the run_storage setting says (as uploads are); the series joined by name or made. InvalidInput names
the archive line of the first problem, so nothing is half-written.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import psycopg
from sqlalchemy import insert, select, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from app.services import archive_analyses, archive_moments, archive_series, score_store
from app.services.archive import (
    CAMPAIGN_FIELDS,
    EVALUATION_FIELDS,
    POOL_ITEM_COLUMNS,
    QRELS_FIELDS,
    RUN_FIELDS,
    TABLES,
    TIMES,
    TOPIC_FIELDS,
)
from app.services.archive_format import bad
from app.services.errors import Conflict, InvalidInput, Unavailable
from app.storage import run_store
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


@dataclass
class Imported:
    """What an import made: the new campaign and the archive ids mapped to the new ones, by record type."""

    campaign: Campaign | None = None
    header: dict[str, Any] = field(default_factory=dict)
    ids: dict[str, dict[int, int]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    evaluation_ids: list[int] = field(default_factory=list)  # new ids, in archive order
    analysis_ids: list[int] = field(default_factory=list)  # new ids, in archive order


RECORDS = frozenset(
    "campaign series topic team assessor run pool rows qrels_version evaluation analysis snapshot".split()
)  # the record types after the header


def _time(value: object) -> datetime | None:
    """An ISO 8601 time (None stays None)."""
    return None if value is None else datetime.fromisoformat(str(value))


def _row_fields(record: Mapping[str, Any], names: Sequence[str], skip: Iterable[str] = ()) -> dict[str, Any]:
    """A record's fields for a new row: times parsed, ids left out."""
    left_out = {"id", *skip}
    return {n: (_time(record[n]) if n in TIMES else record[n]) for n in names if n not in left_out}


class _Importer:
    """Writes an archive's records into the session as new rows, in one pass (references point backwards)."""

    def __init__(self, session: Session, name: str | None, store: run_store.RunStore) -> None:
        self.session = session
        self.name = name
        self.store = store
        self.done = Imported()
        self.topics: dict[str, int] = {}
        self.series: archive_series.Joined | None = None

    def ref(self, kind: str, old: object, line: int) -> int:
        """The new id of an archive id of `kind` (InvalidInput when the archive defines none before this line)."""
        found = self.done.ids.get(kind, {}).get(old) if isinstance(old, int) else None
        if found is None:
            raise bad(line, f"refers to {kind} {old!r}, which the archive does not define before it")
        return found

    def opt(self, kind: str, old: object, line: int) -> int | None:
        """`ref`, with None for None."""
        return None if old is None else self.ref(kind, old, line)

    def topic(self, number: object, line: int) -> int:
        """A topic's new id by its number."""
        found = self.topics.get(str(number))
        if found is None:
            raise bad(line, f"refers to topic {number!r}, which the archive does not define")
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
            raise bad(line, f"a {kind} record before the campaign record")
        if kind not in RECORDS:
            raise bad(line, f"unknown record type {kind!r}")
        handler = getattr(self, f"_{kind}")
        try:
            handler(line, record)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise bad(line, f"a malformed {kind} record ({type(exc).__name__}: {exc})") from None
        except (DBAPIError, psycopg.Error) as exc:
            reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
            raise bad(line, f"the database refused the {kind} record: {reason}") from None

    @property
    def campaign_id(self) -> int:
        """The new campaign's id."""
        assert self.done.campaign is not None
        return self.done.campaign.id

    def _campaign(self, line: int, record: dict[str, Any]) -> None:
        if self.done.campaign is not None:
            raise bad(line, "a second campaign record")
        values = _row_fields(record, CAMPAIGN_FIELDS)
        values["name"] = self.name or values["name"]
        if self.session.scalar(select(Campaign.id).where(Campaign.name == values["name"])) is not None:
            raise Conflict(f"a campaign named {values['name']!r} exists on this server: import it under another name")
        values["task_kind"] = TaskKind(values["task_kind"])
        values["status"] = CampaignStatus(values["status"])
        values["team_results"] = TeamResults(values["team_results"])
        campaign = Campaign(**values)
        self.session.add(campaign)
        self.session.flush()
        self.done.campaign = campaign

    def _topic(self, line: int, record: dict[str, Any]) -> None:
        values = _row_fields({"progress_set": None, **record}, TOPIC_FIELDS)
        archive_series.check_topic(self.series, line, str(values["number"]), values["progress_set"])
        topic = Topic(campaign_id=self.campaign_id, **values)
        self.session.add(topic)
        self.session.flush()
        self.topics[topic.number] = topic.id
        self.done.counts["topic"] = self.done.counts.get("topic", 0) + 1

    def _series(self, line: int, record: dict[str, Any]) -> None:
        assert self.done.campaign is not None
        if self.series is not None:
            raise bad(line, "a second series record")
        self.series = archive_series.import_series(self.session, line, record, self.done.campaign)
        self.done.counts["series"] = 1

    def _analysis(self, line: int, record: dict[str, Any]) -> None:
        archive_analyses.import_analysis(self, line, record)
        self.done.analysis_ids.append(self.done.ids["analysis"][int(record["id"])])

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
            raise bad(
                line,
                f"run {record['name']!r}: its file's SHA-256 is {found}, the archive says {record['sha256']}: "
                "the file was changed",
            )
        values = _row_fields(record, RUN_FIELDS, skip=("team_id",))
        run = Run(campaign_id=self.campaign_id, team_id=self.ref("team", record["team_id"], line), **values)
        try:
            run_store.save(self.session, run, run_store.compress(data), self.store)
        except run_store.RunStoreUnavailable as exc:
            raise Unavailable(f"line {line}: run {record['name']!r} was not stored: {exc}") from None
        except run_store.RunStoreError as exc:
            raise Conflict(f"line {line}: run {record['name']!r} was not stored: {exc}") from None
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
        series_set = record.get("series_set")
        if series_set is not None and (self.series is None or series_set not in self.series.sets):
            raise bad(line, f"a series pool of progress set {series_set!r}, which the archive's series does not have")
        pool = Pool(
            campaign_id=self.campaign_id,
            kind=record["kind"],
            params=archive_series.pool_params(self.series, self.campaign_id, params),
            seed=int(record["seed"]),
            created_at=_time(record["created_at"]),
            series_set_id=None if series_set is None else self.series.sets[series_set],  # type: ignore[union-attr]  # checked above
        )
        self.session.add(pool)
        self.session.flush()
        self.remember("pool", record["id"], pool.id)
        pooled = [{"pool_id": pool.id, "run_id": self.ref("run", r, line)} for r in record["run_ids"]]
        if pooled:
            self.session.execute(insert(PoolRun), pooled)

    def new_ids(self, table: str, n: int) -> list[int]:
        """`n` new ids from the table's id sequence."""
        query = text(f"SELECT nextval(pg_get_serial_sequence('{table}', 'id')) FROM generate_series(1, :n)")
        return list(self.session.scalars(query, {"n": n}))

    def _rows(self, line: int, record: dict[str, Any]) -> None:
        table = record["table"]
        if table not in TABLES:
            raise bad(line, f"rows of an unknown table {table!r}")
        if record["columns"] != list(TABLES[table][0]):
            raise bad(line, f"{table} rows with columns {record['columns']}, expected {list(TABLES[table][0])}")
        rows = record["rows"]
        if not rows:
            return
        columns = list(zip(*rows, strict=True))
        handler = getattr(self, f"_rows_{table}", None)
        if handler is not None:
            handler(line, columns)
        else:
            archive_moments.ROWS[table](self, line, columns)
        self.done.counts[table] = self.done.counts.get(table, 0) + len(rows)

    def copy(self, table: str, names: Sequence[str], columns: Sequence[Sequence[object]]) -> None:
        """COPY columns into a table (Python values; None is NULL)."""
        copy_rows(self.session, table, names, [np.array(list(c), dtype=object) for c in columns])

    def refs(self, kind: str, values: Iterable[object], line: int, *, optional: bool = False) -> list[int | None]:
        """New ids of a column of archive ids."""
        get = self.opt if optional else self.ref
        return [get(kind, v, line) for v in values]

    def topic_ids(self, numbers: Iterable[object], line: int) -> list[int]:
        """New topic ids of a column of topic numbers."""
        return [self.topic(n, line) for n in numbers]

    def _rows_collection(self, line: int, c: Sequence[Sequence[object]]) -> None:
        campaign = [self.campaign_id] * len(c[0])
        self.copy("collection_items", ("campaign_id", "shot_id", "video_id", "start", "end"), [campaign, *c])

    def _rows_pool_items(self, line: int, c: Sequence[Sequence[object]]) -> None:
        old, pools, topics = c[0], self.refs("pool", c[1], line), self.topic_ids(c[2], line)
        new = self.new_ids("pool_items", len(old))
        items = self.done.ids.setdefault("pool_item", {})
        for o, n in zip(old, new, strict=True):
            items[int(o)] = n  # type: ignore[call-overload]  # ids are ints
        self.copy("pool_items", POOL_ITEM_COLUMNS, [new, pools, topics, c[3], c[4], c[5], *c[7:]])

    def _rows_assignments(self, line: int, c: Sequence[Sequence[object]]) -> None:
        columns: list[Sequence[object]] = [self.refs("pool", c[0], line), self.topic_ids(c[1], line)]
        columns += [self.refs("assessor", c[2], line), c[3]]
        self.copy("assignments", ("pool_id", "topic_id", "assessor_id", "created_at"), columns)

    def _rows_judging_tasks(self, line: int, c: Sequence[Sequence[object]]) -> None:
        columns = [self.refs("pool_item", c[0], line), c[1], c[2], self.refs("assessor", c[3], line, optional=True)]
        names = ("pool_item_id", "round", "reason", "excluded_assessor_id", "done_at")
        self.copy("judging_tasks", names, [*columns, c[4]])

    def _rows_judgements(self, line: int, c: Sequence[Sequence[object]]) -> None:
        new = self.new_ids("judgements", len(c[0]))
        judgements = self.done.ids.setdefault("judgement", {})
        for o, n in zip(c[0], new, strict=True):
            judgements[int(o)] = n  # type: ignore[call-overload]  # ids are ints
        items, assessors = self.refs("pool_item", c[1], line), self.refs("assessor", c[2], line, optional=True)
        names = ("id", "pool_item_id", "assessor_id", "round", "verdict", "grade", "seconds_spent")
        self.copy("judgements", (*names, "created_at", "updated_at"), [new, items, assessors, *c[3:]])

    def _rows_judgement_changes(self, line: int, c: Sequence[Sequence[object]]) -> None:
        columns: list[Sequence[object]] = [self.refs("judgement", c[0], line)]
        columns += [self.refs("assessor", c[1], line, optional=True), *c[2:]]
        self.copy(
            "judgement_changes", ("judgement_id", "changed_by", "old_verdict", "new_verdict", "changed_at"), columns
        )

    def _rows_model_verdicts(self, line: int, c: Sequence[Sequence[object]]) -> None:
        columns = [self.refs("pool_item", c[0], line), self.refs("assessor", c[1], line), *c[2:]]
        names = ("pool_item_id", "assessor_id", "grade", "probability", "config_hash", "created_at", "updated_at")
        self.copy("model_verdicts", names, columns)

    def _rows_qrels_entries(self, line: int, c: Sequence[Sequence[object]]) -> None:
        columns: list[Sequence[object]] = [self.refs("qrels_version", c[0], line), self.topic_ids(c[1], line), *c[2:]]
        names = ("qrels_version_id", "topic_id", "docno", "stratum", "grade", "model_grade", "model_probability")
        self.copy("qrels_entries", (*names, "human_grade", "verification_probability"), columns)

    def _rows_scores(self, line: int, c: Sequence[Sequence[object]]) -> None:
        evaluations = [self.ref("evaluation", e, line) for e in c[0]]
        runs = [self.ref("run", r, line) for r in c[1]]
        for evaluation_id in dict.fromkeys(evaluations):  # score arrays (score_store), an evaluation at a time
            rows = [k for k, e in enumerate(evaluations) if e == evaluation_id]
            measures, topics = [str(c[2][k]) for k in rows], [str(c[3][k]) for k in rows]
            values = [float(c[4][k]) for k in rows]  # type: ignore[arg-type]  # the archive row holds the value as a JSON number or string
            score_store.write_rows(self.session, evaluation_id, [runs[k] for k in rows], measures, topics, values)

    def _rows_run_means(self, line: int, c: Sequence[Sequence[object]]) -> None:
        columns = [self.refs("evaluation", c[0], line), self.refs("run", c[1], line), *c[2:]]
        names = ("evaluation_id", "run_id", "measure", "value", "ci_low", "ci_high", "sampling_se", "estimator")
        self.copy("run_means", names, columns)

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
    session: Session,
    records: Iterable[tuple[int, dict[str, Any]]],
    *,
    name: str | None = None,
    store: run_store.RunStore | None = None,
) -> Imported:
    """Write an archive's campaign into the session's transaction under new ids (`name`: another name for it), its
    run files into `store` (default: the run_storage setting's; a file of a rolled-back import is left for gc).

    InvalidInput names the line of the first problem (a run whose file does not match its SHA-256, a reference to
    something not defined before it, a malformed record, a cut or altered file); Conflict when the name is taken;
    Unavailable when the run file store cannot be reached. The caller commits only when it returns, so a bad archive
    leaves nothing behind in the database.
    """
    set_actor(session, actor_of("cli", command="archive import"))
    try:
        store = store or run_store.configured_store(session)
    except run_store.RunStoreError as exc:  # S3 without boto3
        raise Unavailable(f"run files cannot be stored: {exc}") from None
    importer = _Importer(session, name, store)
    for line, record in records:
        importer.add(line, record)
    if importer.done.campaign is None:
        raise InvalidInput("the archive holds no campaign record")
    session.flush()
    return importer.done
