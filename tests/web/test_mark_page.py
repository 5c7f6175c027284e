"""The moment marking page in a real browser (Debian's chromium via Playwright): marking by keyboard, going back,
blind payloads, the stored segments, and an evaluation on the ground truth cut from them."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from app.evaluation.moments import evaluate_moments, parse_moment_ground_truth, parse_moment_run
from app.storage.models import MomentJudgement, MomentPoolItem
from tests.api.helpers import MOMENT_BLIND_KEYS, MOMENT_RUNS, auth, wait_done
from tests.web.judging_media import serve_with_ranges, silence_wav
from tests.web.pages import marking_pool

# the page is settled: nothing in flight, and an item other than `shown` is on screen, or the queue is done
SETTLED = """shown => {
    const busy = document.getElementById('main').getAttribute('aria-busy') !== 'false';
    const item = document.getElementById('item').dataset.item;
    const done = !document.getElementById('message').hidden;
    return !busy && ((item !== undefined && item !== shown) || done);
}"""


def _shown(page) -> str:  # type: ignore[no-untyped-def]
    return page.get_attribute("#item", "data-item") or ""


def _press(page, *keys: str) -> None:  # type: ignore[no-untyped-def]
    for key in keys:
        page.keyboard.press(key)


def _submit(page, key: str) -> None:  # type: ignore[no-untyped-def]
    shown = _shown(page)
    page.keyboard.press(key)
    page.wait_for_function(SETTLED, arg=shown)


def test_marking_by_keyboard_stores_segments_and_evaluates_on_them(
    make_campaign, client, organiser, live_server, sessions, browser
):
    campaign, pool, assessor_id = marking_pool(make_campaign, client, organiser)
    link = client.post(f"/api/assessors/{assessor_id}/judge-link", headers=organiser).json()["judge_url"]
    fragment = link[link.index("#") :]
    page = browser.new_page(viewport={"width": 1100, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    responses = []
    page.on("response", lambda r: responses.append(r) if "/api/moment-judging/" in r.url else None)
    wav = silence_wav(60)
    page.route("http://media.invalid/**", lambda route: serve_with_ranges(route, wav))
    page.goto(f"{live_server}/mark{fragment}")
    page.wait_for_function(SETTLED, arg="")
    assert "link" not in page.url and page.url.endswith("/mark")

    expected: dict[int, list[list[float]]] = {}
    proposals: dict[int, tuple[float, float]] = {}
    plans = [
        # [ at the proposal's start, 5 s right, 5 x 0.1 s left, ] : [s, s + 4.5]
        (["[", *["ArrowRight"] * 5, *["Shift+ArrowLeft"] * 5, "]"], "Enter", lambda s, e: [[s, s + 4.5]]),
        # accept the proposal, move its end to s + 2; then a second moment [s + 12, s + 15]
        (
            ["a", "ArrowRight", "ArrowRight", "]", "Escape", *["ArrowRight"] * 10, "[", *["ArrowRight"] * 3, "]"],
            "Enter",
            lambda s, e: [[s, s + 2], [s + 12, s + 15]],
        ),
        ([], "n", lambda s, e: []),
        # a start, then accept the proposal as is (the pending start is dropped)
        (["ArrowLeft", "[", "a"], "Enter", lambda s, e: [[s, e]]),
        ([], "n", lambda s, e: []),
    ]
    for keys, submit_key, marks in plans:
        assert page.is_hidden("#message")
        item = int(_shown(page))
        start = float(page.evaluate("document.getElementById('playhead-text').textContent"))
        with sessions() as session:
            row = session.get(MomentPoolItem, item)
            proposals[item] = (row.start, row.end)
        assert start == row.start  # the playhead starts at the proposal
        assert page.text_content("#video-id") == row.video_id
        page.wait_for_function("() => !document.getElementById('video').hidden")
        _press(page, *keys)
        expected[item] = marks(row.start, row.end)
        shown_list = [li.strip() for li in page.locator("#segment-list li").all_text_contents()]
        assert shown_list == [f"{s:.1f} – {e:.1f} s" for s, e in expected[item]]
        _submit(page, submit_key)
        what = f"{len(expected[item])} moment" if expected[item] else "none relevant"
        page.wait_for_function("p => document.getElementById('status').textContent.startsWith(p)", arg=f"Saved: {what}")
    assert page.is_visible("#message") and "All done" in page.text_content("#message")
    assert page.text_content("#progress-text") == "5 of 5 marked"

    # going back to the last item (none relevant) and accepting its proposal instead
    last = list(expected)[-1]
    page.keyboard.press("b")
    page.wait_for_function(
        f"() => document.getElementById('item').dataset.item === '{last}' && !document.getElementById('item').hidden"
    )
    assert page.is_visible("#going-back")
    _press(page, "a")
    _submit(page, "Enter")
    expected[last] = [list(proposals[last])]
    assert not errors

    # stored exactly as marked, one judgement per item
    with sessions() as session:
        judgements = list(session.scalars(select(MomentJudgement).where(MomentJudgement.assessor_id == assessor_id)))
        stored = {j.item_id: j.segments for j in judgements}
        assert all(j.seconds_spent is not None and j.seconds_spent >= 0 for j in judgements)
    assert stored == {k: [pytest.approx(s) for s in v] for k, v in expected.items()}

    # blind: the page got the topic, the video and the proposal, never runs, ranks or counts
    payloads = [r.json() for r in responses if r.request.method == "POST" and "/next" in r.url and r.status == 200]
    assert len(payloads) == 5 and all(set(p) == MOMENT_BLIND_KEYS for p in payloads)
    text = page.content() + json.dumps(payloads)
    assert "good" not in text and "poor" not in text and "rank" not in text
    page.close()

    # the ground truth cut from the marks, and an evaluation on it
    version = client.post(f"/api/moment-pools/{pool['id']}/truth", json={"label": "marked"}, headers=organiser).json()
    truth = client.get(f"/api/moment-truth/{version['id']}", headers=organiser).text
    assert version["n_entries"] == len(truth.splitlines()) > 0
    started = client.post(
        f"/api/campaigns/{campaign.id}/evaluations", json={"qrels_version_id": version["id"]}, headers=organiser
    ).json()
    wait_done(client, organiser, started["id"])
    board = client.get(f"/api/campaigns/{campaign.id}/leaderboard", headers=organiser).json()
    reference = evaluate_moments(
        parse_moment_ground_truth(truth),
        [parse_moment_run(t) for t in MOMENT_RUNS.values()],
        board["measures"],
        run_names=list(MOMENT_RUNS),
    )
    assert {r["run"] for r in board["rows"]} == set(MOMENT_RUNS)
    for row in board["rows"]:
        for measure, value in row["scores"].items():
            assert value == pytest.approx(reference[row["run"]][measure]["all"], abs=1e-12)


def test_the_mark_page_is_a_shell_with_safe_headers(client):
    page = client.get("/mark")
    assert page.status_code == 200 and page.headers["referrer-policy"] == "no-referrer"
    assert 'href="/api/moment-judging/progress"' in page.text
    assert client.get("/static/mark.js").headers["content-type"].startswith("text/javascript")
    assert client.get("/static/mark.css").status_code == 200


def test_an_assessor_token_cannot_read_themarking_pool(make_campaign, client, organiser):
    campaign, pool, assessor_id = marking_pool(make_campaign, client, organiser)
    token = client.post(f"/api/assessors/{assessor_id}/tokens", headers=organiser).json()["token"]
    for path in (f"/api/moment-pools/{pool['id']}", f"/api/moment-pools/{pool['id']}/agreement"):
        assert client.get(path, headers=auth(token)).status_code == 403


def test_marks_given_in_another_tab_are_not_overwritten(make_campaign, client, organiser, live_server, browser):
    _, _, assessor_id = marking_pool(make_campaign, client, organiser)
    link = client.post(f"/api/assessors/{assessor_id}/judge-link", headers=organiser).json()["judge_url"]
    page = browser.new_page()
    page.route("http://media.invalid/**", lambda route: serve_with_ranges(route, silence_wav(60)))
    page.goto(f"{live_server}/mark{link[link.index('#') :]}")
    page.wait_for_function(SETTLED, arg="")
    item, video = _shown(page), page.text_content("#video-id")
    # another tab of the same session marks the shown item first
    (session_token,) = page.evaluate("Object.values(sessionStorage)")
    other_tab = auth(session_token)
    path = f"/api/moment-judging/items/{item}"
    assert client.post(path, json={"segments": [{"start": 1, "end": 3}]}, headers=other_tab).status_code == 200
    _submit(page, "n")
    page.wait_for_function(
        "p => document.getElementById('status').textContent.startsWith(p)",
        arg=f"Not saved: video {video} was already marked in another tab or window (1.0 – 3.0 s)",
    )
    assert client.get(path, headers=other_tab).json()["segments"] == [[1.0, 3.0]]
    # B reaches the item marked elsewhere, and submitting there changes its marks
    assert _shown(page) != item
    page.keyboard.press("b")
    page.wait_for_function(f"() => document.getElementById('item').dataset.item === '{item}'")
    _submit(page, "n")
    assert client.get(path, headers=other_tab).json()["segments"] == []
    page.close()
