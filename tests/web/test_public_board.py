"""The published board in a browser: every measure's mean with its interval, sortable columns, ranks within each run
type, baselines marked, dates, anonymised team names on request; no horizontal page scroll at 390 px and 1280x800,
and axe-core clean. Screenshots go to /tmp/h/h1_*.png when /tmp/h exists."""

from __future__ import annotations

from pathlib import Path

from tests.api import helpers
from tests.web.pages import axe_violations

SHOTS = Path("/tmp/h")
SIZES = ((1280, 800), (390, 844))


def _cells(page, selector: str) -> list[list[str]]:  # type: ignore[no-untyped-def]
    """The text of every body cell of the tables matched by `selector`, row by row."""
    return [
        [c.inner_text().strip() for c in row.query_selector_all("td")]
        for row in page.query_selector_all(f"{selector} tbody tr")
    ]


def test_the_published_board_shows_every_measure_sorts_marks_baselines_and_fits(  # type: ignore[no-untyped-def]
    browser, live_server, make_campaign, client, organiser, sessions
):
    campaign, run_names, *_ = helpers.build_judged_campaign(make_campaign, client, organiser, sessions)
    runs = client.get(f"/api/campaigns/{campaign.id}/runs", headers=organiser).json()
    baseline = next(r for r in runs if r["name"] == run_names[1])
    marked = client.patch(f"/api/runs/{baseline['id']}", json={"baseline": True}, headers=organiser)
    assert marked.status_code == 200 and marked.json()["baseline"] is True
    changed = client.patch(f"/api/campaigns/{campaign.id}", json={"anonymise_teams": True}, headers=organiser)
    assert changed.status_code == 200 and changed.json()["anonymise_teams"] is True
    helpers.evaluate_campaign(client, organiser, campaign.id)
    assert client.post(f"/api/campaigns/{campaign.id}/publish", json={}, headers=organiser).status_code == 201
    board = client.get(f"/api/public/campaigns/{campaign.id}/leaderboard").json()
    measures = board["measures"]
    assert len(measures) > 3
    for width, height in SIZES:
        context = browser.new_context(viewport={"width": width, "height": height}, bypass_csp=True)
        page = context.new_page()
        page.goto(f"{live_server}/campaigns/{campaign.id}/leaderboard")
        page.wait_for_selector("table.sortable th button.sort")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        headers = page.eval_on_selector_all(
            "table.sortable thead th", "els => els.map(e => e.innerText.replace(/\\s+/g, ' ').trim())"
        )
        ranked = f"{board['measure']} [95 % interval]"  # the measure ranked by comes first
        assert headers[:7] == ["# (interval)", "Run", ranked, "Tier", "Team", "Type", "Submitted"]
        assert headers[7:] == [m for m in measures if m != board["measure"]]
        rows = _cells(page, "table.sortable")
        assert sorted(r[1].split()[0] for r in rows) == sorted(run_names)
        assert {r[4] for r in rows} == {"Team A", "Team B"}  # no real name on the page
        assert f"team{campaign.id}_" not in page.content()
        assert [r[1] for r in rows if "baseline" in r[1]] == [f"{run_names[1]} baseline"]
        assert all(len(r[6]) == 10 and r[6][:2] == "20" for r in rows)  # the submission date
        page.screenshot(path=str(SHOTS / f"h1_board_{width}.png"), full_page=True) if SHOTS.exists() else None
        # sort by the last measure: best first, aria-sort says so; a second press reverses
        last = page.locator("table.sortable thead th").nth(len(headers) - 1)
        last.locator("button").click()
        assert last.get_attribute("aria-sort") == "descending"
        values = page.eval_on_selector_all(
            "table.sortable tbody tr td:last-child", "els => els.map(e => parseFloat(e.dataset.value))"
        )
        assert values == sorted(values, reverse=True)
        last.locator("button").click()
        assert last.get_attribute("aria-sort") == "ascending"
        assert page.locator("table.sortable th[aria-sort]").count() == 1
        page.locator("table.sortable thead th").nth(0).locator("button").click()
        assert [int(r[0].split()[0]) for r in _cells(page, "table.sortable")] == list(range(1, len(rows) + 1))
        assert axe_violations(page) == [], width
        page.goto(f"{live_server}/campaigns/{campaign.id}/report")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.screenshot(path=str(SHOTS / f"h1_report_{width}.png"), full_page=True) if SHOTS.exists() else None
        context.close()


def test_without_script_the_headers_rank_by_a_measure(browser, live_server, make_campaign, client, organiser, sessions):  # type: ignore[no-untyped-def]
    """Progressive enhancement: with JavaScript off the table is there and a measure's header link ranks by it."""
    campaign, *_ = helpers.build_judged_campaign(make_campaign, client, organiser, sessions)
    helpers.evaluate_campaign(client, organiser, campaign.id)
    assert client.post(f"/api/campaigns/{campaign.id}/publish", json={}, headers=organiser).status_code == 201
    context = browser.new_context(viewport={"width": 390, "height": 844}, java_script_enabled=False)
    page = context.new_page()
    page.goto(f"{live_server}/campaigns/{campaign.id}/leaderboard")
    assert page.locator("th button.sort").count() == 0
    page.click("table.sortable thead th >> a:text-is('P@10')")
    page.wait_for_url("**measure=P%4010")
    assert "ranked by P@10" in page.inner_text("p.muted")
    expected = client.get(f"/api/public/campaigns/{campaign.id}/leaderboard", params={"measure": "P@10"}).json()
    shown = [r[1] for r in _cells(page, "table.sortable")]
    assert shown == [r["run"] for rows in sorted(expected["by_system_type"].items()) for r in rows[1]]
    context.close()
