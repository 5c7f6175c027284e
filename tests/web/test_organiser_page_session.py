"""The organiser page and its agreement page with the console's browser session: signed in at /login, the panel
loads by the HttpOnly cookie (no token typed, none in sessionStorage), a job's Cancel posts the console's cancel form
with the session's CSRF value; without a session the page offers a sign-in link and the token form, and does not ask
the server without one."""

from __future__ import annotations

import re

from app.storage.database import session_scope
from app.storage.models import Evaluation
from tests.api.helpers import build_judged_campaign, hold


def test_a_signed_in_organiser_sees_the_panel_and_cancels_by_the_session(  # type: ignore[no-untyped-def]
    browser, live_server, make_campaign, client, organiser, sessions
) -> None:
    campaign, _, qrels, _ = build_judged_campaign(make_campaign, client, organiser, sessions)
    with session_scope(sessions) as session:
        held = Evaluation(campaign_id=campaign.id, qrels_version_id=qrels["id"], measures={"names": ["AP"]})
        hold(session, held)
        held_id = held.id
    page_url = f"{live_server}/organise/campaigns/{campaign.id}"
    context = browser.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=True)
    page = context.new_page()
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/panel" in r.url else None)
    try:
        # no session: the token form with a sign-in link, and the panel asked for once only
        page.goto(page_url)
        page.wait_for_selector("#token-form:not([hidden])")
        assert page.get_attribute("#token-form a", "href") == f"/login?next=/organise/campaigns/{campaign.id}"
        page.wait_for_timeout(300)
        assert asked == []  # no session cookie came with the page: nothing to ask with

        # signed in at /login: back here, the panel by the cookie, no token in the tab
        page.click("#token-form a")
        page.fill("#token", organiser["Authorization"].split()[1])
        page.click("button:has-text('Sign in')")
        page.wait_for_url(page_url)
        page.wait_for_selector(f"tr[data-job='evaluation-{held_id}']")
        assert page.is_hidden("#token-form") and page.is_hidden("#forget")
        assert page.evaluate("Object.keys(sessionStorage)") == []
        cancel = page.locator(f"tr[data-job='evaluation-{held_id}'] button.cancel")
        assert cancel.get_attribute("data-cancel-url") == f"/console/evaluations/{held_id}/cancel"
        cancel.click()
        page.wait_for_selector(f"tr[data-job='evaluation-{held_id}'][data-status='cancelled']")
        assert client.get(f"/api/evaluations/{held_id}", headers=organiser).json()["status"] == "cancelled"

        # the agreement page asks with the same session: no token form
        page.goto(f"{page_url}/agreement")
        page.wait_for_function("document.getElementById('main').getAttribute('aria-busy') === 'false'")
        assert page.is_hidden("#token-form")
    finally:
        context.close()


def test_the_panel_takes_the_cookie_for_reads_only(client, organiser, make_campaign, sessions) -> None:  # type: ignore[no-untyped-def]
    from fastapi.testclient import TestClient

    campaign, _, qrels, _ = build_judged_campaign(make_campaign, client, organiser, sessions)
    with session_scope(sessions) as session:
        held = Evaluation(campaign_id=campaign.id, qrels_version_id=qrels["id"], measures={"names": ["AP"]})
        hold(session, held)
        held_id = held.id
    web = TestClient(client.app, base_url="http://testserver")
    form = web.get("/login")
    token = organiser["Authorization"].split()[1]
    web.post(
        "/login",
        data={"token": token, "csrf_token": re.search(r'name="csrf_token" value="([^"]*)"', form.text).group(1)},
    )
    panel = web.get(f"/organise/campaigns/{campaign.id}/panel")
    assert (
        panel.status_code == 200 and f'data-cancel-url="/console/evaluations/{held_id}/cancel" data-csrf=' in panel.text
    )
    assert web.get(f"/api/campaigns/{campaign.id}/overview").status_code == 401  # the API proper: bearer only
    anonymous = TestClient(client.app, base_url="http://testserver")
    assert anonymous.get(f"/organise/campaigns/{campaign.id}/panel").status_code == 401
    bearer = client.get(f"/organise/campaigns/{campaign.id}/panel", headers=organiser)
    assert bearer.status_code == 200 and "data-csrf=" not in bearer.text
    assert f'data-cancel-url="/api/evaluations/{held_id}/cancel"' in bearer.text
    # a cookie does not make a change: the API's cancel wants the bearer token
    assert web.post(f"/api/evaluations/{held_id}/cancel").status_code == 401
