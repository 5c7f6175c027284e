"""Pool builders: depth-k and stratified (TRECVID) pools over many runs at once, reproducible from a seed."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from app.evaluation.errors import FormatError
from app.evaluation.fast.distinct import distinct
from app.evaluation.ordering import ranked_order
from app.evaluation.pools.keys import pair_keys
from app.evaluation.pools.seeding import topic_rng


class RankedRun(Protocol):
    """What pooling needs of a run: parallel per-row arrays."""

    @property
    def topics(self) -> np.ndarray:
        """Topic of each row."""

    @property
    def docs(self) -> np.ndarray:
        """Docno of each row."""

    @property
    def scores(self) -> np.ndarray:
        """Score of each row."""


@dataclass(frozen=True)
class Stratum:
    """Ranks `first`..`last` (1-based, inclusive), sampled at `rate` (0 < rate <= 1)."""

    first: int
    last: int
    rate: float


TRECVID_STRATA = (Stratum(1, 300, 1.0), Stratum(301, 1000, 0.25))
_STRATUM = re.compile(r"^\s*(\d+)\s*-\s*(\d+)\s*:\s*([0-9.]+%?)\s*$")


def parse_strata(spec: str) -> tuple[Stratum, ...]:
    """Strata from text like `1-300:1.0, 301-1000:25%`; ranges must be consecutive from rank 1."""
    strata = []
    for number, part in enumerate(spec.split(","), start=1):
        match = _STRATUM.match(part)
        if match is None:
            raise FormatError([(0, f"stratum {number} ({part.strip()!r}) is not FIRST-LAST:RATE")], source="strata")
        first, last, rate_text = int(match.group(1)), int(match.group(2)), match.group(3)
        rate = float(rate_text[:-1]) / 100 if rate_text.endswith("%") else float(rate_text)
        strata.append(Stratum(first, last, rate))
    check_strata(strata)
    return tuple(strata)


def check_strata(strata: Sequence[Stratum]) -> None:
    """FormatError unless strata are consecutive rank ranges from 1 with rates in (0, 1]."""
    errors = []
    expected_first = 1
    for number, stratum in enumerate(strata, start=1):
        if stratum.first != expected_first or stratum.last < stratum.first:
            errors.append((0, f"stratum {number} must cover ranks {expected_first}-N with N >= {expected_first}"))
        if not 0.0 < stratum.rate <= 1.0:
            errors.append((0, f"stratum {number} has sampling rate {stratum.rate}, outside (0, 1]"))
        expected_first = stratum.last + 1
    if not strata:
        errors.append((0, "at least one stratum is needed"))
    if errors:
        raise FormatError(errors, source="strata")


@dataclass(frozen=True)
class PoolTable:
    """A built pool: one row per (topic, doc), sorted by topic then judging order."""

    topics: np.ndarray  # str
    docs: np.ndarray  # str
    strata: np.ndarray  # int, 1-based
    sampled: np.ndarray  # bool: to be judged (always True in a depth pool)
    best_ranks: np.ndarray  # int, best 1-based rank over the pooled runs
    n_runs: np.ndarray  # int, how many pooled runs returned the doc within the pool depth
    judging_order: np.ndarray  # int, 0-based position in the topic's shuffled judging queue (-1 if unsampled)

    def __len__(self) -> int:
        """Number of pooled (topic, doc) pairs."""
        return len(self.topics)


def rank_rows(runs: Sequence[RankedRun]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Concatenate runs and rank each (run, topic) list (`ordering.ranked_order`); rows stay in input order."""
    sizes = [len(r.topics) for r in runs]
    run_index = np.repeat(np.arange(len(runs)), sizes)
    topics = np.concatenate([np.asarray(r.topics, dtype=str) for r in runs]) if runs else np.array([], dtype=str)
    docs = np.concatenate([np.asarray(r.docs, dtype=str) for r in runs]) if runs else np.array([], dtype=str)
    scores = np.concatenate([np.asarray(r.scores, dtype=np.float64) for r in runs]) if runs else np.array([])
    _, topic_codes = np.unique(topics, return_inverse=True)
    group = run_index * (topic_codes.max(initial=0) + 1) + topic_codes.reshape(-1)
    order = ranked_order(group, scores, docs, np.concatenate(([0], np.cumsum(sizes))).tolist())
    if order is not None:
        group = group[order]
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]]) if len(group) else np.array([], dtype=np.int64)
    position = np.arange(len(group)) - np.repeat(starts, np.diff(np.r_[starts, len(group)]))
    ranks = np.empty(len(group), dtype=np.int64)
    ranks[slice(None) if order is None else order] = position + 1
    return run_index, topics, docs, ranks


def topic_caps(topics: np.ndarray, depths: Mapping[str, int], default: int) -> np.ndarray:
    """int64 [len(topics)] each row's topic depth: `depths[topic]`, else `default` (one look-up per distinct topic)."""
    names, codes = np.unique(np.asarray(topics, dtype=str), return_inverse=True)
    per_name = np.array([int(depths.get(name, default)) for name in names.tolist()], dtype=np.int64)
    caps: np.ndarray = per_name[codes.reshape(-1)] if len(names) else np.zeros(0, dtype=np.int64)
    return caps


def pool_strata(
    *, depth: int | None = None, strata: Sequence[Stratum] | None = None, depths: Mapping[str, int] | None = None
) -> tuple[Stratum, ...]:
    """The strata of a depth-k pool (`depth`, with per-topic `depths`: one stratum to the deepest) or of a stratified
    one (`strata`), checked (ValueError or FormatError)."""
    if (depth is None) == (strata is None):
        raise ValueError("give exactly one of depth or strata")
    if depths and depth is None:
        raise ValueError("per-topic depths need a depth pool (depth: the default for topics they do not name)")
    if depth is not None:
        low = min([depth, *(depths or {}).values()])
        if low < 1:
            raise ValueError(f"depth must be >= 1, got {low}")
        strata = (Stratum(1, max([depth, *(depths or {}).values()]), 1.0),)
    assert strata is not None
    check_strata(strata)
    return tuple(strata)


@dataclass(frozen=True)
class PoolCandidates:
    """The (topic, doc) pairs runs rank within the pool depth, in `pair_keys` order: what pooling keeps of runs.

    Runs reduced a block at a time and `merge_candidates` give the candidates of all the runs at once, and
    `sample_pool` the same pool from them: the pool's memory does not grow with the runs, only with its pairs."""

    keys: np.ndarray  # str, `pair_keys`, sorted and distinct
    topics: np.ndarray  # str
    docs: np.ndarray  # str
    best_ranks: np.ndarray  # int64, best 1-based rank over the runs
    n_runs: np.ndarray  # int64, the runs' rows within the depth (one per run unless a run repeats a doc)

    def __len__(self) -> int:
        """Number of candidate pairs."""
        return len(self.keys)

    @property
    def nbytes(self) -> int:
        """Bytes its arrays hold."""
        return sum(a.nbytes for a in (self.keys, self.topics, self.docs, self.best_ranks, self.n_runs))


def pool_candidates(
    runs: Sequence[RankedRun],
    strata: Sequence[Stratum],
    *,
    depth: int | None = None,
    depths: Mapping[str, int] | None = None,
) -> PoolCandidates:
    """The pairs `runs` rank within the last stratum (within their topic's depth when per-topic `depths` are given,
    `depth` for the topics they do not name), with best rank and count."""
    run_index, topics, docs, ranks = rank_rows(runs)
    keep = ranks <= strata[-1].last
    if depths and depth is not None:
        keep &= ranks <= topic_caps(topics, depths, depth)
    topics, docs, ranks = topics[keep], docs[keep], ranks[keep]
    unique_keys, pair_of_row = np.unique(pair_keys(topics, docs), return_inverse=True)
    pair_of_row = pair_of_row.reshape(-1)
    n_pairs = len(unique_keys)
    best = np.full(n_pairs, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(best, pair_of_row, ranks)
    n_runs = np.bincount(pair_of_row, minlength=n_pairs).astype(np.int64)
    first_row = np.full(n_pairs, -1, dtype=np.int64)
    first_row[pair_of_row[::-1]] = np.arange(len(pair_of_row))[::-1]
    return PoolCandidates(unique_keys, topics[first_row], docs[first_row], best, n_runs)


def merge_candidates(parts: Sequence[PoolCandidates]) -> PoolCandidates:
    """The candidates of several blocks of runs as one: best ranks the lowest, counts summed."""
    if len(parts) == 1:
        return parts[0]
    keys = np.concatenate([p.keys for p in parts]) if parts else np.array([], dtype=str)
    unique_keys, first, pair_of_row = np.unique(keys, return_index=True, return_inverse=True)
    pair_of_row = pair_of_row.reshape(-1)
    best = np.full(len(unique_keys), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(best, pair_of_row, np.concatenate([p.best_ranks for p in parts]) if parts else best[:0])
    counts = np.concatenate([p.n_runs for p in parts]) if parts else np.zeros(0, dtype=np.int64)
    n_runs = np.bincount(pair_of_row, weights=counts, minlength=len(unique_keys)).astype(np.int64)
    topics = np.concatenate([p.topics for p in parts]) if parts else np.array([], dtype=str)
    docs = np.concatenate([p.docs for p in parts]) if parts else np.array([], dtype=str)
    return PoolCandidates(unique_keys, topics[first], docs[first], best, n_runs)


def build_pool(
    runs: Sequence[RankedRun],
    *,
    depth: int | None = None,
    strata: Sequence[Stratum] | None = None,
    seed: int = 0,
    depths: Mapping[str, int] | None = None,
) -> PoolTable:
    """A depth-k pool (`depth`) or a stratified pool (`strata`) over `runs`, shuffled for judging with `seed`.

    A depth pool may take per-topic depths (`depths`: {topic: k}, `depth` for the topics it does not name): each
    topic's pool is then the top k of its own, exactly the union of per-topic depth-k pools."""
    checked = pool_strata(depth=depth, strata=strata, depths=depths)
    return sample_pool(pool_candidates(runs, checked, depth=depth, depths=depths), checked, seed=seed)


def sample_pool(candidates: PoolCandidates, strata: Sequence[Stratum], *, seed: int = 0) -> PoolTable:
    """The pool of the candidate pairs: each pair in the stratum of its best rank, each topic's strata sampled at
    their rates and the sample shuffled for judging, seeded per topic (`seeding.topic_rng`)."""
    pair_topics, pair_docs, best = candidates.topics, candidates.docs, candidates.best_ranks
    n_pairs = len(candidates)
    lasts = np.array([s.last for s in strata])
    pair_strata = np.searchsorted(lasts, best) + 1
    sampled = np.zeros(n_pairs, dtype=bool)
    judging_order = np.full(n_pairs, -1, dtype=np.int64)
    rows = list(_topic_rows(pair_topics))
    for topic, in_topic in rows:
        rng = topic_rng(seed, topic)
        for number, stratum in enumerate(strata, start=1):
            members = in_topic[pair_strata[in_topic] == number]
            take = int(np.floor(stratum.rate * len(members) + 0.5))
            sampled[rng.choice(members, size=take, replace=False) if take < len(members) else members] = True
        chosen = in_topic[sampled[in_topic]]
        judging_order[chosen] = rng.permutation(len(chosen))
    order = _pool_order(pair_topics, pair_docs, np.where(sampled, judging_order, np.iinfo(np.int64).max), rows)
    return PoolTable(
        topics=pair_topics[order],
        docs=pair_docs[order],
        strata=pair_strata[order],
        sampled=sampled[order],
        best_ranks=best[order],
        n_runs=candidates.n_runs[order],
        judging_order=judging_order[order],
    )


def _topic_rows(topics: np.ndarray) -> Iterator[tuple[str, np.ndarray]]:
    """(topic, its row indices ascending) for each distinct topic in name order. Candidates come sorted by their
    `topic<US>doc` keys, so each topic's rows usually stand together: they are then cut from one pass over the rows,
    instead of comparing every row with every topic; otherwise each topic's rows are found by comparison."""
    if len(topics) == 0:
        return
    starts = np.concatenate(([0], np.flatnonzero(topics[1:] != topics[:-1]) + 1))
    names = topics[starts].tolist()
    if len(set(names)) == len(names):
        ends = np.append(starts[1:], len(topics)).tolist()
        for name, start, end in sorted(zip(names, starts.tolist(), ends, strict=True)):
            yield str(name), np.arange(start, end)
        return
    for name in np.unique(topics).tolist():
        yield str(name), np.flatnonzero(topics == name)


def _pool_order(
    topics: np.ndarray, docs: np.ndarray, key: np.ndarray, rows: Sequence[tuple[str, np.ndarray]]
) -> np.ndarray:
    """`np.lexsort((docs, key, topics))`: the rows by topic name, then `key`, then doc (`rows`: `_topic_rows`).

    Candidates sorted by `topic<US>doc` keys hold each topic's rows together in doc order: a stable sort of the
    integers (topic rank, key) then gives the same order without sorting strings (about 6x faster); otherwise the
    strings are sorted."""
    code = np.empty(len(topics), dtype=np.int64)
    for rank, (_, at) in enumerate(rows):
        code[at] = rank
    follows = code[1:] == code[:-1]  # rows i and i + 1 are of one topic
    together = np.count_nonzero(~follows) + 1 == len(rows)
    if together and np.all((docs[1:] > docs[:-1]) | ~follows):
        ranked: np.ndarray = np.lexsort((key, code))
        return ranked
    ranked = np.lexsort((docs, key, topics))
    return ranked


@dataclass(frozen=True)
class PoolStats:
    """Pool statistics of the kind TRECVID reports."""

    topic_strata: dict[str, dict[int, tuple[int, int]]]  # topic -> stratum -> (pooled, sampled)
    judged_share: np.ndarray  # [run, topic]: share of the run's results (within the pool depth) that are sampled
    unique_per_run: np.ndarray  # [run]: pooled docs that only this run contributed
    unique_per_group: dict[str, int]  # group -> pooled docs only that group's runs contributed
    topics: list[str]


_NOBODY, _SEVERAL = -1, -2  # a pool item's contributing group: none yet, more than one (else the group's code)


class PoolStatsTally:
    """`pool_stats` accumulated a block of runs at a time: `add` the blocks in run order, then `result`. What it
    keeps grows with the pool (a few numbers an item) and with runs x topics, never with the runs' rows."""

    def __init__(
        self,
        pool: PoolTable,
        *,
        depth: int,
        groups: Sequence[str] | None = None,
        depths: Mapping[str, int] | None = None,
    ) -> None:
        """A tally of no runs yet; `groups` names every run's group, in the order the runs will be added."""
        self.pool, self.depth, self.depths = pool, depth, depths
        self.pool_keys = pair_keys(pool.topics, pool.docs)
        self.sorter = np.argsort(self.pool_keys)
        n_items = len(self.pool_keys)
        self.contributors = np.zeros(n_items, dtype=np.int64)  # contributing rows, over all runs
        self.owner_run = np.zeros(n_items, dtype=np.int64)  # the run of a contributing row (the only one if unique)
        self.owner_group = np.full(n_items, _NOBODY, dtype=np.int64)
        self.group_names = sorted(set(groups)) if groups is not None else None
        self.group_codes = (
            np.unique(np.asarray(groups, dtype=str), return_inverse=True)[1].reshape(-1) if groups is not None else None
        )
        self.n_runs = 0
        self.counts: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []  # (first run, topics, returned, judged)

    def add(self, runs: Sequence[RankedRun]) -> None:
        """Count the next runs (a block), numbered after those already added, one run at a time: the working arrays
        (a few hundred bytes a row) then grow with a run, not with the block."""
        for run in runs:
            self._add_runs([run])

    def _add_runs(self, runs: Sequence[RankedRun]) -> None:
        """Count the next runs, numbered after those already added."""
        run_index, topics, docs, ranks = rank_rows(runs)
        row_keys = pair_keys(topics, docs)
        if len(self.pool_keys):
            found = np.searchsorted(self.pool_keys, row_keys, sorter=self.sorter)
            where = self.sorter[np.clip(found, 0, len(self.pool_keys) - 1)]
            del found
            in_pool = self.pool_keys[where] == row_keys
            judged = in_pool & self.pool.sampled[where]
        else:
            where = np.zeros(len(row_keys), dtype=np.int64)
            in_pool = judged = np.zeros(len(row_keys), dtype=bool)
        del row_keys
        names, topic_codes = np.unique(topics, return_inverse=True)
        cells = run_index * len(names) + topic_codes.reshape(-1)
        size = len(runs) * len(names)
        returned = np.bincount(cells, minlength=size).astype(np.float64).reshape(len(runs), len(names))
        judged_count = np.bincount(cells, weights=judged, minlength=size).reshape(len(runs), len(names))
        self.counts.append((self.n_runs, names, returned, judged_count))
        del cells, judged, topic_codes
        contributed = in_pool & (ranks <= (topic_caps(topics, self.depths, self.depth) if self.depths else self.depth))
        items = where[contributed]
        self.contributors += np.bincount(items, minlength=len(self.pool_keys))
        self.owner_run[items] = run_index[contributed] + self.n_runs
        if self.group_codes is not None:
            self._add_groups(items, self.group_codes[run_index[contributed] + self.n_runs])
        self.n_runs += len(runs)

    def _add_groups(self, items: np.ndarray, codes: np.ndarray) -> None:
        """Merge the groups contributing to each item in a block into each item's one group, or several."""
        n_groups = len(self.group_names or ())
        if not len(items):
            return
        pairs = distinct(items * n_groups + codes)
        block_items, block_groups = pairs // n_groups, pairs % n_groups
        block_owner = np.full(len(self.pool_keys), _NOBODY, dtype=np.int64)
        block_owner[block_items] = block_groups
        block_owner[np.bincount(block_items, minlength=len(self.pool_keys)) > 1] = _SEVERAL
        old = self.owner_group
        merged = np.where(old == _NOBODY, block_owner, np.where(old == block_owner, old, _SEVERAL))
        self.owner_group = np.where(block_owner == _NOBODY, old, merged)

    def result(self) -> PoolStats:
        """The statistics of every run added."""
        pool = self.pool
        topic_names = sorted(set(pool.topics.tolist()).union(*(names.tolist() for _, names, _, _ in self.counts)))
        all_names = np.array(topic_names, dtype=str)
        returned = np.zeros((self.n_runs, len(topic_names)))
        judged_count = np.zeros((self.n_runs, len(topic_names)))
        for first, names, block_returned, block_judged in self.counts:
            rows = slice(first, first + len(block_returned))
            columns = np.searchsorted(all_names, names)
            returned[rows, columns] = block_returned
            judged_count[rows, columns] = block_judged
        with np.errstate(invalid="ignore", divide="ignore"):
            share = judged_count / returned
        unique_per_run = np.bincount(self.owner_run[self.contributors == 1], minlength=self.n_runs)
        unique_per_group: dict[str, int] = {}
        if self.group_names is not None:
            only = self.owner_group[self.owner_group >= 0]
            counts = np.bincount(only, minlength=len(self.group_names))
            unique_per_group = {name: int(counts[i]) for i, name in enumerate(self.group_names)}
        return PoolStats(_topic_strata(pool), share, unique_per_run, unique_per_group, topic_names)


def _topic_strata(pool: PoolTable) -> dict[str, dict[int, tuple[int, int]]]:
    """topic -> stratum -> (pooled, sampled) items, topics in order and each topic's strata in text order."""
    names, topic_codes = np.unique(np.asarray(pool.topics, dtype=str), return_inverse=True)
    numeric = np.unique(np.asarray(pool.strata, dtype=np.int64))
    strata = sorted(numeric.tolist(), key=str)
    text_rank = np.array([strata.index(s) for s in numeric.tolist()], dtype=np.int64)
    stratum_codes = text_rank[np.searchsorted(numeric, pool.strata)] if len(numeric) else np.zeros(0, dtype=np.int64)
    cells = topic_codes.reshape(-1) * len(strata) + stratum_codes
    pooled = np.bincount(cells, minlength=len(names) * len(strata)).reshape(len(names), len(strata))
    sampled = np.bincount(cells, weights=pool.sampled, minlength=pooled.size).reshape(pooled.shape)
    topic_strata: dict[str, dict[int, tuple[int, int]]] = {}
    for t, topic in enumerate(names.tolist()):
        for s, stratum in enumerate(strata):
            if pooled[t, s]:
                topic_strata.setdefault(topic, {})[int(stratum)] = (int(pooled[t, s]), int(sampled[t, s]))
    return topic_strata


def pool_stats(
    runs: Sequence[RankedRun],
    pool: PoolTable,
    *,
    depth: int,
    groups: Sequence[str] | None = None,
    depths: Mapping[str, int] | None = None,
) -> PoolStats:
    """Per-topic stratum sizes, each run's judged share per topic, and unique contributions per run and group.

    `depth` is the deepest pooled rank (the last stratum's end): only rows within it contribute to the pool; with
    per-topic `depths` (a depth pool's, `depth` for the topics they do not name) only rows within their topic's.
    Runs read a block at a time give the same statistics through `PoolStatsTally`.
    """
    tally = PoolStatsTally(pool, depth=depth, groups=groups, depths=depths)
    tally.add(runs)
    return tally.result()
