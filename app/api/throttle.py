"""Failed-authentication throttling: too many bad tokens from one client address in a window get 429.

The counts live in the memory of each server process (per-process limits: with N processes a client may fail up
to N times the limit before every one of them refuses it). Only presented tokens that fail count, not missing ones.
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

    def check(self, address: str) -> None:
        """TooManyAttempts (with the seconds to wait) if the address used up its failures in the window."""
        moment = time.monotonic()
        with self._lock:
            times = self._recent(address, moment)
            if len(times) >= self.max_failures:
                wait = max(1, math.ceil(times[-self.max_failures] + self.window - moment))
                raise TooManyAttempts(
                    f"too many failed authentications from this address: try again in {wait} s", retry_after=wait
                )

    def failed(self, address: str) -> None:
        """Count one failed authentication of the address."""
        moment = time.monotonic()
        with self._lock:
            if address not in self._failures and len(self._failures) >= MAX_TRACKED:
                self._forget_oldest()
            times = self._failures.setdefault(address, deque())
            times.append(moment)
            while len(times) > self.max_failures:
                times.popleft()

    def _forget_oldest(self) -> None:
        """Drop the address whose last failure is oldest (keeps the table bounded)."""
        oldest = min(self._failures, key=lambda a: self._failures[a][-1] if self._failures[a] else 0.0)
        del self._failures[oldest]
