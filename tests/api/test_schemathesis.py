"""Property-based fuzzing of every operation in the OpenAPI schema, as an organiser: no input makes a 5xx."""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, Phase, settings
from sqlalchemy.orm import sessionmaker

from app.config import Settings
from app.server import create_app

# The schema of the app as built (no database is needed to describe it); calls go to the live test server.
schema = schemathesis.openapi.from_dict(create_app(Settings(), sessionmaker()).openapi())


@schema.parametrize()
@settings(
    max_examples=15,
    derandomize=True,  # the same examples every run: a failure here is reproducible
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
def test_no_input_makes_a_server_error(case, live_server, organiser):  # type: ignore[no-untyped-def]
    response = case.call(base_url=live_server, headers=organiser)
    assert response.status_code < 500, (
        f"{case.method} {case.formatted_path}: {response.status_code} {response.text[:500]}"
    )
