"""The browser session's lifetime is the `web_session_seconds` setting: the token's expiry, the cookie's max-age and
the sign-in page's words follow it."""

from __future__ import annotations

from datetime import UTC, datetime

from app.services.auth import hash_token
from app.storage.models import ApiToken
from app.web.session import COOKIE
from tests.web.test_login import fresh, sign_in, team  # noqa: F401  # fixtures

__all__ = ["fresh", "team"]


def test_the_session_lasts_as_the_setting_says(fresh, team, sessions, monkeypatch) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    monkeypatch.setattr(fresh.app.state.settings, "web_session_seconds", 2 * 3600.0)
    assert "browser session of 2 hours" in fresh.get("/login").text
    response = sign_in(fresh, team[1])
    cookie = next(c for c in response.headers.get_list("set-cookie") if c.startswith(f"{COOKIE}="))
    assert "max-age=7200" in cookie.lower()
    with sessions() as session:
        made = session.query(ApiToken).filter_by(token_hash=hash_token(fresh.cookies.get(COOKIE))).one()
        assert made.expires_at is not None
        assert 7200 - 60 < (made.expires_at - datetime.now(UTC)).total_seconds() <= 7200
