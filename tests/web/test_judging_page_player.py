"""The judging page at the speed of a key press, in chromium: the next shot preloaded while this one plays and playing
after each key with media on a loopback host, one request per verdict, Later, the shot marked in its context,
keyframes, sound, speed, help, the assessor's own counts, and a 390 px wide screen. How fast a key press gets the
next shot playing (the target: p95 under 100 ms) is measured by scripts/bench/judging_page.py, not here."""

from __future__ import annotations

import io
import time

import numpy as np
import pytest
from PIL import Image

from tests.api.helpers import make_assessor, setup_campaign
from tests.web.judging_media import KEY_TO_PLAYABLE, MediaServer, encode_webm, silence_wav
from tests.web.pages import SETTLED, SHOWN_VIDEO, judge_link, shown_task, wait_status

CLIP_SECONDS = 24  # longer than any shot of setup_campaign's collection (2 s shots up to 20 s) with its context


@pytest.fixture(scope="module")
def media(browser):  # type: ignore[no-untyped-def]
    """A loopback media host with one VP8 WebM clip and one silent WAV; every video id maps to its own URL of it."""
    server = MediaServer({"blank": (b"<!doctype html><title>encoder</title>", "text/html")})
    server.files["clip.webm"] = (encode_webm(browser, f"{server.base}/blank", CLIP_SECONDS, seed=3), "video/webm")
    server.files["clip.wav"] = (silence_wav(CLIP_SECONDS), "audio/wav")
    yield server
    server.close()


def _page_pool(make_campaign, client, organiser, media, *, ext="webm", depth=3, names=("ann",), shared=False):
    """A depth pool whose media are on the loopback host, topic 1 assigned to the named assessors; (pool, run
    names, [(assessor id, headers)], topic 1's size)."""
    campaign, run_names = setup_campaign(make_campaign, client, organiser, n_runs=2, depth=60, seed=8)
    template = f"{media.base}/clip.{ext}?video={{video_id}}"
    patched = client.patch(f"/api/campaigns/{campaign.id}", json={"media_url_template": template}, headers=organiser)
    assert patched.status_code == 200, patched.text
    pool = client.post(
        f"/api/campaigns/{campaign.id}/pools", json={"kind": "depth", "depth": depth, "seed": 3}, headers=organiser
    ).json()
    assessors = [make_assessor(client, organiser, campaign, name) for name in names]
    body = {"shared": shared, "assignments": [{"topic": "1", "assessor_id": a} for a, _ in assessors]}
    assert client.post(f"/api/pools/{pool['id']}/assignments", json=body, headers=organiser).status_code == 201
    return pool, run_names, assessors, next(t["sampled"] for t in pool["topics"] if t["topic"] == "1")


def _open(browser, live_server, client, organiser, assessor_id, **viewport):  # type: ignore[no-untyped-def]
    page = browser.new_page(viewport=viewport or {"width": 1100, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.add_init_script(KEY_TO_PLAYABLE)
    page.goto(f"{live_server}{judge_link(client, organiser, assessor_id)}")
    page.wait_for_function(SETTLED, arg="")
    return page, errors


NEXT_PRELOADED = """() => [...document.querySelectorAll('.shot video[hidden]')]
    .some((v) => v.getAttribute('src') && v.readyState >= 3 && !v.seeking && v.paused)"""
PLAYING = f"() => {{ const v = {SHOWN_VIDEO}; return v && !v.paused && v.readyState >= 3; }}"


def test_each_key_plays_the_preloaded_next_shot_with_one_request_per_verdict(
    make_campaign, client, organiser, live_server, browser, media
):
    _, run_names, [(assessor_id, _)], size = _page_pool(make_campaign, client, organiser, media, depth=8)
    assert size >= 12
    page, errors = _open(browser, live_server, client, organiser, assessor_id)
    api: list[str] = []
    page.on("request", lambda r: api.append(f"{r.method} {r.url}") if "/api/" in r.url else None)
    answers: list = []
    page.on("response", lambda r: answers.append(r) if "/api/judging/" in r.url else None)
    seen = []
    for k in range(12):
        page.wait_for_function(PLAYING)
        page.wait_for_function(NEXT_PRELOADED)  # the next shot is loaded, at its start, paused, while this one plays
        time.sleep(0.3)  # an assessor watches a moment
        before = len(api)
        seen.append(shown_task(page))
        page.keyboard.press("rnu"[k % 3])
        page.wait_for_function("() => { const m = window.__judgingMarks.at(-1); return m.playing !== null; }")
        page.wait_for_function("() => document.getElementById('main').getAttribute('aria-busy') === 'false'")
        assert api[before:] == [f"POST {live_server}/api/judging/step"]  # one request per verdict
    marks = page.evaluate("window.__judgingMarks")
    playable = [m["playable"] for m in marks]
    assert len(playable) == 12 and None not in playable  # every key press got the next shot playing
    assert len(set(seen)) == 12 and [m["task"] for m in marks[:-1]] == seen[1:]
    # blind: no answer of the judging API names a run or says anything of ranks or counts of runs
    bodies = [a.text() for a in answers if a.status == 200]
    for secret in [*run_names, "secret-tag", "rank", "n_runs", "stratum"]:
        assert not [b for b in bodies if secret in b]
    assert errors == []
    page.close()


def test_later_puts_a_shot_at_the_end_of_the_queue(make_campaign, client, organiser, live_server, browser, media):
    _, _, [(assessor_id, _)], size = _page_pool(make_campaign, client, organiser, media, ext="wav", depth=2)
    page, errors = _open(browser, live_server, client, organiser, assessor_id)
    skipped = shown_task(page)
    page.keyboard.press("s")
    page.wait_for_function(SETTLED, arg=skipped)
    wait_status(page, "Shot ")
    assert "put off" in page.text_content("#status")
    order = []
    while page.is_hidden("#message"):
        order.append(shown_task(page))
        task = order[-1]
        page.keyboard.press("n")
        page.wait_for_function(SETTLED, arg=task)
    assert len(order) == size and order[-1] == skipped and skipped not in order[:-1]
    assert page.text_content("#mine") == f"You judged {size}"
    assert errors == []
    page.close()


def test_timeline_context_keyframes_sound_speed_and_help(make_campaign, client, organiser, live_server, browser, media):
    _, _, [(assessor_id, headers)], _ = _page_pool(make_campaign, client, organiser, media)
    page, errors = _open(browser, live_server, client, organiser, assessor_id)
    item = client.post("/api/judging/step", json={}, headers=headers).json()["next"][0]  # the page's leased item
    assert shown_task(page) == str(item["task_id"])
    start, end = item["start"], item["end"]

    def window():  # type: ignore[no-untyped-def]
        return page.evaluate(
            "() => { const t = document.getElementById('timeline');"
            " return [t.getAttribute('aria-valuemin'), t.getAttribute('aria-valuemax')].map(Number); }"
        )

    assert window() == [max(0, start - 2), end + 2] and page.input_value("#context") == "2"
    # context 0 (a page setting, kept for the next visit): the shot alone, and the marker fills the timeline
    page.select_option("#context", "0")
    assert window() == [start, end]
    page.keyboard.press(" ")
    page.wait_for_function(f"s => {{ const v = {SHOWN_VIDEO}; return !v.seeking && v.currentTime >= s; }}", arg=start)
    assert start <= page.evaluate(f"{SHOWN_VIDEO}.currentTime") < start + 1
    assert page.evaluate("document.getElementById('segment').style.width") == "100%"
    page.keyboard.press("c")  # 0 -> 1 s
    assert window() == [max(0, start - 1), end + 1]
    assert page.evaluate("JSON.parse(localStorage.getItem('trecpool.judging-prefs')).context") == 1

    # keyframes: five frames across the shot, drawn from the video; a click plays from there
    page.wait_for_selector("#strip:not([hidden]) .keyframe >> nth=4")
    shot = Image.open(io.BytesIO(page.locator("#strip").screenshot())).convert("RGB")
    assert len(np.unique(np.asarray(shot).reshape(-1, 3), axis=0)) > 20  # pictures, not an empty strip
    page.click("#strip .keyframe >> nth=2")
    middle = start + 2.5 * (end - start) / 5
    at = page.evaluate(f"{SHOWN_VIDEO}.currentTime")
    assert middle - 0.05 <= at < middle + 0.5

    # sound: on at first (the campaign's audio_on, true unless the organiser says otherwise), with its state shown;
    # M turns it off and on again (the assessor's choice is kept, and the next shots keep it)
    assert page.get_attribute("#sound", "aria-pressed") == "true" and page.text_content("#sound-state") == "Sound on"
    assert page.evaluate(f"{SHOWN_VIDEO}.muted") is False
    assert "sound" not in page.evaluate("JSON.parse(localStorage.getItem('trecpool.judging-prefs'))")
    page.keyboard.press("m")
    assert page.get_attribute("#sound", "aria-pressed") == "false" and page.text_content("#sound-state") == "Sound off"
    assert page.evaluate(f"{SHOWN_VIDEO}.muted") is True
    page.keyboard.press("m")
    assert page.get_attribute("#sound", "aria-pressed") == "true" and page.text_content("#sound-state") == "Sound on"
    assert page.evaluate(f"{SHOWN_VIDEO}.muted") is False
    assert page.evaluate("JSON.parse(localStorage.getItem('trecpool.judging-prefs')).sound") is True
    # speed: ] faster, [ slower, on both players
    page.keyboard.press("]")
    assert page.text_content("#speed-state") == "1.25×"
    assert page.evaluate("[...document.querySelectorAll('.shot video')].map(v => v.playbackRate)") == [1.25, 1.25]
    page.keyboard.press("[")
    page.keyboard.press("[")
    assert page.evaluate(f"{SHOWN_VIDEO}.playbackRate") == 0.75

    # help: ? opens it, verdict keys do nothing while it is open, Escape closes it
    page.keyboard.press("?")
    assert page.is_visible("#help") and "Later" in page.text_content("#help")
    page.keyboard.press("r")
    time.sleep(0.3)
    assert shown_task(page) == str(item["task_id"])
    page.keyboard.press("Escape")
    assert page.is_hidden("#help")
    page.keyboard.press("r")  # judged now: the next shot plays with sound, at 0.75x
    page.wait_for_function(SETTLED, arg=str(item["task_id"]))
    page.wait_for_function(PLAYING)
    assert page.evaluate(f"[{SHOWN_VIDEO}.muted, {SHOWN_VIDEO}.playbackRate]") == [False, 0.75]
    assert errors == []
    page.close()


def test_counts_are_the_assessors_own_work(make_campaign, client, organiser, live_server, browser, media):
    _, _, [(_, ann), (bob_id, _)], size = _page_pool(
        make_campaign, client, organiser, media, ext="wav", names=("ann", "bob"), shared=True
    )
    shown = client.post("/api/judging/step", json={}, headers=ann).json()["next"]
    for _ in range(3):  # ann judges three shots of the shared topic
        body = {"task_id": shown[0]["task_id"], "verdict": "relevant"}
        shown = client.post("/api/judging/step", json=body, headers=ann).json()["next"]
    page, errors = _open(browser, live_server, client, organiser, bob_id)
    assert page.text_content("#mine") == "You judged 0"
    assert page.text_content("#progress-text") == f"Topic 1: 0 by you, {size - 3} left"
    task = shown_task(page)
    page.keyboard.press("n")
    page.wait_for_function(SETTLED, arg=task)
    page.wait_for_function("() => document.getElementById('mine').textContent === 'You judged 1'")
    assert page.text_content("#progress-text") == f"Topic 1: 1 by you, {size - 4} left"
    assert "Topic 1: you judged 1; " in page.text_content("#topic-counts")
    assert errors == []
    page.close()


def test_the_page_fits_a_390_px_screen(make_campaign, client, organiser, live_server, browser, media):
    _, _, [(assessor_id, _)], _ = _page_pool(make_campaign, client, organiser, media)
    page, errors = _open(browser, live_server, client, organiser, assessor_id, width=390, height=844)
    page.wait_for_selector("#strip:not([hidden])")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    boxes = page.evaluate(
        "[...document.querySelectorAll('button:not([hidden]), select, video:not([hidden]), #timeline')]"
        ".filter(e => e.getClientRects().length && !e.closest('dialog'))"
        ".map(e => { const r = e.getBoundingClientRect(); return [e.id || e.className, r.left, r.right]; })"
    )
    assert boxes and [b for b in boxes if b[1] < 0 or b[2] > 390] == []
    for name in ("relevant", "not_relevant", "unsure"):
        assert page.is_visible(f"[data-verdict={name}]")
    page.keyboard.press("?")
    dialog = page.evaluate(
        "(() => { const r = document.getElementById('help').getBoundingClientRect(); return [r.left, r.right]; })()"
    )
    assert dialog[0] >= 0 and dialog[1] <= 390
    assert errors == []
    page.close()
