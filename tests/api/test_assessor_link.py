"""An organiser who registers an assessor gets a one-time judging link to send it: no token travels in a URL."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse


def test_new_assessor_comes_with_a_one_time_judging_link(client, organiser, make_campaign):
    campaign = make_campaign()
    body = client.post(f"/api/campaigns/{campaign.id}/assessors", json={"name": "ann"}, headers=organiser).json()
    link = urlparse(body["judge_url"])
    assert link.path == "/judge"
    (secret,) = parse_qs(link.query)["link"]
    assert set(parse_qs(link.query)) == {"link"}
    assert body["token"] not in body["judge_url"]
    page = client.get(link.path)
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    # the page trades the link (in a header) for a session token: the token comes in the response body, never a URL
    session = client.post("/api/judging/session", headers={"Authorization": f"Bearer {secret}"})
    assert session.status_code == 201, session.text
    token = session.json()["token"]
    assert token != body["token"] and token not in body["judge_url"]
    progress = client.get("/api/judging/progress", headers={"Authorization": f"Bearer {token}"})
    assert progress.status_code == 200, progress.text
