"""The Quick start's demo: the whole loop over REST ends in a published leaderboard and report."""

from __future__ import annotations

from rich.console import Console

from app.cli.demo import run_demo
from tests.api.helpers import SMALL_DEMO


def test_demo_runs_the_whole_loop(small_demo, live_server, client, organiser):
    token = organiser["Authorization"].split()[1]
    pages = small_demo  # run_demo(live_server, token, SMALL_DEMO), shared with tests/cli/test_demo_models.py
    cid = pages["campaign_id"]
    campaign = client.get(f"/api/campaigns/{cid}", headers=organiser).json()
    assert campaign["status"] == "published"
    board = client.get(f"/api/public/campaigns/{cid}/leaderboard").json()
    assert board["measure"] == "xinfAP" and len(board["rows"]) == 8
    assert {r["team"] for r in board["rows"]} == {"alpha", "beta", "gamma", "delta"}
    # the simulated teams differ in skill: the best team's runs lead the board
    assert board["rows"][0]["team"] == "alpha"
    pool = client.get(
        f"/api/pools/{client.get(f'/api/campaigns/{cid}/qrels', headers=organiser).json()[0]['pool_id']}/progress",
        headers=organiser,
    ).json()
    assert all(t["done"] == t["total"] for t in pool["topics"])
    assert any(t["round"] == 2 for t in pool["topics"])  # quality control asked for second opinions
    assert client.get(pages["report"].replace(live_server, "")).status_code == 200
    # running it again finds the published campaign and does nothing
    assert run_demo(live_server, token, SMALL_DEMO, out=Console(quiet=True))["campaign_id"] == cid
