"""The judging page's assessor day in chromium: the topic's description, guidelines and example images beside the
video, the cue at a topic change, sound on by the campaign's setting, and breaks (a pause key, an idle timeout)."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image
from sqlalchemy import func, select, update

from app.storage.models import Judgement, JudgingTask, Topic
from tests.api.helpers import make_assessor, setup_campaign
from tests.web.pages import SETTLED, judge_link, shown_task, wait_status

SHOTS = Path("/tmp/h")
GUIDANCE = {
    "1": ("People dancing in a group, outdoors.", "Count any dance, even brief.", "dancers on a lawn"),
    "2": ("A red car driving on a road.", "Parked cars do not count.", "a red car on a highway"),
}


def _png() -> bytes:
    """A small example image."""
    buffer = io.BytesIO()
    Image.new("RGB", (160, 90), (40, 120, 200)).save(buffer, format="PNG")
    return buffer.getvalue()


def _two_topic_pool(make_campaign, client, organiser, sessions, live_server, **settings):  # type: ignore[no-untyped-def]
    """A depth-1 pool whose topics 1 and 2 (with descriptions, guidelines and an example each) go to one assessor;
    (pool, assessor id, headers). Media fail fast on loopback: the page shows its placeholder."""
    campaign, _ = setup_campaign(make_campaign, client, organiser, n_runs=2, depth=60, seed=4)
    body = {"media_url_template": f"{live_server}/no-such-media/{{video_id}}.mp4", **settings}
    assert client.patch(f"/api/campaigns/{campaign.id}", json=body, headers=organiser).status_code == 200
    with sessions() as session:
        for number, (description, guidelines, caption) in GUIDANCE.items():
            example = {"url": f"http://img.example/{number}.png", "caption": caption}
            session.execute(
                update(Topic)
                .where(Topic.campaign_id == campaign.id, Topic.number == number)
                .values(description=description, guidelines=guidelines, examples=[example])
            )
        session.commit()
    pool = client.post(
        f"/api/campaigns/{campaign.id}/pools", json={"kind": "depth", "depth": 1, "seed": 9}, headers=organiser
    ).json()
    assessor_id, headers = make_assessor(client, organiser, campaign, "ann")
    body = {"assignments": [{"topic": t, "assessor_id": assessor_id} for t in ("1", "2")]}
    assert client.post(f"/api/pools/{pool['id']}/assignments", json=body, headers=organiser).status_code == 201
    return pool, assessor_id, headers


def _open(browser, url: str, width: int, height: int):  # type: ignore[no-untyped-def]
    """A page at `url` whose example images come from an in-browser host; (page, page errors)."""
    page = browser.new_page(viewport={"width": width, "height": height})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    png = _png()
    page.route("http://img.example/**", lambda route: route.fulfill(status=200, body=png, content_type="image/png"))
    page.goto(url)
    page.wait_for_function(SETTLED, arg="")
    return page, errors


def _no_horizontal_scroll(page) -> bool:  # type: ignore[no-untyped-def]
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_topic_guidance_beside_the_video_and_a_cue_at_the_next_topic(
    make_campaign, client, organiser, sessions, live_server, browser
):
    pool, assessor_id, _ = _two_topic_pool(make_campaign, client, organiser, sessions, live_server)
    first_topic = next(t["sampled"] for t in pool["topics"] if t["topic"] == "1")
    assert first_topic >= 1
    SHOTS.mkdir(exist_ok=True)
    for width, height in ((390, 844), (1280, 800)):  # the narrow page only looks: the wide one judges
        page, errors = _open(browser, f"{live_server}{judge_link(client, organiser, assessor_id)}", width, height)
        description, guidelines, caption = GUIDANCE["1"]
        assert page.text_content("#topic-number") == "1"
        assert page.text_content("#topic-description") == description
        assert page.text_content("#topic-guidelines") == guidelines and page.is_visible("#topic-guidelines")
        assert page.text_content("#topic-examples figcaption") == caption
        page.wait_for_function("() => document.querySelector('#topic-examples img').naturalWidth === 160")
        assert page.get_attribute("#topic-examples img", "alt") == caption
        assert page.is_hidden("#topic-change")  # the first topic of the visit is no change
        if width == 1280:  # beside the video: the brief's box and the shot's are side by side on a wide screen
            page.wait_for_selector("#placeholder:not([hidden])")  # the media failed: the shot's box says so
            brief, shot = (page.locator(s).bounding_box() for s in (".topic-brief", ".shot"))
            assert brief and shot and shot["height"] > 100
            assert brief["x"] >= shot["x"] + shot["width"]
            assert brief["y"] < shot["y"] + shot["height"] and shot["y"] < brief["y"] + brief["height"]
        page.screenshot(path=str(SHOTS / f"h2b_topic_{width}.png"))
        assert _no_horizontal_scroll(page)
        if width == 390:
            assert errors == []
            page.close()
            continue
        for _ in range(first_topic):  # judge topic 1 through; the next shot is of topic 2
            assert page.is_hidden("#topic-change")
            task = shown_task(page)
            page.keyboard.press("n")
            page.wait_for_function(SETTLED, arg=task)
        description, guidelines, caption = GUIDANCE["2"]
        assert page.text_content("#topic-number") == "2"
        assert page.is_visible("#topic-change")
        cue = page.text_content("#topic-change")
        assert cue.startswith("New topic 2: topic 2") and "description" in cue
        page.wait_for_function("() => document.getElementById('status').textContent.includes('New topic 2')")
        assert page.text_content("#topic-description") == description
        assert page.text_content("#topic-guidelines") == guidelines
        assert page.text_content("#topic-examples figcaption") == caption
        page.screenshot(path=str(SHOTS / f"h2b_topic_change_{width}.png"))
        assert _no_horizontal_scroll(page)
        # the cue stays for the topic's first shot only
        task = shown_task(page)
        page.keyboard.press("n")
        page.wait_for_function(SETTLED, arg=task)
        if page.is_hidden("#message"):
            assert page.is_hidden("#topic-change") and page.text_content("#topic-number") == "2"
        assert errors == []
        page.close()


def test_sound_starts_as_the_campaign_says_until_the_assessor_chooses(
    make_campaign, client, organiser, sessions, live_server, browser
):
    _, assessor_id, headers = _two_topic_pool(make_campaign, client, organiser, sessions, live_server, audio_on=False)
    assert client.post("/api/judging/step", json={"ahead": 0}, headers=headers).json()["audio_on"] is False
    page, errors = _open(browser, f"{live_server}{judge_link(client, organiser, assessor_id)}", 1280, 800)
    assert page.text_content("#sound-state") == "Sound off"
    assert page.evaluate("[...document.querySelectorAll('.shot video')].every((v) => v.muted)")
    page.keyboard.press("m")  # the assessor's choice, kept for the next visit
    assert page.text_content("#sound-state") == "Sound on"
    assert page.evaluate("JSON.parse(localStorage.getItem('trecpool.judging-prefs')).sound") is True
    assert errors == []
    page.close()


def _held(sessions, assessor_id: int) -> list[int]:  # type: ignore[no-untyped-def]
    """The tasks leased to the assessor, unanswered."""
    with sessions() as session:
        return sorted(
            session.scalars(
                select(JudgingTask.id).where(JudgingTask.leased_to == assessor_id, JudgingTask.done_at.is_(None))
            )
        )


def test_a_break_key_releases_the_shots_and_any_key_resumes(
    make_campaign, client, organiser, sessions, live_server, browser
):
    _, assessor_id, _ = _two_topic_pool(make_campaign, client, organiser, sessions, live_server)
    page, errors = _open(browser, f"{live_server}{judge_link(client, organiser, assessor_id)}", 390, 844)
    shown = shown_task(page)
    assert int(shown) in _held(sessions, assessor_id) and len(_held(sessions, assessor_id)) == 2
    page.keyboard.press("?")  # the help lists the break's key
    assert "A break: your shots go back to the queue" in page.text_content("#help")
    page.keyboard.press("Escape")
    page.keyboard.press("z")
    page.wait_for_selector("#paused:not([hidden])")
    assert page.text_content(".paused-title") == "Paused" and page.is_hidden("#item")
    wait_status(page, "Paused.")
    page.wait_for_function("() => document.getElementById('main').getAttribute('aria-busy') === 'false'")
    assert _held(sessions, assessor_id) == []  # the shown and the preloaded shot went back to the queue
    page.screenshot(path=str(SHOTS / "h2b_paused_390.png"))
    assert _no_horizontal_scroll(page)
    page.keyboard.press("n")  # any key resumes; it judges nothing
    page.wait_for_function(SETTLED, arg="")
    assert page.is_hidden("#paused") and page.is_visible("#item") and shown_task(page) == shown
    assert int(shown) in _held(sessions, assessor_id)
    with sessions() as session:
        assert (
            session.scalar(select(func.count()).select_from(Judgement).where(Judgement.assessor_id == assessor_id)) == 0
        )
    assert errors == []
    page.close()


def test_an_idle_page_takes_a_break_by_itself(make_campaign, client, organiser, sessions, live_server, browser):
    _, assessor_id, _ = _two_topic_pool(make_campaign, client, organiser, sessions, live_server)
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    # the page setting, shorter than any offered (the default is 180 s), set before the page reads it
    page.add_init_script("localStorage.setItem('trecpool.judging-prefs', JSON.stringify({ idle: 2 }))")
    page.goto(f"{live_server}{judge_link(client, organiser, assessor_id)}")
    page.wait_for_function(SETTLED, arg="")
    shown = shown_task(page)
    assert page.input_value("#idle") == "2" and len(_held(sessions, assessor_id)) == 2
    page.wait_for_selector("#paused:not([hidden])", timeout=10_000)
    assert "Nothing was pressed for 2 seconds" in page.text_content("#paused-why")
    page.wait_for_function("() => document.getElementById('main').getAttribute('aria-busy') === 'false'")
    assert _held(sessions, assessor_id) == []
    page.screenshot(path=str(SHOTS / "h2b_paused_1280.png"))
    page.click("#resume")  # a pointer resumes too
    page.wait_for_function(SETTLED, arg="")
    assert page.is_visible("#item") and shown_task(page) == shown and page.is_hidden("#paused")
    assert errors == []
    page.close()
