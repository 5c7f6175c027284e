"""Joint (topic, doc) keys as one string array, for set operations with numpy."""

from __future__ import annotations

import numpy as np

SEPARATOR = (
    "\x1f"  # not "\x00": numpy's unicode dtype strips trailing NULs, which would merge ("1", "1b") and ("11", "b")
)


def pair_keys(topics: np.ndarray, docs: np.ndarray) -> np.ndarray:
    """`topic<US>doc` for every row."""
    return np.char.add(np.char.add(np.asarray(topics).astype(str), SEPARATOR), np.asarray(docs).astype(str))


def split_key(key: str) -> tuple[str, str]:
    """The (topic, doc) of a key."""
    topic, _, doc = key.partition(SEPARATOR)
    return topic, doc
