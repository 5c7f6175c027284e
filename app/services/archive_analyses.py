"""The analyses part of a campaign archive: each analysis job's kind, parameters, status and result with the code
version that exported it; imported under new ids (the evaluation and qrels versions it read made new too); verified
by running it again (every registered analysis is deterministic given its parameters and seed) and comparing the
result leaf by leaf, floats bit for bit. One that cannot be run again says why, per analysis."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.services.analyses import run_analysis
from app.services.analysis_registry import ANALYSES
from app.services.archive_format import Difference, ImportContext, Verification, same_float
from app.storage.models import AnalysisJob

# parameters and result fields that hold ids of the archive's records, and of which kind
ID_FIELDS = {
    "evaluation_id": "evaluation",
    "qrels_version_id": "qrels_version",
    "qrels_version_ids": "qrels_version",
    "human_version_id": "qrels_version",
    "model_version_id": "qrels_version",
    "pool_id": "pool",
    "run_id": "run",
    "run_ids": "run",
}
JOB_FIELDS = ("id", "kind", "params", "status", "result", "error", "created_at", "finished_at")


def analysis_records(session: Session, campaign_id: int, code: Mapping[str, object]) -> Iterator[dict[str, object]]:
    """An `analysis` record per analysis job of the campaign, oldest first."""
    jobs = session.scalars(select(AnalysisJob).where(AnalysisJob.campaign_id == campaign_id).order_by(AnalysisJob.id))
    for job in jobs.all():
        yield {"type": "analysis", **{name: getattr(job, name) for name in JOB_FIELDS}, "code": dict(code)}


def _mapped(value: object, kind: str, get: Any) -> object:
    """An id (or a list of ids) mapped by `get(kind, old)`."""
    if isinstance(value, list):
        return [get(kind, v) for v in value]
    return None if value is None else get(kind, value)


def import_analysis(ctx: ImportContext, line: int, record: dict[str, Any]) -> None:
    """An analysis job, its parameters' ids made the new ones."""
    params = {
        k: _mapped(v, ID_FIELDS[k], lambda kind, old: ctx.ref(kind, old, line)) if k in ID_FIELDS else v
        for k, v in dict(record["params"] or {}).items()
    }
    status = str(record["status"])
    job = AnalysisJob(
        campaign_id=ctx.campaign_id,
        kind=str(record["kind"]),
        params=params,
        status=status,
        progress=1.0 if status == "done" else 0.0,
        result=record["result"],
        error=record["error"],
        created_at=None if record["created_at"] is None else datetime.fromisoformat(str(record["created_at"])),
        finished_at=None if record["finished_at"] is None else datetime.fromisoformat(str(record["finished_at"])),
    )
    ctx.session.add(job)
    ctx.session.flush()
    ctx.remember("analysis", record["id"], job.id)


def _back(value: object, key: str, back: Mapping[str, Mapping[int, int]]) -> object:
    """A recomputed result's ids made the archive's again (by the key's kind), so results compare."""
    if isinstance(value, dict):
        return {k: _back(v, k, back) for k, v in value.items()}
    if isinstance(value, list):
        return [_back(v, key, back) for v in value]
    if key in ID_FIELDS and isinstance(value, int) and not isinstance(value, bool):
        return back.get(ID_FIELDS[key], {}).get(value, value)
    return value


def _same(a: object, b: object) -> bool:
    """Two JSON leaves equal (numbers bit for bit; an int and a float of the same value are equal)."""
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and not isinstance(b, bool):
        return same_float(a, b)
    return a == b and type(a) is type(b)


def compare_results(archived: object, again: object, where: str, found: Verification) -> None:
    """Every leaf of two JSON results that differs, by its path."""
    if isinstance(archived, dict) and isinstance(again, dict):
        for key in sorted(set(archived) | set(again)):
            if key not in archived or key not in again:
                found.differ(Difference("analysis", f"{where}.{key}", archived.get(key), again.get(key)))
            else:
                compare_results(archived[key], again[key], f"{where}.{key}", found)
    elif isinstance(archived, list) and isinstance(again, list):
        if len(archived) != len(again):
            found.differ(Difference("analysis", f"{where}: length", len(archived), len(again)))
        for i, (a, b) in enumerate(zip(archived, again, strict=False)):
            compare_results(a, b, f"{where}[{i}]", found)
    elif not _same(archived, again):
        found.differ(Difference("analysis", where, archived, again))


def compare_analysis(
    session: Session, job: AnalysisJob, archive_id: int, back: Mapping[str, Mapping[int, int]], found: Verification
) -> None:
    """Run an archived analysis again on the imported data and compare its result with the archived one."""
    what = f"analysis {archive_id} ({job.kind})"
    outcome: dict[str, object] = {"analysis": archive_id, "kind": job.kind}
    found.analyses.append(outcome)
    why = None
    if job.status != "done":
        why = f"it is {job.status}: there is no result to compare"
    elif job.kind not in ANALYSES:
        why = "this trecpool has no analysis of that kind"
    if why is None:
        again = AnalysisJob(campaign_id=job.campaign_id, kind=job.kind, params=dict(job.params), status="queued")
        session.add(again)
        session.flush()
        savepoint = session.begin_nested()
        try:
            run_analysis(session, again.id)
            savepoint.commit()
        except Exception as exc:  # any failure of a re-run is reported for this analysis, and verify goes on
            savepoint.rollback()
            why = f"running it again failed ({type(exc).__name__}: {exc})"
    if why is not None:
        found.not_recomputed("analyses", what, why)
        outcome.update(outcome="not recomputed", why=why)
        return
    session.refresh(again)  # the result as stored (JSONB), as the archived one was read
    before = found.compared.get("differences", 0)
    with found.checking("analyses"):
        compare_results(job.result, _back(again.result, "", back), what, found)
    found.count("analyses")
    different = found.compared.get("differences", 0) > before
    outcome.update(outcome="different" if different else "identical")
    if different:
        first = found.current_first
        outcome["first_difference"] = None if first is None else first.line()
