"""The organiser panel's Live section shows what the pool's live view says."""

from __future__ import annotations

import re

from tests.api.helpers import live_judged_pool


def test_the_panel_shows_the_live_view_of_the_pool(make_campaign, client, organiser):  # type: ignore[no-untyped-def]
    campaign, pool, _, _ = live_judged_pool(make_campaign, client, organiser, 20)
    live = client.get(f"/api/pools/{pool['id']}/live", headers=organiser).json()
    panel = client.get(f"/organise/campaigns/{campaign.id}/panel", headers=organiser)
    assert panel.status_code == 200
    html = panel.text
    assert 'id="live"' in html
    tau = re.search(r'id="live-tau">([^<]*)<', html).group(1)
    drop = re.search(r'id="live-drop">([^<]*)<', html).group(1)
    assert tau == f"{live['reusability']['tau_b']:.3f}" and drop == f"{live['reusability']['max_drop']:.3f}"
    for topic in live["topics"]:
        assert f"<td>{topic['judged']} of {topic['pooled']}</td><td>{topic['relevant']}</td>" in html
