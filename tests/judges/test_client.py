"""The batch judging client against an in-process fake of the batch API (httpx.MockTransport): every item judged
once over workers, retries on 5xx, 429 (its Retry-After) and lost answers, clear errors, checked judge output, the
configuration hash and judge loading."""

from __future__ import annotations

import hashlib
import json
import threading
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
import pytest

from app.judges import client as judging
from app.judges.loading import (
    JudgeSpecError,
    check_options,
    config_hash,
    load_judge,
    parse_options,
)

TOKEN = "tp_very-secret-token"


class FakeServer:
    """The batch API's contract in memory: leases, idempotent verdicts (same grade: unchanged; other: 409), and a
    script of failures to play on given requests."""

    def __init__(self, n_items: int, max_grade: int = 1, max_batch: int = 50) -> None:
        self.items = [
            {"item_id": 100 + k, "topic": str(1 + k % 3), "title": f"t{k % 3}", "description": "d",
             "shot_id": f"s{k}", "video_id": f"v{k}", "start": 0.0, "end": 2.0, "media_url": None,
             "keyframe_urls": []}
            for k in range(n_items)
        ]  # fmt: skip
        self.free = list(self.items)
        self.max_grade, self.max_batch = max_grade, max_batch
        self.stored: dict[int, int] = {}
        self.pushes: list[dict[str, Any]] = []
        self.seen_auth: set[str] = set()
        self.script: dict[tuple[str, int], httpx.Response | Exception] = {}  # (path, nth call) -> failure
        self.calls: dict[str, int] = {}
        self.lose_answer: set[int] = set()  # push calls whose answer is lost after storing
        self.lock = threading.Lock()

    def handle(self, request: httpx.Request) -> httpx.Response:
        """Answer one request as the server would."""
        with self.lock:
            path = request.url.path
            self.calls[path] = self.calls.get(path, 0) + 1
            nth = self.calls[path]
            self.seen_auth.add(request.headers.get("authorization", ""))
            failure = self.script.get((path, nth))
            if isinstance(failure, Exception):
                raise failure
            if failure is not None:
                return failure
            if request.headers.get("authorization") != f"Bearer {TOKEN}":
                return httpx.Response(401, json={"detail": "invalid token"})
            if path == judging.INFO:
                return httpx.Response(200, json={"assessor": "gpt-judge", "kind": "model", "provenance": {},
                                                 "max_grade": self.max_grade, "max_batch": self.max_batch,
                                                 "lease_seconds": 60})  # fmt: skip
            body = json.loads(request.content)
            if path == judging.PULL:
                n = min(body["n"], self.max_batch)
                taken, self.free = self.free[:n], self.free[n:]
                return httpx.Response(200, json={"items": taken, "max_grade": self.max_grade})
            self.pushes.append(body)
            accepted = unchanged = 0
            for verdict in body["verdicts"]:
                before = self.stored.get(verdict["item_id"])
                if before is not None and before != verdict["grade"]:
                    return httpx.Response(409, json={"detail": f"item {verdict['item_id']} has grade {before}"})
                if before is None:
                    accepted += 1
                else:
                    unchanged += 1
                self.stored[verdict["item_id"]] = verdict["grade"]
            if nth in self.lose_answer:
                raise httpx.ReadError("connection reset")
            return httpx.Response(200, json={"accepted": accepted, "unchanged": unchanged})

    def client(self, token: str = TOKEN, **kwargs: Any) -> judging.BatchClient:
        """A client of this server that records its sleeps instead of sleeping."""
        self.sleeps: list[float] = []
        return judging.BatchClient(
            "http://judge.test/", token, transport=httpx.MockTransport(self.handle), sleep=self.sleeps.append, **kwargs
        )


def parity_judge(items: list[dict[str, Any]], *, offset: str = "0", max_grade: str = "1") -> list[dict[str, Any]]:
    """Grade 1 for even item ids (shifted by `offset`), with probability 0.9 / 0.2."""
    out = []
    for item in items:
        relevant = (item["item_id"] + int(offset)) % 2 == 0
        out.append({"grade": min(int(relevant), int(max_grade)), "probability": 0.9 if relevant else 0.2})
    return out


def test_every_item_is_judged_once_over_several_workers():
    server = FakeServer(23)
    with server.client() as api:
        summary = judging.run(api, parity_judge, {}, "h" * 64, batch=4, workers=3)
    assert sorted(server.stored) == [item["item_id"] for item in server.items]
    assert server.stored == {i: int(i % 2 == 0) for i in range(100, 123)}
    assert (summary.pulled, summary.accepted, summary.unchanged, summary.retries) == (23, 23, 0, 0)
    assert summary.batches == len(server.pushes) and all(len(p["verdicts"]) <= 4 for p in server.pushes)
    assert {p["config_hash"] for p in server.pushes} == {"h" * 64}
    assert server.seen_auth == {f"Bearer {TOKEN}"}
    assert server.calls[judging.PULL] >= 6 + 3  # 23 / 4 batches, then an empty pull per worker


def test_max_items_stops_early_and_the_campaign_scale_reaches_the_judge():
    server = FakeServer(30, max_grade=3)
    seen: list[str] = []

    def graded(items: list[dict[str, Any]], *, max_grade: str) -> list[dict[str, Any]]:
        seen.append(max_grade)
        return [{"grade": 3, "probability": None} for _ in items]

    with server.client() as api:
        summary = judging.run(api, graded, {}, "h", batch=4, max_items=10, max_grade=3)
    assert summary.pulled == 10 and len(server.stored) == 10 and set(server.stored.values()) == {3}
    assert set(seen) == {"3"} and [len(p["verdicts"]) for p in server.pushes] == [4, 4, 2]


def test_5xx_429_and_lost_answers_are_retried_and_a_repeated_push_is_unchanged():
    server = FakeServer(6)
    server.script[(judging.PULL, 1)] = httpx.Response(503, json={"detail": "database unavailable"})
    server.script[(judging.PUSH, 1)] = httpx.Response(429, headers={"Retry-After": "7"}, json={"detail": "slow"})
    server.script[(judging.PULL, 3)] = httpx.ConnectError("refused")
    server.lose_answer = {2}  # the second push call stores its verdicts, then the answer is lost
    with server.client() as api:
        summary = judging.run(api, parity_judge, {}, "h", batch=3)
    assert server.stored == {i: int(i % 2 == 0) for i in range(100, 106)}
    assert summary.accepted == 3 and summary.unchanged == 3  # the lost answer's batch came back as unchanged
    assert summary.retries == 4
    assert 7.0 in server.sleeps and len(server.sleeps) == 4
    assert all(0 < s <= 60 for s in server.sleeps)


def test_retry_after_as_an_http_date():
    when = datetime.now(UTC) + timedelta(seconds=30)
    response = httpx.Response(429, headers={"Retry-After": format_datetime(when, usegmt=True)})
    assert judging.retry_after(response) == pytest.approx(30, abs=2)
    assert judging.retry_after(httpx.Response(429, headers={"Retry-After": "2.5"})) == 2.5
    assert judging.retry_after(httpx.Response(429)) is None


def test_refused_token_unreachable_server_and_conflicts_are_one_clear_error_without_the_token():
    server = FakeServer(4)
    with server.client(token="tp_wrong-secret") as api, pytest.raises(judging.Unauthorized) as refused:
        api.info()
    assert "401" in str(refused.value) and "invalid token" in str(refused.value)
    assert "secret" not in str(refused.value)

    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused")

    sleeps: list[float] = []
    api = judging.BatchClient("http://down.test", TOKEN, transport=httpx.MockTransport(down), sleep=sleeps.append)
    with pytest.raises(judging.Unreachable, match=r"GET http://down.test/api/judging/batch failed after 3 attempts"):
        api.info()
    with pytest.raises(judging.Unreachable, match="after 9 attempts: ConnectError"):
        api.pull(3)
    assert len(sleeps) == 2 + 8
    for attempt, slept in enumerate(sleeps[2:]):  # exponential backoff 0.5 s x 2^k with jitter x [0.5, 1.5), cap 60
        assert min(0.25 * 2**attempt, 60) <= slept <= min(0.75 * 2**attempt, 60)

    server.stored[100] = 1  # another run judged item 100 relevant; this judge says 0: the server's 409 ends the run
    with server.client() as api, pytest.raises(judging.JudgeClientError, match="409 item 100 has grade 1"):
        judging.run(api, parity_judge, {"offset": "1"}, "h", batch=2)


@pytest.mark.parametrize(
    ("output", "message"),
    [
        ({"grade": 1}, "returned dict, not a list"),
        ([{"grade": 1, "probability": 0.5}], "returned 1 verdicts for 2 items"),
        ([{"grade": 1, "probability": 0.5}, {"grade": 2, "probability": 0.5}],
         r"item 8 \(topic 4, shot s8\): grade 2 is outside the campaign's scale 0..1"),
        ([{"grade": 1, "probability": 0.5}, {"grade": True, "probability": 0.5}], r"item 8 .*grade True is not an int"),
        ([{"grade": 1, "probability": 0.5}, {"grade": "1", "probability": 0.5}], r"item 8 .*grade '1' is not an int"),
        ([{"grade": 1, "probability": 1.5}, {"grade": 0, "probability": 0.5}], r"item 7 .*probability 1.5 is outside"),
        ([{"grade": 1, "probability": float("nan")}, {"grade": 0}], r"item 7 .*probability nan is outside"),
        ([{"grade": 1, "probability": "high"}, {"grade": 0}], r"item 7 .*probability 'high' is not a number"),
        ([{"grade": 1}, 0], r"verdict on item 8 .* is int, not a dict"),
    ],
)  # fmt: skip
def test_the_judges_output_is_checked_naming_the_item(output, message):
    items = [{"item_id": 7, "topic": "4", "shot_id": "s7"}, {"item_id": 8, "topic": "4", "shot_id": "s8"}]
    with pytest.raises(judging.JudgeOutputError, match=message):
        judging.checked_verdicts(items, output, 1)


def test_valid_output_becomes_the_pushed_verdicts():
    items = [{"item_id": 7}, {"item_id": 8}, {"item_id": 9}]
    output = [{"grade": 2, "probability": 1}, {"grade": 0, "probability": None}, {"grade": 1}]
    assert judging.checked_verdicts(items, output, 2) == [
        {"item_id": 7, "grade": 2, "probability": 1.0},
        {"item_id": 8, "grade": 0, "probability": None},
        {"item_id": 9, "grade": 1, "probability": None},
    ]


def test_a_failing_judge_stops_the_run_naming_the_batch():
    server = FakeServer(5)

    def broken(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        raise RuntimeError("model overloaded")

    with server.client() as api, pytest.raises(judging.JudgeClientError) as failed:
        judging.run(api, broken, {}, "h", batch=5, workers=2)
    assert "item 100 (topic 1, shot s0) first): RuntimeError: model overloaded" in str(failed.value)
    assert server.stored == {}


def test_config_hash_is_the_canonical_judge_and_sorted_options():
    options = {"qrels": "/data/q.txt", "error_rate": "0.3"}
    expected = json.dumps(
        {"judge": "app.judges.simulated:judge", "options": [["error_rate", "0.3"], ["qrels", "/data/q.txt"]]},
        separators=(",", ":"),
    )
    digest = config_hash("simulated", options)
    assert digest == hashlib.sha256(expected.encode()).hexdigest()
    assert config_hash("app.judges.simulated:judge", dict(reversed(options.items()))) == digest
    assert config_hash("simulated", {**options, "seed": "1"}) != digest
    assert config_hash("openai", {}) != config_hash("simulated", {})


def test_options_are_parsed_and_secrets_refused():
    assert parse_options(["a=1", "long-name=x=y", "empty="]) == {"a": "1", "long_name": "x=y", "empty": ""}
    for bad, message in [("novalue", "expected KEY=VALUE"), ("api_key=sk-1", "secrets are never options"),
                         ("token=x", "TRECPOOL_JUDGE_API_KEY")]:  # fmt: skip
        with pytest.raises(JudgeSpecError, match=message):
            parse_options([bad])
    with pytest.raises(JudgeSpecError, match="given twice"):
        parse_options(["a=1", "a=2"])


def test_judges_are_loaded_by_name_and_their_options_checked():
    from app.judges import openai_chat, simulated

    assert load_judge("simulated") is simulated.judge and load_judge("openai") is openai_chat.judge
    assert load_judge("app.judges.openai_chat:judge") is openai_chat.judge
    for spec, message in [
        ("nomodule", "expected MODULE:FUNCTION"),
        ("no_such_module_here:judge", "no module 'no_such_module_here'"),
        ("app.judges.simulated:nothing", "has no 'nothing'"),
        ("app.judges.openai_chat:API_KEY_VARIABLE", "is not a function"),
    ]:
        with pytest.raises(JudgeSpecError, match=message):
            load_judge(spec)
    check_options(simulated.judge, {"qrels": "q", "seed": "2"}, "simulated")
    with pytest.raises(JudgeSpecError, match="needs --option qrels="):
        check_options(simulated.judge, {}, "simulated")
    with pytest.raises(JudgeSpecError, match=r"--option colour: app.judges.simulated:judge takes no such option"):
        check_options(simulated.judge, {"qrels": "q", "colour": "red"}, "simulated")
    with pytest.raises(JudgeSpecError, match="needs --option url=... --option model=..."):
        check_options(openai_chat.judge, {}, "openai")
