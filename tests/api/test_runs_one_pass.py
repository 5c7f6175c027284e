"""Run uploads over REST: one upload reports every error of every kind (syntax, unknown topics, overflowing topics,
shots outside the collection, metadata), each at its line, sorted by line, up to the cap, and stores nothing; TRECVID
XML runs give their metadata (the form overrides it) and their per-topic elapsed times, shown with the run."""

from __future__ import annotations

from sqlalchemy import func, select

from app.storage.models import Run


def count_runs(sessions, campaign_id: int) -> int:
    with sessions() as session:
        return session.scalar(select(func.count()).select_from(Run).where(Run.campaign_id == campaign_id))


def errors_of(response) -> list[tuple[int | None, str]]:
    return [(e.get("line"), e["message"]) for e in response.json()["errors"]]


def test_one_upload_reports_every_kind_of_error_at_its_line(make_campaign, sessions):
    campaign = make_campaign(n_topics=2, max_results=3)
    assert campaign.set_collection("a v1 0 1\nb v1 1 2\nc v1 2 3\nd v1 3 4\ne v1 4 5\n").status_code == 200
    _, team = campaign.team()
    run = (
        "1 Q0 a 1 5 t\n"  # 1
        "1 Q0 b 2 4 t\n"  # 2
        "9 Q0 a 1 9 t\n"  # 3: unknown topic
        "1 Q0 zz 3 3 t\n"  # 4: shot not in the collection
        "1 Q0 c x 2 t\n"  # 5: bad rank
        "2 Q0 a 1 1 t\n"  # 6
        "1 Q0 d 5 1 t\n"  # 7: the 4th result of topic 1, past max_results = 3
        "1 Q0 e 6 0.5\n"  # 8: five columns
        "1 Q0 e 7 0.2 t\n"  # 9: topic 1 goes on
    )
    response = campaign.upload(team, run)
    assert response.status_code == 422, response.text
    found = errors_of(response)
    assert [line for line, _ in found] == [3, 4, 5, 7, 8]
    assert "unknown topic '9'" in found[0][1]
    assert found[1][1] == "shot 'zz' is not in the collection"
    assert "rank 'x'" in found[2][1]
    assert found[3][1] == "topic '1' has 5 results, more than the 3 allowed: result 4 here"
    assert "expected 6 columns" in found[4][1]
    assert response.json()["detail"] == "run file has 5 error(s); nothing was stored"
    assert count_runs(sessions, campaign.id) == 0


def test_the_first_errors_by_line_up_to_the_cap_whatever_their_kind(make_campaign, client, monkeypatch):
    monkeypatch.setattr(client.app.state.settings, "max_errors", 4)
    campaign = make_campaign(n_topics=1)
    _, team = campaign.team()
    lines = [f"{'7' if i % 3 == 0 else '1'} Q0 d{i} {'x' if i % 3 == 1 else i} 1 t" for i in range(30)]
    response = campaign.upload(team, "\n".join(lines) + "\n")
    assert response.status_code == 422
    found = errors_of(response)
    assert [line for line, _ in found] == [1, 2, 5, 8]  # unknown topic '7' once, at its first line; bad ranks
    assert "unknown topic '7'" in found[0][1]
    assert response.json()["detail"] == "run file has at least 5 errors (showing the first 4); nothing was stored"


def test_metadata_and_file_errors_come_in_one_answer(make_campaign):
    campaign = make_campaign()
    _, team = campaign.team()
    xml = XML.format(cls="Q", priority="1", elapsed="1").replace('shotId="b"', 'shotId=""')
    response = campaign.upload(team, xml)
    assert response.status_code == 422
    body = response.json()
    assert body["errors"][0] == {
        "field": "system_type",
        "message": "the XML run's class='Q' is not one of F, M, R (the form's system_type would override it)",
    }
    assert body["errors"][1] == {"line": 7, "message": "<item> has no shotId attribute"}
    assert body["detail"] == "invalid run metadata; run file has 1 error(s); nothing was stored"


XML = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE videoAdhocSearchResults SYSTEM "https://www-nlpir.nist.gov/projects/tv2021/dtds/videoAdhocSearchResults.dtd">
<videoAdhocSearchResults>
<videoAdhocSearchRunResult trType="E" class="{cls}" novelty="N" pid="TEAM" priority="{priority}" desc="fusion">
<videoAdhocSearchTopicResult tNum="1" elapsedTime="{elapsed}">
<item seqNum="1" shotId="a"/>
<item seqNum="2" shotId="b"/>
</videoAdhocSearchTopicResult>
<videoAdhocSearchTopicResult tNum="2" elapsedTime="12.25">
<item seqNum="1" shotId="c"/>
</videoAdhocSearchTopicResult>
</videoAdhocSearchRunResult>
</videoAdhocSearchResults>
"""


def test_an_xml_runs_attributes_are_its_metadata_and_its_elapsed_times_are_shown(make_campaign, client):
    campaign = make_campaign()
    _, team = campaign.team()
    extra = '<videoAdhocSearchTopicResult tNum="77" elapsedTime="1"/>\n</videoAdhocSearchRunResult>'
    xml = XML.format(cls="M", priority="2", elapsed="30").replace("</videoAdhocSearchRunResult>", extra)
    response = campaign.upload(team, xml, name="from-xml")  # topic 77 (no results) is not the campaign's: not kept
    assert response.status_code == 201, response.text
    body = response.json()
    assert (body["system_type"], body["training_type"], body["novelty"], body["priority"], body["description"]) == (
        "M",
        "E",
        True,
        2,
        "fusion",
    )
    assert body["elapsed_seconds"] == {"1": 30.0, "2": 12.25}
    shown = client.get(f"/api/runs/{body['id']}", headers=team).json()
    assert shown["elapsed_seconds"] == {"1": 30.0, "2": 12.25}
    listed = client.get(f"/api/campaigns/{campaign.id}/runs", headers=team).json()
    assert [r["elapsed_seconds"] for r in listed] == [{"1": 30.0, "2": 12.25}]


def test_the_form_overrides_the_xml_attributes_field_by_field(make_campaign):
    campaign = make_campaign()
    _, team = campaign.team()
    xml = XML.format(cls="bogus", priority="2", elapsed="30")  # overridden, so its bad class is no error
    response = campaign.upload(team, xml, system_type="F", novelty="false", description="mine")
    assert response.status_code == 201, response.text
    body = response.json()
    assert (body["system_type"], body["novelty"], body["description"]) == ("F", False, "mine")
    assert (body["training_type"], body["priority"]) == ("E", 2)  # not given: from the XML


def test_a_trec_run_gets_the_defaults_and_no_elapsed_times(make_campaign):
    campaign = make_campaign()
    _, team = campaign.team()
    response = campaign.upload(team, "1 Q0 a 1 1 t\n")
    assert response.status_code == 201
    body = response.json()
    assert (body["system_type"], body["novelty"], body["training_type"], body["priority"], body["description"]) == (
        "F",
        False,
        "D",
        1,
        "",
    )
    assert body["elapsed_seconds"] is None


def test_a_bad_elapsed_time_or_priority_in_xml_is_named(make_campaign, sessions):
    campaign = make_campaign()
    _, team = campaign.team()
    response = campaign.upload(team, XML.format(cls="F", priority="0", elapsed="soon"))
    assert response.status_code == 422
    assert response.json()["errors"] == [
        {
            "field": "priority",
            "message": "the XML run's priority='0' is not an integer from 1 to 2147483647 "
            "(the form's priority would override it)",
        },
        {"line": 5, "message": "elapsedTime 'soon' of topic '1' is not a number of seconds >= 0"},
    ]
    assert count_runs(sessions, campaign.id) == 0


def test_a_moment_run_reports_bad_lines_and_unknown_topics_at_once(make_campaign):
    campaign = make_campaign(task_kind="moments", n_topics=2)
    _, team = campaign.team()
    response = campaign.upload(team, "1\tv1\t0\t5\t0.9\n7\tv1\t0\t5\t0.8\n2\tv1\t5\t1\t0.7\n", format="moments")
    assert response.status_code == 422
    assert [e["line"] for e in response.json()["errors"]] == [2, 3]
    assert "unknown topic '7'" in response.json()["errors"][0]["message"]
