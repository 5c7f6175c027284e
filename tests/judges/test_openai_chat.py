"""The OpenAI-compatible chat judge against a local stub server (http.server in a thread): the request's shape
(model, messages, logprobs, the API key from the environment), the grade and probability read from canned
completions, a malformed answer named by its item, and a 429 or 500 followed by success."""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from app.judges import openai_chat
from app.judges.openai_chat import OpenAIJudgeError, judge

Answer = tuple[int, dict[str, str], Any]  # status, headers, JSON body (or raw text)


@contextmanager
def stub_server(answer: Callable[[dict[str, Any]], Answer]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A chat endpoint on a free loopback port answering `answer(request)`; (base URL, the requests it received:
    path, headers, body)."""
    received: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802  # http.server's name
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            request = {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body}
            received.append(request)
            status, headers, payload = answer(request)
            data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()


def completion(content: str, tokens: list[tuple[str, float, dict[str, float]]] | None = None) -> dict[str, Any]:
    """A chat completion with `content`; `tokens` (text, probability, {alternative: probability}) as its logprobs."""
    choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
    if tokens is not None:
        assert "".join(t for t, _, _ in tokens) == content
        choice["logprobs"] = {
            "content": [
                {
                    "token": text,
                    "logprob": math.log(p),
                    "top_logprobs": [{"token": a, "logprob": math.log(q)} for a, q in alternatives.items()],
                }
                for text, p, alternatives in tokens
            ]
        }
    return {"id": "chatcmpl-1", "object": "chat.completion", "model": "stub-model", "choices": [choice]}


def item(k: int, keyframes: int = 2) -> dict[str, Any]:
    """A pulled item as the batch API gives it."""
    return {
        "item_id": 500 + k,
        "topic": "1042",
        "title": "a dog catching a frisbee",
        "description": "Find shots of a dog catching a frisbee in mid-air.",
        "shot_id": f"shot{k}_3",
        "video_id": f"video{k}",
        "start": 12.0,
        "end": 15.5,
        "media_url": f"https://media.example/video{k}.mp4#t=12,15.5",
        "keyframe_urls": [f"https://media.example/kf/{k}_{j}.jpg" for j in range(keyframes)],
    }


def shot_of(request: dict[str, Any]) -> str:
    """The shot id the request's prompt is about."""
    user = request["body"]["messages"][1]["content"]
    text = user if isinstance(user, str) else user[0]["text"]
    return text.split("The shot to judge: shot ")[1].split(" ")[0]


def test_request_shape_and_the_probability_from_logprobs(monkeypatch):
    monkeypatch.setenv(openai_chat.API_KEY_VARIABLE, "sk-stub-key")
    # grade 1; at the grade's token the alternatives are "1" 0.6, "0" 0.3 and a word 0.1: P(relevant) = 0.6 / 0.9.
    # The confidence line's "0" must not be taken for the grade token.
    tokens = [("The dog leaps.", 0.9, {}), ("\nGrade: ", 0.99, {}), ("1", 0.6, {"1": 0.6, "0": 0.3, " the": 0.1}),
              ("\nConfidence: ", 0.99, {}), ("0", 0.5, {"0": 0.5, "1": 0.5}), (".8", 0.9, {})]  # fmt: skip
    content = "".join(t for t, _, _ in tokens)
    with stub_server(lambda request: (200, {}, completion(content, tokens))) as (url, received):
        verdicts = judge([item(0)], url=url, model="judge-7b", temperature="0")
    assert verdicts == [{"grade": 1, "probability": pytest.approx(0.6 / 0.9)}]
    (request,) = received
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["authorization"] == "Bearer sk-stub-key"
    body = request["body"]
    assert (body["model"], body["temperature"], body["logprobs"], body["top_logprobs"]) == ("judge-7b", 0.0, True, 5)
    system, user = body["messages"]
    assert system["role"] == "system" and user["role"] == "user" and isinstance(user["content"], str)
    for text in ("Topic 1042: a dog catching a frisbee", "Find shots of a dog catching a frisbee in mid-air.",
                 "shot shot0_3 of video video0, from 12.0 s to 15.5 s", "Keyframe: https://media.example/kf/0_1.jpg",
                 "Media: https://media.example/video0.mp4#t=12,15.5", "Grade: <an integer from 0 to 1>",
                 "1 = relevant"):  # fmt: skip
        assert text in user["content"], text


def test_images_as_content_parts_a_base_url_with_v1_and_no_key(monkeypatch):
    monkeypatch.delenv(openai_chat.API_KEY_VARIABLE, raising=False)
    with stub_server(lambda request: (200, {}, completion("Grade: 0"))) as (url, received):
        verdicts = judge([item(1, keyframes=3)], url=url + "/v1/", model="vision", images="true", logprobs="false")
    assert verdicts == [{"grade": 0, "probability": None}]  # no logprobs, no confidence line
    (request,) = received
    assert request["path"] == "/v1/chat/completions" and "authorization" not in request["headers"]
    assert "logprobs" not in request["body"] and "top_logprobs" not in request["body"]
    parts = request["body"]["messages"][1]["content"]
    assert parts[0]["type"] == "text" and "keyframes follow as images" in parts[0]["text"]
    assert [p["image_url"]["url"] for p in parts[1:]] == [f"https://media.example/kf/1_{j}.jpg" for j in range(3)]


def test_graded_scale_self_reported_confidence_and_robust_grades():
    # per shot: what the stub answers and the verdict expected on a 0..3 scale
    answers = {
        "shot0_3": (
            completion("It matches well.\n**Grade:** 2\n**Confidence:** 90%"),
            {"grade": 2, "probability": 0.9},
        ),
        "shot1_3": (completion("grade = 0\nconfidence: 0.75"), {"grade": 0, "probability": 0.25}),
        "shot2_3": (completion(" 3 "), {"grade": 3, "probability": None}),
        "shot3_3": (
            # logprobs over the grade digits 0..3: 0.1, 0.2, 0.3, 0.2 (and 0.2 elsewhere): P(>= 1) = 0.7 / 0.8
            completion(
                "Grade: 2", [("Grade: ", 0.99, {}), ("2", 0.3, {"0": 0.1, "1": 0.2, "2": 0.3, "3": 0.2, "x": 0.2})]
            ),  # fmt: skip
            {"grade": 2, "probability": pytest.approx(0.7 / 0.8)},
        ),
    }
    with stub_server(lambda request: (200, {}, answers[shot_of(request)][0])) as (url, received):
        verdicts = judge([item(k) for k in range(4)], url=url, model="m", max_grade="3")
    assert verdicts == [answers[f"shot{k}_3"][1] for k in range(4)]
    assert "3 = highly relevant" in received[0]["body"]["messages"][1]["content"]


def test_a_malformed_answer_names_its_item():
    def answer(request: dict[str, Any]) -> Answer:
        if shot_of(request) == "shot1_3":
            return 200, {}, completion("I cannot tell from keyframes alone.")
        return 200, {}, completion("Grade: 1")

    with stub_server(answer) as (url, _), pytest.raises(OpenAIJudgeError) as failed:
        judge([item(0), item(1), item(2)], url=url, model="m")
    assert str(failed.value).startswith("item 501 (topic 1042, shot shot1_3): no grade 0..1 in the model's answer")
    for body, message in [({"choices": []}, "has no choices[0].message.content"), ("<html>oops", "is not JSON"),
                          (completion("Grade: 4"), "no grade 0..1")]:  # fmt: skip
        with stub_server(lambda request, body=body: (200, {}, body)) as (url, _):
            with pytest.raises(
                OpenAIJudgeError, match=rf"^item 500 \(topic 1042, shot shot0_3\): .*{re.escape(message)}"
            ):
                judge([item(0)], url=url, model="m")


def test_429_then_success_and_500_then_success_are_retried_but_a_400_is_not():
    script: list[Answer] = [
        (429, {"Retry-After": "0"}, {"error": {"message": "rate limited"}}),
        (200, {}, completion("Grade: 1\nConfidence: 0.6")),
        (500, {}, {"error": {"message": "overloaded"}}),
        (200, {}, completion("Grade: 0\nConfidence: 0.6")),
    ]
    with stub_server(lambda request: script.pop(0)) as (url, received):
        verdicts = judge([item(0), item(1)], url=url, model="m", retries="1")
    assert verdicts == [{"grade": 1, "probability": 0.6}, {"grade": 0, "probability": pytest.approx(0.4)}]
    assert [shot_of(r) for r in received] == ["shot0_3", "shot0_3", "shot1_3", "shot1_3"]
    with stub_server(lambda request: (400, {}, {"error": {"message": "model not found"}})) as (url, received):
        with pytest.raises(OpenAIJudgeError, match=r"^item 500 .*answered 400: .*model not found"):
            judge([item(0)], url=url, model="missing", retries="3")
    assert len(received) == 1


def test_every_grade_from_one_up_is_relevant_to_some_degree_on_the_scale_the_model_reads() -> None:
    """The campaign counts grade >= 1 relevant, so the prompt never calls 1 'not answering the topic'."""
    from app.judges.openai_chat import scale_text

    assert scale_text(1).splitlines() == [
        "0 = not relevant: the shot does not show what the topic asks for",
        "1 = relevant: the shot shows it",
    ]
    lines = scale_text(3).splitlines()
    assert [line.split(" = ")[0] for line in lines] == ["0", "1", "2", "3"]
    assert [line.split(" = ")[1].split(":")[0] for line in lines] == [
        "not relevant", "partly relevant", "relevant", "highly relevant",
    ]  # fmt: skip
