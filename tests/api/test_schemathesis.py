"""Property-based fuzzing of every operation in the OpenAPI schema, as an organiser: no input makes a 5xx, and every
answer matches the schema the OpenAPI documents for its status and content type (errors included)."""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, Phase, settings
from schemathesis.checks import not_a_server_error, response_schema_conformance
from sqlalchemy.orm import sessionmaker

from app.config import Settings
from app.server import create_app

# The schema of the app as built (no database is needed to describe it); calls go to the live test server.
# Revocation is left out: a fuzzed id could revoke the organiser token the rest of the run shares
# (tests/api/test_tokens.py covers it).
schema = schemathesis.openapi.from_dict(create_app(Settings(), sessionmaker()).openapi()).exclude(
    path="/api/tokens/{token_id}/revoke", method="POST"
)


@schema.parametrize()
@settings(
    max_examples=15,
    derandomize=True,  # the same examples every run: a failure here is reproducible
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
def test_no_input_makes_a_server_error_and_answers_match_the_schema(case, live_server, organiser):  # type: ignore[no-untyped-def]
    response = case.call(base_url=live_server, headers=organiser)
    assert response.status_code < 500, (
        f"{case.method} {case.formatted_path}: {response.status_code} {response.text[:500]}"
    )
    case.validate_response(response, checks=[not_a_server_error, response_schema_conformance])
