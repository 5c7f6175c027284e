"""What each role sees of the scores before and after publication (SPEC section 7), and one rule for every board:
a filtered board, live or published, ranks within the filters and takes each topic's best and median among them."""

from __future__ import annotations

import csv
import io
import itertools
import json

import numpy as np
import pytest

from app.api.leaderboards import Leaderboard, Significance
from tests.api.helpers import (
    TEAM_MEASURES,
    TEAM_NAMES,
    TEAM_RUNS,
    TEAM_TOPICS,
    make_assessor,
    team_results_campaign,
)


@pytest.fixture(scope="module")
def own_campaign(client, organiser):  # type: ignore[no-untyped-def]
    """An evaluated campaign with the default setting (`own`), not published."""
    return team_results_campaign(client, organiser)


@pytest.fixture(scope="module")
def hidden_campaign(client, organiser):  # type: ignore[no-untyped-def]
    """An evaluated campaign created with `team_results: hidden`, not published."""
    return team_results_campaign(client, organiser, team_results="hidden")


def board(client, cid, headers=None, public=False, **query):  # type: ignore[no-untyped-def]
    """GET a leaderboard (live, or public) with query parameters; returns the response."""
    path = f"/api/public/campaigns/{cid}/leaderboard" if public else f"/api/campaigns/{cid}/leaderboard"
    params = {k: (str(v).lower() if isinstance(v, bool) else v) for k, v in query.items() if v is not None}
    return client.get(path, params=params, headers=headers or {})


def test_the_setting_on_create_patch_and_read(client, organiser, own_campaign, hidden_campaign):
    own, _ = own_campaign
    hidden, teams = hidden_campaign
    assert client.get(f"/api/campaigns/{own}", headers=organiser).json()["team_results"] == "own"
    assert client.get(f"/api/campaigns/{hidden}", headers=teams[0]).json()["team_results"] == "hidden"
    path = f"/api/campaigns/{own}"
    for bad in ("bogus", None, "OWN"):
        response = client.patch(path, json={"team_results": bad}, headers=organiser)
        assert response.status_code == 422, (bad, response.text)
    assert client.patch(path, json={"team_results": "hidden"}, headers=teams[0]).status_code == 403
    assert client.patch(path, json={"team_results": "hidden"}, headers=organiser).json()["team_results"] == "hidden"
    assert board(client, own, organiser).status_code == 200
    assert client.patch(path, json={"team_results": "own"}, headers=organiser).json()["team_results"] == "own"
    bad = client.post(
        "/api/campaigns", json={"name": "x-bad-setting", "task_kind": "shots", "team_results": "all"}, headers=organiser
    )
    assert bad.status_code == 422


def passing(filters: dict[str, object]) -> list[tuple]:
    """The TEAM_RUNS entries that pass the filters."""
    fields = ("system_type", "training_type", "novelty")
    return [r for r in TEAM_RUNS if all(dict(zip(fields, r[2:5], strict=True))[k] == v for k, v in filters.items())]


def _others(team: int) -> list[str]:
    """Names of the runs and teams a team must not see."""
    return [r[1] for r in TEAM_RUNS if r[0] != team] + [t for i, t in enumerate(TEAM_NAMES) if i != team]


def test_own_a_team_sees_its_runs_and_topic_best_and_median_nothing_else(client, organiser, own_campaign):
    cid, teams = own_campaign
    full = board(client, cid, organiser).json()
    assert full["published"] is False and len(full["rows"]) == len(TEAM_RUNS)
    for team, headers in enumerate(teams):
        mine = sorted(r[1] for r in TEAM_RUNS if r[0] == team)
        for measure in (None, *TEAM_MEASURES):
            response = board(client, cid, headers, measure=measure)
            assert response.status_code == 200, response.text
            seen = response.json()
            Leaderboard.model_validate(seen)  # what the OpenAPI documents
            assert seen["team_results"] == "own" and seen["published"] is False
            assert sorted(r["run"] for r in seen["rows"]) == mine
            assert all("rank" not in r for r in seen["rows"])
            scores = [r["score"] for r in seen["rows"]]
            assert scores == sorted(scores, reverse=True)
            # every measure, mean and per topic; the mean is the mean over the topics (all are answered)
            expected = {r["run"]: r["scores"] for r in board(client, cid, organiser, measure=measure).json()["rows"]}
            for row in seen["rows"]:
                assert row["scores"] == expected[row["run"]]
                assert set(row["per_topic"]) == set(TEAM_MEASURES)
                for m in TEAM_MEASURES:
                    assert len(row["per_topic"][m]) == TEAM_TOPICS
                    assert np.mean(list(row["per_topic"][m].values())) == pytest.approx(row["scores"][m], abs=1e-12)
            # per topic: best and median over ALL runs (the organiser's unfiltered board), and its own values
            reference = {t["topic"]: t for t in board(client, cid, organiser, measure=measure).json()["per_topic"]}
            assert [t["topic"] for t in seen["per_topic"]] == list(reference)
            for entry in seen["per_topic"]:
                assert set(entry) == {"topic", "best", "median", "runs"}
                assert (entry["best"], entry["median"]) == (
                    reference[entry["topic"]]["best"],
                    reference[entry["topic"]]["median"],
                )
                assert sorted(entry["runs"]) == mine
                assert all(v <= entry["best"] for v in entry["runs"].values())
            # nothing of another run or team, in any format
            texts = [
                response.text,
                board(client, cid, headers, measure=measure, format="csv").text,
                board(client, cid, headers, measure=measure, format="topics.csv").text,
            ]
            for text in texts:
                assert not any(name in text for name in _others(team)), text[:300]
            assert "rank" not in json.dumps(seen["rows"])
            table = list(csv.DictReader(io.StringIO(texts[1])))
            assert sorted(r["run"] for r in table) == mine and {r["rank"] for r in table} == {""}


def test_own_filters_pick_own_rows_but_not_the_topic_reference(client, organiser, own_campaign):
    cid, teams = own_campaign
    unfiltered = board(client, cid, teams[1]).json()
    for query in ({"system_type": "M"}, {"system_type": "R"}, {"novelty": True}, {"training_type": "D"}):
        seen = board(client, cid, teams[1], **query).json()
        key, value = next(iter(query.items()))
        assert [r["run"] for r in seen["rows"]] == [r["run"] for r in unfiltered["rows"] if r[key] == value]
        # a narrow filter must not single out another run's score: best and median stay over all runs
        assert [(t["best"], t["median"]) for t in seen["per_topic"]] == [
            (t["best"], t["median"]) for t in unfiltered["per_topic"]
        ]


def test_hidden_a_team_sees_nothing_before_publication(client, organiser, hidden_campaign):
    cid, teams = hidden_campaign
    for headers in teams:
        for fmt in ("json", "csv", "topics.csv"):
            response = board(client, cid, headers, format=fmt)
            assert response.status_code == 403, response.text
            assert not any(r[1] in response.text for r in TEAM_RUNS)
    assert len(board(client, cid, organiser).json()["rows"]) == len(TEAM_RUNS)
    assert client.get(f"/api/campaigns/{cid}/significance", headers=teams[0]).status_code == 403


def test_assessor_other_campaign_and_public_see_nothing(client, organiser, own_campaign, hidden_campaign):
    for cid, _ in (own_campaign, hidden_campaign):
        _, assessor = make_assessor(client, organiser, type("C", (), {"id": cid})(), f"judge-{cid}")
        assert board(client, cid, assessor).status_code == 403
        assert client.get(f"/api/campaigns/{cid}/significance", headers=assessor).status_code == 403
        other = own_campaign if cid != own_campaign[0] else hidden_campaign
        assert board(client, cid, other[1][0]).status_code == 404  # a team of another campaign
        assert board(client, cid, public=True).status_code == 404
        assert client.get(f"/api/public/campaigns/{cid}/significance").status_code == 404
        assert board(client, cid).status_code == 401


FILTERS = [
    {},
    *({"system_type": t} for t in "FMR"),
    *({"training_type": t} for t in "AD"),
    {"novelty": True},
    {"novelty": False},
    {"system_type": "M", "novelty": False},
    {"system_type": "F", "training_type": "A"},
    {"system_type": "X"},
]


@pytest.mark.parametrize("team_results", ["own", "hidden"])
def test_after_publication_every_role_sees_the_published_board(client, organiser, team_results):
    cid, teams = team_results_campaign(client, organiser, team_results=team_results)
    # before: each team's own per-topic values put together give every run's values (only with `own`)
    values: dict[str, dict[str, dict[str, float]]] = {}
    if team_results == "own":
        for headers in teams:
            for row in board(client, cid, headers).json()["rows"]:
                values[row["run"]] = row["per_topic"]
    live = {
        (json.dumps(q), m): board(client, cid, organiser, measure=m, **q).json() for q in FILTERS for m in TEAM_MEASURES
    }
    assert client.post(f"/api/campaigns/{cid}/publish", json={}, headers=organiser).status_code == 201
    for (query, measure), live_board in live.items():
        filters = json.loads(query)
        public = board(client, cid, public=True, measure=measure, **filters)
        assert public.status_code == 200
        Leaderboard.model_validate(public.json())
        assert public.json() == {**live_board, "published": True}, (filters, measure)
        for headers in teams:  # a team now sees the published board, whatever the setting
            assert board(client, cid, headers, measure=measure, **filters).json() == public.json()
        for fmt in ("csv", "topics.csv"):
            assert (
                board(client, cid, public=True, measure=measure, format=fmt, **filters).text
                == board(client, cid, organiser, measure=measure, format=fmt, **filters).text
            )
        # the rule: ranks restart at 1 within the filters, best and median among the filtered runs only
        rows = live_board["rows"]
        assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
        kept = passing(filters)
        assert sorted(r["run"] for r in rows) == sorted(r[1] for r in kept)
        if values:
            for entry in live_board["per_topic"]:
                scores = {r[1]: values[r[1]][measure][entry["topic"]] for r in kept}
                if not scores:
                    assert entry == {"topic": entry["topic"], "best_run": None, "best": None, "median": None}
                    continue
                assert entry["best"] == pytest.approx(max(scores.values()), abs=1e-12)
                assert scores[entry["best_run"]] == entry["best"]
                assert entry["median"] == pytest.approx(float(np.median(list(scores.values()))), abs=1e-12)


def test_significance_honours_the_filters_live_and_public(client, organiser):
    cid, teams = team_results_campaign(client, organiser)
    live = {}
    for query in FILTERS:
        response = client.get(f"/api/campaigns/{cid}/significance", params=query, headers=organiser)
        assert response.status_code == 200, response.text
        result = response.json()
        Significance.model_validate(result)
        kept = {r[1] for r in passing(query)}
        assert set(result["runs"]) == kept and set(itertools.chain(*result["groups"])) == kept
        expected = [r["run"] for r in board(client, cid, organiser, **query).json()["rows"]]
        assert result["runs"] == expected  # the board's order
        live[json.dumps(query)] = result
    assert client.get(f"/api/campaigns/{cid}/significance", headers=teams[0]).status_code == 403
    assert client.post(f"/api/campaigns/{cid}/publish", json={}, headers=organiser).status_code == 201
    for query, result in live.items():
        public = client.get(f"/api/public/campaigns/{cid}/significance", params=json.loads(query))
        assert public.status_code == 200 and public.json() == result, query
