"""Run upload: every validation rule answers 4xx naming the line or field, and stores nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from sqlalchemy import func, select

from app.storage.models import Run


def trec(rows: list[tuple[str, str, float]], tag: str = "r1") -> str:
    """A TREC run from (topic, doc, score) rows, ranks in row order."""
    return "".join(f"{t} Q0 {d} {i + 1} {s} {tag}\n" for i, (t, d, s) in enumerate(rows))


def lines_of(response) -> list[int]:
    return [e["line"] for e in response.json()["errors"]]


def count_runs(sessions, campaign_id: int) -> int:
    with sessions() as session:
        return session.scalar(select(func.count()).select_from(Run).where(Run.campaign_id == campaign_id))


def test_valid_run_is_stored(make_campaign):
    campaign = make_campaign()
    _, team = campaign.team()
    response = campaign.upload(
        team,
        trec([("1", "a", 3.0), ("1", "b", 2.0), ("2", "a", 1.5)]),
        name="good",
        system_type="M",
        novelty="true",
        training_type="A",
        priority=2,
        description="bm25",
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert (
        body["n_entries"],
        body["n_topics"],
        body["tag"],
        body["system_type"],
        body["novelty"],
        body["training_type"],
        body["priority"],
    ) == (3, 2, "r1", "M", True, "A", 2)


def test_wrong_column_count(make_campaign):
    campaign = make_campaign()
    _, team = campaign.team()
    response = campaign.upload(team, "1 Q0 a 1 2.0 r1\n1 Q0 b 2 1.0\n1 Q0 c 3 0.5 r1 extra\n")
    assert response.status_code == 422
    assert lines_of(response) == [2, 3]
    assert "column" in response.json()["errors"][0]["message"]


@pytest.mark.parametrize("score", ["abc", "nan", "inf", "-inf"])
def test_bad_scores(make_campaign, score):
    campaign = make_campaign()
    _, team = campaign.team()
    response = campaign.upload(team, f"1 Q0 a 1 1.0 r1\n1 Q0 b 2 {score} r1\n")
    assert response.status_code == 422
    assert lines_of(response) == [2]


def test_unknown_topic(make_campaign):
    campaign = make_campaign(n_topics=2)
    _, team = campaign.team()
    response = campaign.upload(team, trec([("1", "a", 1.0), ("99", "b", 1.0), ("99", "c", 0.5)]))
    assert response.status_code == 422
    assert lines_of(response) == [2]
    assert "99" in response.json()["errors"][0]["message"]


def test_duplicate_shot_within_topic(make_campaign):
    campaign = make_campaign()
    _, team = campaign.team()
    response = campaign.upload(team, trec([("1", "a", 3.0), ("1", "b", 2.0), ("1", "a", 1.0), ("2", "a", 1.0)]))
    assert response.status_code == 422
    assert lines_of(response) == [3]
    assert "1" in response.json()["errors"][0]["message"]


def test_more_than_max_results(make_campaign):
    campaign = make_campaign(max_results=3)
    _, team = campaign.team()
    response = campaign.upload(team, trec([("1", d, 1.0 / (i + 1)) for i, d in enumerate("abcd")]))
    assert response.status_code == 422
    assert "more than the 3" in response.json()["errors"][0]["message"]


def test_mixed_run_tags(make_campaign):
    campaign = make_campaign()
    _, team = campaign.team()
    response = campaign.upload(team, "1 Q0 a 1 2.0 r1\n1 Q0 b 2 1.0 r2\n")
    assert response.status_code == 422
    assert lines_of(response) == [2]


def test_empty_file(make_campaign):
    campaign = make_campaign()
    _, team = campaign.team()
    response = campaign.upload(team, "\n  \n")
    assert response.status_code == 422
    assert "no results" in response.json()["errors"][0]["message"]


def test_non_utf8_bytes(make_campaign):
    campaign = make_campaign()
    _, team = campaign.team()
    response = campaign.upload(team, b"1 Q0 a 1 2.0 r1\n1 Q0 \xff\xfe 2 1.0 r1\n")
    assert response.status_code == 422
    assert lines_of(response) == [2]


def test_all_errors_of_a_file_at_once(make_campaign, sessions):
    campaign = make_campaign()
    _, team = campaign.team()
    response = campaign.upload(team, "1 Q0 a 1 x r1\n1 Q0 b 2\n1 Q0 c 3 nan r1\n1 Q0 d 4 1.0 r1\n")
    assert response.status_code == 422
    assert lines_of(response) == [1, 2, 3]
    assert count_runs(sessions, campaign.id) == 0


def test_error_list_is_capped(make_campaign, client):
    campaign = make_campaign()
    _, team = campaign.team()
    response = campaign.upload(team, "".join(f"1 Q0 d{i} {i} x r1\n" for i in range(200)))
    assert response.status_code == 422
    assert len(response.json()["errors"]) == client.app.state.settings.max_errors


def test_shot_not_in_collection_leaves_nothing(make_campaign, sessions):
    campaign = make_campaign()
    assert campaign.set_collection("a v1 0 1\nb v1 1 2\n").status_code == 200
    _, team = campaign.team()
    response = campaign.upload(team, trec([("1", "a", 3.0), ("1", "zz", 2.0), ("2", "b", 1.0), ("2", "yy", 0.5)]))
    assert response.status_code == 422
    assert lines_of(response) == [2, 4]
    assert count_runs(sessions, campaign.id) == 0


def test_file_over_size_limit_is_413(make_campaign, client, monkeypatch):
    campaign = make_campaign()
    _, team = campaign.team()
    monkeypatch.setattr(client.app.state.settings, "max_upload_bytes", 100)
    response = campaign.upload(team, trec([("1", f"d{i}", 1.0) for i in range(20)]))
    assert response.status_code == 413


def test_run_name_reused_is_409(make_campaign):
    campaign = make_campaign()
    _, team = campaign.team()
    assert campaign.upload(team, trec([("1", "a", 1.0)]), name="same").status_code == 201
    assert campaign.upload(team, trec([("1", "a", 1.0)]), name="same").status_code == 409
    _, other = campaign.team()
    assert campaign.upload(other, trec([("1", "a", 1.0)]), name="same").status_code == 201


def test_too_many_runs(make_campaign):
    campaign = make_campaign(max_runs_per_team=2)
    _, team = campaign.team()
    for name in ("r1", "r2"):
        assert campaign.upload(team, trec([("1", "a", 1.0)]), name=name).status_code == 201
    response = campaign.upload(team, trec([("1", "a", 1.0)]), name="r3")
    assert response.status_code == 409
    assert "2 runs" in response.json()["detail"]


def test_closed_window_is_403(make_campaign, client, organiser):
    campaign = make_campaign()
    _, team = campaign.team()
    client.post(f"/api/campaigns/{campaign.id}/close", headers=organiser)
    assert campaign.upload(team, trec([("1", "a", 1.0)])).status_code == 403
    late = make_campaign(submission_opens_at="2020-01-01T00:00:00Z", submission_closes_at="2021-01-01T00:00:00Z")
    _, late_team = late.team()
    assert late.upload(late_team, trec([("1", "a", 1.0)])).status_code == 403
    assert campaign.upload(team, trec([("1", "a", 1.0)])).json()["detail"].startswith("the submission window")


def test_not_yet_open_is_403(make_campaign):
    campaign = make_campaign(open_=False)
    _, team = campaign.team()
    assert campaign.upload(team, trec([("1", "a", 1.0)])).status_code == 403


@pytest.mark.parametrize(
    ("field", "value"), [("system_type", "X"), ("training_type", "Z"), ("priority", "0"), ("name", "has space")]
)
def test_bad_metadata_names_the_field(make_campaign, field, value):
    campaign = make_campaign()
    _, team = campaign.team()
    form = {field: value} if field != "name" else {}
    response = campaign.upload(team, trec([("1", "a", 1.0)]), name=value if field == "name" else None, **form)
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == field


def test_trecvid_xml_run(make_campaign, client):
    campaign = make_campaign()
    _, team = campaign.team()
    xml = (
        '<?xml version="1.0"?>\n<videoAdhocSearchResults>\n'
        '<videoAdhocSearchRunResult pType="F" pid="team1" priority="1" trType="D" novelty="N" desc="x">\n'
        '<videoAdhocSearchTopicResult tNum="1" elapsedTime="1.0">\n'
        '<item seqNum="1" shotId="a"/>\n<item seqNum="2" shotId="b"/>\n'
        '</videoAdhocSearchTopicResult>\n<videoAdhocSearchTopicResult tNum="2" elapsedTime="1.0">\n'
        '<item seqNum="1" shotId="c"/>\n</videoAdhocSearchTopicResult>\n'
        "</videoAdhocSearchRunResult>\n</videoAdhocSearchResults>\n"
    )
    response = campaign.upload(team, xml, name="xmlrun")
    assert response.status_code == 201, response.text
    assert (response.json()["format"], response.json()["n_entries"], response.json()["n_topics"]) == ("xml", 3, 2)
    download = client.get(f"/api/runs/{response.json()['id']}/download", headers=team).text.split("\n")
    assert [line.split()[:4] for line in download if line] == [
        ["1", "Q0", "a", "1"],
        ["1", "Q0", "b", "2"],
        ["2", "Q0", "c", "1"],
    ]


def test_download_round_trip_1000_by_50(make_campaign, client):
    campaign = make_campaign(n_topics=50)
    _, team = campaign.team()
    rng = np.random.default_rng(7)
    lines = []
    for topic in campaign.topics:
        scores = np.sort(rng.normal(size=1000))[::-1]
        shots = rng.choice(100_000, size=1000, replace=False)
        lines += [
            f"{topic} Q0 shot{s}_{s % 7} {r + 1} {repr(float(v))} roundtrip"
            for r, (s, v) in enumerate(zip(shots, scores, strict=True))
        ]
    original = "\n".join(lines) + "\n"
    response = campaign.upload(team, original, name="roundtrip")
    assert response.status_code == 201, response.text
    assert response.json()["n_entries"] == 50_000
    downloaded = client.get(f"/api/runs/{response.json()['id']}/download", headers=team)
    assert downloaded.status_code == 200
    assert downloaded.text.split() == original.split()


def test_the_window_is_closed_at_exactly_its_closing_time(make_campaign, monkeypatch):
    """A run arriving at exactly `submission_closes_at` is refused, one a microsecond earlier is taken; the window
    opens at exactly `submission_opens_at`. The service's clock is set to each instant."""
    from app.services import runs

    opens, closes = datetime(2030, 1, 1, tzinfo=UTC), datetime(2030, 2, 1, 12, 0, tzinfo=UTC)
    campaign = make_campaign(submission_opens_at=opens.isoformat(), submission_closes_at=closes.isoformat())
    _, team = campaign.team()
    tick = timedelta(microseconds=1)
    for now, status in ((opens - tick, 403), (opens, 201), (closes - tick, 201), (closes, 403), (closes + tick, 403)):
        monkeypatch.setattr(runs, "_now", lambda now=now: now)
        response = campaign.upload(team, trec([("1", "a", 1.0)]))
        assert response.status_code == status, (now, response.text)
        if status == 403:
            assert response.json()["detail"] == "the submission window of this campaign is closed"


def test_no_one_deletes_a_run_once_the_campaign_has_a_pool(make_campaign, client, organiser, sessions):
    campaign = make_campaign()
    _, team = campaign.team()
    ids = [campaign.upload(team, trec([("1", "a", 2.0), ("2", "b", 1.0)]), name=n).json()["id"] for n in "xyz"]
    assert client.delete(f"/api/runs/{ids[2]}", headers=team).status_code == 204  # while open: the team may
    assert client.post(f"/api/campaigns/{campaign.id}/close", headers=organiser).status_code == 200
    assert client.delete(f"/api/runs/{ids[1]}", headers=team).status_code == 403  # closed: the team may not
    pool = client.post(f"/api/campaigns/{campaign.id}/pools", json={"kind": "depth", "depth": 1}, headers=organiser)
    assert pool.status_code == 201, pool.text
    for headers in (organiser, team):
        response = client.delete(f"/api/runs/{ids[0]}", headers=headers)
        assert response.status_code == 409, response.text
        assert response.json()["detail"] == (
            f"run 'x' cannot be deleted: campaign {campaign.id} has 1 pool(s) built from its runs "
            f"(pool {pool.json()['id']}), and judgements and scores rest on them"
        )
    assert count_runs(sessions, campaign.id) == 2
