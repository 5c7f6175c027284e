"""/docs and /redoc work under their Content-Security-Policy: no violation but ReDoc's CDN logo, which is refused."""

from __future__ import annotations

import pytest

CDN_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"


def _violations(messages: list[str]) -> list[str]:
    """The console messages that report a Content-Security-Policy violation."""
    return [m for m in messages if "Content Security Policy" in m]


@pytest.mark.parametrize(
    ("path", "ready", "allowed"),
    [
        ("/docs", ".opblock-summary-path", []),
        ("/redoc", "[data-section-id^='tag/']", [CDN_LOGO]),  # its bundle links a logo on its CDN: refused
    ],
)
def test_docs_render_under_their_policy(browser, live_server, path, ready, allowed):
    page = browser.new_page()
    messages: list[str] = []
    page.on("console", lambda message: messages.append(message.text))
    page.on("pageerror", lambda error: messages.append(f"page error: {error}"))
    answer = page.goto(f"{live_server}{path}")
    assert answer is not None and "script-src 'self'" in answer.headers["content-security-policy"]
    page.wait_for_selector(ready, timeout=30_000)
    assert page.locator(ready).count() > 10
    if path == "/redoc":
        page.fill("input[placeholder='Search...']", "evaluations")  # the search runs in a worker (worker-src blob:)
        page.locator("[data-role='search:results'] li").first.wait_for(timeout=20_000)
    assert not any(m.startswith("page error") for m in messages), messages
    blocked = _violations(messages)
    assert all(any(url in m for url in allowed) for m in blocked), blocked
    page.close()
