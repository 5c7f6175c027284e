"""Intervals on a board, its significance and its report: each row's stored interval, the rank intervals and tiers of
the runs a board shows, and the significance document's pairwise differences.

A run's interval of a measure is stored by the evaluation job (`score_intervals`), so rows only read it. Rank
intervals and tiers depend on which runs are shown (the filters), so they are computed per board from the measure's
per-topic values and the runs' stored sampling standard errors, with the evaluation's level, resamples and seed,
and kept in a small per-process cache keyed by those numbers (whatever board, live or published, shows the same runs
of the same evaluation hits it); a snapshot freezes its default board's at publication. Tiers (`intervals.tiers`):
Holm-adjusted p-values of the paired t-test over every pair of shown runs (`intervals.paired_t_pvalues`), at alpha
0.05: a Monte Carlo p-value cannot go below 1 / (B + 1), so Holm over the 528 pairs of 33 runs could reject nothing and
every run would share tier 1; the t-test's p-value has no such floor.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections import OrderedDict
from typing import Any

import numpy as np

from app.evaluation.statistics import intervals
from app.services import score_intervals
from app.services.scores import ScoreTable, json_number

ALPHA = 0.05
CORRECTION = "holm"
MAX_CACHED = 256
_CACHE: OrderedDict[bytes, dict[str, list[Any]]] = OrderedDict()
_LOCK = threading.Lock()
EMPTY_ROW = {"ci_low": None, "ci_high": None, "level": None, "rank_low": None, "rank_high": None, "tier": None}


def interval_head(table: ScoreTable, measure: str) -> dict[str, object] | None:
    """The board's `interval`: how its intervals were made (None when the numbers have none)."""
    return score_intervals.describe_measure(table.intervals.info if table.intervals else None, measure)


def row_intervals(table: ScoreTable, i: int, m: int) -> dict[str, object]:
    """A row's ci_low, ci_high and level for the board's measure and `intervals` for every measure."""
    found = table.intervals
    if found is None:
        return {"ci_low": None, "ci_high": None, "level": None, "intervals": None}
    low, high = found.low[i].tolist(), found.high[i].tolist()
    return {
        "ci_low": json_number(low[m]),
        "ci_high": json_number(high[m]),
        "level": found.info["level"],
        "intervals": {
            measure: {"ci_low": json_number(lo), "ci_high": json_number(hi)}
            for measure, lo, hi in zip(table.measures, low, high, strict=True)
        },
    }


def scaled_values(table: ScoreTable, m: int, order: list[int]) -> np.ndarray:
    """The measure's per-topic values of the runs [run, topic] on the interval's scale (a missing topic scores 0)."""
    values = np.nan_to_num(table.values[order, m, :], nan=0.0)
    return score_intervals.to_scale(values, table.measures[m])


def sampling_variance(table: ScoreTable, m: int, order: list[int]) -> np.ndarray | None:
    """A [run, topic] variance whose mean's standard error is each run's stored sampling standard error (the
    core takes per-topic variances; only their sum per run matters), or None when none was added."""
    if table.intervals is None or not len(table.topics):
        return None
    se = table.intervals.sampling_se[order, m]
    if not np.isfinite(se).any():
        return None
    variance = np.zeros((len(order), len(table.topics)))
    variance[:, 0] = (np.nan_to_num(se, nan=0.0) * len(table.topics)) ** 2
    return variance


def _key(table: ScoreTable, m: int, order: list[int], *extra: object) -> bytes:
    """A cache key from the numbers themselves: runs, values, standard errors and the interval's parameters."""
    digest = hashlib.sha256()
    digest.update(repr((table.measures[m], [table.runs[i].id for i in order], extra)).encode())
    digest.update(np.ascontiguousarray(table.values[order, m, :]).tobytes())
    if table.intervals is not None:
        digest.update(np.ascontiguousarray(table.intervals.sampling_se[order, m]).tobytes())
        digest.update(repr(sorted((k, str(v)) for k, v in table.intervals.info.items())).encode())
    return digest.digest()


def _cached(key: bytes) -> dict[str, list[Any]] | None:
    """A cached result, marked as recently used."""
    with _LOCK:
        found = _CACHE.get(key)
        if found is not None:
            _CACHE.move_to_end(key)
        return found


def _keep(key: bytes, value: dict[str, list[Any]]) -> None:
    """Cache a result (least recently used dropped beyond MAX_CACHED)."""
    with _LOCK:
        _CACHE[key] = value
        while len(_CACHE) > MAX_CACHED:
            _CACHE.popitem(last=False)


def adjusted_matrix(values: np.ndarray, correction: str) -> np.ndarray:
    """Adjusted p-values of the paired t-test over every pair, as a symmetric [run, run] matrix."""
    raw = intervals.paired_t_pvalues(values)
    first, second = np.triu_indices(len(values), k=1)
    adjusted = intervals.adjust_pvalues(raw[first, second], correction)
    out = np.ones((len(values), len(values)))
    out[first, second] = adjusted
    out[second, first] = adjusted
    return out


def board_order(table: ScoreTable, m: int, order: list[int]) -> list[int]:
    """`order` as a board shows it: best mean of measure m first, ties by run name, then id."""
    column = table.means[:, m].tolist()
    return sorted(
        order,
        key=lambda i: (-column[i] if math.isfinite(column[i]) else math.inf, table.runs[i].name, table.runs[i].id),
    )


def rank_stats(table: ScoreTable, m: int, order: list[int]) -> dict[str, list[Any]]:
    """Tier, rank_low and rank_high of each run of `order` (the shown runs) for measure m: frozen with a snapshot,
    else computed and cached (module docstring)."""
    found = table.intervals
    n = len(order)
    if found is None or score_intervals.is_count(table.measures[m]):
        return {"tier": [None] * n, "rank_low": [None] * n, "rank_high": [None] * n}
    frozen = (found.info.get("frozen_ranks") or {}).get(table.measures[m])
    if frozen is not None and sorted(frozen["run_ids"]) == sorted(table.runs[i].id for i in order):
        at = {run_id: k for k, run_id in enumerate(frozen["run_ids"])}
        return {name: [frozen[name][at[table.runs[i].id]] for i in order] for name in ("tier", "rank_low", "rank_high")}
    canonical = board_order(table, m, order)
    if canonical != order:  # ties and the bootstrap's noise follow the runs' places: always the board's order
        stats = rank_stats(table, m, canonical)
        at = {run: k for k, run in enumerate(canonical)}
        return {name: [stats[name][at[i]] for i in order] for name in ("tier", "rank_low", "rank_high")}
    info = found.info
    key = _key(table, m, order, "ranks", ALPHA, CORRECTION)
    cached = _cached(key)
    if cached is not None:
        return cached
    values = scaled_values(table, m, order)
    variance = sampling_variance(table, m, order)
    low, high = intervals.rank_intervals(
        values, level=info["level"], n_resamples=info["n_resamples"], seed=info["seed"], sampling_variance=variance
    )
    if n < 2 or not len(table.topics):
        tier = [1] * n
    else:
        matrix = adjusted_matrix(values, CORRECTION)
        tier = intervals.tiers(table.means[order, m], matrix, ALPHA).tolist()
    result: dict[str, list[Any]] = {"tier": tier, "rank_low": low.tolist(), "rank_high": high.tolist()}
    _keep(key, result)
    return result


def frozen_ranks(table: ScoreTable, m: int) -> dict[str, object] | None:
    """The default board's rank stats over every run, to freeze with a snapshot (None without intervals)."""
    if table.intervals is None or score_intervals.is_count(table.measures[m]):
        return None
    order = list(range(len(table.runs)))
    return {"run_ids": [run.id for run in table.runs], **rank_stats(table, m, order)}


def _pairs_head(info: dict[str, Any] | None, measure: str, n_resamples: int, seed: int) -> dict[str, object] | None:
    """The significance document's `interval`: the board's, with the request's resamples and seed."""
    return score_intervals.describe_measure(info and {**info, "n_resamples": n_resamples, "seed": seed}, measure)


def significance_fields(
    table: ScoreTable,
    m: int,
    order: list[int],
    names: list[str],
    *,
    correction: str,
    n_resamples: int,
    seed: int,
    alpha: float,
) -> dict[str, object]:
    """The significance document's pairs (difference, interval, d_z, raw and adjusted paired t-test p), tiers and
    rank intervals over the runs of `order` (its tested runs); intervals null when the numbers have none."""
    found = table.intervals
    values = scaled_values(table, m, order)
    level = found.info["level"] if found else score_intervals.LEVEL
    variance = sampling_variance(table, m, order)
    pairs = intervals.pairwise(
        values,
        level=level,
        correction=correction,
        n_resamples=n_resamples,
        seed=seed,
        sampling_variance=variance,
        test_resamples=n_resamples,
    )
    rows = []
    for k, (i, j) in enumerate(zip(pairs.first.tolist(), pairs.second.tolist(), strict=True)):
        rows.append(
            {
                "run_a": names[i],
                "run_b": names[j],
                "difference": json_number(float(pairs.difference[k])),
                "ci_low": json_number(float(pairs.low[k])) if found else None,
                "ci_high": json_number(float(pairs.high[k])) if found else None,
                "effect_size": json_number(float(pairs.effect_size[k])),
                "pvalue": float(pairs.pvalue[k]),
                "adjusted_pvalue": float(pairs.adjusted[k]),
                "significant": bool(pairs.adjusted[k] < alpha),
            }
        )
    tier = intervals.tiers(table.means[order, m], pairs.matrix(len(order)), alpha).tolist()
    ranks: dict[str, list[int] | None] = {name: None for name in names}
    if found is not None and len(order):
        low, high = intervals.rank_intervals(
            values, level=level, n_resamples=n_resamples, seed=seed, sampling_variance=variance
        )
        ranks = {name: [int(lo), int(hi)] for name, lo, hi in zip(names, low.tolist(), high.tolist(), strict=True)}
    return {
        "correction": correction,
        "interval": _pairs_head(found.info if found else None, table.measures[m], n_resamples, seed),
        "pairs": rows,
        "tiers": dict(zip(names, tier, strict=True)),
        "rank_intervals": ranks,
    }
