"""Plain helpers of the browser tests (fixtures are in the conftest.py files): what the judging page shows, and a
fresh judging link. Import them from here, never from another test module."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


# the page is settled: no request in flight, and either a new item than `task` is shown or the queue is empty
SETTLED = """task => {
    const busy = document.getElementById('main').getAttribute('aria-busy') !== 'false';
    const shown = document.getElementById('item').dataset.task;
    const done = !document.getElementById('message').hidden;
    return !busy && ((shown !== undefined && shown !== task) || done);
}"""

# the <video> on screen (the page has two, one of them hidden and preloading the next shot)
SHOWN_VIDEO = "document.querySelector('.shot video:not([hidden])')"


def judge_link(client: TestClient, organiser: dict[str, str], assessor_id: int) -> str:
    """A fresh one-time judging link (a path and its #link= fragment) for an assessor."""
    response = client.post(f"/api/assessors/{assessor_id}/judge-link", headers=organiser)
    assert response.status_code == 201, response.text
    url = response.json()["judge_url"]
    return url[url.index("/judge") :]


def shown_task(page) -> str:  # type: ignore[no-untyped-def]
    """The task id of the item the page shows."""
    return page.get_attribute("#item", "data-task")


def wait_status(page, prefix: str) -> None:  # type: ignore[no-untyped-def]
    """Wait until the aria-live region announces a message starting with `prefix`."""
    page.wait_for_function("p => document.getElementById('status').textContent.startsWith(p)", arg=prefix)
