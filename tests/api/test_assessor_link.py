"""An organiser who registers an assessor gets the judging link to send it."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse


def test_new_assessor_comes_with_its_judging_link(client, organiser, make_campaign):
    campaign = make_campaign()
    body = client.post(f"/api/campaigns/{campaign.id}/assessors", json={"name": "ann"}, headers=organiser).json()
    link = urlparse(body["judge_url"])
    assert link.path == "/judge"
    assert parse_qs(link.query) == {"token": [body["token"]]}
    page = client.get(link.path)
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
