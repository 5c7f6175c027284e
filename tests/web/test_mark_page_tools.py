"""The moment marking page's tools in chromium: the help overlay (every key, ? and Esc), the Back/Play/Replay buttons
in view at 1280x900, a dragged edge moving the video to its time, a media host that does not answer named as
unreachable, and axe-core on the page and its help."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.storage.models import MomentPoolItem
from tests.web.judging_media import serve_with_ranges, silence_wav
from tests.web.pages import axe_violations, marking_pool

SETTLED = """() => document.getElementById('main').getAttribute('aria-busy') === 'false'
    && document.getElementById('item').dataset.item !== undefined"""
LOADED = "() => { const v = document.getElementById('video'); return !v.hidden && v.readyState >= 1; }"
HELP_KEYS = ["Space", "R", "← →", "[", "]", "A", "Tab", "Esc", "Delete Backspace", "Enter", "N", "B", "?"]


def _mark_link(make_campaign, client, organiser) -> str:  # type: ignore[no-untyped-def]
    """A closed moment campaign with media on media.invalid, its moment pool assigned to one assessor: their link."""
    return _mark_pool(make_campaign, client, organiser)[0]


def _mark_pool(make_campaign, client, organiser) -> tuple[str, int]:  # type: ignore[no-untyped-def]
    """As _mark_link, with the pool's id."""
    _, pool, assessor_id = marking_pool(make_campaign, client, organiser)
    link = client.post(f"/api/assessors/{assessor_id}/judge-link", headers=organiser).json()["judge_url"]
    return link[link.index("#") :], pool["id"]


def _open(browser, live_server, fragment: str, *, reachable: bool = True, following=None, **context):  # type: ignore[no-untyped-def]
    """The marking page at 1280x900 in a fresh context; the media host answers, or refuses the connection;
    `following` (item id -> the next item's video) adds next_media_url to the answers of /next."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, **context)
    page = ctx.new_page()
    if following is not None:

        def answer_next(route) -> None:  # type: ignore[no-untyped-def]
            response = route.fetch()
            if response.status != 200:
                route.fulfill(response=response)
                return
            body = response.json()
            video = following.get(body["item_id"])
            body["next_media_url"] = f"http://media.invalid/{video}.wav" if video else None
            route.fulfill(response=response, json=body)

        page.route("**/api/moment-judging/next", answer_next)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    wav = silence_wav(60)
    if reachable:
        page.route("http://media.invalid/**", lambda route: serve_with_ranges(route, wav))
    else:
        page.route("http://media.invalid/**", lambda route: route.abort("connectionrefused"))
    page.goto(f"{live_server}/mark{fragment}")
    page.wait_for_function(SETTLED)
    return ctx, page, errors


def _in_view(page, selector: str) -> bool:  # type: ignore[no-untyped-def]
    box = page.locator(selector).bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 900


def test_help_lists_every_key_and_the_buttons_are_in_view(make_campaign, client, organiser, live_server, browser):
    ctx, page, errors = _open(browser, live_server, _mark_link(make_campaign, client, organiser), bypass_csp=True)
    assert page.evaluate("window.scrollY") == 0
    for selector in ("#accept", "#submit", "#none", "#back", "#play", "#replay", "#help-button"):
        assert _in_view(page, selector), selector
    assert axe_violations(page) == []
    item = page.get_attribute("#item", "data-item")
    page.keyboard.press("?")
    assert page.is_visible("#help")
    keys = [" ".join(dt.split()) for dt in page.locator("#help dt").all_text_contents()]
    assert keys == HELP_KEYS
    assert axe_violations(page) == []
    page.keyboard.press("n")  # keys other than ? and Esc do nothing while the help is open
    page.wait_for_timeout(200)
    assert page.get_attribute("#item", "data-item") == item and page.text_content("#status") == ""
    page.keyboard.press("?")
    assert page.is_hidden("#help")
    page.click("#help-button")
    assert page.is_visible("#help")
    page.keyboard.press("Escape")
    assert page.is_hidden("#help")
    assert not errors
    ctx.close()


def test_dragging_an_edge_moves_the_video_to_it(make_campaign, client, organiser, live_server, browser):
    ctx, page, errors = _open(browser, live_server, _mark_link(make_campaign, client, organiser))
    page.wait_for_function(LOADED)
    page.keyboard.press("a")  # the proposal as a moment, its edges draggable
    start, end = page.evaluate(
        "() => document.getElementById('segment-list').textContent.replace(' s', '').split(' – ').map(Number)"
    )
    timeline = page.locator("#timeline").bounding_box()
    lo, hi = (float(page.text_content(s).removesuffix(" s")) for s in ("#tick-start", "#tick-end"))
    assert timeline is not None
    for edge, target in ((".segment .edge.right", end + 3.0), (".segment .edge.left", start - 2.0)):
        box = page.locator(edge).bounding_box()
        assert box is not None
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.down()
        x = timeline["x"] + (target - lo) / (hi - lo) * timeline["width"]
        page.mouse.move(x, box["y"] + box["height"] / 2, steps=5)
        # while dragging, the video stands at the edge's time (within the timeline's 0.1 s rounding)
        current = page.evaluate("document.getElementById('video').currentTime")
        shown = page.text_content("#segment-list li")
        page.mouse.up()
        dragged = end + 3.0 if "right" in edge else start - 2.0
        assert current == pytest.approx(dragged, abs=0.15), (edge, shown)
        assert float(page.text_content("#playhead-text")) == pytest.approx(dragged, abs=0.15)
    assert page.text_content("#segment-list li") == f"{start - 2.0:.1f} – {end + 3.0:.1f} s"
    assert not errors
    ctx.close()


def test_an_unreachable_media_host_is_named(make_campaign, client, organiser, live_server, browser):
    ctx, page, errors = _open(browser, live_server, _mark_link(make_campaign, client, organiser), reachable=False)
    page.wait_for_function("() => !document.getElementById('placeholder').hidden")
    assert page.text_content("#placeholder-text") == "The media host media.invalid is unreachable"
    assert page.is_hidden("#video")
    assert page.text_content("#status").startswith("The media host media.invalid is unreachable")
    item = page.get_attribute("#item", "data-item")
    page.keyboard.press("n")  # marking goes on without the video
    page.wait_for_function(f"() => document.getElementById('item').dataset.item !== '{item}'")
    page.wait_for_function("() => document.getElementById('progress-text').textContent.startsWith('1 of')")
    assert not errors
    ctx.close()


def test_the_next_items_video_is_preloaded(make_campaign, client, organiser, live_server, browser, sessions):
    fragment, pool_id = _mark_pool(make_campaign, client, organiser)
    with sessions() as session:
        items = session.scalars(
            select(MomentPoolItem)
            .where(MomentPoolItem.pool_id == pool_id)
            .order_by(MomentPoolItem.topic_id, MomentPoolItem.judging_order)
        ).all()
        order = [(item.id, item.video_id) for item in items]
    following = {a: video for (a, _), (_, video) in zip(order, order[1:], strict=False)}
    ctx, page, errors = _open(browser, live_server, fragment, following=following)
    swaps = kept = 0
    for k, (item_id, video) in enumerate(order):
        assert page.get_attribute("#item", "data-item") == str(item_id)
        assert page.get_attribute("#video", "src") == f"http://media.invalid/{video}.wav"
        nxt = following.get(item_id)
        if nxt is not None and nxt != video:
            # a hidden second player holds the next item's video, loaded before the key press
            page.wait_for_function(
                "u => { const v = document.getElementById('video-next');"
                " return v.hidden && v.getAttribute('src') === u && v.readyState >= 1; }",
                arg=f"http://media.invalid/{nxt}.wav",
            )
            page.evaluate("window.__next = document.getElementById('video-next')")
        else:
            page.evaluate("window.__next = document.getElementById('video')")  # the same video goes on playing
        page.keyboard.press("n")
        if nxt is None:
            page.wait_for_function("() => !document.getElementById('message').hidden")
            break
        page.wait_for_function(f"() => document.getElementById('item').dataset.item === '{order[k + 1][0]}'")
        assert page.evaluate("document.getElementById('video') === window.__next")
        assert page.is_visible("#video") and page.is_hidden("#video-next")
        start = float(page.text_content("#playhead-text"))
        page.wait_for_function("t => Math.abs(document.getElementById('video').currentTime - t) < 0.05", arg=start)
        swaps, kept = (swaps + 1, kept) if nxt != video else (swaps, kept + 1)
    assert swaps >= 1 and swaps + kept == len(order) - 1
    assert not errors
    ctx.close()


def test_the_page_fits_390_px(make_campaign, client, organiser, live_server, browser):
    ctx, page, errors = _open(browser, live_server, _mark_link(make_campaign, client, organiser), bypass_csp=True)
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.keyboard.press("?")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert axe_violations(page) == []
    assert not errors
    ctx.close()
