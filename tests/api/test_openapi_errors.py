"""The OpenAPI documents the errors actually returned: one error model for every 4xx, CSV and text as such."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.api.errors import ErrorOut
from tests.api.helpers import auth, throttled_client

ERROR_CODES = ("401", "403", "404", "409", "413", "422", "429")


def test_every_api_operation_documents_the_error_model(client):
    spec = client.app.openapi()
    assert "HTTPValidationError" not in spec["components"]["schemas"]  # FastAPI's own 422 body is not what we send
    assert set(spec["components"]["schemas"]["ErrorOut"]["properties"]) == {"detail", "errors"}
    item = spec["components"]["schemas"]["ErrorItem"]["properties"]
    assert set(item) == {"line", "field", "message"}
    operations = [(m, p, op) for p, ops in spec["paths"].items() if p.startswith("/api/") for m, op in ops.items()]
    assert len(operations) > 50
    for method, path, op in operations:
        for code in ERROR_CODES:
            schema = op["responses"][code]["content"]["application/json"]["schema"]
            assert schema == {"$ref": "#/components/schemas/ErrorOut"}, (method, path, code)
    throttled = spec["paths"]["/api/campaigns"]["get"]["responses"]["429"]
    assert throttled["headers"]["Retry-After"]["schema"] == {"type": "integer"}


def test_csv_and_text_answers_are_documented_as_such(client):
    paths = client.app.openapi()["paths"]
    for path in ("/api/campaigns/{campaign_id}/leaderboard", "/api/public/campaigns/{campaign_id}/leaderboard"):
        content = paths[path]["get"]["responses"]["200"]["content"]
        assert {"application/json", "text/csv"} <= set(content), path
    for path in ("/api/runs/{run_id}/download", "/api/qrels/{qrels_id}/download"):
        assert "text/plain" in paths[path]["get"]["responses"]["200"]["content"], path


def _is_error_body(body: object) -> bool:
    """Whether a body is what the OpenAPI documents for errors (no undeclared keys)."""
    assert isinstance(body, dict) and set(body) <= {"detail", "errors"}, body
    ErrorOut.model_validate(body)
    return True


def test_real_error_bodies_match_the_model(client, organiser, make_campaign, settings, sessions):
    campaign = make_campaign()
    _, team = campaign.team("errs")
    answers = {
        401: client.get("/api/campaigns", headers=auth("tp_wrong")),
        403: client.post(f"/api/campaigns/{campaign.id}/close", headers=team),
        404: client.get("/api/campaigns/2147483647", headers=organiser),
        409: client.post(f"/api/campaigns/{campaign.id}/teams", json={"name": "errs"}, headers=organiser),
        422: client.post("/api/campaigns", json={"name": "x", "task_kind": "nope"}, headers=organiser),
    }
    for code, response in answers.items():
        assert response.status_code == code, (code, response.text)
        assert _is_error_body(response.json())
    assert answers[422].json()["errors"][0]["field"] == "task_kind"
    lines = campaign.upload(team, "1 Q0 s1 1 nan r\n9 Q0 s2 2 0.5 r\n")
    assert lines.status_code == 422 and _is_error_body(lines.json())
    assert lines.json()["errors"][0]["line"] == 1
    too_big = client.post(
        f"/api/campaigns/{campaign.id}/runs",
        files={"file": ("r.txt", b"x" * (settings.max_upload_bytes + (2 << 20)), "text/plain")},
        data={"name": "big"},
        headers=team,
    )
    assert too_big.status_code == 413 and _is_error_body(too_big.json())
    with throttled_client(settings, sessions, 1) as throttled:
        assert isinstance(throttled, TestClient)
        throttled.get("/api/campaigns", headers=auth("tp_wrong"))
        refused = throttled.get("/api/campaigns", headers=auth("tp_wrong"))
        assert refused.status_code == 429 and _is_error_body(refused.json())
