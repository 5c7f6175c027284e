"""The judging page on a graded campaign (0..max_grade), in chromium: a button per grade, keys 0..k judging with that
grade (R still grade 1, N grade 0), the help listing them, going back showing the stored grade, one request per
verdict, the grades stored; a 390 px and a 1280x800 screen without horizontal scroll."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.storage.models import Judgement, JudgingTask, PoolItem
from tests.api.helpers import make_assessor, setup_campaign
from tests.web.judging_media import MediaServer, encode_webm
from tests.web.pages import SETTLED, judge_link, shown_task, wait_status

CLIP_SECONDS = 24
# key -> (verdict, grade) on a 0..2 scale
KEYS = {"0": ("not_relevant", 0), "1": ("relevant", 1), "2": ("relevant", 2), "r": ("relevant", 1),
        "n": ("not_relevant", 0), "u": ("unsure", None)}  # fmt: skip
SAID = {0: "Grade 0, not relevant", 1: "Grade 1", 2: "Grade 2, highly relevant", None: "Unsure"}
# every visible control's left and right edge, outside the help dialog
BOXES = """[...document.querySelectorAll('button:not([hidden]), select, video:not([hidden]), #timeline')]
    .filter(e => e.getClientRects().length && !e.closest('dialog'))
    .map(e => { const r = e.getBoundingClientRect(); return [e.id || e.className, r.left, r.right]; })"""
BUTTONS = """[...document.querySelectorAll('.verdicts button')].map(b => [b.dataset.verdict, b.dataset.grade ?? null,
    b.innerText.replace(/\\s+/g, ' ').trim(), b.getAttribute('aria-keyshortcuts')])"""
HELP_ROWS = """[...document.querySelectorAll('#help dt')].map(dt => [dt.textContent.replace(/\\s+/g, ' ').trim(),
    dt.nextElementSibling.textContent])"""


@pytest.fixture(scope="module")
def media(browser):  # type: ignore[no-untyped-def]
    """A loopback media host with one VP8 WebM clip; every video id maps to its own URL of it."""
    server = MediaServer({"blank": (b"<!doctype html><title>encoder</title>", "text/html")})
    server.files["clip.webm"] = (encode_webm(browser, f"{server.base}/blank", CLIP_SECONDS, seed=5), "video/webm")
    yield server
    server.close()


def _graded_pool(make_campaign, client, organiser, media, max_grade: int):  # type: ignore[no-untyped-def]
    """A depth-4 pool on a campaign graded 0..max_grade, topic 1 assigned to one assessor; (campaign id, pool,
    assessor id, topic 1's size)."""
    campaign, _ = setup_campaign(make_campaign, client, organiser, n_runs=2, depth=60, seed=6)
    changes = {"media_url_template": f"{media.base}/clip.webm?video={{video_id}}", "max_grade": max_grade}
    patched = client.patch(f"/api/campaigns/{campaign.id}", json=changes, headers=organiser)
    assert patched.status_code == 200, patched.text
    pool = client.post(
        f"/api/campaigns/{campaign.id}/pools", json={"kind": "depth", "depth": 4, "seed": 5}, headers=organiser
    ).json()
    assessor_id, _ = make_assessor(client, organiser, campaign, "gus")
    body = {"assignments": [{"topic": "1", "assessor_id": assessor_id}]}
    assert client.post(f"/api/pools/{pool['id']}/assignments", json=body, headers=organiser).status_code == 201
    return campaign.id, pool, assessor_id, next(t["sampled"] for t in pool["topics"] if t["topic"] == "1")


def _press_and_settle(page, key: str) -> None:  # type: ignore[no-untyped-def]
    task = shown_task(page)
    page.keyboard.press(key)
    page.wait_for_function(SETTLED, arg=task)


def _no_horizontal_scroll(page, width: int) -> None:  # type: ignore[no-untyped-def]
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    boxes = page.evaluate(BOXES)
    assert boxes and [b for b in boxes if b[1] < 0 or b[2] > width] == []


def test_keys_0_to_k_judge_with_their_grade_and_going_back_shows_it(
    make_campaign, client, organiser, live_server, browser, media, sessions, tmp_path
):
    _, pool, assessor_id, size = _graded_pool(make_campaign, client, organiser, media, max_grade=2)
    assert size >= 7
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    api: list[str] = []
    page.on("request", lambda r: api.append(f"{r.method} {r.url.split('/api/')[1]}") if "/api/" in r.url else None)
    page.goto(f"{live_server}{judge_link(client, organiser, assessor_id)}")
    page.wait_for_function(SETTLED, arg="")

    # the scale: 0 not relevant (N), 1 (R), 2 highly relevant, then unsure; no binary Relevant / Not relevant buttons
    assert page.evaluate(BUTTONS) == [
        ["not_relevant", "0", "0 not relevant N", "0 n"],
        ["relevant", "1", "1 R", "1 r"],
        ["relevant", "2", "2 highly relevant", "2"],
        ["unsure", None, "Unsure U", "u"],
    ]
    page.wait_for_selector("#strip:not([hidden])")
    page.screenshot(path=str(tmp_path / "graded-1280.png"))
    _no_horizontal_scroll(page, 1280)
    # the help lists the grades' keys instead of the binary ones, then the rest as before
    page.keyboard.press("?")
    assert page.is_visible("#help")
    rows = page.evaluate(HELP_ROWS)
    assert rows[:4] == [
        ["0 N", "Grade 0: not relevant"],
        ["1 R", "Grade 1: relevant"],
        ["2", "Grade 2: highly relevant, the top of the scale"],
        ["U", "Unsure"],
    ]
    assert "Relevant" not in [text for _, text in rows]
    page.screenshot(path=str(tmp_path / "graded-help-1280.png"))
    page.keyboard.press("?")
    assert page.is_hidden("#help")

    # a digit above the scale judges nothing and says so
    task = shown_task(page)
    before = len(api)
    page.keyboard.press("3")
    wait_status(page, "No grade 3: the scale runs from 0 to 2")
    assert shown_task(page) == task and len(api) == before

    typed: dict[int, tuple[str, int | None]] = {}
    for key in ["0", "1", "2", "r", "n", "u", "2"]:
        task, shot = int(shown_task(page)), page.text_content("#shot-id")
        before = len(api)
        _press_and_settle(page, key)
        assert api[before:] == ["POST judging/step"]  # one request per verdict
        typed[task] = KEYS[key]
        wait_status(page, f"Saved: {SAID[KEYS[key][1]]} (shot {shot})")
    sent = [(t, v, g) for t, (v, g) in typed.items()]

    # back to the shot judged 2: its button pressed, the grade said; 1 changes it to grade 1
    last = list(typed)[-1]
    _press_and_settle(page, "b")
    assert int(shown_task(page)) == last
    assert page.text_content("#previous-verdict") == "Grade 2, highly relevant"
    pressed = page.evaluate("[...document.querySelectorAll('.verdicts [aria-pressed=true]')].map(b => b.dataset.grade)")
    assert pressed == ["2"]
    wait_status(page, "Back to shot")
    assert page.text_content("#status").endswith("your verdict was Grade 2, highly relevant.")
    _press_and_settle(page, "1")
    wait_status(page, "Changed to Grade 1")
    typed[last] = ("relevant", 1)
    # three back: the shot judged N shows grade 0 pressed; 0 keeps it
    for _ in range(3):
        _press_and_settle(page, "b")
    assert int(shown_task(page)) == list(typed)[-3]
    assert page.evaluate(
        "[...document.querySelectorAll('.verdicts [aria-pressed=true]')].map(b => b.dataset.grade)"
    ) == ["0"]
    _press_and_settle(page, "0")
    wait_status(page, "Kept: Grade 0, not relevant")
    assert errors == []
    page.close()

    with sessions() as session:
        rows = session.execute(
            select(JudgingTask.id, Judgement.verdict, Judgement.grade)
            .join(Judgement, (Judgement.pool_item_id == JudgingTask.pool_item_id) & (Judgement.round == 1))
            .join(PoolItem, PoolItem.id == Judgement.pool_item_id)
            .where(PoolItem.pool_id == pool["id"])
        ).all()
    assert {task: (verdict.value, grade) for task, verdict, grade in rows} == typed
    assert {g for _, _, g in sent} == {0, 1, 2, None}  # every grade of the scale came from a key


def test_a_ten_grade_scale_fits_a_390_px_screen(
    make_campaign, client, organiser, live_server, browser, media, tmp_path
):
    _, _, assessor_id, _ = _graded_pool(make_campaign, client, organiser, media, max_grade=10)
    page = browser.new_page(viewport={"width": 390, "height": 844})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_server}{judge_link(client, organiser, assessor_id)}")
    page.wait_for_function(SETTLED, arg="")
    page.wait_for_selector("#strip:not([hidden])")
    buttons = page.evaluate(BUTTONS)
    assert [b[1] for b in buttons] == [*map(str, range(11)), None]
    assert buttons[9][3] == "9" and buttons[10][3] is None  # grade 10 has no key: its button only
    page.screenshot(path=str(tmp_path / "graded10-390.png"), full_page=True)
    _no_horizontal_scroll(page, 390)
    page.keyboard.press("?")
    rows = page.evaluate(HELP_ROWS)
    assert rows[2:4] == [
        ["2 … 9", "Grades 2 to 9: more relevant, the higher the more"],
        ["(its button)", "Grade 10: highly relevant, the top of the scale (no key)"],
    ]
    dialog = page.evaluate(
        "(() => { const r = document.getElementById('help').getBoundingClientRect(); return [r.left, r.right]; })()"
    )
    assert dialog[0] >= 0 and dialog[1] <= 390
    page.screenshot(path=str(tmp_path / "graded10-help-390.png"))
    page.keyboard.press("Escape")
    # 9 judges with grade 9
    shot = page.text_content("#shot-id")
    _press_and_settle(page, "9")
    wait_status(page, f"Saved: Grade 9 (shot {shot})")
    assert errors == []
    page.close()


def test_a_graded_campaign_at_390_px(make_campaign, client, organiser, live_server, browser, media, tmp_path):
    _, _, assessor_id, _ = _graded_pool(make_campaign, client, organiser, media, max_grade=3)
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(f"{live_server}{judge_link(client, organiser, assessor_id)}")
    page.wait_for_function(SETTLED, arg="")
    page.wait_for_selector("#strip:not([hidden])")
    assert [b[2] for b in page.evaluate(BUTTONS)] == [
        "0 not relevant N",
        "1 R",
        "2",
        "3 highly relevant",
        "Unsure U",
    ]
    page.screenshot(path=str(tmp_path / "graded3-390.png"), full_page=True)
    _no_horizontal_scroll(page, 390)
    page.close()
