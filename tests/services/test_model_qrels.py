"""Human, model and combined qrels versions of a model-assisted pool, entry by entry on a hand-made pool, and the
evaluation of a combined version: prediction-powered scores marked as such, equal to the human version's when people
verify everything, with intervals widened by the labelling standard error. Model verdicts, draws and judgements are
inserted as rows (test data)."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pytest
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from app.evaluation.records import RunTable
from app.evaluation.statistics import intervals
from app.evaluation.statistics.prediction_powered import prediction_powered
from app.services import campaigns, evaluations, pools, qrels, score_intervals, verification
from app.services.errors import InvalidInput
from app.services.run_arrays import load_runs
from app.storage.models import Assessor, CampaignStatus, Pool, QrelsVersion, Run, RunMean, Score
from tests.services.conftest import ORGANISER, fanned_out

NULL = None


def add_model(session: Session, campaign_id: int) -> Assessor:
    """A model assessor of the campaign (a row: its registration is the batch API's)."""
    model = Assessor(
        campaign_id=campaign_id, name="umbrela", kind="model", provenance={"model": "m-7b", "config_hash": "abc"}
    )
    session.add(model)
    session.commit()
    return model


def item_ids(session: Session, pool: Pool) -> dict[tuple[str, str], int]:
    """{(topic, docno): pool item id}."""
    rows = session.execute(
        text(
            "SELECT t.number, i.docno, i.id FROM pool_items i JOIN topics t ON t.id = i.topic_id WHERE i.pool_id = :p"
        ),
        {"p": pool.id},
    )
    return {(t, d): i for t, d, i in rows}


def verdict(session: Session, item: int, model: int, grade: int, probability: float | None) -> None:
    """A model verdict row."""
    session.execute(
        text("INSERT INTO model_verdicts (pool_item_id, assessor_id, grade, probability) VALUES (:i, :a, :g, :p)"),
        {"i": item, "a": model, "g": grade, "p": probability},
    )


def judgement(session: Session, item: int, relevant: bool, round_: int = 1) -> None:
    """A person's judgement row."""
    session.execute(
        text("INSERT INTO judgements (pool_item_id, round, verdict, grade) VALUES (:i, :r, CAST(:v AS verdict), :g)"),
        {"i": item, "r": round_, "v": "relevant" if relevant else "not_relevant", "g": int(relevant)},
    )


def entries(session: Session, version: QrelsVersion) -> list[tuple[object, ...]]:
    """(topic, docno, grade, model_grade, model_probability, human_grade, verification_probability) in order."""
    rows = session.execute(
        text(
            "SELECT t.number, e.docno, e.grade, e.model_grade, e.model_probability, e.human_grade, "
            "e.verification_probability FROM qrels_entries e JOIN topics t ON t.id = e.topic_id "
            "WHERE e.qrels_version_id = :v ORDER BY t.number, e.docno"
        ),
        {"v": version.id},
    )
    return [tuple(r) for r in rows]


# model verdicts (grade, probability) of topics 1 and 2; topic 3 has none
MODEL = {
    ("1", "d1"): (0, 0.2),
    ("1", "d2"): (1, 0.9),
    ("1", "d3"): (1, 0.7),
    ("1", "d4"): (0, 0.1),
    ("2", "d1"): (1, 0.8),
    ("2", "d2"): (0, None),
    ("2", "d3"): (1, 0.6),
    ("2", "d4"): (0, 0.3),
}
DRAWN = {("1", "d1"), ("1", "d2"), ("2", "d3")}  # topic 1 and 2 drawn with pi 0.5; topic 3 not yet
PEOPLE = {("1", "d1"): (True, 1), ("2", "d3"): (False, 1), ("2", "d4"): (True, 3)}  # d4 of 2: an adjudication


@pytest.fixture
def hand_made(make_campaign):  # type: ignore[no-untyped-def]
    """A model-assisted depth-4 pool of 3 topics x d1..d4 with the verdicts, draw and judgements above."""
    campaign = make_campaign(n_topics=3)
    session = campaign.session
    campaign.submit("".join(f"{t} Q0 d{d} {d} {10 - d} r\n" for t in (1, 2, 3) for d in (1, 2, 3, 4)))
    campaigns.set_status(session, ORGANISER, campaign.id, CampaignStatus.closed)
    model = add_model(session, campaign.id)
    spec = pools.PoolSpec(kind="depth", depth=4, seed=2, verification=pools.VerificationSpec(0.5))
    pool = pools.create_pool(session, ORGANISER, campaign.id, spec)
    ids = item_ids(session, pool)
    for key, (grade, probability) in MODEL.items():
        verdict(session, ids[key], model.id, grade, probability)
    for key, item in ids.items():
        if key[0] != "3":
            session.execute(
                text("UPDATE pool_items SET verification_probability = 0.5, verification_sampled = :d WHERE id = :i"),
                {"d": key in DRAWN, "i": item},
            )
    for key, (relevant, round_) in PEOPLE.items():
        judgement(session, ids[key], relevant, round_)
    session.commit()
    return campaign, pool, model


def test_the_human_version_of_a_model_assisted_pool_holds_the_verification_sample_only(hand_made):  # type: ignore[no-untyped-def]
    campaign, pool, _ = hand_made
    session = campaign.session
    version = qrels.cut_qrels(session, ORGANISER, pool.id, "people")
    session.commit()
    n = NULL
    assert entries(session, version) == [
        ("1", "d1", 1, n, n, n, n),
        ("1", "d2", -1, n, n, n, n),
        ("1", "d3", -1, n, n, n, n),
        ("1", "d4", -1, n, n, n, n),
        ("2", "d1", -1, n, n, n, n),
        ("2", "d2", -1, n, n, n, n),
        ("2", "d3", 0, n, n, n, n),
        ("2", "d4", 1, n, n, n, n),
        *[("3", f"d{d}", -1, n, n, n, n) for d in (1, 2, 3, 4)],
    ]
    assert (version.judges, version.kind, version.unjudged_sampled, version.unjudged_topics) == (
        "human",
        "trec",
        1,
        ["3"],
    )
    assert version.provenance is not None and version.provenance.pop("note").startswith("people judged only")
    assert version.provenance == {
        "model_assessors": [],
        "human_share": 0.5,
        "stratify": "none",
        "human_judgements": 3,
        "model_judgements": 0,
        "verification_drawn": 3,
        "verification_only": True,
    }
    exported = b"".join(qrels.export_qrels(session, ORGANISER, version.id, "trec")).decode()
    assert exported == "1 0 d1 1\n2 0 d3 0\n2 0 d4 1\n"


def test_the_model_version_grades_every_item_the_model_judged(hand_made):  # type: ignore[no-untyped-def]
    campaign, pool, model = hand_made
    session = campaign.session
    version = qrels.cut_qrels(session, ORGANISER, pool.id, "model", judges="model")
    session.commit()
    n = NULL
    assert entries(session, version) == [(t, d, g, n, n, n, n) for (t, d), (g, _) in sorted(MODEL.items())]
    assert (version.judges, version.unjudged_sampled, version.unjudged_topics) == ("model", 4, ["3"])
    assert version.provenance == {
        "model_assessors": [{"id": model.id, "name": "umbrela", "provenance": {"model": "m-7b", "config_hash": "abc"}}],
        "human_share": 0.5,
        "stratify": "none",
        "human_judgements": 0,
        "model_judgements": 8,
        "verification_drawn": 3,
    }


def test_the_combined_version_keeps_what_its_estimates_need(hand_made):  # type: ignore[no-untyped-def]
    campaign, pool, model = hand_made
    session = campaign.session
    version = qrels.cut_qrels(session, ORGANISER, pool.id, "both", judges="combined")
    session.commit()
    n = NULL
    assert entries(session, version) == [
        ("1", "d1", 1, 0, 0.2, 1, 0.5),  # a person's grade over the model's
        ("1", "d2", 1, 1, 0.9, -1, 0.5),  # drawn, not judged yet: the model's grade
        ("1", "d3", 1, 1, 0.7, n, 0.5),
        ("1", "d4", 0, 0, 0.1, n, 0.5),
        ("2", "d1", 1, 1, 0.8, n, 0.5),
        ("2", "d2", 0, 0, n, n, 0.5),
        ("2", "d3", 0, 1, 0.6, 0, 0.5),
        ("2", "d4", 1, 0, 0.3, n, 0.5),  # adjudicated outside the sample: the grade, not the estimator's
    ]
    assert (version.judges, version.unjudged_sampled, version.unjudged_topics) == ("combined", 1, ["3"])
    assert version.provenance is not None
    assert (version.provenance["human_judgements"], version.provenance["model_judgements"]) == (3, 8)
    verified = qrels.verified_items(session, version)
    items = verified.items
    assert items.docno.tolist() == ["d1", "d2", "d3", "d4"] * 2 and items.topic.tolist() == ["1"] * 4 + ["2"] * 4
    assert items.model_grade.tolist() == [0, 1, 1, 0, 1, 0, 1, 0]
    assert np.array_equal(items.model_probability, [0.2, 0.9, 0.7, 0.1, 0.8, np.nan, 0.6, 0.3], equal_nan=True)
    assert items.sampled.tolist() == [True, False, False, False, False, False, True, False]
    assert items.human_grade.tolist() == [1, -1, -1, -1, -1, -1, 0, -1]
    # topic 1: half its drawn items judged, so pi 0.5 x 0.5; topic 2: all, pi 0.5 (not-drawn items capped at 0.5)
    assert items.inclusion.tolist() == [0.25] * 4 + [0.5] * 4
    assert (verified.topics_without_sample, verified.drawn_unjudged) == ([], 1)
    assert qrels.judges_of(version) == {"judges": "combined", "provenance": version.provenance}


def test_judges_are_checked(hand_made, make_campaign):  # type: ignore[no-untyped-def]
    campaign, pool, _ = hand_made
    session = campaign.session
    with pytest.raises(InvalidInput) as caught:
        qrels.cut_qrels(session, ORGANISER, pool.id, "x", judges="robots")
    assert caught.value.errors == [{"field": "judges", "message": "human, model or combined"}]
    with pytest.raises(InvalidInput) as caught:
        qrels.cut_qrels(session, ORGANISER, pool.id, "x", judges="model", model_assessor_id=10**6)
    assert caught.value.errors[0]["field"] == "model_assessor_id"
    other = make_campaign(n_topics=1)
    other.submit("1 Q0 d1 1 1 r\n")
    campaigns.set_status(other.session, ORGANISER, other.id, CampaignStatus.closed)
    plain = pools.create_pool(other.session, ORGANISER, other.id, pools.PoolSpec(kind="depth", depth=1))
    with pytest.raises(InvalidInput) as caught:
        qrels.cut_qrels(other.session, ORGANISER, plain.id, "x", judges="combined")
    assert caught.value.errors[0]["field"] == "judges"
    with pytest.raises(InvalidInput, match="which model"):  # no model assessor to name
        qrels.cut_qrels(other.session, ORGANISER, plain.id, "x", judges="model")
    other.session.rollback()


# --- evaluation of a combined version -------------------------------------------------------------------------------

MEASURES = ["P@5", "AP", "nDCG@10", "R@10"]
ESTIMATED = {"P@5", "AP", "nDCG@10"}


def verified_campaign(make_campaign, share: float):  # type: ignore[no-untyped-def]
    """6 topics, 4 runs, a depth-10 model-assisted pool judged by a model that errs on a fifth of the items, its
    sample drawn by the service and judged by people (the truth)."""
    campaign = make_campaign(n_topics=6)
    session = campaign.session
    rng = np.random.default_rng(8)
    for r in range(4):
        lines = []
        for t in campaign.topics:
            docs = rng.permutation(16)[:10]
            lines += [f"{t} Q0 d{d} {k + 1} {20.0 - k} r{r}\n" for k, d in enumerate(docs.tolist())]
        campaign.submit("".join(lines), name=f"run{r}")
    campaigns.set_status(session, ORGANISER, campaign.id, CampaignStatus.closed)
    model = add_model(session, campaign.id)
    spec = pools.PoolSpec(kind="depth", depth=10, seed=4, verification=pools.VerificationSpec(share))
    pool = pools.create_pool(session, ORGANISER, campaign.id, spec)
    ids = item_ids(session, pool)
    truth = {key: bool(rng.random() < 0.35) for key in sorted(ids)}
    for key, item in sorted(ids.items()):
        wrong = rng.random() < 0.2
        said = truth[key] != wrong
        verdict(session, item, model.id, int(said), float(np.clip(0.8 if said else 0.2, 0, 1)))
    verification.after_model_verdicts(session, list(ids.values()))
    drawn = session.execute(
        text("SELECT id FROM pool_items WHERE pool_id = :p AND verification_sampled"), {"p": pool.id}
    )
    by_id = {item: key for key, item in ids.items()}
    for (item,) in drawn:
        judgement(session, item, truth[by_id[item]])
    session.commit()
    return campaign, pool


def evaluate(session: Session, campaign_id: int, version: QrelsVersion) -> int:
    """Run an evaluation of MEASURES against the version; its id."""
    job = evaluations.start_evaluation(session, ORGANISER, campaign_id, qrels_version_id=version.id, measures=MEASURES)
    evaluations.run_evaluation(session, job.id)
    session.commit()
    return job.id


def stored(
    session: Session, evaluation_id: int
) -> tuple[dict[tuple[int, str, str], float], dict[tuple[int, str], RunMean]]:
    """The evaluation's scores {(run, measure, topic): value} and run means {(run, measure): row}."""
    scores = {
        (s.run_id, s.measure, s.topic): s.value
        for s in session.scalars(select(Score).where(Score.evaluation_id == evaluation_id))
    }
    means = {
        (m.run_id, m.measure): m for m in session.scalars(select(RunMean).where(RunMean.evaluation_id == evaluation_id))
    }
    return scores, means


def test_a_combined_version_verified_in_full_scores_as_the_human_version(make_campaign):
    campaign, pool = verified_campaign(make_campaign, share=1.0)
    session = campaign.session
    human = qrels.cut_qrels(session, ORGANISER, pool.id, "people")
    combined = qrels.cut_qrels(session, ORGANISER, pool.id, "both", judges="combined")
    session.commit()
    human_scores, human_means = stored(session, evaluate(session, campaign.id, human))
    combined_scores, combined_means = stored(session, evaluate(session, campaign.id, combined))
    assert combined_scores.keys() == human_scores.keys() and len(human_scores) == 4 * 4 * 7
    for key, value in human_scores.items():
        assert combined_scores[key] == pytest.approx(value, abs=1e-12), key
    for key, row in human_means.items():
        other = combined_means[key]
        assert other.estimator == ("prediction_powered" if key[1] in ESTIMATED else None)
        assert (other.value, other.ci_low, other.ci_high) == pytest.approx(
            (row.value, row.ci_low, row.ci_high), abs=1e-12
        )
        assert other.sampling_se == (0.0 if key[1] in ESTIMATED else None)  # every item verified: no labelling error
        assert row.estimator is None


def test_a_combined_version_stores_the_estimates_with_their_labelling_error(make_campaign):
    campaign, pool = verified_campaign(make_campaign, share=0.4)
    session = campaign.session
    combined = qrels.cut_qrels(session, ORGANISER, pool.id, "both", judges="combined")
    session.commit()
    evaluation_id = evaluate(session, campaign.id, combined)
    scores, means = stored(session, evaluation_id)
    runs = list(session.scalars(select(Run).where(Run.campaign_id == campaign.id).order_by(Run.id)))
    tables: list[RunTable] = load_runs(session, [r.id for r in runs])
    found = prediction_powered(
        tables, qrels.verified_items(session, combined).items, sorted(ESTIMATED), names=[str(r.id) for r in runs]
    )
    assert found.n_human < found.n_items and np.all(found.se > 0)
    z = NormalDist().inv_cdf(0.975)
    for m, measure in enumerate(found.measures):
        values = np.array([[scores[(r.id, measure, t)] for t in found.topics] for r in runs])
        assert values == pytest.approx(found.values[:, m, :], abs=1e-12)
        plain = intervals.mean_intervals(values, n_resamples=score_intervals.N_RESAMPLES, seed=score_intervals.SEED)
        for r, run in enumerate(runs):
            row = means[(run.id, measure)]
            mean, se = found.mean[r, m], found.se[r, m]
            assert (row.value, row.sampling_se, row.estimator) == pytest.approx((mean, se, "prediction_powered"))
            low = mean - np.sqrt((mean - plain.low[r]) ** 2 + (z * se) ** 2)
            high = mean + np.sqrt((plain.high[r] - mean) ** 2 + (z * se) ** 2)
            assert (row.ci_low, row.ci_high) == pytest.approx(
                (max(low, 0.0), min(high, 1.0)), abs=1e-12
            )  # cut to [0, 1]
    recall = [means[(r.id, "R@10")] for r in runs]
    assert all(row.estimator is None for row in recall)
    evaluation = evaluations.get_evaluation(session, ORGANISER, evaluation_id)
    info = evaluation.measures["interval"]["prediction_powered"]
    assert sorted(info["measures"]) == sorted(found.measures) and info["n_human"] == found.n_human
    assert evaluation.measures["interval"]["widened"]["AP"] == score_intervals.PREDICTION_POWERED


def test_a_combined_version_in_blocks_of_one_run_stores_the_numbers_of_one_block(make_campaign):
    """The estimates and their labelling errors are each run's own: blocks give the numbers of one block, bit for bit,
    run by the job or fanned out (each block's parts stored for the last block's step over every run)."""
    campaign, pool = verified_campaign(make_campaign, share=0.4)
    session = campaign.session
    combined = qrels.cut_qrels(session, ORGANISER, pool.id, "both", judges="combined")
    session.commit()
    found = []
    for memory_mb, fan_out in ((512.0, False), (1e-9, False), (1e-9, True)):
        job = evaluations.start_evaluation(
            session, ORGANISER, campaign.id, qrels_version_id=combined.id, measures=MEASURES
        )
        plan = evaluations.plan_evaluation(session, job, memory_mb)
        assert plan.held and len(plan.blocks) == (1 if memory_mb > 1 else 4)
        if fan_out:  # each block's estimates and parts stored, the last block's step over every run
            fanned_out(session, job, memory_mb)
        else:
            evaluations.run_evaluation(session, job.id, memory_mb=memory_mb)
        assert job.status == "done"
        scores, means = stored(session, job.id)
        found.append(
            (
                {key: value.hex() for key, value in scores.items()},
                {
                    key: (row.value.hex(), row.ci_low, row.ci_high, row.sampling_se, row.estimator)
                    for key, row in means.items()
                },  # fmt: skip
                job.measures["interval"],
            )
        )
    assert found[0] == found[1] == found[2]
    assert {row[4] for row in found[0][1].values()} == {"prediction_powered", None}


def test_a_widened_interval_is_cut_to_the_measures_range() -> None:
    """A labelling error as wide as the scale would carry an interval past 0 and 1, which the mean never leaves."""
    values = np.array([[[0.9, 1.0, 0.95, 1.0]], [[0.0, 0.1, 0.05, 0.0]]])  # [run, measure, topic]
    wide = {"P@10": (np.full((2, 4), 0.04), score_intervals.PREDICTION_POWERED)}  # a labelling se of 0.1
    found = score_intervals.compute(values, ["P@10"], wide)
    assert found.high[0, 0] == 1.0 and found.low[1, 0] == 0.0
    assert 0.0 < found.low[0, 0] < 0.9 and 0.1 < found.high[1, 0] < 1.0
    narrow = score_intervals.compute(values, ["P@10"], {})
    plain = intervals.mean_intervals(
        values[:, 0, :], n_resamples=score_intervals.N_RESAMPLES, seed=score_intervals.SEED
    )
    assert narrow.low[:, 0].tolist() == plain.low.tolist() and narrow.high[:, 0].tolist() == plain.high.tolist()
