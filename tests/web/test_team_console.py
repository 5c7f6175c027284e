"""The team console in a real browser (Debian's chromium via Playwright): sign in with a team token, submit a bad run
(every error by line in the page, nothing stored), submit good runs, withdraw one while submissions are open, see the
results and the per-run report once evaluated, download the bundle, a POST without the CSRF field refused, sign out;
each page axe-clean and without horizontal scroll at 390 px and 1280x800."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.api.helpers import evaluate_campaign, new_campaign
from tests.web.pages import check_page

QRELS = "".join(f"{t} 0 d{i} {int(i <= 4)}\n" for t in ("1", "2") for i in range(1, 9))
GOOD = "".join(f"{t} Q0 d{d} {r + 1} {10 - r} mine\n" for t in ("1", "2") for r, d in enumerate((1, 5, 2, 6)))
BAD = "1 Q0 d1 1 1 x\n3 Q0 d2 1 1 x\n1 Q0 d3 one 1 x\n"
OTHER = "".join(f"{t} Q0 d{d} {r + 1} {10 - r} theirs\n" for t in ("1", "2") for r, d in enumerate((3, 2, 7)))
SHOTS = "/tmp/h/h3_{name}_{width}.png"


def upload(page, name: str, content: str) -> None:  # type: ignore[no-untyped-def]
    """Fill and send the submission form."""
    page.set_input_files("#file", files=[{"name": "run.txt", "mimeType": "text/plain", "buffer": content.encode()}])
    page.fill("#name", name)
    page.click("text=Submit run")
    page.wait_for_load_state()


@pytest.fixture
def campaign(client, organiser):  # type: ignore[no-untyped-def]
    """An open campaign with two topics, our team and another team's run; (campaign, our token, our headers)."""
    handle = new_campaign(client, organiser, 2, max_results=10)
    _, ours = handle.team(f"ours-{handle.id}")
    _, theirs = handle.team(f"theirs-{handle.id}")
    assert handle.upload(theirs, OTHER, name="theirs").status_code == 201
    return handle, ours["Authorization"].split()[1], ours


def test_a_team_s_day_in_the_console(browser, live_server, client, organiser, campaign) -> None:  # type: ignore[no-untyped-def]
    handle, token, ours = campaign
    mine = f"/api/campaigns/{handle.id}/runs"
    context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 800}, accept_downloads=True)
    page = context.new_page()
    try:
        # not signed in: sent to /login, and back once signed in
        page.goto(f"{live_server}/team/")
        assert page.url == f"{live_server}/login?next=%2Fteam%2F"
        check_page(page, "login", SHOTS)
        page.fill("#token", token)
        page.click("button:has-text('Sign in')")
        page.wait_for_url(f"{live_server}/team/")
        assert page.context.cookies()[0]["httpOnly"] is True

        # a bad run: every error by line, nothing stored
        upload(page, "bad", BAD)
        errors = page.inner_text("#upload-errors")
        assert "Not stored" in errors and "line 2:" in errors and "line 3:" in errors and "line 1:" not in errors
        assert client.get(mine, headers=ours).json() == []
        check_page(page, "errors", SHOTS)

        # two good runs, one withdrawn while submissions are open
        upload(page, "a1", GOOD)
        assert "Run submitted" in page.inner_text("main")
        upload(page, "a2", GOOD.replace("mine", "second"))
        assert [r["name"] for r in client.get(mine, headers=ours).json()] == ["a1", "a2"]
        assert page.locator("#runs tbody tr").count() == 2
        check_page(page, "runs", SHOTS)
        page.click("button[aria-label='Withdraw run a2']")
        page.wait_for_load_state()
        assert "Run a2 withdrawn" in page.inner_text("main")
        assert [r["name"] for r in client.get(mine, headers=ours).json()] == ["a1"]

        # the form's CSRF field is required: the same POST without it is refused and changes nothing
        run_id = client.get(mine, headers=ours).json()[0]["id"]
        status = page.evaluate(
            "async url => (await fetch(url, {method: 'POST', body: new FormData()})).status",
            f"/team/runs/{run_id}/withdraw",
        )
        assert status == 403 and len(client.get(mine, headers=ours).json()) == 1

        # evaluated (the organiser's part, by the API): results and the per-run report
        client.post(
            f"/api/campaigns/{handle.id}/qrels",
            data={"label": "q"},
            files={"file": ("q", QRELS.encode())},
            headers=organiser,
        )
        assert client.post(f"/api/campaigns/{handle.id}/close", headers=organiser).status_code == 200
        evaluate_campaign(client, organiser, handle.id, measures=["AP", "P@5"])
        page.goto(f"{live_server}/team/results")
        results = page.inner_text("#results")
        assert "a1" in results and "theirs" not in page.content()
        check_page(page, "results", SHOTS)
        page.goto(f"{live_server}/team/runs/{run_id}/report")
        text = page.inner_text("main")
        assert "Recall-precision curve" in text and "Per topic against the median and best" in text
        assert page.locator("svg[role=img] polyline").count() == 1 and page.locator("figure svg").count() == 2
        # AP of a1 on each topic: (1 + 2/3) / 4 = 0.4167 (d1 at 1, d2 at 3; R = 4)
        assert page.locator("table.per-topic tbody tr").first.inner_text().split("\t")[1] == "0.4167"
        assert "theirs" not in page.content()
        check_page(page, "report", SHOTS)

        # the bundle: one HTML file with every run's report
        page.goto(f"{live_server}/team/")
        with page.expect_download() as download:
            page.click("text=Download all reports (HTML)")
        saved = Path(download.value.path()).read_text()
        assert download.value.suggested_filename.endswith("-reports.html")
        assert "Run a1" in saved and saved.count("<svg") >= 2 and "theirs" not in saved

        # sign out: the session is gone
        page.click("button:has-text('Sign out')")
        page.wait_for_url(f"{live_server}/login")
        page.goto(f"{live_server}/team/results")
        assert page.url.startswith(f"{live_server}/login?next=")
    finally:
        context.close()
