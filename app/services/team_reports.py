"""A team's console data and the per-run report NIST sends each team, within SPEC section 7.

The report of a run: its summary (metadata and its mean of every measure with the intervals it may see), the
recall-precision curve (trec_eval's interpolated precision at 11 recall levels, averaged over the qrels' topics), per
topic its score against the median and best of all runs (`run_charts.run_versus_all`), and the relevant shots only
this run found (the novelty core: found by no other run) and only its team found (by no other team's run), per topic,
with the run's TRECVID novelty score, per topic and summed (`analyses.novelty.novelty_scores`, over all runs).
Which evaluation, and whether at all, is `visibility.visible_evaluation`'s rule: the published one once published,
else the newest finished one if `team_results` is `own` (Forbidden when `hidden`). No other run's name or score
leaves this module: the median, best and unique counts are over all runs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.evaluation.analyses.novelty import NoveltyScoresTally, UniqueRelevantTally
from app.evaluation.analyses.pooled_lines import tally_blocks
from app.evaluation.measures.evaluate import evaluate
from app.services import board_intervals, run_charts
from app.services.auth import Principal
from app.services.campaigns import get_campaign, submissions_open
from app.services.errors import Forbidden, NotFound, ServiceError
from app.services.novelty_scores import PENALTY
from app.services.qrels import evaluation_qrels
from app.services.run_arrays import load_runs
from app.services.run_blocks import StoredBlocks
from app.services.runs import list_runs, visible_run
from app.services.scores import default_measure, json_number, leaderboard_table, measure_index
from app.services.tokens import now
from app.services.visibility import visible_evaluation
from app.storage.models import Campaign, Pool, Role, Run, TaskKind, Team

RECALL_LEVELS = tuple(round(0.1 * k, 1) for k in range(11))  # trec_eval's 11 points


def _team(session: Session, principal: Principal) -> tuple[Campaign, Team]:
    """The signed-in team and its campaign (Forbidden for any other role)."""
    if principal.role is not Role.team or principal.team_id is None:
        raise Forbidden("the team console is for team tokens (organisers: the organiser console)")
    team = session.get(Team, principal.team_id)
    if team is None:
        raise NotFound(f"team {principal.team_id} not found")
    return get_campaign(session, principal, team.campaign_id), team


def run_summary(run: Run) -> dict[str, Any]:
    """A run's metadata as the console shows it."""
    return {
        "id": run.id,
        "name": run.name,
        "tag": run.tag,
        "format": run.format,
        "system_type": run.system_type,
        "training_type": run.training_type,
        "novelty": run.novelty,
        "priority": run.priority,
        "description": run.description,
        "n_entries": run.n_entries,
        "n_topics": run.n_topics,
        "sha256": run.sha256,
        "created_at": run.created_at,
        "download": f"/team/runs/{run.id}/download",
    }


def console(session: Session, principal: Principal) -> dict[str, Any]:
    """The team console's home: the campaign, whether submissions are open, the team's runs and what may be done."""
    campaign, team = _team(session, principal)
    is_open = submissions_open(campaign, now())
    has_pool = session.scalar(select(Pool.id).where(Pool.campaign_id == campaign.id).limit(1)) is not None
    runs = list_runs(session, principal, campaign.id)
    try:
        evaluation, published = visible_evaluation(session, principal, campaign)
        results: dict[str, Any] = {"available": True, "published": published, "evaluation_id": evaluation.id}
    except ServiceError as error:
        results = {"available": False, "reason": error.message}
    return {
        "campaign": {
            "id": campaign.id,
            "name": campaign.name,
            "task_kind": campaign.task_kind.value,
            "status": campaign.status.value,
            "opens_at": campaign.submission_opens_at,
            "closes_at": campaign.submission_closes_at,
            "max_runs_per_team": campaign.max_runs_per_team,
            "max_results": campaign.max_results,
            "team_results": campaign.team_results.value,
        },
        "team": {"id": team.id, "name": team.name},
        "submissions_open": is_open,
        "may_withdraw": is_open and not has_pool,
        "runs_left": max(campaign.max_runs_per_team - len(runs), 0),
        "runs": [run_summary(r) for r in runs],
        "results": results,
    }


def recall_precision(qrels: Any, run: Any, max_results: int) -> dict[str, Any]:
    """The run's interpolated precision at the 11 recall levels, mean over the qrels' topics (trec_eval -c)."""
    names = [f"iprec_at_recall@{level:.1f}" for level in RECALL_LEVELS]
    result = evaluate(qrels, [run], names, max_results=max_results, names=["run"])
    means = result.mean()[0].tolist()
    return {"recall": list(RECALL_LEVELS), "precision": [json_number(v) for v in means], "topics": len(result.topics)}


def run_report(session: Session, principal: Principal, run_id: int, measure: str | None = None) -> dict[str, Any]:
    """The report of one of the team's runs (see the module's docstring); Forbidden when results are hidden."""
    run = visible_run(session, principal, run_id)
    if principal.role is not Role.team:
        raise Forbidden("the team console is for team tokens (organisers: the organiser console)")
    campaign = session.get(Campaign, run.campaign_id)
    assert campaign is not None
    evaluation, published = visible_evaluation(session, principal, campaign)
    table = leaderboard_table(session, campaign, evaluation, measure)
    shown = measure or default_measure(campaign, table.measures)
    m = measure_index(table, shown)
    index = next((i for i, r in enumerate(table.runs) if r.id == run.id), None)
    report: dict[str, Any] = {
        "run": run_summary(run),
        "campaign_id": campaign.id,
        "evaluation_id": evaluation.id,
        "published": published,
        "measure": shown,
        "evaluated": index is not None and bool(np.isfinite(table.means[index]).any()),
    }
    if not report["evaluated"]:
        return report
    assert index is not None
    intervals = board_intervals.row_intervals(table, index, m)
    report["summary"] = {
        "score": json_number(float(table.means[index, m])),
        "ci_low": intervals["ci_low"],
        "ci_high": intervals["ci_high"],
        "level": intervals["level"],
        "scores": {name: json_number(v) for name, v in zip(table.measures, table.means[index].tolist(), strict=True)},
    }
    report["versus"] = run_charts.run_versus_all(session, principal, run.id, shown)
    if campaign.task_kind is TaskKind.shots and evaluation.qrels_version_id is not None:
        _, qrels = evaluation_qrels(session, evaluation)
        ids = [r.id for r in table.runs]
        mine = ids.index(run.id)
        report["recall_precision"] = recall_precision(qrels, load_runs(session, [run.id])[0], campaign.max_results)
        keys = [str(i) for i in ids]
        team_keys = [str(r.team_id) for r in table.runs]
        run_hits, team_hits = UniqueRelevantTally(qrels, keys, keys), UniqueRelevantTally(qrels, keys, team_keys)
        scores = NoveltyScoresTally(qrels, keys, team_keys, penalty=PENALTY)
        tally_blocks(StoredBlocks(session, ids, keys, campaign.max_results), run_hits, team_hits, scores)  # read once
        by_run, by_team, scored = run_hits.result(), team_hits.result(), scores.result()
        novelty = dict(zip(scored.topics, scored.per_topic[mine].tolist(), strict=True))
        report["found_only_here"] = {
            "topics": [
                {
                    "topic": topic,
                    "relevant": int(relevant),
                    "found": int(found),
                    "only_this_run": int(only_run),
                    "only_this_team": int(only_team),
                    "novelty": novelty.get(topic),
                }
                for topic, relevant, found, only_run, only_team in zip(
                    by_run.topics,
                    by_run.relevant.tolist(),
                    by_run.run_hits[mine].tolist(),
                    by_run.run_unique[mine].tolist(),
                    by_team.run_unique[mine].tolist(),
                    strict=True,
                )
            ],
            "found": int(by_run.run_hits[mine].sum()),
            "only_this_run": int(by_run.run_unique[mine].sum()),
            "only_this_team": int(by_team.run_unique[mine].sum()),
            "novelty_score": float(scored.total[mine]),
            "unique_true": int(scored.unique_true[mine].sum()),
            "common_false": int(scored.common_false[mine].sum()),
            "penalty": PENALTY,
        }
    return report


def bundle(session: Session, principal: Principal, measure: str | None = None) -> dict[str, Any]:
    """Every run's report of the signed-in team, for one downloadable document."""
    home = console(session, principal)
    reports = [run_report(session, principal, r["id"], measure) for r in home["runs"]]
    return {"campaign": home["campaign"], "team": home["team"], "generated_at": now(), "reports": reports}
