"""Browser-test fixtures: a headless Debian chromium (the app, its client and live server are in tests/conftest.py)."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from tests.web.pages import CHROMIUM, CHROMIUM_ARGS


@pytest.fixture(scope="session")
def _chromium() -> Iterator[tuple[Any, asyncio.AbstractEventLoop]]:
    """One headless chromium per test process (starting Playwright's driver and chromium costs about a second), with
    the event loop of Playwright's sync API; or a skip saying how to get one."""
    if not CHROMIUM.exists() or shutil.which(str(CHROMIUM)) is None:
        pytest.skip("browser tests need Debian's chromium at /usr/bin/chromium: apt-get install -y chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        loop = asyncio.get_running_loop()  # the sync API marks its loop as running in this thread between its calls
        asyncio._set_running_loop(None)  # given back to plain asyncio: see `browser`
        yield chromium, loop
        asyncio._set_running_loop(loop)  # Playwright closes as it left off
        chromium.close()


@pytest.fixture(scope="module")
def browser(_chromium: tuple[Any, asyncio.AbstractEventLoop]):  # type: ignore[no-untyped-def]
    """The process's headless chromium for one module; the pages and contexts the module opened are closed after it.

    Between modules the thread is given back to plain asyncio: Playwright's sync API leaves its event loop marked as
    running in this thread between its calls, and `asyncio.run` in a later test of another module would refuse to
    start (a test of the module itself must not call it)."""
    chromium, loop = _chromium
    asyncio._set_running_loop(loop)  # as Playwright left it after its last call
    try:
        yield chromium
        for context in chromium.contexts:
            context.close()
    finally:
        asyncio._set_running_loop(None)
