"""An organiser who registers an assessor gets a one-time judging link to send it: no secret travels in a request
line (the link is in the URL's fragment, which browsers never send), and the old `?link=` form is withdrawn."""

from __future__ import annotations

import logging
from urllib.parse import parse_qs, urlparse

import pytest

from app.web.access_log import ACCESS_LOGGER, RedactSecrets, install_access_log_redaction, redact


def test_new_assessor_comes_with_a_one_time_judging_link(client, organiser, make_campaign):
    campaign = make_campaign()
    body = client.post(f"/api/campaigns/{campaign.id}/assessors", json={"name": "ann"}, headers=organiser).json()
    link = urlparse(body["judge_url"])
    assert link.path == "/judge" and link.query == ""
    (secret,) = parse_qs(link.fragment)["link"]
    assert set(parse_qs(link.fragment)) == {"link"} and secret.startswith("tp_")
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


@pytest.mark.parametrize("page", ["/judge", "/mark"])
def test_a_link_sent_in_a_query_string_is_withdrawn(client, organiser, make_campaign, page):
    campaign = make_campaign()
    body = client.post(f"/api/campaigns/{campaign.id}/assessors", json={"name": "old"}, headers=organiser).json()
    (secret,) = parse_qs(urlparse(body["judge_url"]).fragment)["link"]
    # the old form of the URL reached the server: the page is served (it says why it refuses the link) ...
    opened = client.get(page, params={"link": secret})
    assert opened.status_code == 200 and "text/html" in opened.headers["content-type"]
    # ... and the link is spent: whoever read it from a log or a proxy cannot trade it
    refused = client.post("/api/judging/session", headers={"Authorization": f"Bearer {secret}"})
    assert refused.status_code == 401 and "expired" in refused.json()["detail"]
    # an unknown or garbage link in the query string is no error
    assert client.get(page, params={"link": "tp_no-such-link"}).status_code == 200
    assert client.get(page, params={"link": "\u00e9" * 50}).status_code == 200


def test_the_page_refuses_a_query_string_link_without_sending_it(client):
    script = client.get("/static/assessor.js").text
    assert "url.hash.slice(1)" in script and 'url.searchParams.has("link")' in script


def test_redact_hides_secrets_and_credential_parameters():
    secret = "tp_" + "A1b2-_" * 7
    assert redact(f"/judge?link={secret}") == "/judge?link=[redacted]"
    assert redact(f"/judge?x=1&link=tp%5F{secret[3:]}&y=2") == "/judge?x=1&link=[redacted]&y=2"
    assert redact(f"/api/x?token={secret}") == "/api/x?token=[redacted]"
    assert secret not in redact(f"/anything/{secret}/else") and "/anything/tp_[redacted]/else" == redact(
        f"/anything/{secret}/else"
    )
    assert redact("/api/campaigns/3/leaderboard?measure=map&sort_key=1") == (
        "/api/campaigns/3/leaderboard?measure=map&sort_key=1"
    )


def test_the_access_logger_redacts_request_lines(caplog):
    install_access_log_redaction()
    install_access_log_redaction()  # once per process, however many apps are made
    logger = logging.getLogger(ACCESS_LOGGER)
    assert sum(isinstance(f, RedactSecrets) for f in logger.filters) == 1
    secret = "tp_" + "x" * 43
    with caplog.at_level(logging.INFO, logger=ACCESS_LOGGER):
        logger.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:1", "GET", f"/judge?link={secret}", "1.1", 200)
    assert secret not in caplog.text and '"GET /judge?link=[redacted] HTTP/1.1" 200' in caplog.text
