"""The organiser console's results pages: qrels versions (list, cut with the incompleteness warning, upload with
line-numbered errors, download by cookie), evaluations and analyses (start, run in the worker, progress, cancel,
figures), the board preview and Publish; every form refused without its CSRF value, nothing stored on error, a JSON
twin for each page; then the same steps in chromium at 390 px and 1280x800, axe-clean, the jobs page reloading itself.
"""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.api.limits import body_routes_of
from app.evaluation.measures.registry import default_measures
from app.services import jobs as job_service
from app.services.auth import authenticate, create_token
from app.storage.database import session_scope
from app.storage.models import AnalysisJob, Evaluation, QrelsVersion, Role
from app.web.session import COOKIE, csrf_token
from tests.api.helpers import (
    build_judged_campaign,
    hold,
    new_campaign,
    setup_campaign,
    wait_done,
    wait_finished,
)
from tests.web.pages import check_page, marking_pool

SHOTS = "/tmp/h/h6_{name}_{width}.png"
QRELS = "1 0 s0_1 1\n1 0 s0_2 0\n2 0 s0_3 1\n3 0 s1_1 0\n"
BAD_QRELS = "1 0 s0_1 1\n2 0 s0_3 1\n3 0 s1_1 maybe\n"  # line 3: the grade is not a number
TRUTH = "1\tvidA\t10\t20\n1\tvidA\t40\t45\n2\tvidB\t0\t5\n"
BAD_TRUTH = "1\tvidA\t10\t20\n2\tvidB\t0\t5\n1\tvidA\tlate\t45\n"


# ------------------------------------------------------------------------------------------------------ helpers


def hidden(html: str, name: str) -> str:
    """The value of a page's first hidden field of that name."""
    found = re.search(rf'name="{name}" value="([^"]*)"', html)
    assert found, f"no field {name}"
    return found.group(1)


def signed_in(client: TestClient, token: str) -> tuple[TestClient, str]:
    """A client with its own cookie jar, signed in with `token`; and its CSRF value."""
    fresh = TestClient(client.app, base_url="http://testserver")
    form = fresh.get("/login")
    data = {"token": token, "csrf_token": hidden(form.text, "csrf_token"), "next": "/console/"}
    assert fresh.post("/login", data=data, follow_redirects=False).status_code == 303
    return fresh, csrf_token(str(fresh.cookies.get(COOKIE)))


def token_of(headers: dict[str, str]) -> str:
    """The bearer token of API headers."""
    return headers["Authorization"].split()[1]


def post(browser: TestClient, path: str, csrf: str | None, **data: Any) -> Any:
    """A console form's POST (with the CSRF value unless None), redirects not followed."""
    body = {k: str(v) for k, v in data.items()}
    if csrf is not None:
        body["csrf_token"] = csrf
    return browser.post(path, data=body, follow_redirects=False)


def upload(browser: TestClient, path: str, csrf: str | None, content: bytes, **data: Any) -> Any:
    """A console upload form's POST, redirects not followed."""
    body = {k: str(v) for k, v in data.items()}
    if csrf is not None:
        body["csrf_token"] = csrf
    files = {"file": ("qrels.txt", content, "text/plain")}
    return browser.post(path, data=body, files=files, follow_redirects=False)


def versions(client: TestClient, organiser: dict[str, str], campaign_id: int) -> list[tuple[int, str]]:
    """The campaign's qrels versions by the API: (id, label)."""
    response = client.get(f"/api/campaigns/{campaign_id}/qrels", headers=organiser)
    assert response.status_code == 200, response.text
    return [(v["id"], v["label"]) for v in response.json()]


def n_evaluations(sessions, campaign_id: int) -> int:  # type: ignore[no-untyped-def]
    """How many evaluation jobs the campaign has."""
    with sessions() as session:
        query = select(func.count()).select_from(Evaluation).where(Evaluation.campaign_id == campaign_id)
        return int(session.scalar(query))


def pooled_campaign(make_campaign, client, organiser):  # type: ignore[no-untyped-def]
    """A closed campaign with a stratified pool and nothing judged; (campaign, pool)."""
    campaign, _ = setup_campaign(make_campaign, client, organiser, n_runs=2, depth=20, seed=3)
    pool = client.post(
        f"/api/campaigns/{campaign.id}/pools",
        json={"kind": "stratified", "strata": "1-5:1.0, 6-20:0.5", "seed": 5},
        headers=organiser,
    )
    assert pool.status_code == 201, pool.text
    return campaign, pool.json()


@pytest.fixture
def console(client, organiser) -> tuple[TestClient, str]:  # type: ignore[no-untyped-def]
    """A cookie session of the (unbound) organiser; (client, CSRF value)."""
    return signed_in(client, token_of(organiser))


# ------------------------------------------------------------------------------------------------------ qrels


def test_the_qrels_page_lists_the_service_s_versions_and_downloads_them_by_cookie(  # type: ignore[no-untyped-def]
    make_campaign, client, organiser, sessions, console
) -> None:
    browser, _ = console
    campaign, _, qrels, _ = build_judged_campaign(make_campaign, client, organiser, sessions)
    page = browser.get(f"/console/campaigns/{campaign.id}/qrels")
    assert page.status_code == 200
    assert (
        page.headers["link"]
        == f'</console/campaigns/{campaign.id}/qrels.json>; rel="alternate"; type="application/json"'
    )
    twin = browser.get(f"/console/campaigns/{campaign.id}/qrels.json").json()
    api = client.get(f"/api/campaigns/{campaign.id}/qrels", headers=organiser).json()
    assert [(v["id"], v["label"], v["kind"], v["judges"], v["n_entries"]) for v in twin["versions"]] == [
        (v["id"], v["label"], v["kind"], v["judges"], v["n_entries"]) for v in api
    ]
    assert [v["judging_order"] for v in twin["versions"]] == [v["judging_order"] for v in api]
    assert twin["versions"][0]["unjudged_note"] is None  # every topic judged
    assert f'<tr data-version="{qrels["id"]}">' in page.text and 'class="run">final<br>' in page.text
    # the download links answer with the API's file, by the cookie alone
    for fmt in ("trec", "sample_eval"):
        link = f"/console/qrels/{qrels['id']}/download?format={fmt}"
        assert link.replace("&", "&amp;") in page.text or link in page.text
        mine = browser.get(link)
        theirs = client.get(f"/api/qrels/{qrels['id']}/download?format={fmt}", headers=organiser)
        assert mine.status_code == 200 and mine.content == theirs.content and len(mine.content) > 100
        assert mine.headers["content-disposition"] == theirs.headers["content-disposition"]
    assert TestClient(client.app).get(f"/api/qrels/{qrels['id']}/download").status_code == 401  # the API: bearer only
    # without a session: sent to sign in (JSON: 401); a team's session: 403
    anonymous = TestClient(client.app)
    away = anonymous.get(f"/console/campaigns/{campaign.id}/qrels", follow_redirects=False)
    assert away.status_code == 303 and away.headers["location"].startswith("/login?next=")
    assert anonymous.get(f"/console/campaigns/{campaign.id}/qrels.json").status_code == 401
    assert anonymous.get(f"/console/qrels/{qrels['id']}/download", follow_redirects=False).status_code == 303
    _, team = campaign.team()
    team_browser, _ = signed_in(client, token_of(team))
    assert team_browser.get(f"/console/campaigns/{campaign.id}/qrels").status_code == 403
    assert team_browser.get(f"/console/qrels/{qrels['id']}/download").status_code == 403


def test_an_incomplete_cut_warns_and_stores_nothing_then_cut_anyway_stores_one(  # type: ignore[no-untyped-def]
    make_campaign, client, organiser, console
) -> None:
    browser, csrf = console
    campaign, pool = pooled_campaign(make_campaign, client, organiser)
    path = f"/console/campaigns/{campaign.id}/qrels/cut"
    # without the CSRF field: refused, nothing stored
    assert post(browser, path, None, label="early").status_code == 403
    assert post(browser, path, "0" * 64, label="early").status_code == 403
    assert versions(client, organiser, campaign.id) == []
    # judging incomplete: the service's message as the page's warning, the checkbox to cut anyway, nothing stored
    refused = post(browser, path, csrf, label="early", judges="human")
    assert refused.status_code == 409
    warning = re.search(
        r'<div class="message warning" role="alert" id="cut-incomplete">(.*?)</div>', refused.text, re.S
    )
    assert warning, refused.text
    assert f"pool {pool['id']} is not judged enough to cut" in warning.group(1)
    assert "3 topic(s) without any judgement (1, 2, 3)" in warning.group(1)
    assert 'id="cut-allow"' in refused.text and 'value="early"' in refused.text
    assert versions(client, organiser, campaign.id) == []
    # an empty label is named, nothing stored
    empty = post(browser, path, csrf, label=" ", allow_incomplete="on")
    assert empty.status_code == 422 and 'id="cut-label-error"' in empty.text
    assert versions(client, organiser, campaign.id) == []
    # cut anyway: one version, its topics without judgement noted in the page
    cut = post(browser, path, csrf, label="early", judges="human", allow_incomplete="on")
    assert cut.status_code == 303 and cut.headers["location"] == f"/console/campaigns/{campaign.id}/qrels?cut=early"
    [(version_id, label)] = versions(client, organiser, campaign.id)
    assert label == "early"
    page = browser.get(cut.headers["location"])
    assert "Version “early” cut from pool" in page.text
    twin = browser.get(f"/console/campaigns/{campaign.id}/qrels.json").json()
    [row] = twin["versions"]
    assert row["id"] == version_id and row["unjudged_topics"] == ["1", "2", "3"]
    assert row["unjudged_note"].startswith("3 of 3 topic(s) have no judgement in qrels version 'early'")
    assert row["unjudged_note"] in html.unescape(page.text)
    # the label is taken now: the service's conflict in the form, not the incompleteness warning
    again = post(browser, path, csrf, label="early", allow_incomplete="on")
    assert again.status_code == 409 and 'id="cut-errors"' in again.text and "cut-incomplete" not in again.text
    assert "exists already" in again.text
    assert len(versions(client, organiser, campaign.id)) == 1
    # a model version needs a model assessor: named in the form
    model = post(browser, path, csrf, label="by-model", judges="model", allow_incomplete="on")
    assert model.status_code == 422 and 'id="cut-model_assessor_id-error"' in model.text
    # JSON callers get the API's error body
    as_json = browser.post(path, data={"csrf_token": csrf, "label": "later"}, headers={"Accept": "application/json"})
    assert as_json.status_code == 409 and "allow_incomplete" in as_json.json()["detail"]


def test_a_campaign_without_a_pool_says_so_and_refuses_a_cut(make_campaign, client, organiser, console) -> None:  # type: ignore[no-untyped-def]
    browser, csrf = console
    campaign = make_campaign(n_topics=2)
    page = browser.get(f"/console/campaigns/{campaign.id}/qrels")
    assert 'id="no-pool"' in page.text and 'id="no-versions"' in page.text
    assert browser.get(f"/console/campaigns/{campaign.id}/qrels.json").json()["pool"] is None
    refused = post(browser, f"/console/campaigns/{campaign.id}/qrels/cut", csrf, label="x", allow_incomplete="on")
    assert refused.status_code == 422 and "no pool yet" in refused.text
    assert versions(client, organiser, campaign.id) == []


def test_an_uploaded_qrels_file_with_a_bad_line_3_stores_nothing(make_campaign, client, organiser, console) -> None:  # type: ignore[no-untyped-def]
    browser, csrf = console
    campaign = make_campaign(n_topics=3)
    path = f"/console/campaigns/{campaign.id}/qrels/upload"
    assert upload(browser, path, None, QRELS.encode(), label="assessed").status_code == 403
    assert versions(client, organiser, campaign.id) == []
    bad = upload(browser, path, csrf, BAD_QRELS.encode(), label="assessed")
    assert bad.status_code == 422
    errors = re.search(r'id="upload-errors">(.*?)</div>', bad.text, re.S)
    assert (
        errors
        and "line 3:" in errors.group(1)
        and "line 1:" not in errors.group(1)
        and "line 2:" not in errors.group(1)
    )
    assert 'value="assessed"' in bad.text  # the label kept
    assert versions(client, organiser, campaign.id) == []
    unknown = upload(browser, path, csrf, b"1 0 s1 1\n9 0 s2 1\n", label="assessed")
    assert unknown.status_code == 422 and "line 2: unknown topic" in unknown.text.replace("&#39;", "'")
    no_label = upload(browser, path, csrf, QRELS.encode(), label="")
    assert no_label.status_code == 422 and 'id="upload-label-error"' in no_label.text
    no_file = browser.post(path, data={"csrf_token": csrf, "label": "x"}, follow_redirects=False)
    assert no_file.status_code == 422 and "choose a file" in no_file.text
    assert versions(client, organiser, campaign.id) == []
    good = upload(browser, path, csrf, QRELS.encode(), label="assessed")
    assert good.status_code == 303 and good.headers["location"].endswith("/qrels?imported=assessed")
    [(version_id, label)] = versions(client, organiser, campaign.id)
    download = browser.get(f"/console/qrels/{version_id}/download")
    assert download.text.splitlines() == sorted(QRELS.splitlines())
    # an upload is counted against max_upload_bytes, not the 1 MB JSON limit, as the bytes arrive
    assert body_routes_of({}).kind("POST", path) == "upload"
    big = "".join(f"1 0 shot{i:07d} {i % 2}\n" for i in range(60_000)).encode()
    assert len(big) > client.app.state.settings.max_json_bytes
    stored = upload(browser, path, csrf, big, label="big")
    assert stored.status_code == 303, stored.text[:500]
    assert [v[1] for v in versions(client, organiser, campaign.id)] == ["assessed", "big"]
    over = b"x" * (client.app.state.settings.max_upload_bytes + (2 << 20))
    assert upload(browser, path, csrf, over, label="over").status_code == 413
    assert len(versions(client, organiser, campaign.id)) == 2


def test_a_moment_campaign_uploads_its_ground_truth_with_line_numbered_errors(  # type: ignore[no-untyped-def]
    make_campaign, client, organiser, console
) -> None:
    browser, csrf = console
    campaign = make_campaign(n_topics=2, task_kind="moments")
    page = browser.get(f"/console/campaigns/{campaign.id}/qrels")
    assert "Ground truth:" in page.text and 'id="upload-label"' not in page.text
    path = f"/console/campaigns/{campaign.id}/qrels/upload"
    bad = upload(browser, path, csrf, BAD_TRUTH.encode())
    assert bad.status_code == 422 and "line 3:" in bad.text and "line 2:" not in bad.text
    twin = f"/console/campaigns/{campaign.id}/qrels.json"
    assert browser.get(twin).json()["uploaded_segments"] == 0
    good = upload(browser, path, csrf, TRUTH.encode())
    assert good.status_code == 303 and good.headers["location"].endswith("/qrels?segments=3")
    assert browser.get(twin).json()["uploaded_segments"] == 3
    assert "Uploaded ground truth: 3 segment(s)" in browser.get(f"/console/campaigns/{campaign.id}/qrels").text
    # the evaluations page offers it as the default ground truth
    evaluations = browser.get(f"/console/campaigns/{campaign.id}/evaluations").text
    assert '<option value="">the uploaded ground truth</option>' in evaluations


def test_a_moment_pool_s_marks_are_cut_with_the_incompleteness_warning(  # type: ignore[no-untyped-def]
    make_campaign, client, organiser, console
) -> None:
    browser, csrf = console
    campaign, pool, _ = marking_pool(make_campaign, client, organiser)
    page = browser.get(f"/console/campaigns/{campaign.id}/qrels")
    assert 'id="cut-combine"' in page.text and 'id="cut-judges"' not in page.text
    path = f"/console/campaigns/{campaign.id}/qrels/cut"
    refused = post(browser, path, csrf, label="marks", combine="union")
    assert refused.status_code == 409 and 'id="cut-incomplete"' in refused.text
    assert "Tick “Cut anyway”" in refused.text and versions(client, organiser, campaign.id) == []
    unknown = post(browser, path, csrf, label="marks", combine="some", allow_incomplete="on")
    assert unknown.status_code == 422 and 'id="cut-combine-error"' in unknown.text
    cut = post(browser, path, csrf, label="marks", combine="union", allow_incomplete="on")
    assert cut.status_code == 303
    [(version_id, _)] = versions(client, organiser, campaign.id)
    [row] = browser.get(f"/console/campaigns/{campaign.id}/qrels.json").json()["versions"]
    assert (row["kind"], row["combine"], row["pool_id"], row["unjudged_topics"]) == (
        "moments",
        "union",
        pool["id"],
        ["1", "2"],
    )
    assert row["downloads"] == [{"format": "moment truth (TSV)", "url": f"/console/qrels/{version_id}/download"}]
    mine = browser.get(row["downloads"][0]["url"])
    assert mine.status_code == 200
    assert mine.content == client.get(f"/api/moment-truth/{version_id}", headers=organiser).content
    evaluations = browser.get(f"/console/campaigns/{campaign.id}/evaluations.json").json()
    assert [v["id"] for v in evaluations["qrels_versions"]] == [version_id] and evaluations["may_evaluate"] is True


# ------------------------------------------------------------------------------------------ evaluations, analyses


@pytest.fixture(scope="module")
def judged(make_campaign, client, organiser, sessions):  # type: ignore[no-untyped-def]
    """A closed, judged campaign with its qrels version cut (shared by the evaluation and board tests)."""
    return build_judged_campaign(make_campaign, client, organiser, sessions)


def test_an_evaluation_started_from_the_page_runs_and_shows_done(client, organiser, sessions, judged, console) -> None:  # type: ignore[no-untyped-def]
    browser, csrf = console
    campaign, runs, qrels, _ = judged
    page = f"/console/campaigns/{campaign.id}/evaluations"
    path = f"/console/campaigns/{campaign.id}/evaluations"
    before = n_evaluations(sessions, campaign.id)
    # refused without CSRF; bad measures and a bad version named in the form; nothing queued
    assert post(browser, path, None, qrels_version_id=qrels["id"]).status_code == 403
    unknown = post(browser, path, csrf, qrels_version_id=qrels["id"], measures="AP nonsense@x")
    assert unknown.status_code == 422 and 'id="evaluation-measures-error"' in unknown.text
    assert 'value="AP nonsense@x"' in unknown.text
    not_an_id = post(browser, path, csrf, qrels_version_id="first")
    assert not_an_id.status_code == 422 and 'id="evaluation-qrels_version_id-error"' in not_an_id.text
    missing = post(browser, path, csrf, qrels_version_id=999_999)
    assert missing.status_code == 404 and 'id="evaluation-errors"' in missing.text
    assert n_evaluations(sessions, campaign.id) == before
    # started: queued in the worker, done, and shown so
    started = post(browser, path, csrf, qrels_version_id=qrels["id"], measures="AP P@10 infAP")
    assert started.status_code == 303
    evaluation_id = int(started.headers["location"].rsplit("evaluation=", 1)[1])
    assert f"Evaluation {evaluation_id} queued." in browser.get(started.headers["location"]).text
    done = wait_done(client, organiser, evaluation_id)
    assert done["measures"]["names"] == ["AP", "P@10", "infAP"]
    html = browser.get(page).text
    assert f'<tr data-evaluation="{evaluation_id}" data-status="done">' in html
    assert f'href="/console/campaigns/{campaign.id}/board/evaluations/{evaluation_id}"' in html
    twin = browser.get(f"{page}.json").json()
    row = next(e for e in twin["evaluations"] if e["id"] == evaluation_id)
    assert (row["status"], row["progress"], row["qrels_label"], row["cancel_url"]) == ("done", 1.0, "final", None)
    assert row["measures"] == ["AP", "P@10", "infAP"] and twin["analysis_evaluation_id"] == evaluation_id
    assert f"evaluation-{evaluation_id}:done" in twin["state"]
    # once finished, there is nothing to cancel: the service's conflict shown by the job's row
    late = post(browser, f"/console/evaluations/{evaluation_id}/cancel", csrf)
    assert late.status_code == 409 and f'id="evaluation-{evaluation_id}-errors"' in late.text
    assert "there is nothing to cancel" in late.text
    assert client.get(f"/api/evaluations/{evaluation_id}", headers=organiser).json()["status"] == "done"
    assert twin["qrels_versions"][0]["default_measures"] == default_measures(stratified=True)  # sample_eval qrels


def test_cancel_marks_a_queued_evaluation_cancelled(client, organiser, sessions, judged, console) -> None:  # type: ignore[no-untyped-def]
    browser, csrf = console
    campaign, _, qrels, _ = judged
    with session_scope(sessions) as session:
        job = Evaluation(campaign_id=campaign.id, qrels_version_id=qrels["id"], measures={"names": ["AP"]})
        hold(session, job)
        job_id = job.id
    page = browser.get(f"/console/campaigns/{campaign.id}/evaluations")
    assert f'<tr data-evaluation="{job_id}" data-status="queued">' in page.text
    assert f'id="progress-evaluation-{job_id}" value="0.0" max="1"' in page.text
    assert 'data-active="true"' in page.text and "<noscript>" in page.text
    assert '<script src="/static/console_jobs.js' in page.text
    cancel = f"/console/evaluations/{job_id}/cancel"
    assert post(browser, cancel, None).status_code == 403
    assert client.get(f"/api/evaluations/{job_id}", headers=organiser).json()["status"] == "queued"
    done = post(browser, cancel, csrf)
    assert done.status_code == 303 and done.headers["location"].endswith(f"?cancelled=evaluation-{job_id}")
    assert client.get(f"/api/evaluations/{job_id}", headers=organiser).json()["status"] == "cancelled"
    html = browser.get(done.headers["location"]).text
    assert f'<tr data-evaluation="{job_id}" data-status="cancelled">' in html and "Evaluation " in html
    again = post(browser, cancel, csrf)
    assert again.status_code == 303  # cancelling a cancelled job is a no-op, as the API's
    assert post(browser, "/console/evaluations/999999/cancel", csrf).status_code == 404
    # an analysis job too
    with session_scope(sessions) as session:
        analysis = AnalysisJob(campaign_id=campaign.id, kind="ties", params={"evaluation_id": job_id})
        hold(session, analysis)
        analysis_id = analysis.id
    html = browser.get(f"/console/campaigns/{campaign.id}/evaluations").text
    assert f'<tr data-analysis="{analysis_id}" data-status="queued">' in html
    assert f'action="/console/analyses/{analysis_id}/cancel"' in html
    assert post(browser, f"/console/analyses/{analysis_id}/cancel", None).status_code == 403
    stopped = post(browser, f"/console/analyses/{analysis_id}/cancel", csrf)
    assert stopped.status_code == 303 and stopped.headers["location"].endswith(f"?cancelled=analysis-{analysis_id}")
    assert client.get(f"/api/analyses/{analysis_id}", headers=organiser).json()["status"] == "cancelled"


def test_an_analysis_started_from_the_page_shows_its_figure(client, organiser, judged, console) -> None:  # type: ignore[no-untyped-def]
    browser, csrf = console
    campaign, _, qrels, _ = judged
    path = f"/console/campaigns/{campaign.id}/analyses"
    if (
        client.get(f"/console/campaigns/{campaign.id}/evaluations.json", headers=organiser).json()[
            "analysis_evaluation_id"
        ]
        is None
    ):
        started = client.post(
            f"/api/campaigns/{campaign.id}/evaluations", json={"qrels_version_id": qrels["id"]}, headers=organiser
        )
        wait_done(client, organiser, started.json()["id"])
    twin_path = f"/console/campaigns/{campaign.id}/evaluations.json"
    listed = [a["id"] for a in browser.get(twin_path).json()["analyses"]]
    page = browser.get(f"/console/campaigns/{campaign.id}/evaluations").text
    assert 'id="kind-ties"' in page and 'id="an-stability-trials"' in page
    assert 'id="kind-label-noise"' not in page  # moments only
    # bad parameters named as the API names them; nothing queued
    assert post(browser, path, None, kind="ties").status_code == 403
    bad = post(browser, path, csrf, kind="stability", trials="many", seed="1")
    assert bad.status_code == 422 and 'id="analysis-stability-params.trials-error"' in bad.text
    assert "is not a whole number" in bad.text and 'value="many"' in bad.text
    field = 'aria-describedby="an-stability-trials-help analysis-stability-params.trials-error" aria-invalid="true"'
    assert field in bad.text and 'id="an-stability-seed" name="seed" type="text" maxlength="2000" value="1"' in bad.text
    bounded = post(browser, path, csrf, kind="stability", trials="0")
    assert bounded.status_code == 422 and "params.trials" in bounded.text
    unknown = post(browser, path, csrf, kind="astrology")
    assert unknown.status_code == 422 and 'id="analysis-errors"' in unknown.text
    assert [a["id"] for a in browser.get(twin_path).json()["analyses"]] == listed  # nothing queued
    # started: run by the worker, its figure shown and served as SVG by the cookie session
    started = post(browser, path, csrf, kind="ties", measures="AP P@10")
    assert started.status_code == 303, started.text[:300]
    job_id = int(started.headers["location"].rsplit("analysis=", 1)[1])
    job = wait_finished(client, organiser, f"/api/analyses/{job_id}")
    assert job["status"] == "done" and job["params"]["measures"] == ["AP", "P@10"]
    html = browser.get(f"/console/campaigns/{campaign.id}/evaluations").text
    assert f'<img src="/console/analyses/{job_id}/figure" alt="Figure of analysis {job_id} (ties)"' in html
    figure = browser.get(f"/console/analyses/{job_id}/figure")
    assert figure.status_code == 200 and figure.headers["content-type"].startswith("image/svg+xml")
    assert b"<svg" in figure.content[:1000]
    row = next(a for a in browser.get(twin_path).json()["analyses"] if a["id"] == job_id)
    assert (row["id"], row["kind"], row["status"], row["figures"]) == (
        job_id,
        "ties",
        "done",
        [{"label": "ties", "url": f"/console/analyses/{job_id}/figure"}],
    )
    assert TestClient(client.app).get(f"/console/analyses/{job_id}/figure", follow_redirects=False).status_code == 303


# ------------------------------------------------------------------------------------------------------ the board


def test_the_board_says_what_to_do_before_anything_is_evaluated(make_campaign, client, organiser, console) -> None:  # type: ignore[no-untyped-def]
    browser, csrf = console
    campaign, _ = pooled_campaign(make_campaign, client, organiser)
    page = browser.get(f"/console/campaigns/{campaign.id}/board")
    assert page.status_code == 200 and "Preview — not public." in page.text
    assert "Nothing is evaluated yet: cut or upload ground truth on the Qrels page" in page.text
    twin = browser.get(f"/console/campaigns/{campaign.id}/board.json").json()
    assert (twin["board"], twin["preview"], twin["public"]) == (None, True, False)
    refused = post(browser, f"/console/campaigns/{campaign.id}/publish", csrf)
    assert refused.status_code == 404 and "no finished evaluation" in refused.text
    assert client.get(f"/api/public/campaigns/{campaign.id}/leaderboard").status_code == 404
    # an open campaign: publishing waits until submissions close (said in the page, no form offered)
    still_open = make_campaign(n_topics=1)
    assert 'id="publish"' not in browser.get(f"/console/campaigns/{still_open.id}/board").text
    early = post(browser, f"/console/campaigns/{still_open.id}/publish", csrf)
    assert early.status_code == 409 and 'id="publish-errors"' in early.text and "close submissions" in early.text
    assert client.get(f"/api/campaigns/{still_open.id}", headers=organiser).json()["status"] == "open"


def test_the_board_preview_is_the_live_board_and_publish_makes_it_public(  # type: ignore[no-untyped-def]
    make_campaign, client, organiser, sessions, console
) -> None:
    browser, csrf = console
    campaign, runs, qrels, _ = build_judged_campaign(make_campaign, client, organiser, sessions)
    started = client.post(f"/api/campaigns/{campaign.id}/evaluations", json={}, headers=organiser)
    evaluation_id = wait_done(client, organiser, started.json()["id"])["id"]
    page = browser.get(f"/console/campaigns/{campaign.id}/board")
    assert page.status_code == 200 and "Preview — not public." in page.text
    live = client.get(f"/api/campaigns/{campaign.id}/leaderboard", headers=organiser).json()
    twin = browser.get(f"/console/campaigns/{campaign.id}/board.json").json()
    assert [(r["run"], r["rank"], r["score"]) for r in twin["board"]["rows"]] == [
        (r["run"], r["rank"], r["score"]) for r in live["rows"]
    ]
    assert twin["evaluation_id"] == evaluation_id and twin["significance"]["measure"] == live["measure"]
    for run in runs:
        assert run in page.text
    one = browser.get(f"/console/campaigns/{campaign.id}/board/evaluations/{evaluation_id}.json").json()
    assert one["evaluation_id"] == evaluation_id and one["board"]["rows"] == twin["board"]["rows"]
    assert (
        browser.get(f"/console/campaigns/{campaign.id}/board/evaluations/{evaluation_id + 10_000}").status_code == 404
    )
    by_p10 = browser.get(f"/console/campaigns/{campaign.id}/board.json?measure=P@10").json()["board"]
    assert by_p10["measure"] == "P@10"
    csv = browser.get(f"/console/campaigns/{campaign.id}/board/export?format=csv")
    assert csv.status_code == 200 and csv.text.splitlines()[0].startswith("rank,")
    assert len(csv.text.splitlines()) == 1 + len(runs)
    # publish: refused without CSRF, or naming an evaluation that is not finished (said in the form)
    path = f"/console/campaigns/{campaign.id}/publish"
    assert post(browser, path, None, evaluation_id=evaluation_id).status_code == 403
    wrong = post(browser, path, csrf, evaluation_id=evaluation_id + 10_000)
    assert wrong.status_code == 404 and 'id="publish-errors"' in wrong.text
    assert client.get(f"/api/public/campaigns/{campaign.id}/leaderboard").status_code == 404
    # published: to the public board, which answers 200 with the notice
    done = post(browser, path, csrf, evaluation_id=evaluation_id)
    assert done.status_code == 303 and done.headers["location"] == f"/campaigns/{campaign.id}/leaderboard?published=1"
    public = TestClient(client.app).get(done.headers["location"])
    assert public.status_code == 200 and "Published: this board is public now." in public.text
    api = client.get(f"/api/public/campaigns/{campaign.id}/leaderboard").json()
    assert api["evaluation_id"] == evaluation_id
    assert [r["run"] for r in api["rows"]] == [r["run"] for r in twin["board"]["rows"]]
    after = browser.get(f"/console/campaigns/{campaign.id}/board.json").json()
    assert after["public"] is True and after["public_url"] == f"/campaigns/{campaign.id}/leaderboard"


def test_an_anonymising_campaign_s_preview_names_teams_as_the_public_board_will(  # type: ignore[no-untyped-def]
    make_campaign, client, organiser, sessions, console
) -> None:
    browser, _ = console
    campaign, _, _, _ = build_judged_campaign(make_campaign, client, organiser, sessions)
    client.patch(f"/api/campaigns/{campaign.id}", json={"anonymise_teams": True}, headers=organiser)
    started = client.post(f"/api/campaigns/{campaign.id}/evaluations", json={}, headers=organiser)
    wait_done(client, organiser, started.json()["id"])
    twin = browser.get(f"/console/campaigns/{campaign.id}/board.json").json()
    assert {r["team"] for r in twin["board"]["rows"]} == {"Team A", "Team B"}
    assert twin["board"]["anonymised"] is True
    assert client.post(f"/api/campaigns/{campaign.id}/publish", json={}, headers=organiser).status_code == 201
    public = client.get(f"/api/public/campaigns/{campaign.id}/leaderboard").json()
    assert [(r["run"], r["team"]) for r in public["rows"]] == [(r["run"], r["team"]) for r in twin["board"]["rows"]]


def test_another_campaign_s_organiser_sees_none_of_these_pages(client, organiser, sessions, judged) -> None:  # type: ignore[no-untyped-def]
    campaign, _, qrels, _ = judged
    other = new_campaign(client, organiser, 1)
    with session_scope(sessions) as session:
        token = create_token(session, Role.organiser, label="other", campaign_id=other.id)
    browser, csrf = signed_in(client, token)
    for page in ("qrels", "evaluations", "board"):
        assert browser.get(f"/console/campaigns/{campaign.id}/{page}").status_code in (403, 404)
        assert browser.get(f"/console/campaigns/{other.id}/{page}").status_code == 200
    assert browser.get(f"/console/qrels/{qrels['id']}/download").status_code in (403, 404)
    refused = post(browser, f"/console/campaigns/{campaign.id}/qrels/cut", csrf, label="x", allow_incomplete="on")
    assert refused.status_code in (403, 404)
    with sessions() as session:
        query = select(func.count()).select_from(QrelsVersion).where(QrelsVersion.campaign_id == campaign.id)
        assert session.scalar(query) >= 1 and "x" not in [v[1] for v in versions(client, organiser, campaign.id)]


# ----------------------------------------------------------------------------------------------------- in chromium


def test_an_organiser_cuts_evaluates_and_publishes_in_the_browser(  # type: ignore[no-untyped-def]
    browser, live_server, make_campaign, client, organiser, sessions
) -> None:
    campaign, runs, _, _ = build_judged_campaign(make_campaign, client, organiser, sessions)
    base = f"{live_server}/console/campaigns/{campaign.id}"
    context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 800})
    page = context.new_page()
    try:
        # sign in at /login with the organiser's token, back to the qrels page
        page.goto(f"{base}/qrels")
        assert page.url.startswith(f"{live_server}/login?next=")
        page.fill("#token", token_of(organiser))
        page.click("button:has-text('Sign in')")
        page.wait_for_url(f"{base}/qrels")
        check_page(page, "qrels", SHOTS)

        # cut a version through the page
        page.fill("#cut-label", "browser-cut")
        page.click("button:has-text('Cut qrels')")
        page.wait_for_url(f"{base}/qrels?cut=browser-cut")
        assert "Version “browser-cut” cut from pool" in page.inner_text("#notice")
        assert page.locator("#versions tbody tr[data-version]").count() == 2
        [(cut_id, _)] = [v for v in versions(client, organiser, campaign.id) if v[1] == "browser-cut"]
        check_page(page, "qrels_cut", SHOTS)

        # an upload error shown by line in the page
        page.fill("#upload-label", "upload")
        page.set_input_files(
            "#upload-file", files=[{"name": "q.txt", "mimeType": "text/plain", "buffer": BAD_QRELS.encode()}]
        )
        page.click("button:has-text('Upload qrels')")
        page.wait_for_load_state()
        assert "line 3:" in page.inner_text("#upload-errors")
        check_page(page, "qrels_errors", SHOTS)

        # start an evaluation against it; the page shows it done
        page.goto(f"{base}/evaluations")
        page.select_option("#evaluation-version", str(cut_id))
        page.click("button:has-text('Start evaluation')")
        page.wait_for_url(f"{base}/evaluations?evaluation=*")
        evaluation_id = int(page.url.rsplit("=", 1)[1])
        row = f"tr[data-evaluation='{evaluation_id}'][data-status='done']"
        page.wait_for_selector(row, timeout=60_000)  # done already, or once the page reloads itself
        assert "browser-cut" in page.inner_text(row)

        # a job queued where no worker looks: its progress bar; the page reloads itself when it is cancelled
        with session_scope(sessions) as session:
            held = Evaluation(campaign_id=campaign.id, qrels_version_id=cut_id, measures={"names": ["AP"]})
            hold(session, held)
            held_id = held.id
        page.goto(f"{base}/evaluations")
        assert page.locator(f"#progress-evaluation-{held_id}").count() == 1
        check_page(page, "evaluations_running", SHOTS)
        with session_scope(sessions) as session:
            job_service.cancel(session, authenticate(session, token_of(organiser)), Evaluation, held_id)
        page.wait_for_selector(f"tr[data-evaluation='{held_id}'][data-status='cancelled']", timeout=15_000)
        assert page.locator("#watching").count() == 0

        # an analysis: a bad parameter named in its form (opened again), then another kind's form and its figure
        page.click("#kind-stability summary")
        page.fill("#an-stability-trials", "many")
        page.click("button:has-text('Start stability')")
        page.wait_for_load_state()
        assert page.get_attribute("#kind-stability", "open") is not None
        assert "is not a whole number" in page.inner_text("#analysis-stability-errors")
        assert page.input_value("#an-stability-trials") == "many"
        check_page(page, "analysis_errors", SHOTS)
        page.click("#kind-ties summary")
        page.fill("#an-ties-measures", "AP")
        page.click("button:has-text('Start ties')")
        page.wait_for_url(f"{base}/evaluations?analysis=*")
        analysis_id = int(page.url.rsplit("=", 1)[1])
        page.wait_for_selector(f"#figure-{analysis_id} img", timeout=60_000)
        page.wait_for_function(f"document.querySelector('#figure-{analysis_id} img').naturalWidth > 0")
        check_page(page, "evaluations", SHOTS)

        # the board preview, then publish: the public board
        page.goto(f"{base}/board")
        assert "Preview — not public." in page.inner_text("#preview")
        assert page.locator("table.board.sortable tbody tr").count() == len(runs)
        check_page(page, "board", SHOTS)
        page.click("button:has-text('Publish the board')")
        page.wait_for_url(f"{live_server}/campaigns/{campaign.id}/leaderboard?published=1")
        assert "Published: this board is public now." in page.inner_text("#notice")
        assert client.get(f"/api/public/campaigns/{campaign.id}/leaderboard").json()["evaluation_id"] == evaluation_id
        anonymous = browser.new_context()
        try:
            assert anonymous.new_page().goto(f"{live_server}/campaigns/{campaign.id}/leaderboard").status == 200
        finally:
            anonymous.close()
        page.goto(f"{base}/board")
        assert "The campaign is published" in page.inner_text("#preview")
    finally:
        context.close()
