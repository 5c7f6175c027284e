"""Run submission: validate a whole file, then store it, compressed, as the run's one record of its rows."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial
from typing import Any, Literal

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.services import offload, run_files
from app.services.auth import Principal
from app.services.campaigns import get_campaign, submissions_open
from app.services.collection import has_collection, known_ids
from app.services.errors import Conflict, Forbidden, InvalidInput, NotFound, Unavailable
from app.services.inputs import INT32_MAX, echo
from app.services.run_arrays import stored_file
from app.services.topics import topic_ids_by_number
from app.services.validation import in_line_order, invalid_upload
from app.storage import run_store
from app.storage.models import Campaign, CampaignStatus, Pool, Role, Run, TaskKind, Team

RunFormat = Literal["trec", "xml", "moments"]
SYSTEM_TYPES = ("F", "M", "R")
TRAINING_TYPES = ("A", "D", "E", "F")
NOVELTY = {
    "N": True,
    "Y": True,
    "YES": True,
    "TRUE": True,
    "1": True,
    "C": False,
    "NO": False,
    "FALSE": False,
    "0": False,
}
MAX_DESCRIPTION = 100_000
DEFAULTS: dict[str, object] = {
    "system_type": "F",
    "novelty": False,
    "training_type": "D",
    "priority": 1,
    "description": "",
}
# Where a TRECVID XML run states each field: attributes of <videoAdhocSearchRunResult> (older DTDs say pType).
XML_ATTRIBUTES = {
    "system_type": ("class", "pType"),
    "training_type": ("trType",),
    "novelty": ("novelty",),
    "priority": ("priority",),
    "description": ("desc",),
}


@dataclass(frozen=True)
class RunMetadata:
    """What a team says about a run (TRECVID run metadata). A field left None is taken from the XML run's attributes
    when the run is XML and states it, else it gets its default (F, not novelty, D, priority 1, no description)."""

    name: str
    system_type: str | None = None
    novelty: bool | None = None
    training_type: str | None = None
    priority: int | None = None
    description: str | None = None

    def problems(self) -> list[dict[str, object]]:
        """Field errors of the fields given, empty when valid."""
        found: list[dict[str, object]] = []
        if not self.name or len(self.name) > 200 or any(c.isspace() for c in self.name):
            found.append({"field": "name", "message": "1-200 characters, no white space"})
        if self.system_type is not None and self.system_type not in SYSTEM_TYPES:
            found.append({"field": "system_type", "message": f"one of {', '.join(SYSTEM_TYPES)}"})
        if self.training_type is not None and self.training_type not in TRAINING_TYPES:
            found.append({"field": "training_type", "message": f"one of {', '.join(TRAINING_TYPES)}"})
        if self.priority is not None and self.priority < 1:
            found.append({"field": "priority", "message": "must be >= 1"})
        return found

    def completed(self, attributes: dict[str, str]) -> tuple[RunMetadata, list[dict[str, object]]]:
        """Every field filled: those given kept, the others from an XML run's `attributes` (names matched in any
        case), else their defaults; and the field errors of the attributes used."""
        by_name = {key.lower(): value for key, value in attributes.items()}
        values: dict[str, Any] = {}  # each field's own type
        problems: list[dict[str, object]] = []
        for name, default in DEFAULTS.items():
            given = getattr(self, name)
            key = next((k for k in XML_ATTRIBUTES[name] if k.lower() in by_name), None)
            if given is not None or key is None:
                values[name] = default if given is None else given
                continue
            value, problem = _from_attribute(name, key, by_name[key.lower()])
            if problem:
                problems.append({"field": name, "message": f"{problem} (the form's {name} would override it)"})
            values[name] = default if problem else value
        return replace(self, **values), problems


def _from_attribute(name: str, key: str, text: str) -> tuple[object, str | None]:
    """A metadata field's value from an XML run attribute, or a message saying why it cannot be one."""
    value = text.strip()
    said = f"the XML run's {key}={echo(value, 40)!r}"
    if name == "system_type":
        return value, None if value in SYSTEM_TYPES else f"{said} is not one of {', '.join(SYSTEM_TYPES)}"
    if name == "training_type":
        return value, None if value in TRAINING_TYPES else f"{said} is not one of {', '.join(TRAINING_TYPES)}"
    if name == "novelty":
        if value.upper() not in NOVELTY:
            return None, f"{said} is not N (a novelty run) or C (a common run)"
        return NOVELTY[value.upper()], None
    if name == "priority":
        number = int(value) if value.isascii() and value.isdigit() else 0
        return number, None if 1 <= number <= INT32_MAX else f"{said} is not an integer from 1 to {INT32_MAX}"
    if len(text) > MAX_DESCRIPTION:
        return None, f"the XML run's {key} is longer than {MAX_DESCRIPTION} characters"
    return text, None


@dataclass(frozen=True)
class Submission:
    """A run upload: its bytes, format and metadata, and for organisers the team it is for."""

    data: bytes
    metadata: RunMetadata
    format: RunFormat | None = None
    team_id: int | None = None
    extra_metadata: dict[str, str] = field(default_factory=dict)


def _now() -> datetime:
    """The current time, timezone-aware."""
    return datetime.now(UTC)


def _resolve_team(session: Session, principal: Principal, campaign: Campaign, team_id: int | None) -> Team:
    """The submitting team: the token's own, or (for organisers) the one named."""
    if principal.role is Role.team:
        if team_id is not None and team_id != principal.team_id:
            raise Forbidden("a team token submits for its own team only")
        team_id = principal.team_id
    elif principal.may_organise(campaign.id):
        if team_id is None:
            raise InvalidInput("organisers must name the team", [{"field": "team_id", "message": "required"}])
    else:
        raise Forbidden("only teams and organisers submit runs")
    team = session.get(Team, team_id)
    if team is None or team.campaign_id != campaign.id:
        raise NotFound(f"team {team_id} not found in campaign {campaign.id}")
    return team


def _check_quota(session: Session, campaign: Campaign, team: Team, name: str, *, lock: bool = False) -> None:
    """Conflict if the name is taken or the team has used up its runs; `lock` holds the team row until commit."""
    if lock:  # concurrent uploads of one team queue here, so two cannot both take the last run or the same name
        session.execute(select(Team.id).where(Team.id == team.id).with_for_update())
    names = list(session.scalars(select(Run.name).where(Run.team_id == team.id)))
    if name in names:
        raise Conflict(f"team {team.name!r} already has a run named {name!r}")
    if len(names) >= campaign.max_runs_per_team:
        raise Conflict(f"team {team.name!r} has used all {campaign.max_runs_per_team} runs this campaign allows")


@dataclass(frozen=True)
class CpuPolicy:
    """Where an upload's file is read: in `processes` parse processes at `niceness` (0 processes: in this thread)."""

    processes: int = 0
    niceness: int = 0


def submit_run(
    session: Session,
    principal: Principal,
    campaign_id: int,
    submission: Submission,
    *,
    max_errors: int,
    cpu: CpuPolicy = CpuPolicy(),
) -> Run:
    """Validate an uploaded run completely, in one pass, and store it; raises before anything is written.

    One pass: the file's syntax, its topics against the campaign's, the length of each ranked list and its shots (or
    videos) against the collection are all checked on the rows that are well-formed, and every error found is
    reported at once, by line (at most `max_errors`), with the metadata's field errors.
    """
    campaign = get_campaign(session, principal, campaign_id)
    team = _resolve_team(session, principal, campaign, submission.team_id)
    if not submissions_open(campaign, _now()):
        raise Forbidden("the submission window of this campaign is closed")
    given = submission.metadata
    if given.problems():
        raise InvalidInput("invalid run metadata", given.problems())
    _check_quota(session, campaign, team, given.name)
    fmt = submission.format or run_files.detect_format(submission.data, campaign.task_kind)
    if (fmt == "moments") != (campaign.task_kind is TaskKind.moments):
        raise InvalidInput(
            f"a {campaign.task_kind.value} campaign does not take {fmt} runs",
            [{"field": "format", "message": f"not allowed for task kind {campaign.task_kind.value}"}],
        )
    topic_ids = topic_ids_by_number(session, campaign.id)
    collection = has_collection(session, campaign.id)
    report = offload.call(
        cpu.processes,
        cpu.niceness,
        partial(
            run_files.inspect_upload,
            max_errors=max_errors,
            topic_numbers=frozenset(topic_ids),
            max_results=campaign.max_results,
            with_ids=collection,
        ),
        submission.data,
        fmt,
    )
    meta, field_errors = given.completed(report.attributes)
    missing = _unknown_in_collection(session, campaign.id, report, max_errors) if collection else []
    errors = in_line_order(report.errors, missing)
    if field_errors or errors:
        raise invalid_upload("run file", field_errors, errors, max_errors, at_least=not report.complete)
    _check_quota(session, campaign, team, meta.name, lock=True)  # again, under the team's lock, just before writing
    run = Run(
        campaign_id=campaign.id,
        team_id=team.id,
        name=meta.name,
        tag=report.tag,
        format=fmt,
        system_type=meta.system_type,
        novelty=meta.novelty,
        training_type=meta.training_type,
        priority=meta.priority,
        description=meta.description,
        n_entries=report.n_rows,
        n_topics=report.n_topics,
        elapsed_seconds={t: s for t, s in report.elapsed.items() if t in topic_ids} or None,  # campaign topics only
        sha256=report.sha256,
    )
    try:
        run_store.save(session, run, report.content, run_store.configured_store(session))
    except run_store.RunStoreUnavailable as exc:
        raise Unavailable(f"run {meta.name!r} was not stored: {exc}") from None
    except run_store.RunStoreError as exc:
        raise Conflict(f"run {meta.name!r} was not stored: {exc}") from None
    session.add(run)
    session.flush()
    return run


def _unknown_in_collection(
    session: Session, campaign_id: int, report: run_files.UploadReport, limit: int
) -> list[tuple[int, str]]:
    """Line errors (the first `limit`, in file order) for shots (or videos) of a run upload that the campaign's
    collection lacks (the caller knows the campaign has a collection): the run's distinct ids looked up in the
    collection's ids this process keeps in memory (`collection.known_ids`), by hash, confirmed by their code points."""
    if report.n_rows == 0:
        return []
    known = known_ids(session, campaign_id, "video" if report.id_kind == "video" else "shot")
    absent = known.absent(report.ids, report.id_hashes)
    if not absent.any():
        return []
    rows = np.flatnonzero(absent[report.id_of_row])
    rows = rows[np.argsort(report.lines[rows], kind="stable")][:limit]
    return [
        (int(report.lines[i]), f"{report.id_kind} {str(report.ids[report.id_of_row[i]])!r} is not in the collection")
        for i in rows.tolist()
    ]


def visible_run(session: Session, principal: Principal, run_id: int) -> Run:
    """A run the caller may see: organisers of its campaign, or its own team (NotFound otherwise)."""
    run = session.get(Run, run_id)
    if run is None or not (
        principal.may_organise(run.campaign_id) or (principal.role is Role.team and principal.team_id == run.team_id)
    ):
        raise NotFound(f"run {run_id} not found")
    return run


def set_baseline(session: Session, principal: Principal, run_id: int, baseline: bool) -> Run:
    """Mark (or unmark) a run as a baseline: organisers of its campaign only (NotFound for anyone else)."""
    run = session.get(Run, run_id)
    if run is None or not principal.may_organise(run.campaign_id):
        raise NotFound(f"run {run_id} not found")
    run.baseline = baseline
    session.flush()
    return run


def list_runs(session: Session, principal: Principal, campaign_id: int) -> list[Run]:
    """Runs of a campaign the caller may see: all for organisers, its own for a team."""
    get_campaign(session, principal, campaign_id)
    query = select(Run).where(Run.campaign_id == campaign_id).order_by(Run.id)
    if principal.role is Role.team:
        query = query.where(Run.team_id == principal.team_id)
    elif not principal.may_organise(campaign_id):
        raise Forbidden("assessors do not see runs")
    return list(session.scalars(query))


def delete_run(session: Session, principal: Principal, run_id: int) -> None:
    """Delete a run: its team while submissions are open, organisers until a pool is built (Conflict from then on,
    for everyone: pools, judgements and scores rest on the runs). The audit trail keeps the run's metadata."""
    run = visible_run(session, principal, run_id)
    campaign = session.get(Campaign, run.campaign_id)
    assert campaign is not None
    pools = list(session.scalars(select(Pool.id).where(Pool.campaign_id == campaign.id).order_by(Pool.id)))
    if pools:
        raise Conflict(
            f"run {run.name!r} cannot be deleted: campaign {campaign.id} has {len(pools)} pool(s) built from its runs "
            f"(pool {', '.join(map(str, pools))}), and judgements and scores rest on them"
        )
    if campaign.status not in (CampaignStatus.draft, CampaignStatus.open, CampaignStatus.closed):
        raise Conflict(f"run {run.name!r} cannot be deleted: campaign {campaign.id} is {campaign.status.value}")
    if principal.role is Role.team and not submissions_open(campaign, _now()):
        raise Forbidden("runs can be deleted only while submissions are open")
    session.delete(run)
    session.flush()


def download_run(session: Session, principal: Principal, run_id: int) -> tuple[Run, Iterator[bytes]]:
    """The run and a stream of its file (TREC 6 columns, or moment TSV) in upload order, from its stored upload."""
    run = visible_run(session, principal, run_id)
    parsed = run_files.parse(stored_file(session, run), run.format, max_errors=1)
    return run, _file_lines(parsed, run.tag or run.name)


def original_upload(session: Session, principal: Principal, run_id: int) -> tuple[Run, bytes, str, str]:
    """The run file exactly as uploaded (after any gzip), explanations included: the run, the bytes, a file name and
    a media type."""
    run = visible_run(session, principal, run_id)
    data = stored_file(session, run)
    if run.format == "xml":
        return run, data, f"{run.name}.xml", "application/xml"
    suffix = "txt" if run.format == "trec" else ("jsonl" if data.lstrip()[:1] == b"{" else "tsv")
    return run, data, f"{run.name}.{suffix}", "text/plain; charset=utf-8"


def _number(value: float) -> str:
    """A float as PostgreSQL prints it: shortest round-trip digits, no trailing '.0'."""
    shown = repr(value)
    return shown[:-2] if shown.endswith(".0") else shown


def _file_lines(parsed: run_files.ParsedRun, tag: str, chunk: int = 10_000) -> Iterator[bytes]:
    """The rows of a parsed run as file lines, a chunk of rows at a time."""
    topics = parsed.topics.tolist()
    if parsed.moments is not None:
        m = parsed.moments
        columns = zip(topics, m.videos.tolist(), m.starts.tolist(), m.ends.tolist(), m.scores.tolist(), strict=True)
        rows = (f"{t}\t{v}\t{_number(s)}\t{_number(e)}\t{_number(c)}\t{tag}\n" for t, v, s, e, c in columns)
    else:
        r = parsed.trec
        trec_columns = zip(topics, r.docs.tolist(), r.ranks.tolist(), r.scores.tolist(), strict=True)
        rows = (f"{t} Q0 {d} {k} {_number(c)} {tag}\n" for t, d, k, c in trec_columns)
    batch: list[str] = []
    for row in rows:
        batch.append(row)
        if len(batch) == chunk:
            yield "".join(batch).encode()
            batch = []
    if batch:
        yield "".join(batch).encode()
