"""The organiser page in a real browser (Debian's chromium via Playwright): the token asked for once per tab and
never put in a URL, judging progress as judged, and jobs cancelled from their buttons."""

from __future__ import annotations

from app.storage.database import session_scope
from app.storage.models import AnalysisJob, Evaluation
from tests.api.helpers import hold, make_assessor, setup_campaign


def _campaign_with_jobs(make_campaign, client, organiser, sessions):  # type: ignore[no-untyped-def]
    """A depth-6 pool with five items of topic 1 judged by ann, a queued evaluation and a running analysis; returns
    (campaign, pool, ann's headers, items judged, evaluation id, analysis id)."""
    campaign, _ = setup_campaign(make_campaign, client, organiser, n_runs=2, depth=20, seed=8)
    pool = client.post(
        f"/api/campaigns/{campaign.id}/pools", json={"kind": "depth", "depth": 6, "seed": 1}, headers=organiser
    ).json()
    ann_id, ann = make_assessor(client, organiser, campaign, "ann")
    response = client.post(
        f"/api/pools/{pool['id']}/assignments",
        headers=organiser,
        json={"assignments": [{"topic": "1", "assessor_id": ann_id}, {"topic": "2", "assessor_id": ann_id}]},
    )
    assert response.status_code == 201, response.text
    seen = []
    for _ in range(5):  # five items of topic 1 (it has six at least), each judged in 2.5 s
        item = client.post("/api/judging/next", headers=ann).json()
        verdict = "relevant" if len(seen) % 3 == 0 else "not_relevant"
        body = {"verdict": verdict, "seconds_spent": 2.5}
        assert client.post(f"/api/judging/items/{item['task_id']}", json=body, headers=ann).status_code == 200
        seen.append((item, verdict))
    assert {item["topic"] for item, _ in seen} == {"1"}
    with session_scope(sessions) as session:
        evaluation = Evaluation(campaign_id=campaign.id, status="queued")
        analysis = AnalysisJob(campaign_id=campaign.id, kind="ties")
        hold(session, evaluation)
        hold(session, analysis)
        # the analysis runs, as if a worker had claimed it
        analysis.status, analysis.progress, analysis.attempts = "running", 0.4, 1
        session.flush()
        ids = evaluation.id, analysis.id
    return campaign, pool, ann, seen, *ids


def _job_row(name: str) -> str:
    """The selector of a job's row."""
    return f'#jobs tr[data-job="{name}"]'


def test_the_organiser_sees_progress_and_cancels_jobs(make_campaign, client, organiser, sessions, live_server, browser):  # type: ignore[no-untyped-def]
    campaign, pool, ann, seen, evaluation_id, analysis_id = _campaign_with_jobs(
        make_campaign, client, organiser, sessions
    )
    token = organiser["Authorization"].removeprefix("Bearer ")
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    failed: list[str] = []
    page.on("response", lambda response: failed.append(response.url) if response.status >= 400 else None)
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))

    page.goto(f"{live_server}/organise/campaigns/{campaign.id}")
    page.wait_for_selector("#token-form:not([hidden])")
    assert page.query_selector("#overview") is None
    page.fill("#token", token)
    page.press("#token", "Enter")
    page.wait_for_selector("#overview")
    assert page.evaluate("Object.values(sessionStorage)") == [token]
    assert page.is_hidden("#token-form") and page.input_value("#token") == ""

    # judging progress as judged
    sampled = {t["topic"]: t["sampled"] for t in pool["topics"]}
    assert page.text_content("#judging-done") == str(len(seen))
    assert page.text_content("#judging-total") == str(sum(sampled.values()))
    row = '#topics tr[data-topic="1"]'
    assert page.text_content(f"{row} .count") == f"{len(seen)}/{sampled['1']}"
    assert page.text_content(f"{row} .relevant") == str(sum(v == "relevant" for _, v in seen))
    assert page.get_attribute(f"{row} progress", "value") == str(len(seen))
    ann_row = "#assessors tbody tr"
    assert page.text_content(f"{ann_row} .judged") == str(len(seen))
    remaining = sampled["1"] - len(seen) + sampled["2"]
    assert page.text_content(f"{ann_row} .remaining") == str(remaining)
    minutes = round(remaining * 2.5 / 60)
    expected_eta = f"{round(remaining * 2.5)} s" if remaining * 2.5 < 60 else f"{minutes} min"
    assert page.text_content(f"{ann_row} .eta") == expected_eta
    page.screenshot(path="/tmp/h14_organiser_page.png", full_page=True)

    # one more verdict shows on Refresh, focus kept on the button
    item = client.post("/api/judging/next", headers=ann).json()
    client.post(f"/api/judging/items/{item['task_id']}", json={"verdict": "relevant"}, headers=ann)
    page.focus("[data-action=refresh]")
    page.keyboard.press("Enter")
    page.wait_for_function(  # well before the 10 s refresh
        "n => document.getElementById('judging-done').textContent === n", arg=str(len(seen) + 1), timeout=5000
    )
    assert page.evaluate("document.activeElement.dataset.action") == "refresh"

    # a queued job is cancelled at once
    evaluation = _job_row(f"evaluation-{evaluation_id}")
    assert page.get_attribute(evaluation, "data-status") == "queued"
    page.get_by_role("button", name=f"Cancel evaluation {evaluation_id}").click()
    page.wait_for_selector(f'{evaluation}[data-status="cancelled"]')
    page.wait_for_function(
        "t => document.getElementById('status').textContent === t", arg=f"Cancelled evaluation {evaluation_id}."
    )
    assert page.query_selector(f"{evaluation} button.cancel") is None
    # a running one is asked to stop at its next progress report
    analysis = _job_row(f"analysis-{analysis_id}")
    page.focus(f"{analysis} button.cancel")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "t => document.getElementById('status').textContent.startsWith(t)", arg=f"Cancel requested: ties {analysis_id}"
    )
    page.wait_for_selector(f"{analysis}:not(:has(button.cancel))")
    assert "cancelling" in page.text_content(analysis) and page.get_attribute(analysis, "data-status") == "running"
    with sessions() as session:
        assert session.get(Evaluation, evaluation_id).status == "cancelled"  # type: ignore[union-attr]
        stored = session.get(AnalysisJob, analysis_id)
        assert stored is not None and stored.cancel_requested and stored.status == "running"

    # the token never travelled in a URL
    assert urls and not [u for u in urls if token in u]
    assert failed == [], failed
    assert errors == []
    page.close()


def test_a_token_that_does_not_organise_the_campaign_is_asked_again(make_campaign, client, live_server, browser):  # type: ignore[no-untyped-def]
    campaign = make_campaign()
    _, team = campaign.team()
    page = browser.new_page()
    page.goto(f"{live_server}/organise/campaigns/{campaign.id}")
    page.wait_for_selector("#token-form:not([hidden])")
    page.fill("#token", team["Authorization"].removeprefix("Bearer "))
    page.click("#token-form button[type=submit]")
    page.wait_for_selector("#message:not([hidden])")
    assert "does not organise this campaign" in page.text_content("#message")
    assert page.evaluate("sessionStorage.length") == 0 and page.is_visible("#token-form")
    page.fill("#token", "tp_not-a-token")
    page.click("#token-form button[type=submit]")
    page.wait_for_function("() => document.getElementById('message').textContent.includes('refused')")
    assert page.evaluate("sessionStorage.length") == 0 and page.query_selector("#overview") is None
    page.close()
