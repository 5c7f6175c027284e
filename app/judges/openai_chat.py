"""A judge over any OpenAI-compatible chat endpoint (`POST .../v1/chat/completions`): a URL and model the user gives.

The prompt follows UMBRELA's shape (Upadhyay, Pradeep, Thakur, Craswell & Lin 2024, "UMBRELA: UMbrela is the
(Open-Source Reproduction of the) Bing RELevance Assessor", after Thomas et al.'s descriptive prompt): a zero-shot
instruction that names the assessor's role, describes every grade of the scale, asks the model to think about the
searcher's intent and how well the item meets it before it grades, and to end on one machine-readable line. Our
wording, adapted to video shots: the topic's title and description, the shot's video and span, and its media and
keyframe URLs (as `image_url` content parts with the option `images=true`, for models that see images; as text
otherwise). The scale is the campaign's, 0..max_grade (binary by default).

The probability of relevance, in order of preference: from the token log-probabilities of the grade the model
wrote (requested with `logprobs: true` and `top_logprobs`): P(grade >= 1) over the grade digits among the top
alternatives at that position; else the model's own `Confidence:` line (its confidence in its grade, turned into
P(relevant)); else None.

One request per item (run several batches at once with `trecpool judge --workers N`); a 429 or 5xx is retried,
honouring Retry-After. An API key, if the endpoint needs one, is read from the environment variable
TRECPOOL_JUDGE_API_KEY, never from an option (options enter the configuration hash). Nothing here ships or
downloads a model: the endpoint is whatever server the user points at.
"""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

API_KEY_VARIABLE = "TRECPOOL_JUDGE_API_KEY"
RETRIED_STATUS = frozenset({429, 500, 502, 503, 504})

SYSTEM = (
    "You are a careful relevance assessor for a video search evaluation. You judge one video shot at a time against "
    "a search topic and grade it on a fixed scale, as a trained human assessor would."
)

DEFAULT_PROMPT = """A searcher is looking for video shots that match this topic.

Topic {topic}: {title}
Description: {description}

The shot to judge: shot {shot_id} of video {video_id}, from {start} s to {end} s.
{media}

Grade the shot on this scale:
{scale}

First think briefly about what the searcher wants to see, then about how much of it the shot actually shows \
(judge what is visible or audible in the shot, not what the surrounding video might contain). Then end your \
answer with exactly these two lines:
Grade: <an integer from 0 to {max_grade}>
Confidence: <a number from 0 to 1: how sure you are of that grade>"""


def scale_text(max_grade: int) -> str:
    """The grades' meanings for a 0..max_grade scale (binary: not relevant / relevant). Every grade from 1 up is
    relevant to some degree, as the campaign's qrels count it (UMBRELA's 1, "related but not answering", would be
    scored relevant there, so it is not offered)."""
    if max_grade == 1:
        return "0 = not relevant: the shot does not show what the topic asks for\n1 = relevant: the shot shows it"
    lines = ["0 = not relevant: the shot does not show what the topic asks for"]
    lines.append("1 = partly relevant: shows some of what the topic asks for, or shows it unclearly")
    for grade in range(2, max_grade):
        lines.append(f"{grade} = relevant: shows what the topic asks for, not fully or not clearly (higher: more so)")
    lines.append(f"{max_grade} = highly relevant: clearly and fully shows what the topic asks for")
    return "\n".join(lines)


class OpenAIJudgeError(RuntimeError):
    """The endpoint failed or answered something unusable for one item; the message names the item."""


def _where(item: Mapping[str, Any]) -> str:
    """An item as an error names it."""
    return f"item {item.get('item_id')} (topic {item.get('topic')}, shot {item.get('shot_id')})"


def _flag(value: str | bool, name: str) -> bool:
    """A true/false option."""
    if isinstance(value, bool):
        return value
    lowered = value.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"option {name}={value!r}: expected true or false")


def endpoint(url: str) -> str:
    """The chat completions URL from a base URL (`http://host:8000`, `.../v1` or the full path)."""
    url = url.rstrip("/")
    if url.endswith("/chat/completions"):
        return url
    return url + ("/chat/completions" if url.endswith("/v1") else "/v1/chat/completions")


def messages_for(item: Mapping[str, Any], template: str, max_grade: int, images: bool) -> list[dict[str, Any]]:
    """The chat messages for one item: the system role, then the prompt (with image parts when `images`)."""
    keyframes = [str(u) for u in item.get("keyframe_urls") or []]
    media_url = item.get("media_url")
    if images:
        media = "The shot's keyframes follow as images." if keyframes else "No keyframes are available."
        if media_url:
            media += f" The shot's media: {media_url}"
    else:
        parts = [f"Media: {media_url}"] if media_url else []
        parts += [f"Keyframe: {url}" for url in keyframes]
        media = "\n".join(parts) if parts else "No media is available; judge from what is given."
    text = template.format(
        topic=item.get("topic", ""),
        title=item.get("title") or "",
        description=item.get("description") or "",
        shot_id=item.get("shot_id", ""),
        video_id=item.get("video_id") or "",
        start=item.get("start", ""),
        end=item.get("end", ""),
        media=media,
        scale=scale_text(max_grade),
        max_grade=max_grade,
    )
    user: str | list[dict[str, Any]] = text
    if images and keyframes:
        user = [{"type": "text", "text": text}] + [{"type": "image_url", "image_url": {"url": u}} for u in keyframes]
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


GRADE = re.compile(r"(?:grade|score|relevance)\W{0,6}?(?:is\W{0,3})?(\d+)", re.IGNORECASE)
CONFIDENCE = re.compile(r"confidence\W{0,6}?(\d+(?:\.\d+)?)\s*(%?)", re.IGNORECASE)


def find_grade(content: str, max_grade: int) -> tuple[int, int] | None:
    """(grade, its character offset) of the grade an answer ends on: the last `Grade: N` (or score / relevance),
    else an answer that is only a number; None if there is none or it is off the scale."""
    found = list(GRADE.finditer(content))
    if found:
        grade, offset = int(found[-1].group(1)), found[-1].start(1)
    else:
        alone = re.fullmatch(r"\W*(\d+)\W*", content)
        if alone is None:
            return None
        grade, offset = int(alone.group(1)), alone.start(1)
    return (grade, offset) if 0 <= grade <= max_grade else None


def parse_grade(content: str, max_grade: int) -> int | None:
    """The grade an answer ends on (`find_grade`), None without one."""
    found = find_grade(content, max_grade)
    return None if found is None else found[0]


def parse_confidence(content: str) -> float | None:
    """The model's self-reported confidence in [0, 1] (a percentage is divided by 100), None without one."""
    found = CONFIDENCE.findall(content)
    if not found:
        return None
    number, percent = found[-1]
    value = float(number) / (100.0 if percent or float(number) > 1.0 else 1.0)
    return value if 0.0 <= value <= 1.0 else None


def _grade_token(tokens: Sequence[object], content: str, grade: int, offset: int) -> Mapping[str, Any] | None:
    """The log-probability entry of the token where the grade was written: the token covering its character offset
    when the tokens spell the content, else the last token that is the grade's digits."""
    entries = [entry for entry in tokens if isinstance(entry, Mapping)]
    texts = [str(entry.get("token", "")) for entry in entries]
    if "".join(texts) == content:
        at = 0
        for entry, text in zip(entries, texts, strict=True):
            if at <= offset < at + len(text):
                return entry if text.strip() == str(grade) else None
            at += len(text)
        return None
    for entry, text in zip(reversed(entries), reversed(texts), strict=True):
        if text.strip() == str(grade):
            return entry
    return None


def logprob_relevance(logprobs: object, content: str, grade: int, offset: int, max_grade: int) -> float | None:
    """P(grade >= 1) from the log-probabilities where the model wrote its grade (`_grade_token`): the grade digits
    among the top alternatives there, renormalised; with no alternatives, the chosen token's probability p gives p
    (grade >= 1) or 1 - p. None when the position is not found."""
    if not isinstance(logprobs, Mapping):
        return None
    tokens = logprobs.get("content")
    if not isinstance(tokens, Sequence):
        return None
    entry = _grade_token(tokens, content, grade, offset)
    if entry is None:
        return None
    mass = dict.fromkeys(range(max_grade + 1), 0.0)
    for alternative in entry.get("top_logprobs") or []:
        if not isinstance(alternative, Mapping):
            continue
        text = str(alternative.get("token", "")).strip()
        logprob = alternative.get("logprob")
        if text.isdigit() and int(text) in mass and isinstance(logprob, int | float) and math.isfinite(logprob):
            mass[int(text)] += math.exp(logprob)
    total = sum(mass.values())
    if total > 0:
        return min(1.0, max(0.0, sum(p for g, p in mass.items() if g >= 1) / total))
    chosen = entry.get("logprob")
    if isinstance(chosen, int | float) and math.isfinite(chosen):
        p = min(1.0, math.exp(chosen))
        return p if grade >= 1 else 1.0 - p
    return None


def _retry_wait(response: httpx.Response | None, attempt: int, backoff: float) -> float:
    """Seconds before the next attempt: the answer's Retry-After (seconds), else exponential backoff."""
    if response is not None:
        value = response.headers.get("retry-after")
        if value is not None:
            try:
                return min(max(0.0, float(value)), 120.0)
            except ValueError:
                pass
    return float(min(backoff * 2**attempt, 60.0))


def _complete(http: httpx.Client, url: str, body: dict[str, Any], item: Mapping[str, Any], retries: int) -> Any:
    """The endpoint's JSON answer for one item, retried on connection errors, 429 and 5xx."""
    last = ""
    for attempt in range(retries + 1):
        response: httpx.Response | None = None
        try:
            response = http.post(url, json=body)
        except httpx.TransportError as exc:
            last = f"{type(exc).__name__}: {exc}"
        else:
            if response.status_code < 400:
                try:
                    return response.json()
                except ValueError:
                    raise OpenAIJudgeError(
                        f"{_where(item)}: the endpoint's answer is not JSON: {response.text[:200]!r}"
                    ) from None
            if response.status_code not in RETRIED_STATUS:
                raise OpenAIJudgeError(f"{_where(item)}: {url} answered {response.status_code}: {response.text[:300]}")
            last = f"{response.status_code} {response.text[:200]}"
        if attempt < retries:
            time.sleep(_retry_wait(response, attempt, 0.5))
    raise OpenAIJudgeError(f"{_where(item)}: {url} failed after {retries + 1} attempts: {last}")


def verdict_of(answer: object, item: Mapping[str, Any], max_grade: int) -> dict[str, Any]:
    """{"grade", "probability"} from a chat completion (OpenAIJudgeError naming the item when it has no grade)."""
    try:
        choice = answer["choices"][0]  # type: ignore[index]  # checked by the except below
        content = choice["message"]["content"]
    except (KeyError, IndexError, TypeError):
        message = f"{_where(item)}: the answer has no choices[0].message.content: {str(answer)[:200]}"
        raise OpenAIJudgeError(message) from None
    if not isinstance(content, str):
        raise OpenAIJudgeError(f"{_where(item)}: the answer's content is {type(content).__name__}, not text")
    found = find_grade(content, max_grade)
    if found is None:
        raise OpenAIJudgeError(f"{_where(item)}: no grade 0..{max_grade} in the model's answer: {content[-200:]!r}")
    grade, offset = found
    logprobs = choice.get("logprobs") if isinstance(choice, Mapping) else None
    probability = logprob_relevance(logprobs, content, grade, offset, max_grade)
    if probability is None:
        confidence = parse_confidence(content)
        if confidence is not None:
            probability = confidence if grade >= 1 else 1.0 - confidence
    return {"grade": grade, "probability": probability}


def judge(
    items: list[dict[str, Any]],
    *,
    url: str,
    model: str,
    prompt: str | None = None,
    temperature: str = "0",
    max_grade: str | int | None = None,
    images: str = "false",
    logprobs: str = "true",
    top_logprobs: str = "5",
    max_tokens: str | None = None,
    timeout: str = "120",
    retries: str = "4",
) -> list[dict[str, Any]]:
    """Each item's grade and probability of relevance from an OpenAI-compatible chat endpoint (module docstring).

    Options (strings, as `--option KEY=VALUE` gives them): `url` and `model` (required); `prompt`, a template with
    {topic} {title} {description} {shot_id} {video_id} {start} {end} {media} {scale} {max_grade} (the built-in
    UMBRELA-style prompt by default); `temperature`; `max_grade` (the campaign's, given by the client); `images`
    (true: keyframes as image parts); `logprobs` and `top_logprobs`; `max_tokens`; `timeout` (s); `retries`.
    """
    scale = 1 if max_grade is None else int(max_grade)
    if scale < 1:
        raise ValueError(f"option max_grade={max_grade!r}: at least 1")
    template = DEFAULT_PROMPT if prompt is None else prompt
    with_images = _flag(images, "images")
    body: dict[str, Any] = {"model": model, "temperature": float(temperature)}
    if _flag(logprobs, "logprobs"):
        body["logprobs"] = True
        if int(top_logprobs) > 0:
            body["top_logprobs"] = int(top_logprobs)
    if max_tokens is not None:
        body["max_tokens"] = int(max_tokens)
    headers = {"User-Agent": "trecpool-judge"}
    key = os.environ.get(API_KEY_VARIABLE)
    if key:
        headers["Authorization"] = f"Bearer {key}"
    target = endpoint(url)
    verdicts = []
    with httpx.Client(headers=headers, timeout=float(timeout)) as http:
        for item in items:
            request = {**body, "messages": messages_for(item, template, scale, with_images)}
            answer = _complete(http, target, request, item, int(retries))
            verdicts.append(verdict_of(answer, item, scale))
    return verdicts
