"""Intervals on boards, significance and reports: the stored intervals are the numeric core's on the stored per-topic
values (and scipy's bootstrap), rank intervals and tiers follow the board, a snapshot freezes them, older numbers
show none, and sampled or marked judgements widen them."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from sqlalchemy import text

from app.evaluation.analyses.budget import xinfap_variance
from app.evaluation.analyses.lines import index_lines
from app.evaluation.formats.trec_files import parse_qrels, parse_trec_run
from app.evaluation.grading.prepared_runs import prepare_runs
from app.evaluation.statistics import intervals
from app.services import campaigns, evaluations, leaderboards, publication, qrels, reports, scores, visibility
from app.services.auth import Principal
from app.storage.models import CampaignStatus, Evaluation, QrelsVersion, Role, TeamResults
from tests.services.conftest import ORGANISER, Campaign, evaluated_mixed, new_campaign

MEASURES = ["AP", "P@5", "nDCG@10", "gm_map", "num_rel_ret"]
N_RUNS, N_TOPICS = 9, 12


def _evaluated(campaign: Campaign) -> tuple[Campaign, Evaluation]:
    """9 runs of mixed types over 12 topics (one skips topics), TREC qrels, evaluated."""
    return evaluated_mixed(campaign, MEASURES)


@pytest.fixture(scope="module")
def evaluated(module_session):  # type: ignore[no-untyped-def]
    """The campaign, built once for the module's read-only tests."""
    return _evaluated(new_campaign(module_session, n_topics=N_TOPICS))


@pytest.fixture
def own_evaluated(make_campaign):  # type: ignore[no-untyped-def]
    """The same campaign, new for a test that changes it."""
    return _evaluated(make_campaign(n_topics=N_TOPICS))


def _stored(campaign: Campaign, evaluation: Evaluation) -> scores.ScoreTable:
    """Every stored number of the evaluation."""
    return scores.score_table(campaign.session, campaign.session.get(Evaluation, evaluation.id))


def _board(campaign: Campaign, measure: str | None = None, filters=leaderboards.Filters()):  # type: ignore[no-untyped-def]
    """The live board."""
    return leaderboards.live_leaderboard(campaign.session, ORGANISER, campaign.id, measure=measure, filters=filters)


@pytest.mark.parametrize("measure", ["AP", "P@5", "nDCG@10"])
def test_each_rows_interval_is_the_cores_on_the_stored_per_topic_values(evaluated, measure):
    campaign, evaluation = evaluated
    table = _stored(campaign, evaluation)
    board = _board(campaign, measure)
    m = table.measures.index(measure)
    values = np.nan_to_num(table.values[:, m, :], nan=0.0)  # run r4 lacks 4 topics: they score 0, as in its mean
    expected = intervals.mean_intervals(values, level=0.95, n_resamples=10_000, seed=0)
    by_id = {run.id: i for i, run in enumerate(table.runs)}
    assert board["interval"] == {
        **intervals.describe(0.95, "percentile", 10_000, 0, False),
        "widening": None,
        "counts": None,
    }
    assert len(board["rows"]) == N_RUNS
    for row in board["rows"]:
        i = by_id[row["run_id"]]
        assert row["ci_low"] == pytest.approx(expected.low[i], abs=1e-12)
        assert row["ci_high"] == pytest.approx(expected.high[i], abs=1e-12)
        assert row["ci_low"] <= row["score"] <= row["ci_high"] and row["level"] == 0.95
        assert row["intervals"][measure] == {"ci_low": row["ci_low"], "ci_high": row["ci_high"]}
        assert row["intervals"]["num_rel_ret"] == {"ci_low": None, "ci_high": None}  # counts have none
        assert set(row["intervals"]) == set(MEASURES)


def test_one_runs_interval_is_scipys_bootstrap(evaluated):
    campaign, evaluation = evaluated
    table = _stored(campaign, evaluation)
    row = _board(campaign, "AP")["rows"][0]
    i = next(k for k, run in enumerate(table.runs) if run.id == row["run_id"])
    theirs = scipy.stats.bootstrap(
        (table.values[i, 0, :],), np.mean, n_resamples=10_000, rng=np.random.default_rng(0), method="percentile"
    ).confidence_interval
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((theirs.low, theirs.high), abs=1e-12)


def test_a_geometric_mean_has_its_interval_on_the_log_scale(evaluated):
    campaign, evaluation = evaluated
    table = _stored(campaign, evaluation)
    m = table.measures.index("gm_map")
    logs = np.log(np.maximum(np.nan_to_num(table.values[:, m, :], nan=0.0), 1e-5))
    expected = intervals.mean_intervals(logs, n_resamples=10_000, seed=0)
    rows = {r["run_id"]: r for r in _board(campaign, "gm_map")["rows"]}
    for i, run in enumerate(table.runs):
        assert rows[run.id]["ci_low"] == pytest.approx(np.exp(expected.low[i]), rel=1e-12)
        assert rows[run.id]["ci_high"] == pytest.approx(np.exp(expected.high[i]), rel=1e-12)
        assert rows[run.id]["ci_low"] <= rows[run.id]["score"] <= rows[run.id]["ci_high"]


def test_a_count_board_has_no_intervals_ranks_or_tiers(evaluated):
    campaign, _ = evaluated
    board = _board(campaign, "num_rel_ret")
    assert board["interval"]["counts"] == "no interval"
    assert all(r[k] is None for r in board["rows"] for k in ("ci_low", "ci_high", "rank_low", "rank_high", "tier"))


@pytest.mark.parametrize(
    "filters", [leaderboards.Filters(), leaderboards.Filters(system_type="M"), leaderboards.Filters(training_type="A")]
)
def test_rank_intervals_and_tiers_are_over_the_shown_runs_and_follow_the_order(evaluated, filters):
    campaign, _ = evaluated
    board = _board(campaign, "AP", filters)
    rows = board["rows"]
    table = _stored(campaign, evaluated[1])
    order = [next(i for i, run in enumerate(table.runs) if run.id == r["run_id"]) for r in rows]
    values = np.nan_to_num(table.values[order, 0, :], nan=0.0)
    low, high = intervals.rank_intervals(values, n_resamples=10_000, seed=0)
    raw = intervals.paired_t_pvalues(values)
    first, second = np.triu_indices(len(rows), k=1)
    matrix = np.ones((len(rows), len(rows)))
    matrix[first, second] = matrix[second, first] = intervals.adjust_pvalues(raw[first, second], "holm")
    tiers = intervals.tiers(table.means[order, 0], matrix, 0.05)
    assert [r["rank_low"] for r in rows] == low.tolist() and [r["rank_high"] for r in rows] == high.tolist()
    assert [r["tier"] for r in rows] == tiers.tolist()
    assert rows[0]["tier"] == 1 and all(a["tier"] <= b["tier"] for a, b in zip(rows, rows[1:], strict=False))
    for row in rows:
        assert 1 <= row["rank_low"] <= row["rank_high"] <= len(rows)


def test_significance_gives_every_pair_holm_adjusted_tiers_and_rank_intervals(evaluated):
    campaign, _ = evaluated
    doc = leaderboards.live_significance(campaign.session, ORGANISER, campaign.id, measure="AP", top=6)
    names = doc["runs"]
    assert doc["correction"] == "holm" and len(names) == 6 and len(doc["pairs"]) == 15
    raw = np.array([p["pvalue"] for p in doc["pairs"]])
    adjusted = np.array([p["adjusted_pvalue"] for p in doc["pairs"]])
    assert np.all(adjusted >= raw - 1e-15)
    assert adjusted.tolist() == intervals.adjust_pvalues(raw, "holm").tolist()
    for pair in doc["pairs"]:
        assert pair["ci_low"] <= pair["difference"] <= pair["ci_high"]
        assert pair["significant"] == (pair["adjusted_pvalue"] < 0.05)
    assert list(doc["tiers"]) == names and doc["tiers"][names[0]] == 1
    assert all(doc["tiers"][a] <= doc["tiers"][b] for a, b in zip(names, names[1:], strict=False))
    assert all(1 <= lo <= hi <= 6 for lo, hi in doc["rank_intervals"].values())
    bh = leaderboards.live_significance(campaign.session, ORGANISER, campaign.id, measure="AP", top=6, correction="bh")
    assert bh["correction"] == "bh"
    assert [p["pvalue"] for p in bh["pairs"]] == raw.tolist()
    assert all(b["adjusted_pvalue"] <= h + 1e-15 for b, h in zip(bh["pairs"], adjusted.tolist(), strict=True))


def test_the_report_shows_each_runs_interval_and_how_it_was_made(evaluated):
    campaign, evaluation = evaluated
    session = campaign.session
    report = reports.build_report(
        session, campaigns.get_campaign(session, ORGANISER, campaign.id), session.get(Evaluation, evaluation.id)
    )
    board = _board(campaign, "AP")
    assert report["interval"] == board["interval"]
    rows = [row for group in report["overall"].values() for row in group]
    assert sorted((r["run"], r["ci_low"], r["ci_high"], r["level"]) for r in rows) == sorted(
        (r["run"], r["ci_low"], r["ci_high"], r["level"]) for r in board["rows"]
    )


def test_a_published_snapshot_freezes_its_intervals(own_evaluated):
    campaign, evaluation = own_evaluated
    session = campaign.session
    live = _board(campaign)
    significance = leaderboards.live_significance(session, ORGANISER, campaign.id)
    publication.publish(session, ORGANISER, campaign.id)
    session.commit()
    # the stored intervals change after publication (as a new code version might compute them): the snapshot keeps its
    session.execute(
        text("UPDATE run_means SET ci_low = -1, ci_high = 2, sampling_se = 0.5 WHERE evaluation_id = :e"),
        {"e": evaluation.id},
    )
    session.commit()
    published = leaderboards.published_leaderboard(session, campaign.id, None, leaderboards.Filters())
    assert published == {**live, "published": True}
    assert _board(campaign)["rows"][0]["ci_low"] == -1
    frozen = leaderboards.published_significance(session, campaign.id, leaderboards.Filters())
    assert {k: frozen[k] for k in ("pairs", "tiers", "rank_intervals", "correction")} == {
        k: significance[k] for k in ("pairs", "tiers", "rank_intervals", "correction")
    }
    filtered = leaderboards.published_leaderboard(session, campaign.id, "P@5", leaderboards.Filters(system_type="F"))
    assert all(r["ci_low"] not in (None, -1) and r["tier"] >= 1 for r in filtered["rows"])


def test_a_snapshot_published_before_intervals_shows_none_rather_than_failing(own_evaluated):
    campaign, _ = own_evaluated
    session = campaign.session
    snapshot = publication.publish(session, ORGANISER, campaign.id)
    added = ("correction", "interval", "pairs", "tiers", "rank_intervals")
    content = dict(snapshot.content)
    content.pop("intervals")
    content["significance"] = {k: v for k, v in content["significance"].items() if k not in added}
    snapshot.content = content
    session.commit()
    for filters in (leaderboards.Filters(), leaderboards.Filters(system_type="M")):
        board = leaderboards.published_leaderboard(session, campaign.id, "AP", filters)
        assert board["interval"] is None and board["rows"]
        assert all(
            r[k] is None for r in board["rows"] for k in ("ci_low", "ci_high", "level", "intervals", "tier", "rank_low")
        )
    old = leaderboards.published_significance(session, campaign.id, leaderboards.Filters())
    assert all(old[k] is None for k in added) and old["groups"]
    filtered = leaderboards.published_significance(session, campaign.id, leaderboards.Filters(system_type="F"))
    assert filtered["pairs"] and all(p["ci_low"] is None for p in filtered["pairs"])


def test_an_evaluation_made_before_intervals_shows_none(own_evaluated):
    campaign, evaluation = own_evaluated
    session = campaign.session
    stored = session.get(Evaluation, evaluation.id)
    stored.measures = {"names": stored.measures["names"]}
    session.execute(text("UPDATE run_means SET ci_low = NULL, ci_high = NULL WHERE evaluation_id = :e"),
                    {"e": evaluation.id})  # fmt: skip
    session.commit()
    board = _board(campaign)
    assert board["interval"] is None and all(r["ci_low"] is None and r["tier"] is None for r in board["rows"])
    report = reports.live_report(session, ORGANISER, campaign.id)
    assert report["interval"] is None


def test_a_team_sees_its_own_runs_intervals_and_no_rank_or_tier(make_campaign):
    campaign, evaluation = _evaluated(make_campaign(n_topics=N_TOPICS))
    session = campaign.session
    campaigns.update_campaign(session, ORGANISER, campaign.id, {"team_results": TeamResults.own})
    session.commit()
    team = Principal(Role.team, token_id=0, campaign_id=campaign.id, team_id=campaign.team_id)
    board = visibility.leaderboard_for(session, team, campaign.id, measure="AP")
    live = {r["run_id"]: r for r in _board(campaign, "AP")["rows"]}
    assert board["interval"] == _board(campaign, "AP")["interval"] and board["rows"]
    for row in board["rows"]:
        assert (row["ci_low"], row["ci_high"], row["intervals"]) == (
            live[row["run_id"]]["ci_low"], live[row["run_id"]]["ci_high"], live[row["run_id"]]["intervals"]
        )  # fmt: skip
        assert not {"rank", "rank_low", "rank_high", "tier"} & set(row)


# --- sampled and marked judgements ------------------------------------------------------------------------------------

SAMPLED_MEASURES = ["xinfAP", "infNDCG", "AP", "inum_rel"]


def _sampled_lines(campaign: Campaign, unjudged_topic: str | None = None) -> tuple[str, list[str]]:
    """Six runs over 60 docs per topic, and 5-column qrels: docs 0-19 judged in full (stratum 1), 20-59 sampled at a
    third (stratum 2); relevance falls with the doc number. Topic `unjudged_topic` has every line -1."""
    rng = np.random.default_rng(8)
    runs = []
    for i in range(6):
        lines = []
        for t in campaign.topics:
            noisy = np.arange(60) + rng.normal(0, 8 + 4 * i, 60)
            order = np.argsort(noisy)[:40]
            lines += [f"{t} Q0 d{d} {r + 1} {100.0 - r} s{i}\n" for r, d in enumerate(order.tolist())]
        runs.append("".join(lines))
    qrels_lines = []
    for t in campaign.topics:
        for d in range(60):
            relevant = int(rng.random() < 0.6 * np.exp(-d / 20))
            judged = d < 20 or rng.random() < 1 / 3
            grade = relevant if judged and t != unjudged_topic else -1
            qrels_lines.append(f"{t} 0 d{d} {1 if d < 20 else 2} {grade}\n")
    return "".join(qrels_lines), runs


def _sampled_campaign(make_campaign, unjudged_topic: str | None = None):  # type: ignore[no-untyped-def]
    """A closed campaign with the six runs and the sampled qrels imported; (campaign, qrels text, run texts)."""
    campaign = make_campaign(n_topics=10)
    qrels_text, runs = _sampled_lines(campaign, unjudged_topic)
    for i, run in enumerate(runs):
        campaign.submit(run, name=f"s{i}")
    campaigns.set_status(campaign.session, ORGANISER, campaign.id, CampaignStatus.closed)
    return campaign, qrels_text, runs


def _evaluate_on(campaign: Campaign, qrels_text: str, label: str, mark: bool = False) -> Evaluation:
    """Import the qrels (marked as an adaptive cut left with unjudged sampled items if `mark`) and evaluate on it."""
    session = campaign.session
    version = qrels.import_qrels(session, ORGANISER, campaign.id, qrels_text.encode(), label=label, max_errors=10)
    if mark:
        version.source, version.judging_order, version.unjudged_sampled = "cut", "mm_ns", 7
    session.flush()
    evaluation = evaluations.start_evaluation(
        session, ORGANISER, campaign.id, qrels_version_id=version.id, measures=SAMPLED_MEASURES
    )
    evaluations.run_evaluation(session, evaluation.id)
    session.commit()
    return evaluation


def _rows(campaign: Campaign, evaluation: Evaluation, measure: str) -> dict[str, dict]:
    """The live board's rows of an evaluation, by run name."""
    board = leaderboards.live_leaderboard(
        campaign.session, ORGANISER, campaign.id, measure=measure, evaluation_id=evaluation.id
    )
    return {r["run"]: r for r in board["rows"]}


def test_sampled_qrels_widen_xinfap_beyond_the_plain_bootstrap_by_at_least_the_jackknife(make_campaign):
    campaign, qrels_text, runs = _sampled_campaign(make_campaign)
    evaluation = _evaluate_on(campaign, qrels_text, "sampled")
    table = _stored(campaign, evaluation)
    m = table.measures.index("xinfAP")
    values = np.nan_to_num(table.values[:, m, :], nan=0.0)
    plain = intervals.mean_intervals(values, n_resamples=10_000, seed=0)
    assert table.intervals is not None
    se = table.intervals.sampling_se[:, m]
    prepared = prepare_runs([parse_trec_run(r) for r in runs], 1000, names=[f"s{i}" for i in range(6)])
    jackknife = xinfap_variance(index_lines(prepared, parse_qrels(qrels_text)), replicates=1).variance
    rows = _rows(campaign, evaluation, "xinfAP")
    for i, run in enumerate(table.runs):
        row = rows[run.name]
        assert row["ci_low"] < plain.low[i] and row["ci_high"] > plain.high[i]
        assert se[i] >= np.sqrt(jackknife[i].sum()) / len(table.topics) - 1e-12 > 0
        variance = np.zeros_like(values)
        variance[:, 0] = (se * len(table.topics)) ** 2
        core = intervals.mean_intervals(values, n_resamples=10_000, seed=0, sampling_variance=variance)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((core.low[i], core.high[i]), abs=1e-12)
    board = leaderboards.live_leaderboard(campaign.session, ORGANISER, campaign.id, measure="xinfAP")
    assert board["interval"]["sampled"] is True and board["interval"]["widening"] == "jackknife"
    assert "widened" in board["interval"]["text"]
    # infNDCG estimates from the sample too (imputation); AP counts the unjudged as not relevant: not widened
    assert table.intervals.info["widened"] == {"xinfAP": "jackknife", "infNDCG": "imputation"}
    ap = table.measures.index("AP")
    plain_ap = intervals.mean_intervals(np.nan_to_num(table.values[:, ap, :]), n_resamples=10_000, seed=0)
    assert np.allclose(table.intervals.low[:, ap], plain_ap.low) and np.isnan(table.intervals.sampling_se[:, ap]).all()


def test_marked_judgements_give_a_wider_interval_than_the_same_judgements_unmarked(make_campaign):
    campaign, qrels_text, _ = _sampled_campaign(make_campaign)
    plain = _rows(campaign, _evaluate_on(campaign, qrels_text, "random"), "xinfAP")
    marked_evaluation = _evaluate_on(campaign, qrels_text, "adaptive", mark=True)
    marked = _rows(campaign, marked_evaluation, "xinfAP")
    board = leaderboards.live_leaderboard(
        campaign.session, ORGANISER, campaign.id, measure="xinfAP", evaluation_id=marked_evaluation.id
    )
    assert board["judging_order"]["biased"] is True and board["interval"]["widening"] == "imputation+bias"
    for name, row in plain.items():
        assert marked[name]["score"] == row["score"]
        assert marked[name]["ci_low"] < row["ci_low"] and marked[name]["ci_high"] > row["ci_high"]


def test_a_topic_without_judgements_widens_the_interval(make_campaign):
    campaign, qrels_text, _ = _sampled_campaign(make_campaign, unjudged_topic="3")
    evaluation = _evaluate_on(campaign, qrels_text, "one unjudged")
    board = leaderboards.live_leaderboard(campaign.session, ORGANISER, campaign.id, measure="xinfAP")
    assert board["unjudged_topics"] == ["3"] and board["warning"]
    assert board["interval"]["widening"] == "imputation+bias"
    table = _stored(campaign, evaluation)
    m = table.measures.index("xinfAP")
    assert np.all(table.values[:, m, table.topics.index("3")] == 0)  # xinfAP 0 with no variance of its own
    values = np.nan_to_num(table.values[:, m, :], nan=0.0)
    plain = intervals.mean_intervals(values, n_resamples=10_000, seed=0)
    assert table.intervals is not None
    # the unjudged topic alone (a uniform prior on its relevance) adds more than the whole sampled stratum elsewhere
    assert np.all(table.intervals.sampling_se[:, m] * len(table.topics) > 0.1)
    rows = {r["run_id"]: r for r in board["rows"]}
    for i, run in enumerate(table.runs):
        assert rows[run.id]["ci_high"] - rows[run.id]["ci_low"] > plain.high[i] - plain.low[i] + 0.05


def test_a_marked_version_is_what_the_job_reads(make_campaign):
    """The mark the interval rule reads is the board's own: biased order and unjudged sampled items."""
    campaign, qrels_text, _ = _sampled_campaign(make_campaign)
    evaluation = _evaluate_on(campaign, qrels_text, "adaptive", mark=True)
    version = campaign.session.get(QrelsVersion, evaluation.qrels_version_id)
    assert qrels.order_mark(version)["biased"] is True  # type: ignore[index]
