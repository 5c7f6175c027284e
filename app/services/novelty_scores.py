"""The TRECVID novelty score of a campaign's runs, for the boards' novelty-run rows (`analyses.novelty.novelty_scores`):
per topic, the relevant shots a run returned that no run of another team returned, summed over the topics.

The score depends on every other team's run, so it is computed over all the evaluation's runs and topics at once:
live, from the evaluation's qrels and the stored runs (once per evaluation and qrels version, kept in memory; nothing
is loaded when no run of the board is a novelty run); published, read from the snapshot's report
(`report.novelty_scores`), so a published board shows the numbers frozen with it.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.evaluation.analyses.novelty import NoveltyScores, novelty_scores
from app.services.qrels import evaluation_qrels
from app.services.run_blocks import StoredBlocks
from app.services.scores import RunInfo
from app.storage.models import Campaign, Evaluation, Run, TaskKind

PENALTY = 0.0  # per common false shot: none, as no source found states one (see analyses.novelty)
MAX_CACHED = 64
_LIVE: dict[tuple[int, int], dict[int, float]] = {}


def campaign_scores(
    session: Session, campaign: Campaign, evaluation: Evaluation, runs: Sequence[Run | RunInfo]
) -> NoveltyScores | None:
    """The novelty scores of `runs` (named by run id) over the evaluation's qrels; None for a campaign of moments or
    an evaluation without qrels."""
    if campaign.task_kind is not TaskKind.shots or evaluation.qrels_version_id is None or not runs:
        return None
    _, qrels = evaluation_qrels(session, evaluation)
    ids = [r.id for r in runs]
    blocks = StoredBlocks(session, ids, [str(i) for i in ids], campaign.max_results)
    teams = [str(r.team_id) for r in runs]
    return novelty_scores(qrels, blocks, teams, max_results=campaign.max_results, penalty=PENALTY)


def live_scores(
    session: Session, campaign: Campaign, evaluation: Evaluation, runs: Sequence[Run | RunInfo]
) -> dict[int, float]:
    """Run id -> novelty score over the evaluation's runs; empty when none of them is a novelty run."""
    if not any(r.novelty for r in runs) or evaluation.qrels_version_id is None:
        return {}
    key = (evaluation.id, evaluation.qrels_version_id)
    if key not in _LIVE:
        result = campaign_scores(session, campaign, evaluation, runs)
        if len(_LIVE) >= MAX_CACHED:
            _LIVE.clear()
        _LIVE[key] = {} if result is None else dict(zip(map(int, result.runs), result.total.tolist(), strict=True))
    return _LIVE[key]


_PUBLISHED = text(
    "SELECT content -> 'report' -> 'novelty_scores' -> 'runs' FROM leaderboard_snapshots "
    "WHERE campaign_id = :campaign ORDER BY id DESC LIMIT 1"
)


def published_scores(session: Session, campaign_id: int) -> dict[int, float]:
    """Run id -> novelty score frozen in the newest snapshot's report (empty for one published before it had them)."""
    found = session.execute(_PUBLISHED, {"campaign": campaign_id}).scalar()
    return {int(row["run_id"]): float(row["score"]) for row in found or [] if row.get("run_id") is not None}
