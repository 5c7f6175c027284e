"""A pool while it is judged: the live view and the budget advisor (organiser only)."""

from __future__ import annotations

from fastapi import APIRouter, Query

from app.api.security import Organiser, SessionDep
from app.services import live_view
from app.services.inputs import Id

router = APIRouter(prefix="/api", tags=["pools"])


@router.get("/pools/{pool_id}/live")
def live(pool_id: Id, session: SessionDep, principal: Organiser) -> dict[str, object]:
    """Per topic: judged, relevant, relevant per 100 judged (overall and recent), estimated relevant with its interval,
    stop/continue with its reasons and what to judge next per stratum (and what the queue holds); `advice`: the
    pool's stop/continue and the topics and strata to judge next, the budget advisor's at its defaults (one answer);
    leave-one-team-out tau_b and largest drop over the qrels so far. Cached per pool until the next verdict, so
    polling between verdicts costs one small query."""
    return live_view.live_view(session, principal, pool_id)


@router.get("/pools/{pool_id}/budget")
def budget(
    pool_id: Id,
    session: SessionDep,
    principal: Organiser,
    target_width: float | None = Query(
        None,
        ge=1e-6,
        le=1e9,
        description="Target width of the R_hat interval per topic (default: relative_width x R_hat)",
    ),
    relative_width: float = Query(0.2, ge=1e-4, le=10, description="Target width relative to R_hat (no target_width)"),
    alpha: float = Query(0.05, ge=1e-9, le=0.5, description="1 - confidence level of the interval (1e-9 to 0.5)"),
    replicates: int = Query(
        200, ge=2, le=live_view.MAX_REPLICATES, description="Replicates of the run ranking for the expected tau"
    ),
    seed: int = Query(0, ge=0, le=2**31 - 1, description="Seed of the replicates"),
    target_tau: float = Query(0.9, gt=-1, le=1, description="Target expected tau_b of the run ranking"),
) -> dict[str, object]:
    """Per topic the R_hat interval and the Neyman allocation to the target width; xinfAP per topic and run with its
    sampling variance (stratified jackknife plus a small-count floor) and interval, each run's mean with its interval
    (bias-corrected; topics with a sampled stratum judged fewer than twice scored by a prior from the judged topics;
    widened for a non-random judging order); the expected tau_b of the run ranking and the judgements predicted to
    reach `target_tau`; `advice`: stop/continue and the topics and strata to judge next, the live view's rule."""
    return live_view.budget_advice(
        session,
        principal,
        pool_id,
        target_width=target_width,
        relative_width=relative_width,
        alpha=alpha,
        replicates=replicates,
        seed=seed,
        target_tau=target_tau,
    )
