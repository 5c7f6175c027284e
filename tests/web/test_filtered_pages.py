"""A filtered public leaderboard page follows the boards' rule: ranks, per-topic best runs and significance groups
come from the runs passing the filter only."""

from __future__ import annotations

import re

from tests.api.helpers import TEAM_RUNS, team_results_campaign


def test_a_filtered_page_ranks_groups_and_picks_best_runs_within_the_filter(client, organiser):
    cid, _ = team_results_campaign(client, organiser)
    assert client.post(f"/api/campaigns/{cid}/publish", json={}, headers=organiser).status_code == 201
    for system_type in "FMR":
        page = client.get(f"/campaigns/{cid}/leaderboard", params={"system_type": system_type})
        assert page.status_code == 200
        inside = {r[1] for r in TEAM_RUNS if r[2] == system_type}
        outside = {r[1] for r in TEAM_RUNS} - inside
        assert not any(re.search(rf"\b{re.escape(name)}\b", page.text) for name in outside), system_type
        assert all(name in page.text for name in inside)
        groups = client.get(f"/api/public/campaigns/{cid}/significance", params={"system_type": system_type}).json()
        assert {name for group in groups["groups"] for name in group} == inside
        board, topics = page.text.split("<h2>Per topic")
        ranks = re.findall(
            r"<td class=\"rank\"[^>]*>(\d+)\b", board
        )  # a rank, then its interval when the board has one
        assert sorted(int(r) for r in ranks) == list(range(1, len(inside) + 1))
        best_runs = re.findall(r"<tr><td>\d+</td><td>([^<]+)</td>", topics)
        assert len(best_runs) == 6 and set(best_runs) <= inside
