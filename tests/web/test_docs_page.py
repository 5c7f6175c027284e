"""/docs (Swagger UI) and /redoc (ReDoc) render the API with no internet: every asset comes from the server."""

from __future__ import annotations

from urllib.parse import urlparse

import pytest


def _offline_page(browser, requested: list[str]):  # type: ignore[no-untyped-def]
    """A page whose requests to any host but the loopback are refused and recorded."""
    page = browser.new_page()

    def route(route):  # type: ignore[no-untyped-def]
        host = urlparse(route.request.url).hostname
        requested.append(route.request.url)
        if host in ("127.0.0.1", "localhost"):
            route.continue_()
        else:
            route.abort()

    page.route("**/*", route)
    return page


def _external(requested: list[str]) -> list[str]:
    """The requested URLs that left the machine."""
    return [url for url in requested if urlparse(url).hostname not in ("127.0.0.1", "localhost")]


def test_swagger_ui_lists_the_operations_offline(browser, live_server):
    requested: list[str] = []
    page = _offline_page(browser, requested)
    page.goto(f"{live_server}/docs")
    page.wait_for_selector(".opblock-summary-path", timeout=20_000)
    paths = page.locator(".opblock-summary-path").all_inner_texts()
    assert any("/api/campaigns/{campaign_id}/runs" in p.replace("\u200b", "") for p in paths)
    assert len(paths) > 40
    assert _external(requested) == []
    assert any("swagger-ui-bundle.js" in url for url in requested)
    page.close()


def test_redoc_lists_the_operations_offline(browser, live_server):
    requested: list[str] = []
    page = _offline_page(browser, requested)
    page.goto(f"{live_server}/redoc")
    page.wait_for_selector("[data-section-id^='tag/']", timeout=30_000)
    assert "/api/campaigns/{campaign_id}/evaluations" in page.content()
    # ReDoc's bundle links its "API docs by Redocly" logo from its CDN: refused here, the page works without it
    assert _external(requested) in ([], ["https://cdn.redoc.ly/redoc/logo-mini.svg"])
    page.close()


@pytest.mark.parametrize("path", ["/docs", "/redoc"])
def test_doc_pages_reference_no_cdn(client, path):
    html = client.get(path).text
    assert "cdn." not in html and "fonts.googleapis" not in html
    assert "/static-offline-docs/" in html
