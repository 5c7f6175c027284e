"""The judging page's keys in chromium: a media host that does not answer named as unreachable."""

from __future__ import annotations

from tests.api.helpers import make_assessor, setup_campaign
from tests.web.pages import SETTLED, judge_link


def _judging_page(make_campaign, client, organiser, live_server, browser, template: str):  # type: ignore[no-untyped-def]
    """The judging page of a fresh assessor owning topic 1 of a depth-3 pool whose media follow `template`."""
    campaign, _ = setup_campaign(make_campaign, client, organiser, n_runs=2, depth=60, seed=8)
    patched = client.patch(f"/api/campaigns/{campaign.id}", json={"media_url_template": template}, headers=organiser)
    assert patched.status_code == 200, patched.text
    pool = client.post(
        f"/api/campaigns/{campaign.id}/pools", json={"kind": "depth", "depth": 3, "seed": 3}, headers=organiser
    ).json()
    assessor_id, _ = make_assessor(client, organiser, campaign, "ann")
    body = {"assignments": [{"topic": "1", "assessor_id": assessor_id}]}
    assert client.post(f"/api/pools/{pool['id']}/assignments", json=body, headers=organiser).status_code == 201
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.route("http://media.invalid/**", lambda route: route.abort("connectionrefused"))
    page.goto(f"{live_server}{judge_link(client, organiser, assessor_id)}")
    page.wait_for_function(SETTLED, arg="")
    return page, errors


def test_an_unreachable_media_host_is_named(make_campaign, client, organiser, live_server, browser):
    page, errors = _judging_page(
        make_campaign, client, organiser, live_server, browser, "http://media.invalid/{video_id}.webm"
    )
    page.wait_for_function("() => !document.getElementById('placeholder').hidden")
    assert page.text_content("#placeholder-text") == "The media host media.invalid is unreachable"
    assert page.text_content("#placeholder-shot") == page.evaluate("document.getElementById('shot-id').textContent")
    assert not errors
    page.close()
