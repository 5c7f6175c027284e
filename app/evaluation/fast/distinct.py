"""The distinct values of an array of ids or keys, ascending, by one sort: `np.unique` without its hash table.

numpy 2.3 and later answer a plain `np.unique(values)` of integers and strings from a hash table, which is 4-16x
slower than a sort once most values are distinct (`scripts/bench/distinct.py` prints both side by side); with few
distinct values it is about twice as fast, so `distinct` is for arrays whose values are mostly distinct. The result
is `np.unique`'s, value for value. Floats are refused: `np.unique` folds NaNs together, a sort does not.
"""

from __future__ import annotations

import numpy as np

KINDS = "biuSU"  # bool, integers, fixed-width byte and unicode strings


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values of an integer or string array, ascending, as `np.unique(values)` gives them (flattened)."""
    values = np.asarray(values)
    if values.dtype.kind not in KINDS:
        raise TypeError(f"distinct takes integer or string arrays, not {values.dtype}")
    ordered = np.sort(values.reshape(-1))
    if len(ordered) < 2:
        return ordered
    first = np.empty(len(ordered), dtype=bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    return ordered[first]
