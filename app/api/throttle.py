"""Failed-authentication throttling: bad tokens from one client address past a limit per window get 429.

Only failures are throttled: every presented token is looked up (one indexed query by its SHA-256), so a valid
token from a throttled address is served (behind NAT one bad client must not lock out everyone) and only a bad one
gets 429 instead of 401. The counts live in the memory of each server process (per-process limits: with N processes
a client may fail up to N times the limit before every one of them refuses it). Only presented tokens that fail
count, not missing ones.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque

from app.services.errors import TooManyAttempts

MAX_TRACKED = 100_000  # addresses remembered at most: a flood of addresses cannot grow memory without bound


class FailureThrottle:
    """Sliding-window counts of failed authentications per client address."""

    def __init__(self, max_failures: int, window_seconds: float) -> None:
        self.max_failures = max_failures
        self.window = window_seconds
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, address: str, moment: float) -> deque[float]:
        """The address's failures still inside the window (older ones dropped)."""
        times = self._failures.get(address)
        if times is None:
            return deque()
        while times and times[0] <= moment - self.window:
            times.popleft()
        if not times:
            del self._failures[address]
        return times

    def failed(self, address: str) -> None:
        """Count one failed authentication of the address; TooManyAttempts (with the seconds to wait) past the limit.

        Failures while refused count too: a client that keeps guessing stays refused until it pauses for the window.
        """
        moment = time.monotonic()
        with self._lock:
            if address not in self._failures and len(self._failures) >= MAX_TRACKED:
                self._forget_oldest()
            times = self._recent(address, moment)
            over = len(times) >= self.max_failures
            times.append(moment)
            while len(times) > self.max_failures:
                times.popleft()
            self._failures[address] = times
            if over:
                wait = max(1, math.ceil(times[0] + self.window - moment))
                raise TooManyAttempts(
                    f"too many failed authentications from this address: try again in {wait} s", retry_after=wait
                )

    def _forget_oldest(self) -> None:
        """Drop the address whose last failure is oldest (keeps the table bounded)."""
        oldest = min(self._failures, key=lambda a: self._failures[a][-1] if self._failures[a] else 0.0)
        del self._failures[oldest]
