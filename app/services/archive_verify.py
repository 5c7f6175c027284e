"""Verifying a campaign archive: import it into a scratch database (the caller rolls back), rebuild every pool from
its seed and parameters with the pool builders' code, cut every qrels version (or moment ground truth) again from the
judgements (or marks), re-run every finished evaluation and analysis, and report every difference from the archive,
item by item and number by number (floats bit for bit), with a summary per part (`archive_format.Verification`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import numpy as np
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from app.evaluation.pools.builders import PoolTable, Stratum, build_pool
from app.evaluation.statistics.prediction_powered import inclusion_probabilities, verification_draw
from app.services import archive_analyses, archive_moments, judging_orders
from app.services.archive_format import Difference, Verification, same_float
from app.services.archive_import import import_campaign
from app.services.archive_series import OPERATOR
from app.services.errors import ServiceError
from app.services.evaluations import run_evaluation
from app.services.pools import _on_topics, _without_progress_topics, verification_of
from app.services.qrels import cut_qrels
from app.services.run_arrays import load_runs
from app.storage import run_store
from app.storage.models import AnalysisJob, Evaluation, Pool, QrelsVersion, Run


def rebuild_pool(session: Session, pool: Pool) -> PoolTable:
    """A stored pool built again from its runs, seed and parameters, as `pools.create_pool` builds it: the builder
    over the runs in id order, then the pool's judging order planned from the same seed."""
    params = pool.params
    run_ids = [int(r) for r in params["run_ids"]]
    tables = load_runs(session, run_ids)
    if isinstance(params.get("series"), dict):  # a series pool: its set's topics only
        tables = [_on_topics(t, {str(n) for n in params["series"]["topics"]}) for t in tables]
    else:  # a campaign's own pool leaves its progress topics to series pools
        tables = _without_progress_topics(session, pool.campaign_id, tables)
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


def _compare_pool(session: Session, pool: Pool, archive_id: int, found: Verification) -> None:
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
            found.differ(Difference("pool_item", where, "pooled", "not pooled"))
            continue
        for name, a, b in zip(fields, values, again, strict=False):
            if a != b:
                found.differ(Difference("pool_item", f"{where}: {name}", a, b))
    for t, d in sorted(rebuilt):
        found.differ(Difference("pool_item", f"pool {archive_id}, topic {t}, {d}", "not pooled", "pooled"))
    found.count("pool_items", stored)
    found.count("pools")
    _compare_draws(session, pool, archive_id, found)


_DRAWN = text(
    """
    SELECT t.number, i.docno, v.probability, i.verification_probability, i.verification_sampled
    FROM pool_items i JOIN topics t ON t.id = i.topic_id
    LEFT JOIN model_verdicts v ON v.pool_item_id = i.id AND v.assessor_id = :model
    WHERE i.pool_id = :pool AND i.sampled AND i.verification_sampled IS NOT NULL
    ORDER BY t.number, i.docno COLLATE "C"
    """
)


def _compare_draws(session: Session, pool: Pool, archive_id: int, found: Verification) -> None:
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
                found.differ(Difference("verification", f"{where}: inclusion probability", row[3], p))
            if row[4] != bool(d):
                found.differ(Difference("verification", f"{where}: drawn", row[4], bool(d)))
        found.count("verification_items", len(rows))


_ENTRIES = text(
    "SELECT t.number, e.docno, e.stratum, e.grade, e.model_grade, e.model_probability, e.human_grade, "
    "e.verification_probability FROM qrels_entries e JOIN topics t ON t.id = e.topic_id WHERE e.qrels_version_id = :v"
)
ENTRY_FIELDS = ("stratum", "grade", "model_grade", "model_probability", "human_grade", "verification_probability")
VERSION_FIELDS = ("n_entries", "unjudged_sampled", "unjudged_topics")
_LATER = text(
    """
    SELECT (SELECT count(*) FROM judgements j JOIN pool_items i ON i.id = j.pool_item_id
            WHERE i.pool_id = :pool AND j.updated_at > :cut)
         + (SELECT count(*) FROM model_verdicts v JOIN pool_items i ON i.id = v.pool_item_id
            WHERE i.pool_id = :pool AND v.updated_at > :cut)
    """
)


def _compare_qrels(session: Session, version: QrelsVersion, archive_id: int, found: Verification) -> None:
    """A qrels version cut from a pool, cut again from the pool's judgements (and model verdicts) by its judges and
    compared line by line; not recomputed when a verdict changed after the cut, or for an imported version."""
    if version.kind == archive_moments.MOMENTS:
        archive_moments.compare_truth(session, version, archive_id, found)
        return
    what = f"qrels version {archive_id} ({version.label!r})"
    if version.pool_id is None or version.source != "cut":
        found.not_recomputed("qrels", what, "imported, not cut from a pool: nothing to recompute it from")
        return
    later = session.scalar(_LATER, {"pool": version.pool_id, "cut": version.created_at})
    if later:
        why = f"{later} verdict(s) changed after the cut: the ones it was cut from are gone"
        found.not_recomputed("qrels", what, why)
        return
    models = (version.provenance or {}).get("model_assessors") or []
    savepoint = session.begin_nested()
    try:
        again = cut_qrels(
            session,
            OPERATOR,
            version.pool_id,
            f"verify {version.id}",
            allow_incomplete=True,
            judges=version.judges,
            model_assessor_id=models[0]["id"] if models else None,
        )
        stored = {(t, d): tuple(rest) for t, d, *rest in session.execute(_ENTRIES, {"v": version.id})}
        recut = {(t, d): tuple(rest) for t, d, *rest in session.execute(_ENTRIES, {"v": again.id})}
        fields = [(name, getattr(version, name), getattr(again, name)) for name in VERSION_FIELDS]
    except ServiceError as exc:
        savepoint.rollback()
        found.not_recomputed("qrels", what, f"cutting it again failed: {exc.message}")
        return
    savepoint.rollback()  # the re-cut version is not kept
    with found.checking("qrels"):
        for name, a, b in fields:
            if a != b:
                found.differ(Difference("qrels", f"{what}: {name}", a, b))
        for key in sorted(set(stored) | set(recut)):
            where = f"{what}, topic {key[0]}, {key[1]}"
            a_row, b_row = stored.get(key), recut.get(key)
            if a_row is None or b_row is None:
                found.differ(Difference("qrels", where, a_row and "a line", b_row and "a line"))
                continue
            for name, a, b in zip(ENTRY_FIELDS, a_row, b_row, strict=True):
                if not same_float(a, b):
                    found.differ(Difference("qrels", f"{where}: {name}", a, b))
        found.count("qrels_entries", len(stored))
        found.count("qrels_versions")


_SCORES = text("SELECT run_id, measure, topic, value FROM scores WHERE evaluation_id = :e")
_MEANS = text(
    "SELECT run_id, measure, value, ci_low, ci_high, sampling_se, estimator FROM run_means WHERE evaluation_id = :e"
)


def _compare_evaluation(session: Session, evaluation: Evaluation, archive_id: int, found: Verification) -> None:
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
            found.differ(Difference("score", f"{where}, run {runs.get(run)}, topic {topic}, {measure}", a, b))
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
                found.differ(Difference("run_mean", where_mean, a, b))
    found.count("run_means", len(means))
    found.count("evaluations")


def verify_campaign(
    session: Session, records: Iterable[tuple[int, dict[str, Any]]], *, limit: int = 1000, analyses: bool = True
) -> Verification:
    """Import an archive into the session (a scratch database: the caller rolls back), rebuild every pool from its
    seed and parameters, cut every qrels version again, re-run every finished evaluation with its stored measures and
    (with `analyses`) every finished analysis; every difference from the archive, pool item by item and number by
    number (floats bit for bit), the first `limit` of them listed, and a summary per part."""
    imported = import_campaign(session, records, name=None, store=run_store.PostgresStore(session))  # rolled back
    assert imported.campaign is not None
    found = Verification(imported.campaign.name, imported.header, limit=limit)
    back = {kind: {new: old for old, new in ids.items()} for kind, ids in imported.ids.items()}
    for pool_id in sorted(imported.ids.get("pool", {}).values()):
        pool = session.get_one(Pool, pool_id)
        with found.checking("pools"):
            if pool.kind == archive_moments.MOMENTS:
                archive_moments.compare_pool(session, pool, back["pool"][pool_id], found)
            else:
                _compare_pool(session, pool, back["pool"][pool_id], found)
    for version_id in sorted(imported.ids.get("qrels_version", {}).values()):
        version = session.get_one(QrelsVersion, version_id)
        _compare_qrels(session, version, back["qrels_version"][version_id], found)
    for evaluation_id in imported.evaluation_ids:
        evaluation = session.get_one(Evaluation, evaluation_id)
        archive_id = back["evaluation"][evaluation_id]
        if evaluation.status != "done":
            found.not_recomputed("evaluations", f"evaluation {archive_id}", f"it is {evaluation.status}: no scores")
            continue
        with found.checking("evaluations"):
            _compare_evaluation(session, evaluation, archive_id, found)
    for job_id in imported.analysis_ids:  # after the evaluations: they read the scores recomputed
        job = session.get_one(AnalysisJob, job_id)
        archive_id = back["analysis"][job_id]
        if not analyses:
            why = "verify was asked not to run analyses again"
            found.not_recomputed("analyses", f"analysis {archive_id} ({job.kind})", why)
            found.analyses.append({"analysis": archive_id, "kind": job.kind, "outcome": "not recomputed", "why": why})
            continue
        archive_analyses.compare_analysis(session, job, archive_id, back, found)
    return found
