"""Browser-test fixtures: a headless Debian chromium (the app, its client and live server are in tests/conftest.py)."""

from __future__ import annotations

import shutil

import pytest

from tests.web.pages import CHROMIUM, CHROMIUM_ARGS


@pytest.fixture(scope="module")
def browser():  # type: ignore[no-untyped-def]
    """A headless chromium, or a skip saying how to get one."""
    if not CHROMIUM.exists() or shutil.which(str(CHROMIUM)) is None:
        pytest.skip("browser tests need Debian's chromium at /usr/bin/chromium: apt-get install -y chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()
