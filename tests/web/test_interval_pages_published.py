"""End to end: the published leaderboard and report pages print the intervals, rank intervals, tiers and pairwise
differences their JSON twins hold, the report's figure labels its error bars, and both pages fit a 390 px screen."""

from __future__ import annotations

from tests.api.helpers import evaluate_campaign
from tests.web.interval_documents import body_rows, text


def test_published_pages_show_the_intervals_the_json_holds(  # type: ignore[no-untyped-def]
    judged_campaign, client, organiser, live_server, browser, tmp_path
) -> None:
    campaign, run_names, _, _ = judged_campaign
    evaluate_campaign(client, organiser, campaign.id)
    assert client.post(f"/api/campaigns/{campaign.id}/publish", json={}, headers=organiser).status_code == 201
    board = client.get(f"/api/public/campaigns/{campaign.id}/leaderboard").json()
    assert board["interval"]["text"] and {r["run"] for r in board["rows"]} == set(run_names)
    html = client.get(f"/campaigns/{campaign.id}/leaderboard").text
    shown = {r[1]: r for r in body_rows(html, "intervals")}
    for row in (r for rows in board["by_system_type"].values() for r in rows):  # ranked within the run type
        cells = shown[row["run"]]
        assert cells[0] == f"{row['rank']} ({row['rank_low']}–{row['rank_high']})"
        assert cells[2] == f"{row['score']:.4f} [{row['ci_low']:.4f}, {row['ci_high']:.4f}]"
        assert cells[3] == str(row["tier"])
    assert f"Intervals: {board['interval']['text']}." in text(html)
    significance = client.get(f"/api/public/campaigns/{campaign.id}/significance").json()
    pairs = body_rows(html, "pairs")
    assert len(pairs) == len(run_names) * (len(run_names) - 1) // 2
    assert [(p[0], p[1]) for p in pairs] == [(p["run_a"], p["run_b"]) for p in significance["pairs"]]
    assert [p[5] for p in pairs] == [f"{p['adjusted_pvalue']:.4f}" for p in significance["pairs"]]
    report = client.get(f"/api/public/campaigns/{campaign.id}/report").json()
    page = client.get(f"/campaigns/{campaign.id}/report").text
    overall = {r[1]: r for r in body_rows(page, "overall")}
    for row in (r for rows in report["overall"].values() for r in rows):
        assert overall[row["run"]][4] == f"{row['score']:.4f} [{row['ci_low']:.4f}, {row['ci_high']:.4f}]"
    assert f"Intervals: {report['interval']['text']}." in text(page)
    assert f"mean {report['measure']} ({report['interval']['level']:.0%} interval)" in page  # the figure's axis
    page = browser.new_page(viewport={"width": 390, "height": 844})
    try:
        for path in ("leaderboard", "report"):
            page.goto(f"{live_server}/campaigns/{campaign.id}/{path}")
            assert page.evaluate("document.documentElement.scrollWidth") <= 390, path
            page.click("details.pairs summary")
            page.screenshot(path=str(tmp_path / f"{path}-390.png"), full_page=True)
            page.set_viewport_size({"width": 1100, "height": 900})
            page.screenshot(path=str(tmp_path / f"{path}-1100.png"), full_page=True)
            page.set_viewport_size({"width": 390, "height": 844})
    finally:
        page.close()
