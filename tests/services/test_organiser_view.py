"""The organiser view: its counts against hand-made judgements, and against the rules it restates in SQL
(qrels.final_grade for what is relevant so far, quality.adjudication_queue for what awaits adjudication)."""

from __future__ import annotations

import statistics

import pytest
from sqlalchemy import text

from app.services import campaigns, judging, organiser_view, pools, qrels, quality, teams
from app.services.auth import Principal, issue_token
from app.services.errors import Forbidden, NotFound
from app.storage.models import AnalysisJob, CampaignStatus, Evaluation, JudgingTask, PoolItem, Role, Verdict
from tests.services.conftest import ORGANISER

R, N, U = Verdict.relevant, Verdict.not_relevant, Verdict.unsure
# two runs per topic: d1..d4 and d3..d6, so a depth-4 pool holds d1..d6 of every topic (all sampled)
RUNS = (
    "".join(f"{t} Q0 d{d} {d} {10 - d} a\n" for t in (1, 2, 3, 4) for d in (1, 2, 3, 4)),
    "".join(f"{t} Q0 d{d} {d - 2} {10 - d} b\n" for t in (1, 2, 3, 4) for d in (3, 4, 5, 6)),
)


def _judge(session, who: Principal, verdict: Verdict, seconds: float) -> judging.TaskView:  # type: ignore[no-untyped-def]
    """The assessor takes the next item and judges it; committed, so each verdict has its own time."""
    task = judging.next_task(session, who, lease_seconds=600)
    assert task is not None
    judging.judge(session, who, task.task_id, verdict, seconds_spent=seconds)
    session.commit()
    return task


@pytest.fixture
def judged(make_campaign):  # type: ignore[no-untyped-def]
    """A pool of 4 topics x 6 items judged by hand: ann has topics 1 and 2, bob topics 1 and 3, topic 4 nobody."""
    campaign = make_campaign(n_topics=4)
    session = campaign.session
    for run in RUNS:
        campaign.submit(run)
    campaigns.set_status(session, ORGANISER, campaign.id, CampaignStatus.closed)
    pool = pools.create_pool(session, ORGANISER, campaign.id, pools.PoolSpec(kind="depth", depth=4, seed=3))
    ann, _ = teams.create_assessor(session, ORGANISER, campaign.id, "ann")
    bob, _ = teams.create_assessor(session, ORGANISER, campaign.id, "bob")
    pools.assign_topics(session, ORGANISER, pool.id, [("1", ann.id), ("2", ann.id)])
    pools.assign_topics(session, ORGANISER, pool.id, [("1", bob.id), ("3", bob.id)], shared=True)
    session.commit()
    as_ann = Principal(Role.assessor, token_id=0, campaign_id=campaign.id, assessor_id=ann.id)
    as_bob = Principal(Role.assessor, token_id=0, campaign_id=campaign.id, assessor_id=bob.id)

    # ann: five items of topic 1
    ann_tasks = [_judge(session, as_ann, v, s) for v, s in zip((R, N, U, R, U), (10, 20, 30, 40, 1000), strict=True)]
    assert {t.topic for t in ann_tasks} == {"1"}
    items = {
        t.shot_id: session.scalar(text("SELECT pool_item_id FROM judging_tasks WHERE id = :id"), {"id": t.task_id})
        for t in ann_tasks
    }
    shots = [t.shot_id for t in ann_tasks]
    # the organiser settles ann's first unsure as relevant; second opinions on her not-relevant and second relevant
    token, _ = issue_token(session, Role.organiser, label="adjudicator")  # adjudications name a real token
    quality.adjudicate(session, Principal(Role.organiser, token_id=token.id), pool.id, items[shots[2]], R)
    for shot in (shots[1], shots[3]):
        session.add(JudgingTask(pool_item_id=items[shot], round=2, reason="hand-made", excluded_assessor_id=ann.id))
    session.commit()
    # bob: the last item of topic 1, all of topic 3, then one second opinion (he disagrees)
    assert _judge(session, as_bob, N, 8).topic == "1"
    topic3 = [_judge(session, as_bob, v, s) for v, s in zip((R, N, R, N, R, N), (5, 6, 7, 8, 9, 10), strict=True)]
    assert {t.topic for t in topic3} == {"3"}
    second = judging.next_task(session, as_bob, lease_seconds=600)
    assert second is not None and second.shot_id in (shots[1], shots[3])
    judging.judge(session, as_bob, second.task_id, R if second.shot_id == shots[1] else N, seconds_spent=12)
    session.commit()
    return campaign, pool, ann, bob, as_bob, second.shot_id


def test_counts_match_the_hand_made_judgements(judged):  # type: ignore[no-untyped-def]
    campaign, pool, ann, bob, _, _ = judged
    view = organiser_view.campaign_view(campaign.session, ORGANISER, campaign.id, recent=3)
    assert (view.pool_id, view.pool_kind, view.status) == (pool.id, "depth", "judging")

    topics = {t.topic: t for t in view.topics}
    assert list(topics) == ["1", "2", "3", "4"]
    assert [(r.round, r.total, r.done) for r in topics["1"].rounds] == [(1, 6, 6), (2, 2, 1)]
    assert [(r.round, r.total, r.done) for r in topics["2"].rounds] == [(1, 6, 0)]
    assert [(r.round, r.total, r.done) for r in topics["3"].rounds] == [(1, 6, 6)]
    assert {t: (p.pooled, p.total, p.judged) for t, p in topics.items()} == {
        "1": (6, 6, 6),
        "2": (6, 6, 0),
        "3": (6, 6, 6),
        "4": (6, 6, 0),
    }
    # topic 1: ann's two relevant and the unsure adjudicated relevant (the second opinion leaves hers standing);
    # topic 3: bob's three relevant
    assert {t: p.relevant for t, p in topics.items()} == {"1": 3, "2": 0, "3": 3, "4": 0}
    # topic 1: ann's other unsure, and the item bob disagreed on
    assert {t: p.awaiting_adjudication for t, p in topics.items()} == {"1": 2, "2": 0, "3": 0, "4": 0}
    assert {t: p.assessors for t, p in topics.items()} == {"1": ["ann", "bob"], "2": ["ann"], "3": ["bob"], "4": []}

    people = {a.assessor: a for a in view.assessors}
    assert people["ann"].topics == ["1", "2"] and people["bob"].topics == ["1", "3"]
    assert (people["ann"].judged, people["bob"].judged) == (5, 8)
    assert people["ann"].mean_seconds == pytest.approx(1100 / 5)
    assert people["bob"].mean_seconds == pytest.approx((8 + 5 + 6 + 7 + 8 + 9 + 10 + 12) / 8)
    # the recent pace: the median of the last 3 (recent=3): ann 30, 40, 1000; bob 9, 10, 12
    assert people["ann"].recent_seconds == statistics.median([30, 40, 1000]) == 40
    assert people["bob"].recent_seconds == statistics.median([9, 10, 12]) == 10
    # ann may take topic 2's six items (never the second opinion on her own item); bob the open second opinion
    assert (people["ann"].remaining, people["bob"].remaining) == (6, 1)
    assert (people["ann"].eta_seconds, people["bob"].eta_seconds) == (240.0, 10.0)
    assert people["bob"].last_judged_at is not None

    assert (view.judging.total, view.judging.done, view.judging.remaining) == (26, 13, 13)
    assert view.judging.unassigned == 6  # topic 4
    assert view.judging.eta_seconds == 240.0  # they judge side by side: the slower one's time

    qc = view.second_opinions
    assert (qc.open, qc.leased, qc.done) == (1, 0, 1)
    assert [(s.topic, s.reason, s.leased_to) for s in qc.items] == [("1", "hand-made", None)]


def test_relevant_and_adjudication_follow_the_rules_they_restate(judged):  # type: ignore[no-untyped-def]
    campaign, pool, *_, disputed = judged
    session = campaign.session
    view = organiser_view.campaign_view(session, ORGANISER, campaign.id)
    by_round = quality.verdicts_by_round(session, pool)
    topic_of = {i.id: i.topic_id for i in session.query(PoolItem).filter(PoolItem.pool_id == pool.id)}
    numbers = {tid: n for n, tid in session.execute(text("SELECT number, id FROM topics")).all()}
    expected: dict[str, int] = {}
    for item_id, rounds in by_round.items():
        number = numbers[topic_of[item_id]]
        expected[number] = expected.get(number, 0) + (qrels.final_grade(rounds) == 1)
    assert {t.topic: t.relevant for t in view.topics if t.relevant} == {k: v for k, v in expected.items() if v}

    queue = quality.adjudication_queue(session, ORGANISER, pool.id)
    assert view.adjudication.size == len(queue) == 2
    assert [(a.pool_item_id, a.topic, a.shot_id, a.verdicts) for a in view.adjudication.items] == [
        (q["pool_item_id"], q["topic"], q["shot_id"], q["verdicts"]) for q in queue
    ]
    assert disputed in {a.shot_id for a in view.adjudication.items}
    listed = organiser_view.campaign_view(session, ORGANISER, campaign.id, listed=1)
    assert listed.adjudication.size == 2 and len(listed.adjudication.items) == 1  # the size counts the whole queue


def test_a_lease_shows_in_the_qc_queue_and_the_pace_ignores_untimed_verdicts(judged):  # type: ignore[no-untyped-def]
    campaign, _, ann, bob, as_bob, _ = judged
    session = campaign.session
    task = judging.next_task(session, as_bob, lease_seconds=600)
    assert task is not None
    session.commit()
    view = organiser_view.campaign_view(session, ORGANISER, campaign.id, recent=3)
    assert (view.second_opinions.open, view.second_opinions.leased) == (1, 1)
    assert view.second_opinions.items[0].leased_to == "bob"
    session.execute(text("UPDATE judgements SET seconds_spent = NULL WHERE assessor_id = :a"), {"a": ann.id})
    session.commit()
    ann_view = next(
        a for a in organiser_view.campaign_view(session, ORGANISER, campaign.id).assessors if a.assessor_id == ann.id
    )
    assert (ann_view.judged, ann_view.mean_seconds, ann_view.recent_seconds, ann_view.eta_seconds) == (
        5,
        None,
        None,
        None,
    )
    assert organiser_view.campaign_view(session, ORGANISER, campaign.id).judging.eta_seconds is None


def test_jobs_unfinished_first_then_newest(judged):  # type: ignore[no-untyped-def]
    campaign, pool, *_ = judged
    session = campaign.session
    version = qrels.cut_qrels(session, ORGANISER, pool.id, "cut-1")
    made = [
        Evaluation(campaign_id=campaign.id, qrels_version_id=version.id, status="done", progress=1.0),
        Evaluation(campaign_id=campaign.id, qrels_version_id=version.id, status="queued"),
        AnalysisJob(campaign_id=campaign.id, kind="ties", status="running", progress=0.25),
        AnalysisJob(campaign_id=campaign.id, kind="power", status="failed", error="boom"),
        AnalysisJob(campaign_id=campaign.id, kind="stability", status="running", cancel_requested=True),
    ]
    for job in made:  # one transaction each: distinct creation times
        session.add(job)
        session.commit()
    view = organiser_view.campaign_view(session, ORGANISER, campaign.id)
    order = [(j.type, j.id) for j in view.jobs]
    assert order == [
        ("analysis", made[4].id),
        ("analysis", made[2].id),
        ("evaluation", made[1].id),
        ("analysis", made[3].id),
        ("evaluation", made[0].id),
    ]
    # a long history: each kind lists its unfinished jobs before its newest finished ones
    first = organiser_view.campaign_jobs(session, campaign.id, listed=1)
    assert [(j.type, j.id) for j in first] == [("analysis", made[4].id), ("evaluation", made[1].id)]
    jobs = {(j.type, j.id): j for j in view.jobs}
    assert [jobs[k].cancellable for k in order] == [False, True, True, False, False]
    assert jobs[("evaluation", made[1].id)].label == "cut-1" and jobs[("analysis", made[3].id)].error == "boom"
    assert jobs[("analysis", made[2].id)].progress == 0.25 and jobs[("analysis", made[2].id)].kind == "ties"


def test_read_only_and_for_the_campaigns_organisers_only(judged, make_campaign):  # type: ignore[no-untyped-def]
    campaign, *_ = judged
    session = campaign.session
    session.commit()
    session.execute(text("SET TRANSACTION READ ONLY"))  # any write would fail
    view = organiser_view.campaign_view(session, ORGANISER, campaign.id)
    assert not session.new and not session.dirty and view.topics
    session.rollback()
    other = make_campaign()
    bound = Principal(Role.organiser, token_id=0, campaign_id=other.id)
    with pytest.raises(NotFound):
        organiser_view.campaign_view(session, bound, campaign.id)
    team = Principal(Role.team, token_id=0, campaign_id=campaign.id, team_id=campaign.team_id)
    with pytest.raises(Forbidden):
        organiser_view.campaign_view(session, team, campaign.id)


def test_a_campaign_without_a_pool(make_campaign):  # type: ignore[no-untyped-def]
    campaign = make_campaign(n_topics=2)
    view = organiser_view.campaign_view(campaign.session, ORGANISER, campaign.id)
    assert view.pool_id is None and view.topics == [] and view.jobs == []
    assert (view.judging.total, view.judging.eta_seconds) == (0, None)
