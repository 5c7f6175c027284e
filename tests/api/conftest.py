"""The API tests' fixtures are shared with the browser tests, so they are in tests/conftest.py (the app, a client, an
organiser, `make_campaign`, `judged_campaign`, `evaluated`, `moment_pool`, a live server); plain helpers are in
tests/api/helpers.py."""
