"""/docs has an Authorize button: a token entered there is sent by "Try it out", which then gets 200, not 401."""

from __future__ import annotations


def test_try_it_out_with_an_authorized_token(browser, live_server, organiser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{live_server}/docs")
    page.wait_for_selector("button.btn.authorize", timeout=20_000)
    # operations that need a token show a lock; the public health check does not
    health = page.locator(".opblock", has=page.locator(".opblock-summary-path[data-path='/api/health']"))
    assert health.locator(".authorization__btn").count() == 0
    campaigns = page.locator(".opblock-get", has=page.locator(".opblock-summary-path[data-path='/api/campaigns']"))
    assert campaigns.locator(".authorization__btn").count() == 1
    page.click("button.btn.authorize")
    box = page.locator(".auth-container", has_text="bearerToken")
    box.locator("input").fill(organiser["Authorization"].removeprefix("Bearer "))
    box.locator("button.authorize").click()
    page.click("button.btn-done")
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.headers.get("authorization", "")) if "/api/campaigns" in r.url else 0)
    campaigns.locator(".opblock-summary").click()
    campaigns.locator(".try-out__btn").click()
    campaigns.locator(".execute").click()
    status = campaigns.locator(".live-responses-table td.response-col_status:not(.col_header)")
    status.wait_for(timeout=20_000)
    assert status.inner_text().strip() == "200"
    assert sent == [organiser["Authorization"]]
    page.close()
