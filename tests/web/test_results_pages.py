"""The published leaderboard and report in a real browser; nothing shows before publication."""

from __future__ import annotations

from tests.api.helpers import wait_done


def test_pages_are_not_there_before_publication(judged_campaign, client):
    campaign, *_ = judged_campaign
    assert client.get(f"/campaigns/{campaign.id}/leaderboard").status_code == 404
    assert client.get(f"/campaigns/{campaign.id}/report").status_code == 404
    assert f"/campaigns/{campaign.id}/" not in client.get("/").text


def test_published_leaderboard_and_report_in_a_browser(
    judged_campaign,
    client,
    organiser,
    live_server,
    browser,
    tmp_path,
):
    campaign, run_names, _, _ = judged_campaign
    evaluation = client.post(f"/api/campaigns/{campaign.id}/evaluations", json={}, headers=organiser).json()
    wait_done(client, organiser, evaluation["id"])
    assert client.post(f"/api/campaigns/{campaign.id}/publish", json={}, headers=organiser).status_code == 201
    expected = client.get(f"/api/public/campaigns/{campaign.id}/leaderboard").json()
    page = browser.new_page(viewport={"width": 1100, "height": 1400})
    try:
        page.goto(f"{live_server}/")
        page.click(f"a[href='/campaigns/{campaign.id}/leaderboard']")
        page.wait_for_selector("table.board")
        assert page.title().endswith("leaderboard · trecpool")
        shown = [
            (cells[1], float(cells[2].split()[0]))  # the ranked measure's mean, before its interval
            for cells in (
                [c.inner_text().strip() for c in row.query_selector_all("td")]
                for row in page.query_selector_all("section:has(h2:text-matches('System type')) tbody tr")
            )
        ]
        assert sorted(shown) == sorted((r["run"], round(r["score"], 4)) for r in expected["rows"])
        assert {name for name, _ in shown} == set(run_names)
        twin = page.get_attribute("link[rel=alternate]", "href")
        assert client.get(twin).json()["rows"] == expected["rows"]
        page.screenshot(path=str(tmp_path / "leaderboard.png"), full_page=True)
        page.select_option("#rank-measure", "P@10")
        page.click("form.rank-by button")
        page.wait_for_url("**measure=P%4010")
        assert "ranked by P@10" in page.inner_text("p.muted")
        page.click("text=report")
        page.wait_for_selector("figure svg")
        assert len(page.query_selector_all("figure svg")) == 7  # + strata, inferred relevant, judged fraction
        headings = page.eval_on_selector_all("h2", "els => els.map(e => e.textContent)")
        assert {"Overall scores by run type", "Judgements", "Easy and hard topics", "Top runs per topic"} <= set(
            headings
        )
        assert "relevant" in page.inner_text("section:has(h2:text-is('Judgements')) p")
        page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    finally:
        page.close()
