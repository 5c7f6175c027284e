"""The per-run team report: summary, recall-precision curve (pytrec_eval and by hand), per topic against the median
and best, the relevant shots only this run (and only this team) found, and SPEC section 7's limits."""

from __future__ import annotations

import numpy as np
import pytest
import pytrec_eval

from app.services import team_reports
from app.services.auth import authenticate
from app.services.errors import Forbidden, NotFound
from tests.api.helpers import evaluate_campaign, new_campaign

# One qrels for topics 1 and 2: d1..d4 relevant, d5..d8 not.
QRELS = "".join(f"{t} 0 d{i} {int(i <= 4)}\n" for t in ("1", "2") for i in range(1, 9))
RUNS = {  # team index, run name, ranked docs per topic
    ("a", "a1"): {"1": ["d1", "d5", "d2", "d6"], "2": ["d3", "d4", "d7"]},
    ("a", "a2"): {"1": ["d1", "d8"], "2": ["d7", "d3"]},
    ("b", "b1"): {"1": ["d2", "d3", "d7"], "2": ["d4", "d1", "d2"]},
}


def run_file(ranked: dict[str, list[str]], tag: str) -> str:
    """A TREC run of the ranked docs (scores descending)."""
    return "".join(f"{t} Q0 {d} {r + 1} {10 - r} {tag}\n" for t, docs in ranked.items() for r, d in enumerate(docs))


@pytest.fixture(scope="module")
def campaign(client, organiser):  # type: ignore[no-untyped-def]
    """An evaluated campaign of three runs by two teams (team_results `own`, unpublished); (id, tokens by team)."""
    handle = new_campaign(client, organiser, 2, max_results=10)
    teams = {key: handle.team(f"team-{key}-{handle.id}") for key in ("a", "b")}
    for (team, name), ranked in RUNS.items():
        response = handle.upload(teams[team][1], run_file(ranked, name), name=name)
        assert response.status_code == 201, response.text
    client.post(
        f"/api/campaigns/{handle.id}/qrels",
        data={"label": "q"},
        files={"file": ("q", QRELS.encode())},
        headers=organiser,
    )
    assert client.post(f"/api/campaigns/{handle.id}/close", headers=organiser).status_code == 200
    evaluate_campaign(client, organiser, handle.id, measures=["AP", "P@5"])
    runs = {r["name"]: r["id"] for r in client.get(f"/api/campaigns/{handle.id}/runs", headers=organiser).json()}
    tokens = {team: headers["Authorization"].split()[1] for team, (_, headers) in teams.items()}
    return handle.id, tokens, runs


def test_recall_precision_is_the_hand_worked_trec_eval_curve(campaign, sessions):  # type: ignore[no-untyped-def]
    _, tokens, runs = campaign
    with sessions() as session:
        report = team_reports.run_report(session, authenticate(session, tokens["a"]), runs["a1"])
    curve = report["recall_precision"]
    # by hand: topic 1 finds d1 (P=1) and d2 at rank 3 (P=2/3); topic 2 d3, d4 at ranks 1, 2 (P=1); R=4 each, and
    # trec_eval 10 needs lround(level x 4) relevant shots: 0.3 -> 1, 0.4..0.6 -> 2, 0.7.. -> 3 (neither topic has 3).
    # (pytrec_eval's trec_eval 9 asks recall >= level instead, and differs at 0.3 and 0.6.)
    assert curve["precision"][:4] == pytest.approx([1.0] * 4)
    assert curve["precision"][4:7] == pytest.approx([(2 / 3 + 1) / 2] * 3)
    assert curve["precision"][7:] == pytest.approx([0.0] * 4)


def test_only_this_run_and_only_this_team_counts(campaign, sessions):  # type: ignore[no-untyped-def]
    _, tokens, runs = campaign
    with sessions() as session:
        report = team_reports.run_report(session, authenticate(session, tokens["a"]), runs["a1"])
    found = {t["topic"]: t for t in report["found_only_here"]["topics"]}
    # topic 1: a1 finds d1, d2; a2 finds d1 (same team), b1 d2, d3 -> nothing only a1's; d1 only team a's
    assert (found["1"]["found"], found["1"]["only_this_run"], found["1"]["only_this_team"]) == (2, 0, 1)
    # topic 2: a1 finds d3, d4; a2 d3 (same team); b1 d4, d1, d2 -> none only a1's, d3 only team a's
    assert (found["2"]["found"], found["2"]["only_this_run"], found["2"]["only_this_team"]) == (2, 0, 1)
    assert found["1"]["relevant"] == found["2"]["relevant"] == 4
    with sessions() as session:
        b1 = team_reports.run_report(session, authenticate(session, tokens["b"]), runs["b1"])["found_only_here"]
    # b1: topic 1 d2, d3 (d3 no one else: only this run and team), topic 2 d4, d1, d2 (d1, d2 only b1)
    assert (b1["found"], b1["only_this_run"], b1["only_this_team"]) == (5, 3, 3)


def test_summary_and_per_topic_against_median_and_best(campaign, sessions):  # type: ignore[no-untyped-def]
    _, tokens, runs = campaign
    with sessions() as session:
        report = team_reports.run_report(session, authenticate(session, tokens["a"]), runs["a1"], "AP")
    # AP of a1: topic 1 (1 + 2/3) / 4, topic 2 (1 + 1) / 4; a2: 1/4, 1/2 x 1/4... computed by pytrec_eval
    qrels = {t: {f"d{i}": int(i <= 4) for i in range(1, 9)} for t in ("1", "2")}
    aps = {}
    for (_, name), ranked in RUNS.items():
        run = {t: {d: float(10 - r) for r, d in enumerate(docs)} for t, docs in ranked.items()}
        aps[name] = pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(run)
    assert report["summary"]["score"] == pytest.approx(np.mean([aps["a1"][t]["map"] for t in ("1", "2")]))
    assert "n_runs" not in report["summary"]  # no count of the others' runs beyond the chart's
    for point in report["versus"]["topics"]:
        values = [aps[name][point["topic"]]["map"] for name in ("a1", "a2", "b1")]
        assert point["score"] == pytest.approx(aps["a1"][point["topic"]]["map"])
        assert point["median"] == pytest.approx(np.median(values))
        assert point["best"] == pytest.approx(max(values))
    assert "b1" not in repr(report)  # no other run is named


def test_another_team_s_run_and_hidden_results_are_refused(campaign, sessions, client, organiser):  # type: ignore[no-untyped-def]
    cid, tokens, runs = campaign
    with sessions() as session:
        with pytest.raises(NotFound):
            team_reports.run_report(session, authenticate(session, tokens["a"]), runs["b1"])
    client.patch(f"/api/campaigns/{cid}", json={"team_results": "hidden"}, headers=organiser)
    try:
        with sessions() as session:
            with pytest.raises(Forbidden):
                team_reports.run_report(session, authenticate(session, tokens["a"]), runs["a1"])
            home = team_reports.console(session, authenticate(session, tokens["a"]))
            assert home["results"]["available"] is False
            assert [r["name"] for r in home["runs"]] == ["a1", "a2"]
    finally:
        client.patch(f"/api/campaigns/{cid}", json={"team_results": "own"}, headers=organiser)


def test_bundle_holds_every_run_of_the_team(campaign, sessions):  # type: ignore[no-untyped-def]
    _, tokens, runs = campaign
    with sessions() as session:
        bundle = team_reports.bundle(session, authenticate(session, tokens["a"]))
    assert [r["run"]["name"] for r in bundle["reports"]] == ["a1", "a2"]
    assert all(r["evaluated"] for r in bundle["reports"])
