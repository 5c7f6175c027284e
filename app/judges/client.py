"""The batch judging client: pull a batch of items, ask the judge function, push its verdicts, until none are left.

Talks to the server's batch API only (`GET /api/judging/batch`, `POST /api/judging/batch/pull`, `POST
/api/judging/batch/verdicts`) with the assessor's bearer token, which is never logged, printed or put in an error.
Connection errors, 5xx answers and 429s are retried with exponential backoff (a 429's or 503's Retry-After is
honoured): pushes are idempotent per item on the server (the same grade again is `unchanged`), so a push whose
answer was lost is safely sent again, and a pull whose answer was lost leaves leases that expire. Each of `workers`
threads runs its own pull -> judge -> push loop; the server's leases keep their batches apart.

The judge function's contract: `fn(items, **options) -> [{"grade": int, "probability": float | None}, ...]`, one
verdict per item in the items' order, options as strings; a judge that takes `max_grade` gets the campaign's scale
unless the user gave it. Its output is checked before anything is pushed (`checked_verdicts`).
"""

from __future__ import annotations

import email.utils
import inspect
import math
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx

from app.judges.loading import Judge

INFO, PULL, PUSH = "/api/judging/batch", "/api/judging/batch/pull", "/api/judging/batch/verdicts"
RETRIED_STATUS = frozenset({429, 500, 502, 503, 504})


class JudgeClientError(Exception):
    """A failure to report in one line (the server refused, could not be reached, or the judge misbehaved)."""


class Unauthorized(JudgeClientError):
    """The server refused the token (401) or its role (403)."""


class Unreachable(JudgeClientError):
    """The server could not be reached, or kept failing, after every retry."""


class JudgeOutputError(JudgeClientError):
    """The judge function's output breaks the contract; the message names the item."""


@dataclass
class Summary:
    """What a run did: batches, items pulled and judged, verdicts accepted and unchanged, retried requests."""

    batches: int = 0
    pulled: int = 0
    accepted: int = 0
    unchanged: int = 0
    retries: int = 0
    seconds: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **counts: int) -> None:
        """Add counts (thread-safe)."""
        with self._lock:
            for name, value in counts.items():
                setattr(self, name, getattr(self, name) + value)

    def line(self) -> str:
        """The one-line summary printed at the end."""
        return (
            f"judged {self.pulled} items in {self.batches} batches: {self.accepted} accepted, {self.unchanged} "
            f"unchanged, {self.retries} retried requests, {self.seconds:.1f} s"
        )


def retry_after(response: httpx.Response) -> float | None:
    """Seconds a Retry-After header asks for (a number or an HTTP date), None without one."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return max(0.0, (moment - datetime.now(UTC)).total_seconds())


def _detail(response: httpx.Response) -> str:
    """The server's error message (`detail` of the error body, its errors' messages), or the status line."""
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:300] or response.reason_phrase
    if isinstance(body, dict):
        detail = body.get("detail")
        errors = body.get("errors")
        messages = [str(e.get("message", e)) for e in errors if isinstance(e, dict)] if isinstance(errors, list) else []
        if isinstance(detail, str):
            return "; ".join([detail, *messages]) if messages and detail not in messages else detail
        if detail is not None:
            return str(detail)[:300]
    return str(body)[:300]


class BatchClient:
    """The batch API over httpx, with retries (module docstring)."""

    def __init__(
        self,
        url: str,
        token: str,
        *,
        retries: int = 8,
        backoff: float = 0.5,
        max_wait: float = 60.0,
        timeout: float = 120.0,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        seed: int = 0,
    ) -> None:
        self.url = url.rstrip("/")
        self.retries = retries
        self.backoff = backoff
        self.max_wait = max_wait
        self.sleep = sleep
        self._jitter = random.Random(seed)
        self._jitter_lock = threading.Lock()
        self.retried = 0
        self._http = httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Bearer {token}", "User-Agent": "trecpool-judge"},
            timeout=timeout,
            transport=transport,
            follow_redirects=False,
        )

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def __enter__(self) -> BatchClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _wait(self, attempt: int, response: httpx.Response | None) -> float:
        """Seconds before retry `attempt` (0-based): the answer's Retry-After, else exponential backoff with jitter."""
        asked = retry_after(response) if response is not None else None
        if asked is not None:
            return min(asked, self.max_wait)
        with self._jitter_lock:
            jitter = 0.5 + self._jitter.random()
        return min(self.backoff * 2**attempt * jitter, self.max_wait)

    def request(
        self, method: str, path: str, body: Mapping[str, Any] | None = None, *, retries: int | None = None
    ) -> Any:
        """The JSON answer of one API call, retried (`retries`, default the client's) on connection errors, 5xx and
        429; JudgeClientError otherwise."""
        retries = self.retries if retries is None else retries
        last = ""
        for attempt in range(retries + 1):
            response: httpx.Response | None = None
            try:
                response = self._http.request(method, path, json=body)
            except httpx.TransportError as exc:
                last = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            else:
                if response.status_code < 400:
                    return response.json()
                if response.status_code in (401, 403):
                    raise Unauthorized(
                        f"{self.url}{path} refused the token ({response.status_code}): {_detail(response)}"
                    )
                if response.status_code not in RETRIED_STATUS:
                    raise JudgeClientError(f"{method} {path}: {response.status_code} {_detail(response)}")
                last = f"{response.status_code} {_detail(response)}"
            if attempt == retries:
                break
            with self._jitter_lock:
                self.retried += 1
            self.sleep(self._wait(attempt, response))
        raise Unreachable(f"{method} {self.url}{path} failed after {retries + 1} attempts: {last}")

    def info(self) -> dict[str, Any]:
        """Who the token is (assessor, kind, provenance) and the campaign's scale and batch limits (the first call:
        a server that cannot be reached fails it after two quick retries, not the loop's patient ones)."""
        answer: dict[str, Any] = self.request("GET", INFO, retries=min(self.retries, 2))
        return answer

    def pull(self, n: int) -> dict[str, Any]:
        """Lease up to `n` items: {"items": [...], "max_grade"}."""
        answer: dict[str, Any] = self.request("POST", PULL, {"n": n})
        return answer

    def push(self, verdicts: list[dict[str, Any]], config_hash: str) -> dict[str, Any]:
        """Store verdicts: {"accepted", "unchanged"}."""
        answer: dict[str, Any] = self.request("POST", PUSH, {"verdicts": verdicts, "config_hash": config_hash})
        return answer


def _describe(item: Mapping[str, Any]) -> str:
    """An item as an error names it: its id, topic and shot."""
    return f"item {item.get('item_id')} (topic {item.get('topic')}, shot {item.get('shot_id')})"


def checked_verdicts(items: Sequence[Mapping[str, Any]], output: object, max_grade: int) -> list[dict[str, Any]]:
    """The judge's output as the push's verdicts, checked: a list of one mapping per item, each with an int `grade`
    in 0..max_grade and a `probability` in [0, 1] or None (JudgeOutputError naming the item otherwise)."""
    if not isinstance(output, Sequence) or isinstance(output, str | bytes):
        raise JudgeOutputError(f"the judge returned {type(output).__name__}, not a list of verdicts")
    if len(output) != len(items):
        raise JudgeOutputError(f"the judge returned {len(output)} verdicts for {len(items)} items (one per item)")
    verdicts = []
    for item, verdict in zip(items, output, strict=True):
        where = f"the judge's verdict on {_describe(item)}"
        if not isinstance(verdict, Mapping):
            raise JudgeOutputError(f"{where} is {type(verdict).__name__}, not a dict with grade and probability")
        grade = verdict.get("grade")
        if isinstance(grade, bool) or not isinstance(grade, int):
            raise JudgeOutputError(f"{where}: grade {grade!r} is not an integer")
        if not 0 <= grade <= max_grade:
            raise JudgeOutputError(f"{where}: grade {grade} is outside the campaign's scale 0..{max_grade}")
        probability = verdict.get("probability")
        if probability is not None:
            if isinstance(probability, bool) or not isinstance(probability, int | float):
                raise JudgeOutputError(f"{where}: probability {probability!r} is not a number or None")
            if not (math.isfinite(probability) and 0.0 <= probability <= 1.0):
                raise JudgeOutputError(f"{where}: probability {probability!r} is outside [0, 1]")
            probability = float(probability)
        verdicts.append({"item_id": item["item_id"], "grade": grade, "probability": probability})
    return verdicts


def takes_max_grade(judge: Judge) -> bool:
    """Whether the judge function has a `max_grade` parameter (or takes any keyword)."""
    try:
        parameters = inspect.signature(judge).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "max_grade" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def run(
    client: BatchClient,
    judge: Judge,
    options: Mapping[str, str],
    config_hash: str,
    *,
    batch: int = 10,
    workers: int = 1,
    max_items: int | None = None,
    max_grade: int = 1,
    report: Callable[[str], None] | None = None,
) -> Summary:
    """Judge until a pull comes back empty (or `max_items` are pulled): each of `workers` threads pulls up to `batch`
    items, calls the judge on them and pushes its checked verdicts. The first error stops every thread and is raised.
    """
    if batch < 1 or workers < 1 or (max_items is not None and max_items < 0):
        raise ValueError("batch and workers must be at least 1, max_items at least 0")
    summary = Summary()
    started = time.monotonic()
    budget_lock = threading.Lock()
    remaining = [max_items]
    stop = threading.Event()
    failures: list[BaseException] = []
    call_options = dict(options)
    if "max_grade" not in call_options and takes_max_grade(judge):
        call_options["max_grade"] = str(max_grade)

    def reserve() -> int:
        """Items the next pull may ask for (0: stop)."""
        with budget_lock:
            if remaining[0] is None:
                return batch
            n = min(batch, remaining[0])
            remaining[0] -= n
            return n

    def give_back(n: int) -> None:
        """Return unused reservations."""
        with budget_lock:
            if remaining[0] is not None:
                remaining[0] += n

    def loop() -> None:
        """One worker's pull -> judge -> push loop."""
        try:
            while not stop.is_set():
                n = reserve()
                if n == 0:
                    return
                pulled = client.pull(n)
                items = pulled.get("items") or []
                give_back(n - len(items))
                if not items:
                    return
                scale = int(pulled.get("max_grade", max_grade))
                try:
                    output = judge(items, **call_options)
                except JudgeClientError:
                    raise
                except Exception as exc:  # noqa: BLE001  # any failure of the user's judge ends the run in one line
                    raise JudgeClientError(
                        f"the judge failed on a batch of {len(items)} items ({_describe(items[0])} first): "
                        f"{type(exc).__name__}: {exc}"
                    ) from exc
                verdicts = checked_verdicts(items, output, scale)
                pushed = client.push(verdicts, config_hash)
                summary.add(
                    batches=1,
                    pulled=len(items),
                    accepted=int(pushed.get("accepted", 0)),
                    unchanged=int(pushed.get("unchanged", 0)),
                )
                if report is not None:
                    report(f"batch of {len(items)}: {pushed.get('accepted', 0)} accepted ({summary.pulled} so far)")
        except BaseException as exc:  # noqa: BLE001  # handed to the main thread, which raises it
            failures.append(exc)
            stop.set()

    threads = [threading.Thread(target=loop, name=f"judge-{k}", daemon=True) for k in range(workers - 1)]
    for thread in threads:
        thread.start()
    loop()
    for thread in threads:
        thread.join()
    summary.retries = client.retried
    summary.seconds = time.monotonic() - started
    if failures:
        raise failures[0]
    return summary
