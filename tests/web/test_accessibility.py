"""Every page a user reads passes axe-core (WCAG 2.1 A and AA) with no serious or critical violation."""

from __future__ import annotations

from tests.api import helpers
from tests.web.pages import axe_violations


def test_the_public_leaderboard_and_report_pass_axe(browser, live_server, make_campaign, client, organiser, sessions):  # type: ignore[no-untyped-def]
    """A published campaign's board and report, at 1280x800 and 390 px."""
    campaign, *_ = helpers.build_judged_campaign(make_campaign, client, organiser, sessions)
    helpers.evaluate_campaign(client, organiser, campaign.id)
    assert client.post(f"/api/campaigns/{campaign.id}/publish", json={}, headers=organiser).status_code == 201
    for width, height in ((1280, 800), (390, 844)):
        context = browser.new_context(viewport={"width": width, "height": height}, bypass_csp=True)
        page = context.new_page()
        for path in (f"/campaigns/{campaign.id}/leaderboard", f"/campaigns/{campaign.id}/report"):
            page.goto(live_server + path)
            assert axe_violations(page) == [], (path, width)
        context.close()
