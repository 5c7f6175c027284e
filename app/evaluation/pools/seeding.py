"""The one seeded per-topic generator behind every pool's sample and every judging order."""

from __future__ import annotations

import zlib

import numpy as np


def topic_rng(seed: int, topic: str) -> np.random.Generator:
    """A generator for one topic that does not depend on which other topics exist: numpy's PCG64 seeded with
    `[seed, crc32(topic)]`, so a pool, a moment pool and a judging order built with one seed draw the same stream."""
    return np.random.default_rng([seed, zlib.crc32(topic.encode())])
