"""The published board with a novelty run's score and the report with its novelty scores and the overview's judged
share: in chromium they fit a phone and a laptop and pass axe-core."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import update

from app.storage.models import Run
from tests.api.helpers import wait_done
from tests.web.pages import check_page

STATIC = Path(__file__).resolve().parents[2] / "app/web/static"
SHOTS = "/tmp/novelty-shots/{name}-{width}.png"
TYPES = {"css": "text/css", "js": "text/javascript"}


def test_novelty_board_and_report_fit_and_pass_axe(judged_campaign, client, organiser, sessions, browser):  # type: ignore[no-untyped-def]
    campaign, _, _, _ = judged_campaign
    runs = client.get(f"/api/campaigns/{campaign.id}/runs", headers=organiser).json()
    with sessions() as session:
        session.execute(update(Run).where(Run.id == runs[1]["id"]).values(novelty=True))
        session.commit()
    evaluation = client.post(f"/api/campaigns/{campaign.id}/evaluations", json={}, headers=organiser).json()
    wait_done(client, organiser, evaluation["id"])
    assert client.post(f"/api/campaigns/{campaign.id}/publish", json={}, headers=organiser).status_code == 201
    pages = {name: client.get(f"/campaigns/{campaign.id}/{name}").text for name in ("leaderboard", "report")}
    assert "novelty score" in pages["leaderboard"] and ">Novelty scores<" in pages["report"]

    def serve(route) -> None:  # type: ignore[no-untyped-def]
        """The rendered pages, and the static files they link, from a host of their own."""
        path = route.request.url.split("pages.test", 1)[1].split("?", 1)[0]
        if path.startswith("/static/"):
            file = STATIC / path.removeprefix("/static/")
            route.fulfill(body=file.read_text(), content_type=TYPES.get(file.suffix[1:], "text/plain"))
        else:
            route.fulfill(body=pages[path.rsplit("/", 1)[1]], content_type="text/html")

    context = browser.new_context(bypass_csp=True)
    page = context.new_page()
    try:
        page.route("http://pages.test/**", serve)
        for name in pages:
            page.goto(f"http://pages.test/{name}")
            check_page(page, f"novelty-{name}", SHOTS)
        page.goto("http://pages.test/leaderboard")
        assert page.locator(".novelty-score").count() == 1
    finally:
        context.close()
