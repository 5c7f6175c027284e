"""The campaign report: the TRECVID overview's tables and figures as data (plots are drawn by the web pages).

Sections in the overview's order: overall scores by run type (each run's mean with its interval, rank interval and
tier, as on the board; `interval` says how they were made), significance within each run type, scores per topic,
judgements (per stratum, inferred relevant per topic, judged fraction of the runs' top d, and the overview's
judged share: of each run's results per topic in the pool's sampled ranks, the share sampled and judged, with its
minimum, maximum and mean), hits and unique hits (sorted, per team and per run: novelty) and every run's TRECVID
novelty score (`novelty_scores`, novelty runs marked), easy and hard topics, efficiency (score vs processing time,
when runs state elapsed times), top runs per topic.
"""

from __future__ import annotations

import numpy as np
from sqlalchemy.orm import Session

from app.evaluation.analyses.efficiency import mean_seconds, score_vs_time
from app.evaluation.analyses.judged_depth import JudgedFractionTally, SampledShareTally
from app.evaluation.analyses.novelty import NoveltyScoresTally, UniqueRelevantTally
from app.evaluation.analyses.pooled_lines import tally_blocks
from app.evaluation.analyses.strata import stratum_summary
from app.evaluation.analyses.type_significance import significance_by_type
from app.evaluation.measures.registry import aggregate_of
from app.evaluation.statistics.campaign_summary import (
    RetrievedTally,
    easy_and_hard,
    judgement_summary,
    top_runs_per_topic,
    topic_box_stats,
)
from app.services.auth import Principal
from app.services.campaigns import get_organised
from app.services.leaderboards import Filters, build_leaderboard
from app.services.novelty_scores import PENALTY
from app.services.pools import current_pool
from app.services.qrels import evaluation_qrels, judges_of, order_mark
from app.services.run_blocks import StoredBlocks
from app.services.scores import default_measure, finished_evaluation, score_table
from app.storage.models import Campaign, Evaluation, Pool, Run, TaskKind

SIGNIFICANCE_TOP = 10  # the overview tests the top 10 runs of each run type


def sampled_ranks(strata: list[list[float]] | None, max_results: int) -> tuple[int, int]:
    """The ranks the overview's judged share is over: those of the strata sampled at a rate below 1 (TRECVID's
    301-1000); a pool judged in full (or none), every pooled rank (1..its depth, or max_results)."""
    partial = [s for s in strata or [] if s[2] < 1]
    if partial:
        return int(min(s[0] for s in partial)), int(max(s[1] for s in partial))
    return 1, int(max((s[1] for s in strata or []), default=max_results))


def run_labels(names: list[str], teams: list[str]) -> list[str]:
    """Each run's name, or `team/name` where two teams gave a run the same name (names are unique per team)."""
    shared = {n for n in names if names.count(n) > 1}
    return [f"{t}/{n}" if n in shared else n for n, t in zip(names, teams, strict=True)]


def build_report(session: Session, campaign: Campaign, evaluation: Evaluation) -> dict[str, object]:
    """Every section of the report for one finished evaluation."""
    table = score_table(session, evaluation)
    measure = default_measure(campaign, table.measures)
    m = table.measures.index(measure)
    names = [r.name for r in table.runs]
    scores = table.values[:, m, :]
    board = build_leaderboard(campaign, evaluation, table, measure, Filters())
    report: dict[str, object] = {
        "campaign": {
            "id": campaign.id,
            "name": campaign.name,
            "task_kind": campaign.task_kind.value,
            "description": campaign.description,
        },
        "evaluation_id": evaluation.id,
        "measure": measure,
        "unjudged_topics": board["unjudged_topics"],
        "warning": board["warning"],
        "interval": board["interval"],
        "overall": board["by_system_type"],
        "per_topic": topic_box_stats(scores, table.topics),
        "easy_hard": easy_and_hard(scores, table.topics),
        "top_runs_per_topic": top_runs_per_topic(scores, table.topics, names),
    }
    labels = run_labels(names, [table.teams[r.team_id] for r in table.runs])
    if len(table.topics):
        report["significance_by_type"] = significance_by_type(
            labels,
            [r.system_type for r in table.runs],
            scores,
            method="pairwise",
            top=SIGNIFICANCE_TOP,
            aggregate=aggregate_of(measure),
        ).to_dict()
    # score_table holds the runs' rows (a published board's RunInfo has no times)
    seconds = np.array([mean_seconds(r.elapsed_seconds if isinstance(r, Run) else None) for r in table.runs])
    if np.isfinite(seconds).any():
        report["efficiency"] = score_vs_time(labels, table.means[:, m], seconds, measure=measure).to_dict()
    if campaign.task_kind is TaskKind.shots and evaluation.qrels_version_id is not None:
        qrels_version, qrels = evaluation_qrels(session, evaluation)
        teams = [table.teams[r.team_id] for r in table.runs]
        team_of = {r.id: team for r, team in zip(table.runs, teams, strict=True)}
        cut_from = session.get(Pool, qrels_version.pool_id) if qrels_version.pool_id is not None else None
        pool = cut_from or current_pool(session, campaign.id)  # the version's own (a series pool is not the newest)
        strata = pool.params.get("strata") if pool is not None else None
        first, last = sampled_ranks(strata, campaign.max_results)
        ids = dict(zip(labels, [r.id for r in table.runs], strict=True))
        team_ids = [str(r.team_id) for r in table.runs]  # teams by id: names are shown, ids decide uniqueness
        retrieved = RetrievedTally(qrels, campaign.max_results)
        blocks = StoredBlocks(  # the runs a block at a time, read once: every tally takes each block
            session,
            [r.id for r in table.runs],
            labels,
            campaign.max_results,
            also=lambda ids, tables: retrieved.add(tables, [team_of[i] for i in ids]),
        )
        fraction = JudgedFractionTally(qrels, labels, max_results=campaign.max_results)
        hits = UniqueRelevantTally(qrels, labels, teams)
        novelty_tally = NoveltyScoresTally(qrels, labels, team_ids, penalty=PENALTY)
        share = SampledShareTally(qrels, labels, first=first, last=last)
        tally_blocks(blocks, fraction, hits, novelty_tally, share)
        report["qrels_label"] = qrels_version.label
        report["judging_order"] = order_mark(qrels_version)
        report["qrels_judges"] = judges_of(qrels_version)
        report["judgements"] = judgement_summary(qrels)
        report["hits_by_team"] = retrieved.hits_by_team()
        report["frequent_false_positives"] = retrieved.frequent_false_positives()
        report["hard_true_positives"] = retrieved.hard_true_positives()
        report["strata"] = stratum_summary(qrels).to_dict()
        report["judged_fraction"] = fraction.result().to_dict()
        novelty = hits.result().to_dict()
        flagged = dict(zip(labels, [r.novelty for r in table.runs], strict=True))
        novelty["runs"] = [{**row, "novelty_run": flagged[row["run"]]} for row in novelty["runs"]]
        report["novelty"] = novelty
        scored = novelty_tally.result().to_dict()
        scored["runs"] = [
            {
                **row,
                "team": table.teams[int(row["team"])],
                "run_id": ids[row["run"]],
                "novelty_run": flagged[row["run"]],
            }
            for row in scored["runs"]
        ]
        report["novelty_scores"] = scored
        report["judged_share"] = share.result().to_dict()
        if pool is not None:
            report["pool"] = {"kind": pool.kind, "seed": pool.seed, "strata": strata}
    return report


def live_report(session: Session, principal: Principal, campaign_id: int) -> dict[str, object]:
    """The report of the newest finished evaluation, for organisers."""
    campaign = get_organised(session, principal, campaign_id)
    return build_report(session, campaign, finished_evaluation(session, campaign_id, None))
