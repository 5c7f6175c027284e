"""The judging page in a real browser (Debian's chromium via Playwright): keyboard-only judging, going back, blind."""

from __future__ import annotations

import io
import itertools
import wave

from fastapi.routing import APIRoute
from sqlalchemy import select

from app.storage.models import Judgement, JudgementChange, JudgingTask, PoolItem
from tests.api.helpers import make_assessor, roles_of, routes, setup_campaign
from tests.web.pages import SETTLED, SHOWN_VIDEO, judge_link, shown_task, wait_status

KEY_VERDICT = {"r": "relevant", "1": "relevant", "n": "not_relevant", "0": "not_relevant", "u": "unsure"}
LABEL = {"relevant": "Relevant", "not_relevant": "Not relevant", "unsure": "Unsure"}


def _judging_pool(make_campaign, client, organiser, live_server):  # type: ignore[no-untyped-def]
    """A depth-3 pool over 2 runs with topic 1 assigned to one assessor; returns (pool, assessor token, run names,
    a one-time judging link URL)."""
    campaign, run_names = setup_campaign(make_campaign, client, organiser, n_runs=2, depth=60, seed=4)
    # media that fails fast on loopback: the page must fall back to the placeholder
    response = client.patch(
        f"/api/campaigns/{campaign.id}",
        json={"media_url_template": f"{live_server}/no-such-media/{{video_id}}.mp4"},
        headers=organiser,
    )
    assert response.status_code == 200, response.text
    pool = client.post(
        f"/api/campaigns/{campaign.id}/pools", json={"kind": "depth", "depth": 3, "seed": 9}, headers=organiser
    ).json()
    assessor_id, headers = make_assessor(client, organiser, campaign, "ann")
    response = client.post(
        f"/api/pools/{pool['id']}/assignments",
        headers=organiser,
        json={"assignments": [{"topic": "1", "assessor_id": assessor_id}]},
    )
    assert response.status_code == 201, response.text
    token = headers["Authorization"].removeprefix("Bearer ")
    return pool, token, run_names, judge_link(client, organiser, assessor_id)


def _press_and_settle(page, key: str) -> None:  # type: ignore[no-untyped-def]
    task = shown_task(page)
    page.keyboard.press(key)
    page.wait_for_function(SETTLED, arg=task)


def test_keyboard_only_judging_with_one_change(
    make_campaign, client, organiser, live_server, sessions, browser, tmp_path
):
    pool, token, run_names, link = _judging_pool(make_campaign, client, organiser, live_server)
    expected = next(t["sampled"] for t in pool["topics"] if t["topic"] == "1")
    assert expected >= 4

    page = browser.new_page(viewport={"width": 1100, "height": 900})
    console_errors: list[str] = []
    page.on("pageerror", lambda exc: console_errors.append(str(exc)))
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))
    answers: list = []  # the judging API's answers, read at the end
    page.on("response", lambda response: answers.append(response) if "/api/judging/" in response.url else None)
    page.goto(f"{live_server}{link}")
    page.wait_for_function(SETTLED, arg="")
    # the spent link left the address bar (and history); the session token it was traded for is in sessionStorage
    assert "link" not in page.url and page.url.endswith("/judge")
    (session_token,) = page.evaluate("Object.values(sessionStorage)")
    assert session_token.startswith("tp_") and session_token != token
    # no token (the long-lived one, or the session's) is ever in a URL the server sees
    assert urls and not [u for u in urls if token in u or session_token in u]
    # the link works once: opened again, it is refused
    second = browser.new_page()
    second.goto(f"{live_server}{link}")
    second.wait_for_selector("#message:not([hidden])")
    assert "used already" in second.text_content("#message")
    second.close()

    typed: dict[int, list[str]] = {}
    keys = itertools.cycle(["r", "n", "u", "1", "0"])
    went_back = False
    while page.is_hidden("#message"):
        task = int(shown_task(page))
        assert page.text_content("#topic-text") == "topic 1"
        # media fails to load -> the placeholder shows the shot id
        shot = page.text_content("#shot-id")
        page.wait_for_selector("#placeholder:not([hidden])")
        assert page.text_content("#placeholder-shot") == shot
        key = next(keys)
        _press_and_settle(page, key)
        typed[task] = [KEY_VERDICT[key]]
        wait_status(page, f"Saved: {LABEL[KEY_VERDICT[key]]} (shot {shot})")
        if len(typed) == 2 and not went_back:
            went_back = True
            leased = shown_task(page)
            page.screenshot(path=str(tmp_path / "judge.png"), full_page=True)
            _press_and_settle(page, "b")  # back to the item just judged
            assert int(shown_task(page)) == task
            assert page.is_visible("#going-back")
            assert page.get_attribute(f"[data-verdict={typed[task][0]}]", "aria-pressed") == "true"
            page.screenshot(path=str(tmp_path / "judge-back.png"), full_page=True)
            change = "u" if typed[task][0] != "unsure" else "r"
            _press_and_settle(page, change)  # changes the verdict, then continues with the leased item
            typed[task].append(KEY_VERDICT[change])
            wait_status(page, f"Changed to {LABEL[KEY_VERDICT[change]]}")
            assert shown_task(page) == leased and page.is_hidden("#going-back")

    assert page.text_content("#message").startswith("All done")
    assert page.text_content("#mine") == f"You judged {expected}"
    assert page.text_content("#progress-text") == f"Topic 1: {expected} by you, 0 left"
    assert len(typed) == expected
    # Backspace from "All done" re-opens the last item; the same verdict again changes nothing
    last = list(typed)[-1]
    page.keyboard.press("Backspace")
    page.wait_for_function(f"() => document.getElementById('item').dataset.task === '{last}'")
    key = next(k for k, v in KEY_VERDICT.items() if v == typed[last][-1])
    _press_and_settle(page, key)
    wait_status(page, "Kept")
    assert page.text_content("#message").startswith("All done")
    # blind: nothing about runs reached the page, nor any answer of the judging API (the step endpoint included)
    html = page.content()
    bodies = [answer.text() for answer in answers if answer.status == 200]
    assert any("/api/judging/step" in answer.url for answer in answers) and bodies
    for secret in [*run_names, "secret-tag", "rank", "n_runs", "stratum"]:
        assert secret not in html
        assert not [body for body in bodies if secret in body]
    assert console_errors == []
    page.close()

    with sessions() as session:
        rows = session.execute(
            select(JudgingTask.id, Judgement.id, Judgement.verdict)
            .join(
                Judgement, (Judgement.pool_item_id == JudgingTask.pool_item_id) & (Judgement.round == JudgingTask.round)
            )
            .join(PoolItem, PoolItem.id == Judgement.pool_item_id)
            .where(PoolItem.pool_id == pool["id"])
        ).all()
        assert {task: verdict.value for task, _, verdict in rows} == {task: v[-1] for task, v in typed.items()}
        for task, judgement_id, _ in rows:
            changes = session.scalars(
                select(JudgementChange).where(JudgementChange.judgement_id == judgement_id).order_by(JudgementChange.id)
            ).all()
            history = typed[task]
            assert [(c.old_verdict and c.old_verdict.value, c.new_verdict.value) for c in changes] == list(
                zip([None, *history[:-1]], history, strict=True)
            )
    assert sum(len(v) > 1 for v in typed.values()) == 1


def test_page_without_token_says_how_to_open_it(live_server, browser):
    page = browser.new_page()
    page.goto(f"{live_server}/judge")
    page.wait_for_selector("#message:not([hidden])")
    assert "judging link" in page.text_content("#message")
    assert page.is_hidden("#item")
    page.close()


def test_page_with_a_refused_link_says_so(live_server, browser):
    page = browser.new_page()
    page.goto(f"{live_server}/judge#link=tp_not-a-link")
    page.wait_for_selector("#message:not([hidden])")
    assert "not accepted (invalid judging link)" in page.text_content("#message")
    assert page.evaluate("sessionStorage.length") == 0 and page.url == f"{live_server}/judge"
    page.close()


def test_a_link_in_the_query_string_is_refused_and_sent_nowhere(make_campaign, client, organiser, live_server, browser):
    campaign = make_campaign()
    body = client.post(f"/api/campaigns/{campaign.id}/assessors", json={"name": "old"}, headers=organiser).json()
    secret = body["judge_url"].split("#link=")[1]
    page = browser.new_page()
    sent: list[tuple[str, str]] = []
    page.on("request", lambda request: sent.append((request.url, request.headers.get("authorization", ""))))
    page.goto(f"{live_server}/judge?link={secret}")  # the old form of a judge_url
    page.wait_for_selector("#message:not([hidden])")
    message = page.text_content("#message")
    assert "not accepted" in message and "old form" in message and "#link=" in message
    assert page.url == f"{live_server}/judge" and page.evaluate("sessionStorage.length") == 0
    # the page sent it to no exchange (the server, having seen it, withdrew it)
    assert not [url for url, header in sent if secret in header or "/api/judging/session" in url]
    refused = client.post("/api/judging/session", headers={"Authorization": f"Bearer {secret}"})
    assert refused.status_code == 401
    page.close()


def test_a_verdict_given_in_another_tab_is_not_overwritten(make_campaign, client, organiser, live_server, browser):
    pool, _, _, link = _judging_pool(make_campaign, client, organiser, live_server)
    page = browser.new_page()
    page.goto(f"{live_server}{link}")
    page.wait_for_function(SETTLED, arg="")
    task, shot = shown_task(page), page.text_content("#shot-id")
    # another tab of the same session judges the shown shot first
    (session_token,) = page.evaluate("Object.values(sessionStorage)")
    other_tab = {"Authorization": f"Bearer {session_token}"}
    judged = client.post("/api/judging/step", json={"task_id": int(task), "verdict": "relevant"}, headers=other_tab)
    assert judged.status_code == 200, judged.text
    _press_and_settle(page, "n")
    wait_status(page, f"Shot {shot} was already judged as Relevant in another tab or window")
    assert "your Not relevant was not saved" in page.text_content("#status")
    assert client.get(f"/api/judging/items/{task}", headers=other_tab).json()["verdict"] == "relevant"
    # the page went on with the next shot; B reaches the one judged elsewhere, and changing it there is allowed
    assert shown_task(page) != task and page.is_hidden("#message")
    _press_and_settle(page, "b")
    assert shown_task(page) == task and page.is_visible("#going-back")
    _press_and_settle(page, "u")
    wait_status(page, "Changed to Unsure")
    assert client.get(f"/api/judging/items/{task}", headers=other_tab).json()["verdict"] == "unsure"
    page.close()


def test_pages_declare_one_role_and_serve_only_their_files(client):
    web = [r for r in routes(client.app.routes) if isinstance(r, APIRoute) and not r.path.startswith("/api")]
    assert {r.path for r in web} >= {"/judge", "/static/{name}"}
    assert [r.path for r in web if len(roles_of(r)) != 1] == []
    page = client.get("/judge")
    assert page.status_code == 200 and page.headers["referrer-policy"] == "no-referrer"
    assert 'rel="alternate" type="application/json" href="/api/judging/progress"' in page.text
    assert client.get("/static/judge.js").headers["content-type"].startswith("text/javascript")
    assert client.get("/static/style.css").status_code == 200
    for bad in ("nope.js", "..%2Fpages.py", "%2E%2E%2F__init__.py"):
        assert client.get(f"/static/{bad}").status_code == 404


def _silence_wav(seconds: int, rate: int = 8000) -> bytes:
    """A silent mono WAV: a <video> element plays it like a video without pictures."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(1)
        out.setframerate(rate)
        out.writeframes(b"\x80" * (seconds * rate))
    return buffer.getvalue()


def _serve_ranges(route, body: bytes, content_type: str) -> None:  # type: ignore[no-untyped-def]
    """Answer a media request as a real media server does: byte ranges, so that the player can seek."""
    wanted = route.request.headers.get("range", "")
    headers = {"Accept-Ranges": "bytes", "Content-Type": content_type}
    if not wanted.startswith("bytes="):
        route.fulfill(status=200, body=body, headers=headers)
        return
    first, _, last = wanted.removeprefix("bytes=").split(",")[0].partition("-")
    begin, stop = int(first or 0), min(int(last) if last else len(body) - 1, len(body) - 1)
    headers["Content-Range"] = f"bytes {begin}-{stop}/{len(body)}"
    route.fulfill(status=206, body=body[begin : stop + 1], headers=headers)


def test_shot_plays_its_segment_pauses_at_the_end_and_replays(make_campaign, client, organiser, live_server, browser):
    campaign, _ = setup_campaign(make_campaign, client, organiser, n_runs=2, depth=60, seed=5)
    client.patch(
        f"/api/campaigns/{campaign.id}",
        json={"media_url_template": "http://media.invalid/{video_id}.wav"},
        headers=organiser,
    )
    pool = client.post(
        f"/api/campaigns/{campaign.id}/pools", json={"kind": "depth", "depth": 1, "seed": 1}, headers=organiser
    ).json()
    assessor_id, headers = make_assessor(client, organiser, campaign, "cat")
    client.post(
        f"/api/pools/{pool['id']}/assignments",
        headers=organiser,
        json={"assignments": [{"topic": "1", "assessor_id": assessor_id}]},
    )
    item = client.post("/api/judging/next", headers=headers).json()  # the page gets the same leased item
    start, end = item["start"], item["end"]
    first, last = max(0.0, start - 2), end + 2  # the shot with 2 s of context on each side, the default
    wav = _silence_wav(int(end) + 4)
    page = browser.new_page()
    # the media host exists only inside the browser: no network beyond loopback
    page.route("http://media.invalid/**", lambda route: _serve_ranges(route, wav, "audio/wav"))
    page.goto(f"{live_server}{judge_link(client, organiser, assessor_id)}")
    page.wait_for_function(SETTLED, arg="")
    assert int(shown_task(page)) == item["task_id"] and page.is_hidden("#placeholder")
    paused_at_end = f"e => {{ const v = {SHOWN_VIDEO}; return v.paused && v.currentTime >= e; }}"
    page.wait_for_function(paused_at_end, arg=last, timeout=15_000)
    # it seeked to the context's start before playing: what it played is the window, from first (not from 0) to last
    played = page.evaluate(f"(() => {{ const p = {SHOWN_VIDEO}.played; return [...Array(p.length).keys()]"
                           ".map((i) => [p.start(i), p.end(i)]); })()")  # fmt: skip
    assert len(played) == 1 and first - 0.3 <= played[0][0] <= first + 0.3, (played, first)
    assert last <= played[0][1] < last + 0.3
    assert last <= page.evaluate(f"{SHOWN_VIDEO}.currentTime") < last + 0.3
    # the timeline spans the part played and marks the shot inside it
    span = last - first
    marker = "() => { const s = document.getElementById('segment').style; return [s.left, s.width].map(parseFloat); }"
    left, width = page.evaluate(marker)
    assert abs(left - 100 * (start - first) / span) < 0.5 and abs(width - 100 * (end - start) / span) < 0.5
    assert page.is_hidden("#strip")  # sound only: no keyframes to draw
    page.keyboard.press(" ")
    wait_status(page, "Replaying")
    position = page.evaluate(f"{SHOWN_VIDEO}.currentTime")
    assert first <= position < start + 0.5
    page.wait_for_function(paused_at_end, arg=last, timeout=15_000)
    page.close()
