"""Plain helpers of the browser tests (fixtures are in the conftest.py files): what the judging page shows, a fresh
judging link, and axe-core's accessibility check. Import them from here, never from another test module."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
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


# axe-core, from npm (`npm ci` at the repository's root installs it: package.json, test-only)
AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
SERIOUS = ("serious", "critical")


def axe_violations(page, impacts: tuple[str, ...] = SERIOUS, exclude: str | None = None) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    """axe-core's violations of the page as shown (WCAG 2.1 A and AA rules) of the given impacts, each with its rule
    id, impact, help and the first targets; a skip saying how to get axe-core when it is missing. `exclude`: a CSS
    selector of parts left out (repeats of parts checked). Open the page in a context made with `bypass_csp=True`:
    the pages' Content-Security-Policy refuses the injected script otherwise."""
    if not AXE.exists():
        pytest.skip("accessibility checks need axe-core: npm ci (package.json at the repository's root)")
    if not page.evaluate("() => typeof axe !== 'undefined'"):  # once per document: check_page asks at both sizes
        page.add_script_tag(path=str(AXE))
    found = page.evaluate(
        """async exclude => {
            const tags = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];
            const context = exclude ? {exclude: [[exclude]]} : document;
            const result = await axe.run(context, {runOnly: {type: "tag", values: tags}});
            return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                                                targets: v.nodes.slice(0, 3).map(n => n.target.join(" "))}));
        }""",
        exclude,
    )
    return [v for v in found if v["impact"] in impacts]


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


SIZES = ((390, 844), (1280, 800))  # a phone and a laptop: every page fits both


def fits(page) -> bool:  # type: ignore[no-untyped-def]
    """No horizontal scroll."""
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))


# what reaches past the window's right edge (outside boxes that scroll or clip), to say what scrolls sideways
STICKING_OUT = """() => {
    const clipped = e => { for (let a = e.parentElement; a; a = a.parentElement) {
        if (getComputedStyle(a).overflowX !== 'visible') return true; } return false; };
    return [...document.querySelectorAll('body *')]
        .filter(e => e.getBoundingClientRect().right > window.innerWidth + 0.5 && !clipped(e))
        .slice(0, 5).map(e => `${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}.${[...e.classList].join('.')}`
                              + ` ${Math.round(e.getBoundingClientRect().right)} px`);
}"""


def check_page(page, name: str, shots: str, *, full_page: bool = True, exclude: str | None = None) -> None:  # type: ignore[no-untyped-def]
    """At each of SIZES: no horizontal scroll (else what sticks out is named), axe-clean (`exclude`: see
    axe_violations) and a screenshot (`shots`: a path with {name}, {width}; the window only unless `full_page`).
    The page is left at 1280x800."""
    Path(shots).parent.mkdir(parents=True, exist_ok=True)
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.screenshot(path=shots.format(name=name, width=width), full_page=full_page)
        assert fits(page), f"{name} scrolls sideways at {width} px: {page.evaluate(STICKING_OUT)}"
        found = axe_violations(page, exclude=exclude)
        assert found == [], f"{name} at {width} px: {found}"
    page.set_viewport_size({"width": 1280, "height": 800})


def marking_pool(make_campaign, client: TestClient, organiser: dict[str, str]) -> tuple[Any, dict[str, Any], int]:  # type: ignore[no-untyped-def]
    """A closed moment campaign, its depth-2 moment pool, and one assessor (ann) owning both topics."""
    from tests.api.helpers import MOMENT_RUNS

    campaign = make_campaign(n_topics=2, task_kind="moments", media_url_template="http://media.invalid/{video_id}.wav")
    assert campaign.set_collection("s1 vidA 0 60\ns2 vidB 0 60\n").status_code == 200
    _, team = campaign.team()
    for name, text in MOMENT_RUNS.items():
        assert campaign.upload(team, text, name=name).status_code == 201
    assert client.post(f"/api/campaigns/{campaign.id}/close", headers=organiser).status_code == 200
    pool = client.post(
        f"/api/campaigns/{campaign.id}/moment-pools", json={"depth": 2, "iou": 0.5, "seed": 11}, headers=organiser
    ).json()
    body = client.post(f"/api/campaigns/{campaign.id}/assessors", json={"name": "ann"}, headers=organiser).json()
    assignments = [{"topic": t, "assessor_id": body["id"]} for t in ("1", "2")]
    response = client.post(f"/api/pools/{pool['id']}/assignments", json={"assignments": assignments}, headers=organiser)
    assert response.status_code == 201, response.text
    return campaign, pool, body["id"]
