"""Campaign series: progress topics sealed until released, one pool and board over several years' runs, top-up pools
that reuse earlier verdicts (TRECVID's Progress task)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import numpy as np
import pytest
from sqlalchemy import func, select

from app.evaluation.measures.evaluate import evaluate
from app.services import (
    campaigns,
    evaluations,
    organiser_view,
    pools,
    publication,
    qrels,
    runs,
    scores,
    series,
    team_reports,
    teams,
    verification,
    visibility,
)
from app.services.auth import Principal
from app.services.errors import Conflict, Forbidden, InvalidInput, NotFound
from app.services.pools import PoolSpec
from app.services.run_arrays import load_runs
from app.storage.models import (
    Assessor,
    Campaign,
    CampaignStatus,
    Judgement,
    JudgingTask,
    ModelVerdict,
    PoolItem,
    PoolRun,
    QrelsEntry,
    Role,
    Run,
    Team,
    Topic,
    Verdict,
)

ORGANISER = Principal(Role.organiser, token_id=0)
PROGRESS = [("101", "A"), ("102", "A"), ("103", "B"), ("104", "B")]
MEASURES = ["AP", "P@5", "num_rel_ret"]


def oracle(docno: str) -> int:
    """The truth every simulated assessor tells: every third shot is relevant."""
    return int(int(docno[1:]) % 3 == 0)


def run_text(topics: list[str], seed: int, tag: str) -> str:
    """A seeded run of 8 shots per topic out of 20."""
    rng = np.random.default_rng(seed)
    lines = []
    for topic in topics:
        for rank, doc in enumerate(rng.permutation(20)[:8].tolist(), start=1):
            lines.append(f"{topic} Q0 s{doc} {rank} {10.0 - rank} {tag}\n")
    return "".join(lines)


def submit(session, campaign_id: int, team_id: int, name: str, seed: int) -> Run:  # type: ignore[no-untyped-def]
    """A run on every topic of the campaign, for the team."""
    numbers = list(session.scalars(select(Topic.number).where(Topic.campaign_id == campaign_id)))
    meta = runs.RunMetadata(name=name)
    data = run_text(sorted(numbers), seed, name).encode()
    run = runs.submit_run(
        session, ORGANISER, campaign_id, runs.Submission(data=data, metadata=meta, team_id=team_id), max_errors=10
    )
    session.commit()
    return run


def year(session, make_campaign, series_id: int, seed: int) -> tuple[int, int, list[Run]]:  # type: ignore[no-untyped-def]
    """A campaign of the series with main topics 1 and 2, the progress topics, team 'vireo' (two runs) and one other
    team (one run), closed. Returns the campaign, vireo's team id and the runs."""
    campaign = make_campaign(2)
    series.add_campaign(session, ORGANISER, series_id, campaign.id)
    session.commit()
    vireo, _ = teams.create_team(session, ORGANISER, campaign.id, "vireo")
    session.commit()
    made = [
        submit(session, campaign.id, vireo.id, f"vireo-{seed}-1", seed),
        submit(session, campaign.id, vireo.id, f"vireo-{seed}-2", seed + 1),
        submit(session, campaign.id, campaign.team_id, f"other-{seed}", seed + 2),
    ]
    campaigns.set_status(session, ORGANISER, campaign.id, CampaignStatus.closed)
    session.commit()
    return campaign.id, vireo.id, made


def judge_everything(session, pool_id: int, assessor_id: int | None = None) -> int:  # type: ignore[no-untyped-def]
    """Answer every open round-1 task of the pool with the oracle's verdict (by the assessor given); how many."""
    tasks = session.execute(
        select(JudgingTask, PoolItem.docno)
        .join(PoolItem, PoolItem.id == JudgingTask.pool_item_id)
        .where(PoolItem.pool_id == pool_id, JudgingTask.round == 1, JudgingTask.done_at.is_(None))
    ).all()
    for task, docno in tasks:
        grade = oracle(docno)
        verdict = Verdict.relevant if grade else Verdict.not_relevant
        session.add(
            Judgement(pool_item_id=task.pool_item_id, round=1, verdict=verdict, grade=grade, assessor_id=assessor_id)
        )
        task.done_at = datetime.now(UTC)
    session.commit()
    return len(tasks)


def evaluate_version(session, campaign_id: int, version_id: int):  # type: ignore[no-untyped-def]
    """Evaluate a qrels version of the campaign (the job, run in process)."""
    evaluation = evaluations.start_evaluation(
        session, ORGANISER, campaign_id, qrels_version_id=version_id, measures=MEASURES
    )
    evaluations.run_evaluation(session, evaluation.id)
    session.commit()
    return evaluation


@pytest.fixture
def two_years(session, make_campaign):  # type: ignore[no-untyped-def]
    """A series with progress sets A (101, 102) and B (103, 104) and its campaigns of 2022 and 2023."""
    made = series.create_series(session, ORGANISER, f"avs-progress-{uuid.uuid4().hex[:8]}")
    session.commit()
    first = make_campaign(2)
    series.add_campaign(session, ORGANISER, made.id, first.id)
    topics = [series.ProgressTopic(n, f"progress {n}", "", s) for n, s in PROGRESS]
    series.add_progress_topics(session, ORGANISER, made.id, topics)
    session.commit()
    vireo, _ = teams.create_team(session, ORGANISER, first.id, "vireo")
    session.commit()
    runs22 = [
        submit(session, first.id, vireo.id, "v22a", 1),
        submit(session, first.id, vireo.id, "v22b", 2),
        submit(session, first.id, first.team_id, "o22", 3),
    ]
    campaigns.set_status(session, ORGANISER, first.id, CampaignStatus.closed)
    session.commit()
    second, vireo23, runs23 = year(session, make_campaign, made.id, 10)
    return {
        "series": made.id,
        "c22": first.id,
        "c23": second,
        "vireo22": vireo.id,
        "vireo23": vireo23,
        "runs": runs22 + runs23,
    }


def team(campaign_id: int, team_id: int) -> Principal:
    """A team's principal."""
    return Principal(Role.team, token_id=0, campaign_id=campaign_id, team_id=team_id)


def test_a_campaign_of_the_series_takes_its_progress_topics_in_their_sets(session, two_years):  # type: ignore[no-untyped-def]
    found = {
        number: progress_set
        for number, progress_set in session.execute(
            select(Topic.number, Topic.progress_set).where(Topic.campaign_id == two_years["c23"])
        )
    }
    assert found == {"1": None, "2": None, "101": "A", "102": "A", "103": "B", "104": "B"}
    view = series.get_series(session, ORGANISER, two_years["series"])
    assert [c.id for c in view.campaigns] == [two_years["c22"], two_years["c23"]]
    assert [(s.name, s.topics, s.sealed) for s in view.sets] == [
        ("A", ["101", "102"], True),
        ("B", ["103", "104"], True),
    ]
    with pytest.raises(Conflict, match="another set"):
        series.add_progress_topics(session, ORGANISER, two_years["series"], [series.ProgressTopic("101", "x", "", "B")])
    bound = Principal(Role.organiser, token_id=0, campaign_id=two_years["c22"])
    with pytest.raises(Forbidden):
        series.get_series(session, bound, two_years["series"])


def test_a_sealed_topic_s_scores_and_judgements_reach_no_team_and_no_public_until_released(session, two_years):  # type: ignore[no-untyped-def]
    c22, vireo = two_years["c22"], team(two_years["c22"], two_years["vireo22"])
    lines = "".join(f"{t} 0 s{d} {oracle(f's{d}')}\n" for t in ("1", "2", "103") for d in range(20))
    version = qrels.import_qrels(session, ORGANISER, c22, lines.encode(), label="with-b", max_errors=10)
    session.commit()
    evaluation = evaluate_version(session, c22, version.id)
    mine = next(r for r in two_years["runs"] if r.name == "v22a")
    with pytest.raises(Forbidden, match="progress set B"):
        visibility.leaderboard_for(session, vireo, c22)
    with pytest.raises(Forbidden, match="progress set B"):
        team_reports.run_report(session, vireo, mine.id)
    assert team_reports.console(session, vireo)["results"]["available"] is False
    with pytest.raises(Conflict, match="sealed"):
        publication.publish(session, ORGANISER, c22, evaluation_id=evaluation.id)
    session.rollback()
    exported = b"".join(qrels.export_qrels(session, ORGANISER, version.id, "trec")).decode()
    assert {line.split()[0] for line in exported.splitlines()} == {"1", "2"}
    organisers = visibility.leaderboard_for(session, ORGANISER, c22)
    assert any("103" in str(t["topic"]) for t in organisers["per_topic"])  # type: ignore[union-attr]

    series.release_set(session, ORGANISER, two_years["series"], "B")
    session.commit()
    board = visibility.leaderboard_for(session, vireo, c22)
    row = next(r for r in board["rows"] if r["run"] == "v22a")  # type: ignore[union-attr]
    tables = load_runs(session, [mine.id])
    direct = evaluate(qrels.load_qrels(session, version), tables, ["AP"], max_results=1000, names=["v22a"])
    assert row["per_topic"]["AP"]["103"] == pytest.approx(direct.to_dict()["v22a"]["AP"]["103"])
    exported = b"".join(qrels.export_qrels(session, ORGANISER, version.id, "trec")).decode()
    assert {line.split()[0] for line in exported.splitlines()} == {"1", "2", "103"}
    publication.publish(session, ORGANISER, c22, evaluation_id=evaluation.id)
    session.commit()


def test_set_a_is_pooled_once_over_both_years_and_the_board_compares_a_team_s_runs_across_years(session, two_years):  # type: ignore[no-untyped-def]
    c22, c23 = two_years["c22"], two_years["c23"]
    main = "".join(f"{t} 0 s{d} {oracle(f's{d}')}\n" for t in ("1", "2") for d in range(20))
    own = qrels.import_qrels(session, ORGANISER, c23, main.encode(), label="main", max_errors=10)
    session.commit()
    main_evaluation = evaluate_version(session, c23, own.id)

    pool = series.create_series_pool(
        session, ORGANISER, two_years["series"], "A", [c22, c23], PoolSpec(kind="depth", depth=5, seed=7)
    )
    session.commit()
    assert pool.campaign_id == c23 and pool.params["series"]["campaign_ids"] == [c22, c23]
    pooled_runs = set(session.scalars(select(PoolRun.run_id).where(PoolRun.pool_id == pool.id)))
    assert pooled_runs == {r.id for r in two_years["runs"]}
    numbers = set(
        session.scalars(
            select(Topic.number).join(PoolItem, PoolItem.topic_id == Topic.id).where(PoolItem.pool_id == pool.id)
        )
    )
    assert numbers == {"101", "102"}
    assert pool.params["reused"]["items"] == 0
    judged = judge_everything(session, pool.id)
    assert judged == session.scalar(select(func.count()).select_from(PoolItem).where(PoolItem.pool_id == pool.id))
    version = qrels.cut_qrels(session, ORGANISER, pool.id, "set A")
    session.commit()
    evaluation = evaluate_version(session, c23, version.id)

    board = series.series_board(session, ORGANISER, two_years["series"], "A", measure="AP")
    rows = board["rows"]
    assert {r["run_id"] for r in rows} == {r.id for r in two_years["runs"]}  # type: ignore[union-attr]
    assert {(r["campaign_id"], r["team"]) for r in rows if r["team"] == "vireo"} == {(c22, "vireo"), (c23, "vireo")}  # type: ignore[union-attr]
    ids = [r.id for r in two_years["runs"]]
    direct = evaluate(
        qrels.load_qrels(session, version),
        load_runs(session, ids),
        ["AP"],
        max_results=1000,
        names=[str(i) for i in ids],
    )
    means = dict(zip([str(i) for i in ids], direct.mean()[:, 0].tolist(), strict=True))
    for row in rows:  # type: ignore[union-attr]
        assert row["score"] == pytest.approx(means[str(row["run_id"])])
        assert row["ci_low"] <= row["score"] <= row["ci_high"]
    assert [t["topic"] for t in board["per_topic"]] == ["101", "102"]  # type: ignore[union-attr]

    vireo23 = team(c23, two_years["vireo23"])
    assert visibility.leaderboard_for(session, vireo23, c23)["evaluation_id"] == main_evaluation.id
    with pytest.raises(Forbidden, match="progress set A"):
        visibility.leaderboard_for(session, vireo23, c23, evaluation_id=evaluation.id)
    with pytest.raises(Forbidden, match="sealed"):
        series.series_board(session, None, two_years["series"], "A")
    series.release_set(session, ORGANISER, two_years["series"], "A")
    session.commit()
    public = series.series_board(session, None, two_years["series"], "A", measure="AP")
    assert [r["score"] for r in public["rows"]] == [r["score"] for r in rows]  # type: ignore[union-attr]
    assert visibility.leaderboard_for(session, vireo23, c23, evaluation_id=evaluation.id)["rows"]


def test_a_top_up_pool_reuses_earlier_verdicts_and_scores_as_if_all_were_judged(session, make_campaign, two_years):  # type: ignore[no-untyped-def]
    c22, c23 = two_years["c22"], two_years["c23"]
    first = series.create_series_pool(
        session, ORGANISER, two_years["series"], "A", [c22, c23], PoolSpec(kind="depth", depth=5, seed=7)
    )
    session.commit()
    judge_everything(session, first.id)
    earlier = {
        (number, docno)
        for number, docno in session.execute(
            select(Topic.number, PoolItem.docno)
            .join(Topic, Topic.id == PoolItem.topic_id)
            .where(PoolItem.pool_id == first.id)
        )
    }
    c24, _, runs24 = year(session, make_campaign, two_years["series"], 20)
    with pytest.raises(InvalidInput, match="outside the series"):
        series.create_series_pool(
            session, ORGANISER, two_years["series"], "A", [c24, 10**6], PoolSpec(kind="depth", depth=5)
        )
    topup = series.create_series_pool(
        session, ORGANISER, two_years["series"], "A", [c22, c23, c24], PoolSpec(kind="depth", depth=5, seed=8)
    )
    session.commit()
    items = session.execute(
        select(PoolItem.id, Topic.number, PoolItem.docno)
        .join(Topic, Topic.id == PoolItem.topic_id)
        .where(PoolItem.pool_id == topup.id)
    ).all()
    seen = {item for item, number, docno in items if (number, docno) in earlier}
    assert seen and len(seen) < len(items)
    assert topup.params["reused"]["items"] == len(seen)
    tasks = set(
        session.scalars(
            select(JudgingTask.pool_item_id)
            .join(PoolItem, PoolItem.id == JudgingTask.pool_item_id)
            .where(PoolItem.pool_id == topup.id)
        )
    )
    assert tasks == {item for item, _, _ in items} - seen  # no task for a reused item
    copied = session.execute(
        select(Judgement.pool_item_id, Judgement.assessor_id).where(Judgement.pool_item_id.in_(seen))
    ).all()
    assert {item for item, _ in copied} == seen and {a for _, a in copied} == {None}
    assert judge_everything(session, topup.id) == len(items) - len(seen)
    view = organiser_view.campaign_view(session, ORGANISER, c24)  # the host's judging progress: tasks, not reused
    assert view.pool_id == topup.id
    assert (sum(t.pooled for t in view.topics), sum(t.total for t in view.topics)) == (
        len(items),
        len(items) - len(seen),
    )
    version = qrels.cut_qrels(session, ORGANISER, topup.id, "set A top-up")
    session.commit()
    stored = session.execute(
        select(Topic.number, QrelsEntry.docno, QrelsEntry.grade)
        .join(Topic, Topic.id == QrelsEntry.topic_id)
        .where(QrelsEntry.qrels_version_id == version.id)
    ).all()
    assert sorted(stored) == sorted((number, docno, oracle(docno)) for _, number, docno in items)  # all judged
    evaluation = evaluate_version(session, c24, version.id)
    board = series.series_board(session, ORGANISER, two_years["series"], "A", measure="AP", evaluation_id=evaluation.id)
    assert board["reused"] == len(seen)
    all_runs = [r.id for r in two_years["runs"] + runs24]
    assert {r["run_id"] for r in board["rows"]} == set(all_runs)  # type: ignore[union-attr]
    direct = evaluate(
        qrels.load_qrels(session, version),
        load_runs(session, all_runs),
        ["AP"],
        max_results=1000,
        names=[str(i) for i in all_runs],
    )
    means = dict(zip([str(i) for i in all_runs], direct.mean()[:, 0].tolist(), strict=True))
    assert {r["run_id"]: r["score"] for r in board["rows"]} == pytest.approx({int(k): v for k, v in means.items()})  # type: ignore[union-attr]


def test_the_campaign_s_own_pool_leaves_progress_topics_to_series_pools_and_judging_goes_one_pool_at_a_time(  # type: ignore[no-untyped-def]
    session, two_years
):
    c22, c23 = two_years["c22"], two_years["c23"]
    own = pools.create_pool(session, ORGANISER, c23, PoolSpec(kind="depth", depth=3, seed=1))
    session.commit()
    numbers = session.scalars(
        select(Topic.number).join(PoolItem, PoolItem.topic_id == Topic.id).where(PoolItem.pool_id == own.id).distinct()
    )
    assert set(numbers) == {"1", "2"}
    spec = PoolSpec(kind="depth", depth=5, seed=7)
    with pytest.raises(Conflict, match="is judging its pool"):
        series.create_series_pool(session, ORGANISER, two_years["series"], "A", [c22, c23], spec)
    session.rollback()
    judge_everything(session, own.id)
    pool = series.create_series_pool(session, ORGANISER, two_years["series"], "A", [c22, c23], spec)
    session.commit()
    stats = pools.pool_statistics(session, pool)
    assert {(r["team"], r["run"]) for r in stats["runs"]} == {  # type: ignore[union-attr]
        (name, run.name)
        for run in two_years["runs"]
        for name in [session.get(Team, run.team_id).name]  # type: ignore[union-attr]
    }
    assert stats["judged_share"]["min"] >= 5 / 8  # type: ignore[index]  # on the set's topics only
    with pytest.raises(Conflict, match="series pool"):
        pools.create_pool(session, ORGANISER, c23, PoolSpec(kind="depth", depth=3, seed=2))
    session.rollback()
    judge_everything(session, pool.id)
    with pytest.raises(Conflict, match="already has judgements"):
        pools.create_pool(session, ORGANISER, c23, PoolSpec(kind="depth", depth=3, seed=2))
    session.rollback()


def evaluated_set(session, two_years, name: str, seed: int = 7):  # type: ignore[no-untyped-def]
    """Set `name` pooled over both years at depth 5, judged by the oracle, cut and evaluated on the host."""
    pool = series.create_series_pool(
        session,
        ORGANISER,
        two_years["series"],
        name,
        [two_years["c22"], two_years["c23"]],
        PoolSpec(kind="depth", depth=5, seed=seed),
    )
    session.commit()
    judge_everything(session, pool.id)
    version = qrels.cut_qrels(session, ORGANISER, pool.id, f"set {name}")
    session.commit()
    return pool, evaluate_version(session, two_years["c23"], version.id)


def test_the_public_series_board_names_teams_as_each_campaign_s_published_board_and_never_shows_a_sealed_set(  # type: ignore[no-untyped-def]
    session, two_years
):
    c22, c23 = two_years["c22"], two_years["c23"]
    evaluated_set(session, two_years, "A")
    session.get(Campaign, c22).anonymise_teams = True  # type: ignore[union-attr]
    series.release_set(session, ORGANISER, two_years["series"], "A")
    session.commit()
    names = {r.id: session.get(Team, r.team_id).name for r in two_years["runs"]}  # type: ignore[union-attr]
    by_run = {r.name: r.id for r in two_years["runs"]}

    public = series.series_board(session, None, two_years["series"], "A", measure="AP")
    teams_shown = {r["run"]: (r["campaign_id"], r["team"]) for r in public["rows"]}  # type: ignore[union-attr]
    # 2022 anonymises: its teams in the order of their first submissions (vireo's v22a came first), as its own board
    assert {run: teams_shown[run] for run in ("v22a", "v22b", "o22")} == {
        "v22a": (c22, "Team A"),
        "v22b": (c22, "Team A"),
        "o22": (c22, "Team B"),
    }
    assert scores.team_aliases(session, c22) == {
        session.get(Run, by_run["v22a"]).team_id: "Team A",  # type: ignore[union-attr]
        session.get(Run, by_run["o22"]).team_id: "Team B",  # type: ignore[union-attr]
    }
    # 2023 does not: its teams keep their names; every row of by_system_type is renamed alike
    for run in ("vireo-10-1", "vireo-10-2", "other-10"):
        assert teams_shown[run] == (c23, names[by_run[run]])
    typed = {r["run"]: r["team"] for rows in public["by_system_type"].values() for r in rows}  # type: ignore[union-attr]
    assert typed == {run: team for run, (_, team) in teams_shown.items()}
    assert public["anonymised"] is True and public["anonymised_campaigns"] == [c22]
    assert "vireo" not in {team for campaign, team in teams_shown.values() if campaign == c22}

    organisers = series.series_board(session, ORGANISER, two_years["series"], "A", measure="AP")
    assert {r["run"]: r["team"] for r in organisers["rows"]} == {  # type: ignore[union-attr]
        name: names[run_id] for name, run_id in by_run.items()
    }
    assert organisers["anonymised"] is False

    # set B, judged and evaluated but never released: the public gets nothing of it
    evaluated_set(session, two_years, "B", seed=8)
    with pytest.raises(Forbidden, match="progress set B"):
        series.series_board(session, None, two_years["series"], "B")
    assert series.series_board(session, ORGANISER, two_years["series"], "B")["sealed"] is True


def test_a_reused_verdict_keeps_where_and_by_whom_it_was_first_given_in_the_pool_its_stats_and_its_qrels(  # type: ignore[no-untyped-def]
    session, make_campaign, two_years
):
    c22, c23 = two_years["c22"], two_years["c23"]
    ann, _ = teams.create_assessor(session, ORGANISER, c23, "ann")
    session.commit()
    spec = PoolSpec(kind="depth", depth=5, seed=7)
    first = series.create_series_pool(session, ORGANISER, two_years["series"], "A", [c22, c23], spec)
    session.commit()
    judge_everything(session, first.id, ann.id)
    adjudicated = session.scalar(select(PoolItem).where(PoolItem.pool_id == first.id).order_by(PoolItem.id).limit(1))
    assert adjudicated is not None
    flipped = Verdict.not_relevant if oracle(adjudicated.docno) else Verdict.relevant  # round 2 disagrees ...
    session.add(
        Judgement(pool_item_id=adjudicated.id, round=2, verdict=flipped, grade=int(not oracle(adjudicated.docno)))
    )
    session.add(
        Judgement(pool_item_id=adjudicated.id, round=3, verdict=flipped, grade=int(not oracle(adjudicated.docno)))
    )
    session.commit()  # ... and the organiser's adjudication (no assessor) sides with it
    first_keys = {
        (number, docno): item
        for item, number, docno in session.execute(
            select(PoolItem.id, Topic.number, PoolItem.docno)
            .join(Topic, Topic.id == PoolItem.topic_id)
            .where(PoolItem.pool_id == first.id)
        )
    }
    adjudicated_key = next(k for k, v in first_keys.items() if v == adjudicated.id)
    c24, _, _ = year(session, make_campaign, two_years["series"], 20)
    c23_name = session.get(Campaign, c23).name  # type: ignore[union-attr]

    topup = series.create_series_pool(
        session, ORGANISER, two_years["series"], "A", [c22, c23, c24], PoolSpec(kind="depth", depth=5, seed=8)
    )
    session.commit()
    copied = session.execute(
        select(Topic.number, PoolItem.docno, Judgement.grade, Judgement.reused_from)
        .join(PoolItem, PoolItem.id == Judgement.pool_item_id)
        .join(Topic, Topic.id == PoolItem.topic_id)
        .where(PoolItem.pool_id == topup.id)
    ).all()
    assert copied and all(origin is not None for *_, origin in copied)
    assert {(n, d) for n, d, _, _ in copied} <= set(first_keys)
    for number, docno, grade, origin in copied:
        item = first_keys[(number, docno)]
        assert (origin["pool_id"], origin["campaign_id"], origin["campaign"]) == (first.id, c23, c23_name)
        if (number, docno) == adjudicated_key:
            assert (origin["kind"], origin["round"], origin["assessor_id"]) == ("adjudication", 3, None)
            assert grade == int(not oracle(docno))
        else:
            assert (origin["kind"], origin["round"], origin["assessor_id"], origin["assessor"]) == (
                "human",
                1,
                ann.id,
                "ann",
            )
            settled = session.scalar(select(Judgement.id).where(Judgement.pool_item_id == item, Judgement.round == 1))
            assert origin["judgement_id"] == settled and grade == oracle(docno)
    by_ann = sum(1 for key in {(n, d) for n, d, _, _ in copied} if key != adjudicated_key)
    adjudicated_copied = int(adjudicated_key in {(n, d) for n, d, _, _ in copied})
    assert adjudicated_copied == 1  # every run of the first pool is in the top-up: its items are too
    expected = [
        {
            "pool_id": first.id,
            "campaign_id": c23,
            "campaign": c23_name,
            "assessor_id": ann.id,
            "assessor": "ann",
            "kind": "human",
            "items": by_ann,
        },
    ] + [
        {
            "pool_id": first.id,
            "campaign_id": c23,
            "campaign": c23_name,
            "assessor_id": None,
            "assessor": None,
            "kind": "adjudication",
            "items": 1,
        }
    ] * adjudicated_copied
    assert topup.params["reused"]["items"] == len(copied) and topup.params["reused"]["origins"] == expected
    assert pools.pool_statistics(session, topup)["reused"] == {"items": len(copied), "origins": expected}
    listed = series.pool_reuse(session, ORGANISER, two_years["series"], topup.id)
    assert listed["reused"] == len(copied) and listed["origins"] == expected
    assert {(i["topic"], i["docno"], i["grade"]) for i in listed["items"]} == {(n, d, g) for n, d, g, _ in copied}

    judge_everything(session, topup.id)
    version = qrels.cut_qrels(session, ORGANISER, topup.id, "set A top-up")
    session.commit()
    assert version.provenance["reused"] == {"items": len(copied), "origins": expected}  # type: ignore[index]
    assert version.provenance["human_judgements"] == version.n_entries  # type: ignore[index]

    # a third pool copies the top-up's copies: they still name the first pool's verdicts
    third = series.create_series_pool(
        session, ORGANISER, two_years["series"], "A", [c22, c23, c24], PoolSpec(kind="depth", depth=5, seed=9)
    )
    session.commit()
    again = series.pool_reuse(session, ORGANISER, two_years["series"], third.id)
    topup_items = session.scalar(select(func.count()).select_from(PoolItem).where(PoolItem.pool_id == topup.id))
    assert again["reused"] == third.params["reused"]["items"] == topup_items  # the same runs and depth: all judged
    for item in again["items"]:
        origin = item["origin"]
        assert origin["pool_id"] == (first.id if (item["topic"], item["docno"]) in first_keys else topup.id)
    assert {i["origin"]["pool_id"] for i in again["items"]} == {first.id, topup.id}
    with pytest.raises(NotFound):
        series.pool_reuse(session, ORGANISER, two_years["series"], 10**9)


def test_a_series_pool_takes_per_topic_depths_of_the_set_s_topics_only(session, two_years):  # type: ignore[no-untyped-def]
    c22, c23 = two_years["c22"], two_years["c23"]
    spec = PoolSpec(kind="depth", depth=3, seed=5, depths={"101": 2, "102": 6})
    pool = series.create_series_pool(session, ORGANISER, two_years["series"], "A", [c22, c23], spec)
    session.commit()
    assert pool.params["depths"] == {"101": 2, "102": 6} and pool.params["strata"] == [[1, 6, 1.0]]
    pooled: dict[str, set[str]] = {"101": set(), "102": set()}
    for number, docno in session.execute(
        select(Topic.number, PoolItem.docno)
        .join(Topic, Topic.id == PoolItem.topic_id)
        .where(PoolItem.pool_id == pool.id)
    ):
        pooled[number].add(docno)
    expected: dict[str, set[str]] = {"101": set(), "102": set()}
    for table in load_runs(session, [r.id for r in two_years["runs"]]):
        for topic, doc, rank in zip(table.topics.tolist(), table.docs.tolist(), table.ranks.tolist(), strict=True):
            if topic in expected and rank <= {"101": 2, "102": 6}[topic]:  # each run's top k, k the topic's depth
                expected[topic].add(doc)
    assert pooled == expected and len(pooled["101"]) < len(pooled["102"])
    stats = pools.pool_statistics(session, pool)
    assert stats["judged_share"]["max"] == 1.0  # type: ignore[index]  # every run's top k per topic is judged

    for depths, message in (({"1": 4}, "not topics of progress set 'A': 1"), ({"103": 4}, "103")):
        with pytest.raises(InvalidInput) as refused:
            series.create_series_pool(
                session, ORGANISER, two_years["series"], "A", [c22, c23], PoolSpec(kind="depth", depth=3, depths=depths)
            )
        assert refused.value.errors[0]["field"] == "depths" and message in str(refused.value.errors[0]["message"])
    with pytest.raises(InvalidInput) as refused:
        series.create_series_pool(
            session, ORGANISER, two_years["series"], "A", [c22, c23], PoolSpec(kind="stratified", depths={"101": 4})
        )
    assert refused.value.errors[0]["field"] == "depths"
    with pytest.raises(InvalidInput) as refused:
        series.create_series_pool(
            session, ORGANISER, two_years["series"], "A", [c22, c23], PoolSpec(kind="depth", depth=3, depths={"101": 0})
        )
    assert refused.value.errors[0]["field"] == "depths"


def test_a_model_assisted_series_pool_gives_people_only_the_verification_sample_and_reuses_nothing(  # type: ignore[no-untyped-def]
    session, two_years
):
    c22, c23 = two_years["c22"], two_years["c23"]
    model = Assessor(campaign_id=c23, name="judge-model", kind="model", provenance={"model": "m", "version": "1"})
    stranger = Assessor(campaign_id=c22, name="old-model", kind="model", provenance={"model": "m", "version": "0"})
    session.add_all([model, stranger])
    session.commit()
    assisted = pools.VerificationSpec(0.5, model_assessor_id=model.id)
    spec = PoolSpec(kind="depth", depth=4, seed=3, verification=assisted)
    with pytest.raises(InvalidInput) as refused:
        series.create_series_pool(session, ORGANISER, two_years["series"], "A", [c22, c23], spec, reuse=True)
    assert refused.value.errors[0]["field"] == "reuse"
    with pytest.raises(InvalidInput) as refused:  # the model judges on the host: one of its assessors
        series.create_series_pool(
            session,
            ORGANISER,
            two_years["series"],
            "A",
            [c22, c23],
            PoolSpec(kind="depth", depth=4, verification=pools.VerificationSpec(0.5, model_assessor_id=stranger.id)),
        )
    assert refused.value.errors[0]["field"] == "verification.model_assessor_id"
    pool = series.create_series_pool(session, ORGANISER, two_years["series"], "A", [c22, c23], spec)
    session.commit()
    assert pool.params["verification"] == {"human_share": 0.5, "stratify": "none", "model_assessor_id": model.id}
    assert pool.params["reused"] == {"items": 0, "topics": {}, "origins": [], "enabled": False}
    count = select(func.count()).select_from(JudgingTask).join(PoolItem).where(PoolItem.pool_id == pool.id)
    assert session.scalar(count) == 0  # people wait for the model
    items = session.execute(
        select(PoolItem.id, PoolItem.docno)
        .join(Topic, Topic.id == PoolItem.topic_id)
        .where(PoolItem.pool_id == pool.id, Topic.number == "101", PoolItem.sampled)
    ).all()
    for item, docno in items:
        session.add(ModelVerdict(pool_item_id=item, assessor_id=model.id, grade=oracle(docno), probability=0.5))
    session.flush()
    drawn = verification.draw_topic(
        session, pool, session.scalar(select(PoolItem.topic_id).where(PoolItem.id == items[0][0]))
    )  # type: ignore[arg-type]
    session.commit()
    queued = session.scalars(select(JudgingTask.reason).join(PoolItem).where(PoolItem.pool_id == pool.id)).all()
    assert drawn is not None and drawn > 0 and queued == ["verification"] * drawn
