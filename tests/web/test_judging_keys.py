"""The judging page's keys in chromium: rebinding keys from the help (refusing a key bound already, kept in
localStorage, reset), the help showing the bindings, and a media host that does not answer named as unreachable."""

from __future__ import annotations

import json

from tests.api.helpers import make_assessor, setup_campaign
from tests.web.pages import SETTLED, axe_violations, judge_link, shown_task, wait_status

MEDIA = "http://media.invalid/{video_id}.webm"


def _judging_page(make_campaign, client, organiser, live_server, browser, template: str, **context):  # type: ignore[no-untyped-def]
    """The judging page of a fresh assessor owning topic 1 of a depth-3 pool whose media follow `template`."""
    campaign, _ = setup_campaign(make_campaign, client, organiser, n_runs=2, depth=60, seed=8)
    patched = client.patch(f"/api/campaigns/{campaign.id}", json={"media_url_template": template}, headers=organiser)
    assert patched.status_code == 200, patched.text
    pool = client.post(
        f"/api/campaigns/{campaign.id}/pools", json={"kind": "depth", "depth": 3, "seed": 3}, headers=organiser
    ).json()
    assessor_id, _ = make_assessor(client, organiser, campaign, "ann")
    body = {"assignments": [{"topic": "1", "assessor_id": assessor_id}]}
    assert client.post(f"/api/pools/{pool['id']}/assignments", json=body, headers=organiser).status_code == 201
    page = browser.new_context(viewport={"width": 1280, "height": 900}, **context).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.route("http://media.invalid/**", lambda route: route.abort("connectionrefused"))
    page.goto(f"{live_server}{judge_link(client, organiser, assessor_id)}")
    page.wait_for_function(SETTLED, arg="")
    return page, errors


def test_an_unreachable_media_host_is_named(make_campaign, client, organiser, live_server, browser):
    page, errors = _judging_page(make_campaign, client, organiser, live_server, browser, MEDIA)
    page.wait_for_function("() => !document.getElementById('placeholder').hidden")
    assert page.text_content("#placeholder-text") == "The media host media.invalid is unreachable"
    assert page.text_content("#placeholder-shot") == page.evaluate("document.getElementById('shot-id').textContent")
    assert not errors
    page.context.close()


def _rebind(page, action: str, key: str, said: str) -> None:  # type: ignore[no-untyped-def]
    """Press Change for `action` in the change-keys dialog, then `key`; the dialog says `said`."""
    page.click(f"#keys [data-change={action}]")
    page.keyboard.press(key)
    page.wait_for_function("t => document.getElementById('keys-status').textContent === t", arg=said)


def _bound(page) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The key each rebindable action shows in the help."""
    return page.evaluate(
        "() => Object.fromEntries([...document.querySelectorAll('#help kbd[data-bind]')]"
        ".map((k) => [k.dataset.bind, k.textContent]))"
    )


def test_keys_are_rebound_from_the_help_refused_when_bound_and_reset(
    make_campaign, client, organiser, live_server, browser
):
    page, errors = _judging_page(make_campaign, client, organiser, live_server, browser, MEDIA, bypass_csp=True)
    defaults = {"relevant": "R", "not_relevant": "N", "unsure": "U", "later": "S", "back": "B", "replay": "Space"}
    assert _bound(page) == {**defaults, "pause": "Z"}
    page.keyboard.press("?")
    page.click("#keys-button")
    assert page.is_visible("#keys")
    assert axe_violations(page) == []
    _rebind(page, "relevant", "x", "Relevant is now X.")
    _rebind(page, "later", "x", "Refused: X is already bound to Relevant.")
    _rebind(page, "later", "m", "Refused: M is already bound to Sound on or off.")
    _rebind(page, "later", "7", "Refused: 7 is already bound to Grades.")
    _rebind(page, "later", "Escape", "Kept S for Later.")
    assert page.is_visible("#keys")  # Esc while waiting for a key keeps the key and the dialog
    _rebind(page, "later", "k", "Later is now K.")
    _rebind(page, "pause", "Shift+Q", "A break is now Q.")
    page.keyboard.press("Escape")  # closes the change-keys dialog, back to the help
    assert page.is_hidden("#keys") and page.is_visible("#help")
    assert _bound(page) == {**defaults, "relevant": "X", "later": "K", "pause": "Q"}
    assert page.get_attribute("#later", "aria-keyshortcuts") == "k"
    assert page.get_attribute(".verdicts .relevant", "aria-keyshortcuts") == "x 1"
    page.keyboard.press("Escape")
    stored = json.loads(page.evaluate("localStorage.getItem('trecpool.judging-keys')"))
    assert stored == {
        "relevant": "x",
        "not_relevant": "n",
        "unsure": "u",
        "later": "k",
        "back": "b",
        "replay": " ",
        "pause": "q",
    }

    # the old key does nothing, the new ones judge and put off
    task = shown_task(page)
    page.keyboard.press("r")
    page.wait_for_timeout(300)
    assert shown_task(page) == task and page.text_content("#status") == ""
    shot = page.text_content("#shot-id")
    page.keyboard.press("x")
    wait_status(page, f"Saved: Relevant (shot {shot})")
    page.wait_for_function(SETTLED, arg=task)
    task, shot = shown_task(page), page.text_content("#shot-id")
    page.keyboard.press("k")
    wait_status(page, f"Shot {shot} put off")
    page.keyboard.press("1")  # the digits stay
    wait_status(page, "Saved: Relevant")

    # kept across a reload; reset brings the defaults back and forgets the stored keys
    page.reload()
    page.wait_for_function(SETTLED, arg="")
    assert _bound(page)["relevant"] == "X"
    page.keyboard.press("?")
    page.click("#keys-button")
    page.click("#keys-reset")
    assert page.text_content("#keys-status") == "Every key is back to its default."
    assert _bound(page) == {**defaults, "pause": "Z"}
    assert page.evaluate("localStorage.getItem('trecpool.judging-keys')") is None
    assert not errors
    page.context.close()


def test_back_later_replay_and_break_are_in_view_at_1280_by_900(make_campaign, client, organiser, live_server, browser):
    page, errors = _judging_page(make_campaign, client, organiser, live_server, browser, MEDIA)
    assert page.evaluate("window.scrollY") == 0
    for selector in ("#back", "#later", "#replay", "#pause", ".verdicts .relevant"):
        box = page.locator(selector).bounding_box()
        assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= 900, (selector, box)
    assert not errors
    page.context.close()
