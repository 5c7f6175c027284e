"""The one seeded per-topic generator behind every pool's sample, every judging order and every verification draw."""

from __future__ import annotations

import zlib

import numpy as np


def topic_rng(seed: int, topic: str, stream: str = "") -> np.random.Generator:
    """A generator for one topic that does not depend on which other topics exist: numpy's PCG64 seeded with
    `[seed, crc32(topic)]`, so a pool, a moment pool and a judging order built with one seed draw the same stream.

    A named `stream` (`[seed, crc32(topic), crc32(stream)]`) is independent of that one: a draw that must not be
    correlated with the pool's sample and queue order (the human verification sample) takes its own.
    """
    key = [seed, zlib.crc32(topic.encode())]
    if stream:
        key.append(zlib.crc32(stream.encode()))
    return np.random.default_rng(key)
