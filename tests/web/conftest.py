"""Browser-test fixtures: the API fixtures re-exported for tests/web, and a headless Debian chromium."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.api.conftest import client, live_server, make_campaign, organiser, sessions, settings  # noqa: F401

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


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
