"""A depth pool with a depth per topic over REST: stored in the pool's params and returned, the preview equal to the
build, the pooled shots each topic's own top k (brute force on the downloaded runs), bad maps refused naming the
field with nothing stored; the pool statistics and the leave-out and pool-depth analyses use each topic's depth (a
uniform map gives the scalar result, the pool's mixed map an independent count)."""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import func, select

from app.evaluation.formats.trec_files import parse_trec_run
from app.storage.models import Pool, PoolItem, Topic
from tests.api.helpers import judge_in_process, make_assessor, run_analysis, setup_campaign, wait_done
from tests.evaluation.pool_cases import brute_ranked

DEPTH = 10
DEPTHS = {"1": 4, "3": 25}  # topic 2 takes DEPTH


def own_depth(topic: str) -> int:
    """A topic's pool depth."""
    return DEPTHS.get(topic, DEPTH)


@pytest.fixture(scope="module")
def per_topic(make_campaign, client, organiser):  # type: ignore[no-untyped-def]
    """A closed campaign (3 topics, 4 runs of 60 shots per topic, two teams), its runs in trec order per topic (from
    the downloaded files) and the preview and build of its depth pool with DEPTHS."""
    campaign, _ = setup_campaign(make_campaign, client, organiser, n_runs=4, depth=60, seed=11)
    runs = client.get(f"/api/campaigns/{campaign.id}/runs", headers=organiser).json()
    ranked = {
        r["name"]: brute_ranked(parse_trec_run(client.get(f"/api/runs/{r['id']}/download", headers=organiser).content))
        for r in runs
    }
    body = {"kind": "depth", "depth": DEPTH, "depths": DEPTHS, "seed": 3}
    preview = client.post(f"/api/campaigns/{campaign.id}/pools/preview", json=body, headers=organiser)
    assert preview.status_code == 200, preview.text
    built = client.post(f"/api/campaigns/{campaign.id}/pools", json=body, headers=organiser)
    assert built.status_code == 201, built.text
    return campaign, runs, ranked, preview.json(), built.json()


def test_the_map_is_stored_returned_and_previewed(per_topic, client, organiser, sessions) -> None:  # type: ignore[no-untyped-def]
    campaign, runs, ranked, preview, built = per_topic
    assert built["params"]["depths"] == DEPTHS and built["params"]["depth"] == DEPTH
    assert built["params"]["strata"] == [[1, 25, 1.0]]  # the deepest topic's
    assert client.get(f"/api/pools/{built['id']}", headers=organiser).json()["params"] == built["params"]
    assert preview["depths"] == DEPTHS and preview["seed"] == built["seed"] == 3
    assert preview["topics"] == built["topics"]
    # each topic's pool is the runs' top k of its own
    expected = {(t, d) for lists in ranked.values() for t, docs in lists.items() for d in docs[: own_depth(t)]}
    with sessions() as session:
        stored = session.execute(
            select(Topic.number, PoolItem.docno, PoolItem.best_rank)
            .join(Topic, Topic.id == PoolItem.topic_id)
            .where(PoolItem.pool_id == built["id"])
        ).all()
    assert {(t, d) for t, d, _ in stored} == expected
    assert {t: max(r for n, _, r in stored if n == t) for t in ("1", "2", "3")} == {"1": 4, "2": 10, "3": 25}
    assert [t["pooled"] for t in built["topics"]] == [sum(k[0] == t for k in expected) for t in ("1", "2", "3")]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"kind": "depth", "depth": 5, "depths": {"9": 50}}, "depths"),  # not a topic of the campaign
        ({"kind": "stratified", "depths": {"1": 50}}, "depths"),  # a stratified pool
        ({"kind": "depth", "depths": {"1": 50}}, "depth"),  # no default depth
        ({"kind": "depth", "depth": 5, "depths": {"1": 0}}, "depths"),  # below 1
    ],
)
def test_a_bad_map_is_refused_naming_the_field(per_topic, client, organiser, sessions, body, field) -> None:  # type: ignore[no-untyped-def]
    campaign, *_ = per_topic
    with sessions() as session:
        before = session.scalar(select(func.count()).select_from(Pool).where(Pool.campaign_id == campaign.id))
    for path in ("pools/preview", "pools"):
        answer = client.post(f"/api/campaigns/{campaign.id}/{path}", json=body, headers=organiser)
        assert answer.status_code == 422, answer.text
        fields = [str(e.get("field") or ".".join(map(str, e.get("loc", [])))) for e in answer.json()["errors"]]
        assert any(field in f for f in fields), answer.json()
    with sessions() as session:
        assert session.scalar(select(func.count()).select_from(Pool).where(Pool.campaign_id == campaign.id)) == before


def test_statistics_count_contributions_within_each_topics_depth(per_topic, client, organiser) -> None:  # type: ignore[no-untyped-def]
    _, runs, ranked, _, built = per_topic
    stats = client.get(f"/api/pools/{built['id']}/stats", headers=organiser).json()
    contributors: dict[tuple[str, str], set[str]] = {}
    for name, lists in ranked.items():
        for topic, docs in lists.items():
            for doc in docs[: own_depth(topic)]:
                contributors.setdefault((topic, doc), set()).add(name)
    unique = {r["name"]: sum(c == {r["name"]} for c in contributors.values()) for r in runs}
    assert {r["run"]: r["unique_contributions"] for r in stats["runs"]} == unique
    # the judged share of a run's results: its shots in the pool (at any rank) over all it returned
    shares = {
        name: np.mean([sum((t, d) in contributors for d in docs) / len(docs) for t, docs in lists.items()])
        for name, lists in ranked.items()
    }
    assert {r["run"]: r["judged_share_mean"] for r in stats["runs"]} == pytest.approx(shares)


def test_analyses_use_each_topics_depth(per_topic, client, organiser, sessions) -> None:  # type: ignore[no-untyped-def]
    campaign, runs, ranked, _, built = per_topic
    assessor_id, assessor = make_assessor(client, organiser, campaign, "judge")
    body = {"assignments": [{"topic": t, "assessor_id": assessor_id} for t in campaign.topics]}
    assert client.post(f"/api/pools/{built['id']}/assignments", json=body, headers=organiser).status_code == 201
    judge_in_process(
        sessions, assessor, lambda i: "relevant" if int(i["shot_id"].split("_")[1]) < 3 else "not_relevant"
    )
    # the live view's leave-one-team-out: relevant shots only one team's runs rank within their topic's depth
    team_of = {r["name"]: r["team_id"] for r in runs}
    teams_of: dict[tuple[str, str], set[int]] = {}
    for name, lists in ranked.items():
        for topic, docs in lists.items():
            for doc in docs[: own_depth(topic)]:
                teams_of.setdefault((topic, doc), set()).add(team_of[name])
    names = {t["id"]: t["name"] for t in client.get(f"/api/campaigns/{campaign.id}/teams", headers=organiser).json()}
    relevant = {k: v for k, v in teams_of.items() if int(k[1].split("_")[1]) < 3}
    expected = {names[i]: sum(v == {i} for v in relevant.values()) for i in set(team_of.values())}
    live = client.get(f"/api/pools/{built['id']}/live", headers=organiser).json()["reusability"]
    assert {t["team"]: t["removed_relevant"] for t in live["teams"]} == expected and sum(expected.values()) > 0
    cut = client.post(f"/api/pools/{built['id']}/qrels", json={"label": "final"}, headers=organiser)
    assert cut.status_code == 201, cut.text
    started = client.post(f"/api/campaigns/{campaign.id}/evaluations", json={}, headers=organiser)
    wait_done(client, organiser, started.json()["id"])

    # leave one run out: the pool's per-topic depths, and the lines only that run ranks within its topic's depth
    result = run_analysis(client, organiser, campaign.id, "leave-out", by="run", measure="AP")
    shown = {t["topic"]: (t["depth"], t["source"]) for t in result["pool_depths"]["topics"]}
    assert shown == {"1": (4, "pool"), "2": (10, "pool"), "3": (25, "pool")} and result["depth"] is None
    contributors: dict[tuple[str, str], set[str]] = {}
    for name, lists in ranked.items():
        for topic, docs in lists.items():
            for doc in docs[: own_depth(topic)]:
                contributors.setdefault((topic, doc), set()).add(name)
    removed = {u["unit"]: u["removed_lines"] for u in result["units"]}
    assert removed == {r["name"]: sum(c == {r["name"]} for c in contributors.values()) for r in runs}
    # a uniform map is the scalar depth
    uniform = run_analysis(
        client, organiser, campaign.id, "leave-out", by="run", measure="AP", depth=dict.fromkeys("123", 10)
    )
    scalar = run_analysis(client, organiser, campaign.id, "leave-out", by="run", measure="AP", depth=10)
    assert uniform["units"] == scalar["units"] and uniform["runs"] == scalar["runs"] and uniform["depth"] == 10
    assert uniform["units"] != result["units"]

    # pool depth: at depth d each topic keeps the shots some run ranks within min(d, its depth); a depth given
    # shallower than the pool's makes the deeper shots residual (judged from outside the pool: dropped)
    best = {key: min(docs.index(key[1]) + 1 for lists in ranked.values() for t, docs in lists.items()
                     if t == key[0] and key[1] in docs[: own_depth(t)]) for key in contributors}  # fmt: skip
    for given in (None, {"1": 4, "2": 2, "3": 7}):
        params = {"max_depth": 30, "measure": "AP", **({"depth": given} if given else {})}
        cut_at = run_analysis(client, organiser, campaign.id, "pool-depth", **params)
        caps = given or {"1": 4, "2": 10, "3": 25}
        lines = [sum(r <= min(d, caps[t]) for (t, _), r in best.items()) for d in range(1, 31)]
        assert [d["lines"] for d in cut_at["depths"]] == lines
        assert {t["topic"]: t["depth"] for t in cut_at["pool_depths"]["topics"]} == caps
        assert cut_at["residual_lines"] == len(best) - lines[-1]
    assert lines[-1] < len(best)  # the given map is shallower than the pool on topics 2 and 3
    uniform = run_analysis(
        client, organiser, campaign.id, "pool-depth", max_depth=30, measure="AP", depth=dict.fromkeys("123", 6)
    )
    scalar = run_analysis(client, organiser, campaign.id, "pool-depth", max_depth=30, measure="AP", depth=6)
    assert uniform["depths"] == scalar["depths"] and uniform["residual_lines"] == scalar["residual_lines"] > 0
    # a map naming a topic the campaign lacks is refused, naming the parameter
    bad = client.post(
        f"/api/campaigns/{campaign.id}/analyses",
        json={"kind": "leave-out", "params": {"depth": {"7": 5}}},
        headers=organiser,
    )
    assert bad.status_code == 422 and bad.json()["errors"][0]["field"] == "params.depth"
    assert np.isfinite([r["reduced"] for r in result["runs"]]).all()
