"""Large JSON bodies are decoded and validated in a worker thread, with the same results and errors as before."""

from __future__ import annotations

import json
import threading

import pytest
from fastapi.routing import APIRoute

from app.api import json_bodies
from app.api.json_bodies import OFF_LOOP_BYTES, OffLoopJSONRoute, decode_json, takes_json
from app.api.topics import TopicIn
from app.server import ROUTERS

SAMPLES = [
    '{"a": [1, -2, 3.5e-3, 1e400, -0.0, 123456789012345678901234567890], "b": null, "c": true, "d": false}',
    '["plain", "esc\\"aped\\\\", "\\u00e9t\\u00e9", "\\ud83d\\ude00", "\\ud800 lone", "tab\\tnew\\nline"]',
    '["\u00e9\u4e2d", "\\/"]',
    '  {"nested": {"deep": [[[{}]], [], {"k": ""}]}, "dup": 1, "dup": 2}  ',
    "[NaN, Infinity, -Infinity]",
    '"just a string"',
]


@pytest.mark.parametrize("text", SAMPLES)
@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-32-le"])
def test_decoding_equals_json_loads(text, encoding):
    body = text.encode(encoding)
    assert json.dumps(decode_json(body)) == json.dumps(json.loads(body))


@pytest.mark.parametrize("text", ['{"a": 1,}', "[1, 2", '{"a" 1}', "", "[1] x", '"\\x"', '{"a": tru}'])
def test_malformed_json_fails_as_json_loads_does(text):
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text.encode())
    with pytest.raises(json.JSONDecodeError) as got:
        decode_json(text.encode())
    # the pure-Python scanner names a bad escape's character, one place further on
    assert got.value.msg.startswith(expected.value.msg)
    assert got.value.pos == expected.value.pos + (1 if "escape" in expected.value.msg else 0)


def test_every_json_route_is_decoded_off_the_loop(client):
    routes = [route for module in ROUTERS for route in module.router.routes if isinstance(route, APIRoute)]
    json_routes = [route for route in routes if takes_json(route)]
    assert len(json_routes) >= 15
    assert [route.path for route in json_routes if not isinstance(route, OffLoopJSONRoute)] == []
    assert not any(isinstance(route, OffLoopJSONRoute) for route in routes if not takes_json(route))


@pytest.fixture
def decoded_in(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, object]]:
    """Each off-loop decoding: (the thread that did it, what it returned)."""
    calls: list[tuple[str, object]] = []
    original = json_bodies.decode_and_validate

    def recording(body: bytes, field: object) -> object:
        value = original(body, field)
        calls.append((threading.current_thread().name, value))
        return value

    monkeypatch.setattr(json_bodies, "decode_and_validate", recording)
    return calls


def _topics(count: int, **changes: object) -> list[dict[str, object]]:
    """A topic list big enough to be decoded off the loop."""
    return [{"number": f"t{i}", "title": f"topic {i}", "description": "d" * 200, **changes} for i in range(count)]


def test_a_large_topic_list_is_decoded_and_validated_in_a_thread(client, make_campaign, organiser, decoded_in):
    campaign = make_campaign(n_topics=1)
    topics = _topics(800)
    body = json.dumps(topics).encode()
    assert len(body) >= OFF_LOOP_BYTES
    created = client.post(
        f"/api/campaigns/{campaign.id}/topics", content=body, headers={**organiser, "Content-Type": "application/json"}
    )
    assert created.status_code == 201, created.text[:300]
    assert [(t["number"], t["title"], t["description"]) for t in created.json()] == [
        (t["number"], t["title"], t["description"]) for t in topics
    ]
    ((thread, value),) = decoded_in
    assert thread != threading.main_thread().name
    assert isinstance(value, list) and all(isinstance(topic, TopicIn) for topic in value)  # validated there too
    small = client.post(f"/api/campaigns/{campaign.id}/topics", json=_topics(2, number="s"), headers=organiser)
    assert small.status_code in (201, 409, 422) and len(decoded_in) == 1  # small bodies: decoded as before


def test_large_invalid_bodies_get_the_usual_errors(client, make_campaign, organiser, decoded_in):
    campaign = make_campaign(n_topics=1)
    topics = _topics(800)
    topics[640]["title"] = ""
    del topics[700]["number"]
    answer = client.post(f"/api/campaigns/{campaign.id}/topics", json=topics, headers=organiser)
    assert answer.status_code == 422
    assert [e["field"] for e in answer.json()["errors"]] == ["640.title", "700.number"]
    assert isinstance(decoded_in[0][1], list) and isinstance(decoded_in[0][1][0], dict)  # handed back as decoded
    malformed = json.dumps(_topics(800)).encode()[:-1]
    answer = client.post(
        f"/api/campaigns/{campaign.id}/topics",
        content=malformed,
        headers={**organiser, "Content-Type": "application/json"},
    )
    assert answer.status_code == 422 and answer.json()["detail"] == "invalid request"
    assert answer.json()["errors"][0]["message"] == "JSON decode error"
