"""Browser-test fixtures: the API fixtures (app, organiser, live server, sessions) re-exported for tests/web."""

from tests.api.conftest import client, live_server, make_campaign, organiser, sessions, settings  # noqa: F401
