"""The console's pool form takes per-topic depths ("1:4, 3:25"): the preview equals the REST preview of the same map
and the build stores it (shown with the pool); a malformed pair or an unknown topic is named at the field with
nothing stored; and the form in a real browser, axe-clean and without horizontal scroll at 390 px and 1280x800."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.storage.models import Pool
from tests.api.helpers import setup_campaign
from tests.web.pages import check_page

SHOTS = "/tmp/h/h27_depths_{name}_{width}.png"
JSON = {"Accept": "application/json"}
DEPTHS = "1:4, 3:25"


def hidden(html: str, name: str) -> str:
    """The value of a hidden form field."""
    found = re.search(rf'name="{name}" value="([^"]*)"', html)
    assert found, f"no field {name}"
    return found.group(1)


def console(client: TestClient, organiser: dict[str, str]) -> tuple[TestClient, str]:
    """A client signed in at /login with the organiser's token (its own cookie jar), and its session's CSRF value."""
    fresh = TestClient(client.app, base_url="http://testserver")
    login = fresh.get("/login")
    token = organiser["Authorization"].split()[1]
    data = {"token": token, "csrf_token": hidden(login.text, "csrf_token"), "next": "/console/"}
    assert fresh.post("/login", data=data, follow_redirects=False).status_code == 303
    return fresh, hidden(fresh.get("/console/").text, "csrf_token")


def form(csrf: str, **fields: str) -> dict[str, str]:
    """A depth pool's build form with per-topic depths and a fixed seed, `fields` changing it."""
    return {"csrf_token": csrf, "kind": "depth", "depth": "10", "depths": DEPTHS, "order": "shuffled", "seed": "3",
            **fields}  # fmt: skip


def pools_of(sessions, campaign_id: int) -> int:  # type: ignore[no-untyped-def]
    """How many pools the campaign has."""
    with sessions() as session:
        return session.scalar(select(func.count()).select_from(Pool).where(Pool.campaign_id == campaign_id))


@pytest.fixture
def closed(make_campaign, client, organiser):  # type: ignore[no-untyped-def]
    """A closed campaign (3 topics, 4 runs of 60 shots per topic) and its console path."""
    campaign, _ = setup_campaign(make_campaign, client, organiser, n_runs=4, depth=60, seed=5)
    return campaign, f"/console/campaigns/{campaign.id}"


def test_the_form_previews_and_builds_per_topic_depths(closed, client, organiser, sessions) -> None:  # type: ignore[no-untyped-def]
    campaign, path = closed
    web, csrf = console(client, organiser)
    preview = web.post(f"{path}/pool/preview", data=form(csrf), headers=JSON).json()
    api = client.post(
        f"/api/campaigns/{campaign.id}/pools/preview",
        json={"kind": "depth", "depth": 10, "depths": {"1": 4, "3": 25}, "seed": 3},
        headers=organiser,
    ).json()
    assert preview == api and preview["depths"] == {"1": 4, "3": 25} and preview["strata"] == [[1, 25, 1.0]]
    shown = web.post(f"{path}/pool/preview", data=form(csrf))
    assert shown.status_code == 200 and '<span id="preview-depths">1:4, 3:25</span>' in shown.text
    assert 'id="build-depths" name="depths" type="text" maxlength="100000" value="1:4, 3:25"' in shown.text
    assert pools_of(sessions, campaign.id) == 0
    built = web.post(f"{path}/pool", data=form(csrf), follow_redirects=False)
    assert built.status_code == 303, built.text
    twin = web.get(f"{path}/pool.json").json()
    assert twin["pool"]["params"]["depths"] == {"1": 4, "3": 25} and twin["pool"]["params"]["depth"] == 10
    assert [t["pooled"] for t in twin["pool"]["topics"]] == [t["pooled"] for t in preview["topics"]]
    page = web.get(f"{path}/pool")
    assert (
        '<dd id="pool-depths">1:4, 3:25</dd>' in page.text and "<dt>Depth (other topics)</dt><dd>10</dd>" in page.text
    )


@pytest.mark.parametrize(
    ("depths", "message"),
    [
        ("1:x", "pair 1 ('1:x') is not TOPIC:DEPTH"),
        ("1:0", "topic 1: depth 0 is not 1..100000"),
        ("1:5, 1:6", "topic 1 is given twice"),
        ("9:5", "unknown topic '9'"),  # the service's check, shown at the same field
    ],
)
def test_bad_depths_are_named_at_the_field_and_nothing_is_stored(
    closed, client, organiser, sessions, depths, message
) -> None:  # type: ignore[no-untyped-def]
    campaign, path = closed
    web, csrf = console(client, organiser)
    for action in ("pool", "pool/preview"):
        page = web.post(f"{path}/{action}", data=form(csrf, depths=depths))
        assert page.status_code == 422, page.text
        error = re.search(r'<span class="field-error" id="build-depths-error">([^<]*)</span>', page.text)
        assert error and message in error.group(1).replace("&#39;", "'"), page.text[-3000:]
        assert 'aria-invalid="true" aria-describedby="build-depths-error"' in page.text
    assert pools_of(sessions, campaign.id) == 0


def test_per_topic_depths_are_for_depth_pools(closed, client, organiser, sessions) -> None:  # type: ignore[no-untyped-def]
    campaign, path = closed
    web, csrf = console(client, organiser)
    # a stratified pool ignores the field (the form keeps it for a depth pool), as it ignores the depth
    built = web.post(f"{path}/pool", data=form(csrf, kind="stratified", strata="1-10:1.0"), follow_redirects=False)
    assert built.status_code == 303
    assert "depths" not in web.get(f"{path}/pool.json").json()["pool"]["params"]


def test_the_form_in_a_browser(browser, live_server, closed, client, organiser, sessions) -> None:  # type: ignore[no-untyped-def]
    campaign, path = closed
    token = organiser["Authorization"].split()[1]
    context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 800})
    page = context.new_page()
    try:
        page.goto(f"{live_server}{path}/pool")
        page.fill("#token", token)
        page.click("button:has-text('Sign in')")
        page.wait_for_url(f"{live_server}{path}/pool")
        page.check("#build-kind-depth")
        page.fill("#build-depth", "10")
        page.fill("#build-depths", "1:4, 3:x")
        page.click("button:has-text('Preview')")
        page.wait_for_load_state()
        assert "is not TOPIC:DEPTH" in page.inner_text("#build-depths-error") and pools_of(sessions, campaign.id) == 0
        check_page(page, "errors", SHOTS)
        page.fill("#build-depths", DEPTHS)
        page.click("button:has-text('Preview')")
        page.wait_for_load_state()
        assert page.inner_text("#preview-depths") == "1:4, 3:25"
        check_page(page, "preview", SHOTS)
        page.click("button:has-text('Build pool')")
        page.wait_for_url(f"{live_server}{path}/pool?built=*")
        assert page.inner_text("#pool-depths") == "1:4, 3:25"
        check_page(page, "built", SHOTS)
    finally:
        context.close()
