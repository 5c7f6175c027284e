"""Qrels with topics left unjudged: a cut of a pool with nothing judged, or of a moment truth with a topic
unmarked, says how much is unjudged (409) unless asked to go ahead; an evaluation on qrels that judge nothing
publishes, tests significance and reports (no 500); every board names the topics without judgements; one run gets
no 'α =' heading."""

from __future__ import annotations

from tests.api.helpers import ANN, judge_all, make_assessor, setup_campaign, wait_done

UNJUDGED = "Incomplete judgements"


def _evaluate(client, organiser, campaign_id: int, **body: object) -> dict:  # type: ignore[no-untyped-def]
    started = client.post(f"/api/campaigns/{campaign_id}/evaluations", json=body, headers=organiser)
    assert started.status_code == 202, started.text
    return wait_done(client, organiser, started.json()["id"])


def test_qrels_that_judge_nothing_evaluate_test_report_and_publish_with_a_warning(make_campaign, client, organiser):
    campaign, _ = setup_campaign(make_campaign, client, organiser, n_runs=3, depth=20, seed=1)
    pool = client.post(
        f"/api/campaigns/{campaign.id}/pools", json={"kind": "depth", "depth": 5, "seed": 1}, headers=organiser
    ).json()
    cut = client.post(
        f"/api/pools/{pool['id']}/qrels", json={"label": "empty", "allow_incomplete": True}, headers=organiser
    )
    assert cut.status_code == 201 and cut.json()["n_entries"] == 0, cut.text
    _evaluate(client, organiser, campaign.id)

    # each of these answered 500 (`randomised_tukey_hsd`: scores must not be empty; the report's judged fraction)
    significance = client.get(f"/api/campaigns/{campaign.id}/significance", headers=organiser)
    assert significance.status_code == 200, significance.text
    body = significance.json()
    assert (body["tested"], len(body["runs"]), body["alpha"]) == (False, 3, 0.05)
    assert body["note"] == "no topic has AP scores (the qrels judge none): the runs cannot be told apart"
    assert body["pvalues"] == [[1.0] * 3] * 3 and body["groups"] == [body["runs"]]
    report = client.get(f"/api/campaigns/{campaign.id}/report", headers=organiser)
    assert report.status_code == 200, report.text
    published = client.post(f"/api/campaigns/{campaign.id}/publish", json={}, headers=organiser)
    assert published.status_code == 201, published.text
    report_page = client.get(f"/campaigns/{campaign.id}/report")
    assert report_page.status_code == 200 and UNJUDGED in report_page.text

    # the version knows its unjudged topics, and every board names them
    assert cut.json()["unjudged_topics"] == ["1", "2", "3"]
    assert report.json()["unjudged_topics"] == ["1", "2", "3"] and "(1, 2, 3)" in report.json()["warning"]
    warning = (
        "3 of 3 topic(s) have no judgement in qrels version 'empty' (1, 2, 3): scores on them say nothing about "
        "the runs, and the means are not those of the whole topic set"
    )
    assert published.json()["warning"] == warning
    live = client.get(f"/api/campaigns/{campaign.id}/leaderboard", headers=organiser).json()
    assert (live["unjudged_topics"], live["warning"]) == (["1", "2", "3"], warning)
    public = client.get(f"/api/public/campaigns/{campaign.id}/leaderboard").json()
    assert (public["unjudged_topics"], public["warning"]) == (["1", "2", "3"], warning)
    frozen = client.get(f"/api/public/campaigns/{campaign.id}/significance").json()
    assert frozen["tested"] is False and frozen["note"] == body["note"]
    page = client.get(f"/campaigns/{campaign.id}/leaderboard")
    assert page.status_code == 200 and f"{UNJUDGED}: {warning}." in page.text.replace("&#39;", "'")
    assert "Not tested: no topic has AP scores" in page.text and "α =" not in page.text

    # without allow_incomplete the cut is refused, saying how much is unjudged, and nothing is stored
    sampled = sum(t["sampled"] for t in pool["topics"])
    refused = client.post(f"/api/pools/{pool['id']}/qrels", json={"label": "empty-2"}, headers=organiser)
    assert refused.status_code == 409, refused.text
    assert refused.json()["detail"] == (
        f"pool {pool['id']} is not judged enough to cut: {sampled} of {sampled} sampled items unjudged; "
        "3 topic(s) without any judgement (1, 2, 3); pass allow_incomplete: true to cut it anyway"
    )
    assert [q["label"] for q in client.get(f"/api/campaigns/{campaign.id}/qrels", headers=organiser).json()] == [
        "empty"
    ]


def test_a_stratified_pool_with_nothing_judged_is_refused_and_a_partial_cut_names_its_unjudged_topics(
    make_campaign, client, organiser
):
    campaign, _ = setup_campaign(make_campaign, client, organiser, n_runs=2, depth=10, seed=2)
    pool = client.post(
        f"/api/campaigns/{campaign.id}/pools",
        json={"kind": "stratified", "strata": "1-3:1.0, 4-10:0.5", "seed": 5},
        headers=organiser,
    ).json()
    sampled = {t["topic"]: t["sampled"] for t in pool["topics"]}
    refused = client.post(f"/api/pools/{pool['id']}/qrels", json={"label": "none"}, headers=organiser)
    assert refused.status_code == 409
    total = sum(sampled.values())
    assert (
        f"{total} of {total} sampled items unjudged; 3 topic(s) without any judgement (1, 2, 3)"
        in (refused.json()["detail"])
    )
    assessor_id, assessor = make_assessor(client, organiser, campaign, "only-topic-2")
    client.post(
        f"/api/pools/{pool['id']}/assignments",
        json={"assignments": [{"topic": "2", "assessor_id": assessor_id}]},
        headers=organiser,
    )
    assert len(judge_all(client, assessor, lambda item: "relevant")) == sampled["2"]
    cut = client.post(f"/api/pools/{pool['id']}/qrels", json={"label": "partial"}, headers=organiser)
    assert cut.status_code == 201 and cut.json()["unjudged_topics"] == ["1", "3"]  # a partial cut is usual
    listed = client.get(f"/api/campaigns/{campaign.id}/qrels", headers=organiser).json()
    assert [(q["label"], q["unjudged_topics"]) for q in listed] == [("partial", ["1", "3"])]
    _evaluate(client, organiser, campaign.id)
    board = client.get(f"/api/campaigns/{campaign.id}/leaderboard", headers=organiser).json()
    assert board["warning"].startswith("2 of 3 topic(s) have no judgement in qrels version 'partial' (1, 3)")


def test_imported_qrels_name_the_topics_they_leave_out_and_one_run_is_not_tested(make_campaign, client, organiser):
    campaign = make_campaign(n_topics=3)
    _, team = campaign.team()
    run = "".join(f"{t} Q0 d{i} {i + 1} {10 - i} solo\n" for t in campaign.topics for i in range(5))
    assert campaign.upload(team, run, name="solo").status_code == 201
    qrels = b"1 0 d0 1\n1 0 d1 0\n3 0 d2 -1\n"  # topic 3 only pooled-but-unjudged, topic 2 absent
    imported = client.post(
        f"/api/campaigns/{campaign.id}/qrels", data={"label": "q"}, files={"file": ("q", qrels)}, headers=organiser
    )
    assert imported.status_code == 201 and imported.json()["unjudged_topics"] == ["2", "3"]
    assert client.post(f"/api/campaigns/{campaign.id}/close", headers=organiser).status_code == 200
    _evaluate(client, organiser, campaign.id, measures=["AP"])
    live = client.get(f"/api/campaigns/{campaign.id}/leaderboard", headers=organiser).json()
    assert live["warning"].startswith("2 of 3 topic(s) have no judgement in qrels version 'q' (2, 3)")
    significance = client.get(f"/api/campaigns/{campaign.id}/significance", headers=organiser).json()
    assert (significance["tested"], significance["runs"], significance["groups"]) == (False, ["solo"], [["solo"]])
    assert significance["note"] == "one run passes the filters: there is nothing to compare"
    assert client.post(f"/api/campaigns/{campaign.id}/publish", json={}, headers=organiser).status_code == 201
    page = client.get(f"/campaigns/{campaign.id}/leaderboard").text
    assert "α =" not in page and "Not tested: one run passes the filters" in page
    assert f"{UNJUDGED}: 2 of 3 topic(s)" in page
    filtered = client.get(f"/api/public/campaigns/{campaign.id}/significance?system_type=M").json()
    assert filtered["note"] == "no run passes the filters: there is nothing to compare" and filtered["groups"] == []


def test_a_moment_truth_with_a_topic_unmarked_is_refused_with_the_counts(moment_pool, client, organiser):
    campaign, pool, ann, _ = moment_pool
    while (response := client.post("/api/moment-judging/next", headers=ann)).status_code == 200:
        item = response.json()
        if item["topic"] != "1":
            break
        segments = ANN[(item["topic"], item["video_id"], item["start"])]
        body = {"segments": [{"start": s, "end": e} for s, e in segments]}
        assert client.post(f"/api/moment-judging/items/{item['item_id']}", json=body, headers=ann).status_code == 200
    refused = client.post(f"/api/moment-pools/{pool['id']}/truth", json={"label": "partial"}, headers=organiser)
    assert refused.status_code == 409
    assert refused.json()["detail"] == (
        f"moment pool {pool['id']} is not judged enough to cut: 2 of 5 proposals unmarked; 1 topic(s) without any "
        "judgement (2); pass allow_incomplete: true to cut it anyway"
    )
    cut = client.post(
        f"/api/moment-pools/{pool['id']}/truth", json={"label": "partial", "allow_incomplete": True}, headers=organiser
    )
    assert cut.status_code == 201, cut.text
    assert cut.json()["unjudged_topics"] == ["2"]
    evaluation = _evaluate(client, organiser, campaign.id, qrels_version_id=cut.json()["id"], measures=["R@1,0.5"])
    board = client.get(
        f"/api/campaigns/{campaign.id}/leaderboard?evaluation_id={evaluation['id']}", headers=organiser
    ).json()
    assert board["unjudged_topics"] == ["2"] and "in qrels version 'partial' (2)" in board["warning"]
