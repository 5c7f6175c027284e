"""The OpenAPI declares the bearer token: every operation's `security` follows its role in the role table, so /docs
has an Authorize button and generated clients know which calls need a token."""

from __future__ import annotations

from tests.api.test_role_table import PUBLIC, ROLE_TABLE

TOKEN = [{"bearerToken": []}]
# the one public operation that takes a credential: the one-time judging link it trades for a session token
LINK_EXCHANGE = ("POST", "/api/judging/session")


def _operations(spec: dict) -> dict[tuple[str, str], dict]:  # type: ignore[type-arg]
    """Every documented API operation by (METHOD, path)."""
    return {
        (method.upper(), path): op
        for path, ops in spec["paths"].items()
        if path.startswith("/api/")
        for method, op in ops.items()
    }


def test_the_bearer_schemes_are_declared(client):
    schemes = client.get("/openapi.json").json()["components"]["securitySchemes"]
    assert schemes["bearerToken"]["type"] == "http" and schemes["bearerToken"]["scheme"] == "bearer"
    assert schemes["judgingLink"]["type"] == "http" and schemes["judgingLink"]["scheme"] == "bearer"
    assert "#link=" in schemes["judgingLink"]["description"]


def test_each_operations_security_follows_its_role(client):
    operations = _operations(client.get("/openapi.json").json())
    assert len(operations) > 50
    # every documented operation is in the role table (nothing escapes the comparison below)
    assert set(operations) - set(ROLE_TABLE) == set()
    wrong = {}
    for key, op in operations.items():
        if key == LINK_EXCHANGE:
            expected = [{"judgingLink": []}]
        elif ROLE_TABLE[key] == PUBLIC:
            expected = None
        else:
            expected = TOKEN
        if op.get("security") != expected:
            wrong[key] = (ROLE_TABLE[key], op.get("security"))
    assert wrong == {}
    assert ROLE_TABLE[LINK_EXCHANGE] == PUBLIC
    # the Authorization header is the security scheme's, never a parameter of its own (OpenAPI ignores those)
    assert [
        k for k, op in operations.items() if any(p["name"].lower() == "authorization" for p in op.get("parameters", []))
    ] == []


def test_the_documented_token_works_and_public_operations_need_none(client, organiser):
    assert client.get("/api/health").status_code == 200
    refused = client.get("/api/campaigns")
    assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
    assert client.get("/api/campaigns", headers=organiser).status_code == 200
    # a scheme other than Bearer is no token
    token = organiser["Authorization"].removeprefix("Bearer ")
    assert client.get("/api/campaigns", headers={"Authorization": f"Basic {token}"}).status_code == 401
    assert client.get("/api/campaigns", headers={"Authorization": f"bearer  {token} "}).status_code == 200
