"""Benchmark: `fast.distinct.distinct` (one sort) against `np.unique` (numpy's hash table since 2.3), side by side,
and `fast.string_order.string_order` against `np.argsort(kind="stable")` on docnos.

For arrays of ids and keys as the core holds them (mostly distinct uint64 hash keys, int64 cell and pair ids, docno
strings, and few distinct values for contrast), prints both times (best of --repeat calls, same process, same data),
the ratio ours / np.unique and whether the results are equal; then a `KeyTable` built over the distinct keys (it
no longer calls np.unique) next to np.unique of those keys alone; then the stable order of docno arrays (ASCII of 13
and 20 characters, and 32, past the packed words) by both.

    .venv/bin/python scripts/bench/distinct.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from evaluate import best_of  # noqa: E402  (seconds, best of `repeat` calls)

from app.evaluation.fast.distinct import distinct  # noqa: E402
from app.evaluation.fast.hashing import KeyTable, mix  # noqa: E402
from app.evaluation.fast.string_order import string_order  # noqa: E402


def cases(rng: np.random.Generator) -> list[tuple[str, np.ndarray]]:
    """(label, array): the shapes of data the core calls `distinct` on, and a low-cardinality contrast."""
    return [
        ("500,000 distinct uint64 hash keys", mix(rng.integers(0, 2**62, 500_000).astype(np.uint64))),
        ("100,000 int64 of 10**9 values", rng.integers(0, 10**9, 100_000)),
        ("5,000,000 int64 of 10**9 values", rng.integers(0, 10**9, 5_000_000)),
        ("5,000,000 int64 of 10**5 values", rng.integers(0, 10**5, 5_000_000)),
        ("500,000 docno strings, mostly distinct", np.array([f"shot{v}_1" for v in rng.integers(0, 10**9, 500_000)])),
        ("500,000 int64 of 1,000 values (few: np.unique's case)", rng.integers(0, 1_000, 500_000)),
    ]


def main() -> None:
    """Time both on every case and print the ratios."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"numpy {np.__version__}; best of {args.repeat}")
    print(f"{'array':<56} {'np.unique':>10} {'distinct':>10} {'ratio':>7}  equal")
    for label, values in cases(rng):
        equal = np.array_equal(np.unique(values), distinct(values))
        numpy_ms = 1e3 * best_of(partial(np.unique, values), args.repeat)
        ours_ms = 1e3 * best_of(partial(distinct, values), args.repeat)
        print(f"{label:<56} {numpy_ms:8.1f} ms {ours_ms:7.1f} ms {ours_ms / numpy_ms:6.2f}x  {equal}")
    keys = mix(rng.integers(0, 2**62, 500_000).astype(np.uint64))
    table_ms = 1e3 * best_of(lambda: KeyTable(keys, slots_per_key=2), args.repeat)
    unique_ms = 1e3 * best_of(lambda: np.unique(keys), args.repeat)
    print(f"KeyTable of 500,000 keys, 2 slots a key: {table_ms:.1f} ms; np.unique of the keys: {unique_ms:.1f} ms")
    print(f"{'docnos, stable order':<56} {'np.argsort':>10} {'ours':>10} {'ratio':>7}  equal")
    for label, docs in (
        (
            "900,000 docnos of 13 characters",
            np.array([f"shot{v:05d}_{v % 997}" for v in rng.integers(0, 10**5, 900_000)]),
        ),
        ("500,000 docnos of 20 characters", np.array([f"doc-{v:016d}" for v in rng.integers(0, 10**12, 500_000)])),
        (
            "300,000 docnos of 32 characters (np.argsort itself)",
            np.array([f"{v:032x}" for v in rng.integers(0, 2**62, 300_000)]),
        ),
    ):
        equal = np.array_equal(np.argsort(docs, kind="stable"), string_order(docs))
        numpy_ms = 1e3 * best_of(partial(np.argsort, docs, kind="stable"), args.repeat)
        ours_ms = 1e3 * best_of(partial(string_order, docs), args.repeat)
        print(f"{label:<56} {numpy_ms:8.1f} ms {ours_ms:7.1f} ms {ours_ms / numpy_ms:6.2f}x  {equal}")


if __name__ == "__main__":
    main()
