"""Benchmark: judgements each judging order or sampling design needs to reproduce the ranking of the full qrels,
every parameter chosen on one half of the topics and the rows reported on the other half, replaying real qrels as
an oracle assessor.

Setting (default: TREC-COVID round 1, all 143 runs of 56 teams, 30 topics, 8,691 judgements; any campaign with
`--qrels Q --runs DIR [--runs DIR2] --groups TSV`). The qrels are the only verdicts we know, so every run's list is
*condensed* to its judged docs (Sakai's condensed lists); the orders and designs work over those lists, per topic,
and the oracle answers from the qrels (grade >= 1 relevant). Scores are always computed on the uncondensed runs
(trec_eval's ranks), and tau_b is against MAP on the full qrels over the same topics.

Rows (estimator in brackets: MAP = unjudged not relevant; condensed = AP over the run's judged docs only, Sakai's
condensed-list AP, used only for ranking; xinfAP and statAP are the sampling estimators):

- depth [MAP]: the fixed-depth pool on the condensed lists, grown one depth at a time; the baseline of `/depth`;
- shuffled [MAP]: the seeded shuffle of the pool, MAP on the judged prefix (random: `--seeds` seeds);
- move_to_front, mm_ns, hedge, mtc, mtc_hedge [MAP]: the online orders of `app/evaluation/pools/orders.py` (MM-NS's
  discount and the Hedge beta of hedge and mtc_hedge are tuned); mtc_condensed: MTC's judgements scored with
  condensed-list AP (on the full qrels it already ranks runs differently from MAP: a run's unjudged docs do not
  count against it);
- census_mtc, census_mm_ns [MAP]: a census of every run's top k condensed ranks first (in depth order), then MTC
  or MM-NS (k tuned; `Census` below);
- infap [xinfAP]: a seeded simple random sample of each topic's pool (share f), inferred AP (Yilmaz & Aslam 2006);
- xinfap [xinfAP]: Yilmaz, Kanoulas & Aslam (SIGIR 2008): every doc at condensed rank <= k of some run judged
  (census stratum), a seeded random share f of the rest (k tuned);
- statap [statAP]: Aslam, Pavlu & Yilmaz (SIGIR 2006): a census of ranks <= k, then Poisson sampling of the rest
  with inclusion probability pi = min(1, c w), w the doc's AP prior summed over the runs (sum_run H_L - H_{r-1} at
  its condensed rank r, L the topic's longest condensed list), c set so that sum pi = f N; statAP =
  (1 / R_hat) sum_{sampled relevant d} (1 / pi_d) (1 + sum_{sampled relevant d' above d} 1 / pi_d') / rank(d),
  R_hat = sum_{sampled relevant} 1 / pi (k tuned).

The order rows give every topic the same budget n (the first n docs each picks, all if fewer); the sampled rows the
same share f (0.01 steps) of each topic's pool below the census. Random rows (shuffled, infap, xinfap, statap) are
run with seeds 0..`--seeds`-1: their tau at each step is the mean over the seeds (and the worst seed is printed).

Criterion: "judged" is the number of judgements (all topics of the half) at the first budget from which tau_b
stays >= `--target` at every larger budget (a curve that touches the target early and dips again is charged up
to where it stops dipping; for random rows, the seeds' mean tau); `/depth` is its share of the depth pool's by the
same criterion on the same half. At that budget, leave-one-team-out is done by *rebuilding the judgements without
the team*: the order (or the design, same seed and share, the same uniform draw per doc) is replayed over the
other teams' lists with the same per-topic budget (the depth pool at the same depth), the team's runs are scored
on those judgements, and the largest drop in their score and the tau_b of the ranking with each team's runs so
scored against the ranking with the team are printed (mean over seeds). The goal (issue 24) is `/depth` <= 0.6
with LOTO tau no worse than the depth pool's: the `goal` column says whether a row meets it.

Tuning: each tuned parameter is chosen on the `--tune-topics` half (odd = the 1st, 3rd, ... topic in natural order,
even = the 2nd, 4th, ...): among its values whose LOTO tau is at least the depth pool's there, the one with the
fewest judgements (the fewest overall if none is). The table is printed for both halves; the held-out
(`--report-topics`) one is the result. The last line, `best: ...`, names the row with the fewest judgements on the
tuning half and gives its held-out numbers.

Measured (10 seeds; held-out half, tuned on the other; x = share of the depth pool's judgements, LOTO tau against
the depth pool's on the same half). All 143 runs (depth pool: depth 2, 1,653 / 1,797 judgements): mtc_hedge (beta
0.3 chosen on either half) 0.36x / 0.33x, LOTO 0.971 / 0.965 (depth 0.960 / 0.952); hedge 0.44x / 0.33x, mtc
0.44x / 0.42x, statap (no census) 0.57x / 0.56x also meet the goal; move_to_front 0.60x / 0.46x and mm_ns 0.51x /
0.49x do not (LOTO below the depth pool's). The 30 pooled runs (`--runs .../runs --groups .../run_groups.tsv`;
depth pool: depth 17 / 12, 1,726 / 1,609): mtc_hedge (beta 0.8 chosen on either half) 0.61x / 0.56x, LOTO 0.935 /
0.954 (depth 0.912 / 0.857): the goal met on the odd half, missed by 0.01x on the even one; no other row meets it on
both (mtc 0.59x / 0.76x, statap 0.64x / 0.85x, mm_ns 0.68x / 0.76x). Condensed-list AP never reaches tau 0.9 (0.70-0.80
at full judgement); a census before MTC or MM-NS costs more than it saves. For a random design one seed can be far
below the mean (the `min` column: 0.84-0.88 where the mean crosses 0.9).

    .venv/bin/python scripts/bench/judging_cost.py [--seeds 10] [--rows depth,mtc,statap] [--check]
    .venv/bin/python scripts/bench/judging_cost.py --qrels Q --runs DIR [--runs DIR2] --groups TSV \
        [--tune-topics odd|even|all] [--report-topics odd|even|all]
"""

from __future__ import annotations

import argparse
import csv
import itertools
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from app.evaluation.analyses.kendall import tau_b, tau_b_batch
from app.evaluation.analyses.lines import APKernel, index_lines
from app.evaluation.formats.trec_files import read_qrels, read_run
from app.evaluation.grading.prepared_runs import prepare_runs
from app.evaluation.measures.inferred import INFAP_EPSILON, SAMPLED_EPSILON
from app.evaluation.pools.orders import (
    ExpectedMTC,
    Hedge,
    JudgingOrder,
    MaxMeanNonStationary,
    MinimalTestCollection,
    MoveToFront,
    Shuffled,
)

COVID = Path(__file__).resolve().parents[3] / "shared" / "data" / "trec-covid-round1"
SHARES = np.round(np.arange(0.01, 1.0001, 0.01), 2)  # sampling rates tried below the census
NEVER = 1 << 40  # condensed rank of a doc a run does not retrieve
CELLS = 3_000_000  # entries per estimator chunk ([budget, run, rank] arrays)


# --- data ---------------------------------------------------------------------------------------------------------


@dataclass
class Topic:
    """One topic's judged docs (items) as the runs rank them."""

    name: str
    relevant: np.ndarray  # bool [item]
    crank: np.ndarray  # int64 [run, item] 1-based condensed rank of the item in the run, NEVER if not retrieved
    items: np.ndarray  # int64 [run, m] the run's judged items in rank order, -1 padding
    ranks: np.ndarray  # float [run, m] their uncondensed 1-based ranks, 1e12 padding
    rel_items: np.ndarray  # int64 [run, m_rel] the relevant ones only
    rel_ranks: np.ndarray  # float [run, m_rel]
    names: list[list[str]] = field(default_factory=list)  # per run, its condensed list as item-id strings


def _pad(rows: list[np.ndarray], fill: float, dtype: Any) -> np.ndarray:
    """Rows of different lengths as one padded matrix."""
    width = max((len(r) for r in rows), default=0)
    out = np.full((len(rows), max(width, 1)), fill, dtype=dtype)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return out


def natural(name: str) -> tuple[Any, ...]:
    """Sort key putting '2' before '10'."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))


class Campaign:
    """Runs, teams, qrels and each topic's condensed lists."""

    def __init__(self, qrels_path: Path, run_paths: list[Path], team_of: dict[str, str] | None) -> None:
        self.qrels = read_qrels(qrels_path)
        prepared = prepare_runs([read_run(p) for p in run_paths])
        self.names = list(prepared.names)
        self.teams = [team_of.get(n, n) if team_of else n for n in self.names]
        index = index_lines(prepared, self.qrels)
        judged_line = np.asarray(self.qrels.grades) >= 0
        relevant_line = index.relevant & judged_line
        kernel = APKernel(index)
        full = kernel.per_topic(relevant_line)  # [run, topic] trec_eval AP on the full qrels
        self.n_judged, self.n_relevant = int(judged_line.sum()), int(relevant_line.sum())
        prepared_topic = {name: i for i, name in enumerate(prepared.topics)}
        order = sorted(range(len(index.topics)), key=lambda t: natural(index.topics[t]))
        self.full = full[:, order]
        self.topics: list[Topic] = []
        n_run = len(self.names)
        for t in order:
            lines = np.flatnonzero((index.line_topic == t) & judged_line)
            item_of = np.full(index.n_lines + 1, -1, dtype=np.int64)
            item_of[lines] = np.arange(len(lines))
            relevant = relevant_line[lines]
            p = prepared_topic.get(index.topics[t])
            crank = np.full((n_run, len(lines)), NEVER, dtype=np.int64)
            items, ranks, rel_items, rel_ranks = [], [], [], []
            for r in range(n_run):
                if p is None:
                    found = np.zeros(0, dtype=np.int64)
                    at = np.zeros(0, dtype=np.int64)
                else:
                    block = prepared.pairs[r, p]
                    line = index.pair_line[np.where(block >= 0, block, len(index.pair_line) - 1)]
                    item = item_of[np.where(line >= 0, line, index.n_lines)]
                    at = np.flatnonzero(item >= 0)
                    found = item[at]
                crank[r, found] = np.arange(1, len(found) + 1)
                items.append(found)
                ranks.append(at + 1.0)
                rel = relevant[found]
                rel_items.append(found[rel])
                rel_ranks.append(at[rel] + 1.0)
            self.topics.append(
                Topic(
                    name=index.topics[t], relevant=relevant, crank=crank,
                    items=_pad(items, -1, np.int64), ranks=_pad(ranks, 1e12, np.float64),
                    rel_items=_pad(rel_items, -1, np.int64), rel_ranks=_pad(rel_ranks, 1e12, np.float64),
                    names=[[str(i) for i in found.tolist()] for found in items],
                )
            )  # fmt: skip

    def half(self, which: str) -> list[int]:
        """Topic indices of a half: odd = 1st, 3rd, ... topic in natural order; even = 2nd, 4th, ...; all."""
        n = len(self.topics)
        return {"odd": list(range(0, n, 2)), "even": list(range(1, n, 2)), "all": list(range(n))}[which]


def read_groups(path: Path | None) -> dict[str, str] | None:
    """{run: team} from a TSV with `run` and `team` columns (else its first two columns, no header)."""
    if path is None:
        return None
    with open(path, newline="") as handle:
        rows = list(csv.reader(handle, delimiter="\t"))
    if not rows:
        return {}
    head = [h.strip().lower() for h in rows[0]]
    if "run" in head and "team" in head:
        r, t = head.index("run"), head.index("team")
        rows = rows[1:]
    else:
        r, t = 0, 1
    return {row[r].strip(): row[t].strip() for row in rows if len(row) > max(r, t)}


def run_files(dirs: Sequence[Path]) -> list[Path]:
    """Every run file in the given directories (hidden files and README skipped)."""
    out: list[Path] = []
    for d in dirs:
        out.extend(p for p in sorted(Path(d).iterdir()) if p.is_file() and not p.name.startswith(".")
                   and not p.name.lower().startswith("readme"))  # fmt: skip
    return out


# --- estimators: [budget, item] judged -> [budget, run] per-topic score ---------------------------------------------


def _chunks(n_b: int, width: int) -> list[slice]:
    """Slices of the budget axis keeping [chunk, run, width] arrays under CELLS entries."""
    step = max(1, CELLS // max(width, 1))
    return [slice(a, min(a + step, n_b)) for a in range(0, n_b, step)]


def map_ap(topic: Topic, judged: np.ndarray) -> np.ndarray:
    """trec_eval AP with the judged relevant docs as the only relevant ones (unjudged = not relevant)."""
    rel_judged = judged & topic.relevant[None, :]
    big_r = rel_judged.sum(axis=1).astype(np.float64)
    valid = topic.rel_items >= 0
    item = np.where(valid, topic.rel_items, 0)
    out = np.zeros((len(judged), len(topic.items)))
    for part in _chunks(len(judged), topic.rel_items.size):
        kept = rel_judged[part][:, item] & valid
        count = np.cumsum(kept, axis=2)
        total = np.sum(np.where(kept, count / topic.rel_ranks, 0.0), axis=2)
        out[part] = np.divide(total, big_r[part, None], out=np.zeros_like(total), where=big_r[part, None] > 0)
    return out


def condensed_ap(topic: Topic, judged: np.ndarray) -> np.ndarray:
    """Condensed-list AP: each run's list restricted to the judged docs, ranks renumbered (Sakai 2007)."""
    big_r = (judged & topic.relevant[None, :]).sum(axis=1).astype(np.float64)
    valid = topic.items >= 0
    item = np.where(valid, topic.items, 0)
    relevant = topic.relevant[item] & valid
    out = np.zeros((len(judged), len(topic.items)))
    for part in _chunks(len(judged), topic.items.size):
        kept = judged[part][:, item] & valid
        rank = np.cumsum(kept, axis=2)
        hit = kept & relevant
        count = np.cumsum(hit, axis=2)
        total = np.sum(np.where(hit, count / np.maximum(rank, 1), 0.0), axis=2)
        out[part] = np.divide(total, big_r[part, None], out=np.zeros_like(total), where=big_r[part, None] > 0)
    return out


def xinf_ap(topic: Topic, judged: np.ndarray, pooled: np.ndarray, stratum: np.ndarray) -> np.ndarray:
    """sample_eval's xinfAP (as `analyses.budget.xinf_ap_topic`) over the pooled items, strata `stratum`."""
    n_strata = int(stratum[pooled].max()) + 1 if pooled.any() else 1
    valid = topic.items >= 0
    item = np.where(valid, topic.items, 0)
    in_pool = valid & pooled[item]
    st = np.where(in_pool, stratum[item], -1)
    relevant = topic.relevant[item] & in_pool
    big_n = np.array([np.sum(pooled & (stratum == c)) for c in range(n_strata)], dtype=np.float64)
    own = [st == c for c in range(n_strata)]
    above_pooled = [np.cumsum(o, axis=1) - o for o in own]
    out = np.zeros((len(judged), len(topic.items)))
    for part in _chunks(len(judged), topic.items.size):
        jb = judged[part] & pooled[None, :]
        is_judged = jb[:, item] & in_pool
        is_rel = is_judged & relevant
        above = np.zeros(is_judged.shape)
        for c in range(n_strata):
            j_c, r_c = is_judged & own[c], is_rel & own[c]
            s = np.cumsum(j_c, axis=2) - j_c
            rho = np.cumsum(r_c, axis=2) - r_c
            above += above_pooled[c] * (rho + INFAP_EPSILON) / (s + SAMPLED_EPSILON)
        precision = (1.0 + above) / topic.ranks
        n_c = np.stack([np.sum(jb & (stratum == c), axis=1) for c in range(n_strata)], axis=1)
        r_c = np.stack([np.sum(jb & topic.relevant & (stratum == c), axis=1) for c in range(n_strata)], axis=1)
        weight = np.divide(big_n[None, :], n_c, out=np.zeros(n_c.shape), where=n_c > 0)
        r_hat = np.sum(weight * r_c, axis=1)
        value = np.zeros(is_judged.shape[:2])
        for c in range(n_strata):
            value += weight[:, c, None] * np.sum(np.where(is_rel & own[c], precision, 0.0), axis=2)
        out[part] = np.divide(value, r_hat[:, None], out=np.zeros_like(value), where=r_hat[:, None] > 0)
    return out


def stat_ap(topic: Topic, judged: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """statAP (Horvitz-Thompson over the sampled relevant docs, inclusion probabilities `pi` [budget, item])."""
    weight = np.where(judged & topic.relevant[None, :] & (pi > 0), 1.0 / np.where(pi > 0, pi, 1.0), 0.0)
    r_hat = weight.sum(axis=1)
    valid = topic.rel_items >= 0
    item = np.where(valid, topic.rel_items, 0)
    out = np.zeros((len(judged), len(topic.items)))
    for part in _chunks(len(judged), topic.rel_items.size):
        w = np.where(valid, weight[part][:, item], 0.0)
        before = np.cumsum(w, axis=2) - w
        total = np.sum(w * (1.0 + before) / topic.rel_ranks, axis=2)
        out[part] = np.divide(total, r_hat[part, None], out=np.zeros_like(total), where=r_hat[part, None] > 0)
    return out


# --- designs: which items are judged at each budget step ---------------------------------------------------------


@dataclass
class Judged:
    """One topic's judgements at each budget step, with what its estimator needs."""

    judged: np.ndarray  # bool [step, item]
    pooled: np.ndarray | None = None  # bool [item] (sampled designs)
    stratum: np.ndarray | None = None  # int64 [item] (xinfAP)
    pi: np.ndarray | None = None  # float [step, item] inclusion probabilities (statAP)


def best_rank(topic: Topic, runs: list[int]) -> np.ndarray:
    """[item] the best condensed rank over `runs` (NEVER if none retrieves it)."""
    if not runs or topic.crank.shape[1] == 0:
        return np.full(topic.crank.shape[1], NEVER, dtype=np.int64)
    out: np.ndarray = topic.crank[runs].min(axis=0)
    return out


def depth_sequence(topic: Topic, runs: list[int], depth: int) -> list[int]:
    """Items of the depth-`depth` pool of `runs` in depth order (by best rank, then run, then item)."""
    key: dict[int, tuple[int, int]] = {}
    for r in runs:
        for k, i in enumerate(topic.items[r].tolist()[:depth], start=1):
            if i >= 0 and (i not in key or (k, r) < key[i]):
                key[i] = (k, r)
    return sorted(key, key=lambda i: (key[i], i))


class Census(JudgingOrder):
    """Every list's top `depth` docs first (a depth-`depth` pool, rank by rank, lists in the order given), then the
    `inner` order, which is fed every verdict (the census ones as outside verdicts: no run credited)."""

    def __init__(
        self, inner: JudgingOrder, lists: Sequence[Sequence[str]], *, depth: int, pool: Sequence[str] | None = None
    ) -> None:
        super().__init__(lists, pool=pool)
        if depth < 0:
            raise ValueError(f"census depth must be >= 0, got {depth}")
        self.inner = inner
        self.name = f"census_{inner.name}"
        self.random = inner.random
        self.depth = depth
        first: dict[int, None] = {}
        for k in range(depth):
            for ranked in self._lists.lists:
                if k < len(ranked):
                    first.setdefault(int(ranked[k]), None)
        self._first = list(first)
        self._at = 0

    def _census_left(self) -> list[int]:
        """The census docs not judged yet, in census order (advancing past the judged ones)."""
        judged = self._lists.judged
        while self._at < len(self._first) and judged[self._first[self._at]]:
            self._at += 1
        return [i for i in self._first[self._at :] if not judged[i]]

    def _choose(self) -> tuple[int, int]:
        """The next census doc, then the inner order's proposal."""
        left = self._census_left()
        if left:
            return left[0], -1
        doc = self.inner.next()
        return (-1, -1) if doc is None else (self._lists.index[doc], -1)

    def _following(self, k: int) -> list[int]:
        """The census docs after the proposed one, then (past the census) the inner order's plan."""
        left = [i for i in self._census_left() if i != self._proposed]
        if left or self._proposed in self._first:
            return left[:k]
        return [self._lists.index[d] for d in self.inner.plan(k + 1)[1:]]

    def record(self, doc: str, relevant: bool) -> None:
        """Take the verdict, and pass it on to the inner order (which credits it if it proposed the doc)."""
        super().record(doc, relevant)
        self.inner.record(doc, relevant)


ORDER_CLASSES: dict[str, Callable[..., JudgingOrder]] = {
    "shuffled": Shuffled, "move_to_front": MoveToFront, "mm_ns": MaxMeanNonStationary, "hedge": Hedge,
    "mtc": MinimalTestCollection, "mtc_hedge": ExpectedMTC,
}  # fmt: skip


def order_sequence(
    topic: Topic, runs: list[int], order: str, params: dict[str, Any], seed: int, limit: int
) -> list[int]:
    """The first `limit` items the online order picks from the lists of `runs`, the oracle answering."""
    lists = [topic.names[r] for r in runs]
    options = {k: v for k, v in params.items() if k != "census"}
    policy: JudgingOrder = ORDER_CLASSES[order](lists, seed=seed, topic=topic.name, **options)
    if params.get("census"):
        policy = Census(policy, lists, depth=int(params["census"]))
    out: list[int] = []
    while len(out) < limit:
        doc = policy.next()
        if doc is None:
            break
        item = int(doc)
        policy.record(doc, bool(topic.relevant[item]))
        out.append(item)
    return out


def solve_scale(weight: np.ndarray, target: float) -> float:
    """c with sum min(1, c w) = target (w > 0; target <= len(w))."""
    if target <= 0 or not len(weight):
        return 0.0
    if target >= len(weight):
        return float(1.0 / weight.min())
    low, high = 0.0, float(1.0 / weight.min())
    for _ in range(60):
        mid = (low + high) / 2
        if np.minimum(1.0, mid * weight).sum() < target:
            low = mid
        else:
            high = mid
    return high


# --- rows ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One row of the table: a way to choose judgements, its estimator, and the parameters tuned."""

    name: str
    kind: str  # depth | order | sampled
    estimator: str  # map | condensed | xinfap | statap
    order: str = ""  # online order, or sampling design (srs | statap)
    random: bool = False
    fixed: tuple[tuple[str, Any], ...] = ()
    grid: tuple[tuple[str, tuple[Any, ...]], ...] = ()

    def settings(self) -> list[dict[str, Any]]:
        """Every parameter combination to try (one if nothing is tuned)."""
        names = [g[0] for g in self.grid]
        return [dict(self.fixed) | dict(zip(names, combo, strict=True))
                for combo in itertools.product(*(g[1] for g in self.grid))]  # fmt: skip


ROWS = (
    Row("depth", "depth", "map"),
    Row("shuffled", "order", "map", "shuffled", random=True),
    Row("move_to_front", "order", "map", "move_to_front"),
    Row("mm_ns", "order", "map", "mm_ns", grid=(("discount", (0.7, 0.9, 1.0)),)),
    Row("hedge", "order", "map", "hedge", grid=(("beta", (0.1, 0.3, 0.5, 0.8)),)),
    Row("mtc", "order", "map", "mtc"),
    Row("mtc_condensed", "order", "condensed", "mtc"),
    Row("mtc_hedge", "order", "map", "mtc_hedge", grid=(("beta", (0.1, 0.3, 0.5, 0.8)),)),
    Row("census_mm_ns", "order", "map", "mm_ns", fixed=(("discount", 0.9),), grid=(("census", (1, 2, 3, 5)),)),
    Row("census_mtc", "order", "map", "mtc", grid=(("census", (1, 2, 3, 5)),)),
    Row("infap", "sampled", "xinfap", "srs", random=True, fixed=(("census", 0),)),
    Row("xinfap", "sampled", "xinfap", "srs", random=True, grid=(("census", (1, 2, 3, 5, 10)),)),
    Row("statap", "sampled", "statap", "statap", random=True, grid=(("census", (0, 1, 2, 3, 5)),)),
)


class Bench:
    """Curves, criterion and leave-one-team-out of the rows on one campaign."""

    def __init__(self, campaign: Campaign, seeds: int, target: float) -> None:
        self.c = campaign
        self.seeds = seeds
        self.target = target
        self.everyone = list(range(len(campaign.names)))
        self.team_list = list(dict.fromkeys(campaign.teams))
        self.longest = max(int(t.crank.shape[1]) for t in campaign.topics)
        self.depths = max(int((t.items >= 0).sum(axis=1).max()) for t in campaign.topics)
        self._sequences: dict[tuple[Any, ...], tuple[list[int], bool]] = {}

    # judgements per topic -------------------------------------------------------------------------------------------

    def steps(self, row: Row) -> np.ndarray:
        """The budget steps of a row: depths, per-topic budgets n, or shares f."""
        if row.kind == "depth":
            return np.arange(1, self.depths + 1)
        if row.kind == "order":
            return np.arange(1, self.longest + 1)
        return SHARES

    def sequence(self, row: Row, params: dict[str, Any], t: int, runs: list[int], seed: int, limit: int) -> list[int]:
        """The order's first `limit` picks on topic t (cached; recomputed only if a longer prefix is asked)."""
        key = (row.order, tuple(sorted(params.items())), t, tuple(runs), seed)
        cached = self._sequences.get(key)
        if cached is not None and (len(cached[0]) >= limit or cached[1]):
            return cached[0][:limit]
        out = order_sequence(self.c.topics[t], runs, row.order, params, seed, limit)
        self._sequences[key] = (out, len(out) < limit)  # (picks, the order ran out)
        return out

    def judge(self, row: Row, params: dict[str, Any], t: int, runs: list[int], seed: int, steps: np.ndarray) -> Judged:
        """Topic t's judgements at each step of `steps`, chosen from the lists of `runs`."""
        topic = self.c.topics[t]
        n_item = topic.crank.shape[1]
        if row.kind == "depth":
            return Judged(best_rank(topic, runs)[None, :] <= steps[:, None])
        if row.kind == "order":
            seq = self.sequence(row, params, t, runs, seed, int(steps.max()))
            place = np.full(n_item, NEVER, dtype=np.int64)
            place[seq] = np.arange(len(seq))
            return Judged(place[None, :] < steps[:, None])
        best = best_rank(topic, runs)
        pooled = best < NEVER
        census = pooled & (best <= int(params.get("census", 0)))
        rest = pooled & ~census
        # one uniform per doc: the designs with and without a team draw the same docs where they can
        draw = np.asarray(np.random.default_rng([seed, t]).random(size=(n_item,)))
        n_rest = int(rest.sum())
        if row.order == "srs":
            rank_in_rest = np.full(n_item, NEVER, dtype=np.int64)
            where = np.flatnonzero(rest)
            rank_in_rest[where[np.argsort(draw[where], kind="stable")]] = np.arange(n_rest)
            take = np.ceil(steps * n_rest - 1e-9).astype(np.int64)
            judged = census[None, :] | (rank_in_rest[None, :] < take[:, None])
            return Judged(judged, pooled=pooled, stratum=np.where(census, 0, 1))
        prior = np.zeros(self.longest + 2)
        depth = np.arange(1, self.longest + 1)
        prior[1:-1] = np.cumsum(1.0 / depth[::-1])[::-1]  # H_L - H_{r-1} at r = 1..L
        weight = np.zeros(n_item)
        for r in runs:
            weight += prior[np.minimum(topic.crank[r], self.longest + 1)]
        pi = np.zeros((len(steps), n_item))
        pi[:, census] = 1.0
        w_rest = weight[rest]
        for b, share in enumerate(steps):
            pi[b, rest] = np.minimum(1.0, solve_scale(w_rest, float(share) * n_rest) * w_rest)
        return Judged(draw[None, :] < pi, pooled=pooled, pi=pi)

    def score(self, row: Row, t: int, judged: Judged) -> np.ndarray:
        """[step, run] the row's estimate of every run's AP on topic t."""
        topic = self.c.topics[t]
        if row.estimator == "map":
            return map_ap(topic, judged.judged)
        if row.estimator == "condensed":
            return condensed_ap(topic, judged.judged)
        if row.estimator == "xinfap":
            assert judged.pooled is not None and judged.stratum is not None
            return xinf_ap(topic, judged.judged, judged.pooled, judged.stratum)
        assert judged.pi is not None
        return stat_ap(topic, judged.judged, judged.pi)

    # one row on one half ----------------------------------------------------------------------------------------------

    def evaluate(self, row: Row, params: dict[str, Any], topics: list[int]) -> dict[str, Any]:
        """Curve (mean over seeds), the criterion's budget, and leave-one-team-out there, on the given topics."""
        truth = self.c.full[:, topics].mean(axis=1)
        steps = self.steps(row)
        seeds = range(self.seeds if row.random else 1)
        spent = np.zeros((len(seeds), len(steps)))
        scores = np.zeros((len(seeds), len(steps), len(self.everyone)))
        for s, seed in enumerate(seeds):
            for t in topics:
                judged = self.judge(row, params, t, self.everyone, seed, steps)
                spent[s] += judged.judged.sum(axis=1)
                scores[s] += self.score(row, t, judged)
        scores /= len(topics)
        taus = tau_b_batch(truth[None, None, :], scores)  # [seed, step]
        mean_tau = taus.mean(axis=0)
        below = np.flatnonzero(~(mean_tau >= self.target))
        k = int(below[-1]) + 1 if len(below) else 0
        out: dict[str, Any] = {"params": params, "curve": (spent.mean(axis=0), mean_tau)}
        if k >= len(steps):
            out.update(judged=None, tau=float(mean_tau[-1]))
            return out
        drops, loto = [], []
        for s, seed in enumerate(seeds):
            with_all = scores[s, k]
            reduced = with_all.copy()
            for team in self.team_list:
                others = [r for r in self.everyone if self.c.teams[r] != team]
                mine = np.array([self.c.teams[r] == team for r in self.everyone])
                total = np.zeros(len(self.everyone))
                for t in topics:
                    total += self.score(row, t, self.judge(row, params, t, others, seed, steps[k : k + 1]))[0]
                reduced[mine] = total[mine] / len(topics)
            drops.append(float(max(0.0, np.max(with_all - reduced))))
            loto.append(tau_b(with_all, reduced))
        out.update(
            judged=float(spent[:, k].mean()), step=float(steps[k]), tau=float(mean_tau[k]),
            tau_min=float(taus[:, k].min()), loto_drop=float(np.mean(drops)), loto_tau=float(np.mean(loto)),
        )  # fmt: skip
        return out


# --- report --------------------------------------------------------------------------------------------------------


def describe(params: dict[str, Any]) -> str:
    """Parameters as k=v."""
    return ",".join(f"{k}={v}" for k, v in params.items()) or "-"


def table(title: str, results: dict[str, dict[str, Any]], tuned_on: dict[str, str]) -> None:
    """Print one half's table."""
    base = results["depth"]
    print(f"\n{title}")
    print(f"{'row':<15}{'parameters (tuned on)':<28}{'judged':>8}{'/depth':>8}{'step':>7}{'tau_b':>7}{'min':>7}"
          f"{'LOTO drop':>10}{'LOTO tau':>9}  goal")  # fmt: skip
    for name, r in results.items():
        where = f" ({tuned_on[name]})" if name in tuned_on else ""
        head = f"{name:<15}{describe(r['params']) + where:<28}"
        if r["judged"] is None:
            print(f"{head}{'not reached':>22}{'':>7}{r['tau']:>7.3f}")
            continue
        share = r["judged"] / base["judged"] if base["judged"] else float("nan")
        goal = share <= 0.6 and base.get("loto_tau") is not None and r["loto_tau"] >= base["loto_tau"]
        print(f"{head}{r['judged']:>8.0f}{share:>8.2f}{r['step']:>7g}{r['tau']:>7.3f}{r['tau_min']:>7.3f}"
              f"{r['loto_drop']:>10.4f}{r['loto_tau']:>9.3f}  {'yes' if goal else 'no'}")  # fmt: skip


def pick(candidates: list[dict[str, Any]], depth_loto: float | None) -> dict[str, Any]:
    """The tuning rule: fewest judgements among the settings with LOTO tau >= the depth pool's (else among all)."""
    reached = [c for c in candidates if c["judged"] is not None]
    if not reached:
        return max(candidates, key=lambda c: c["tau"])
    reusable = [c for c in reached if depth_loto is not None and c["loto_tau"] >= depth_loto]
    return min(reusable or reached, key=lambda c: c["judged"])


def main() -> None:
    """Tune each row on one half of the topics, report both halves, and print the best row's line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--qrels", type=Path, default=COVID / "qrels.txt")
    parser.add_argument("--runs", type=Path, action="append", help="a directory of runs (repeatable)")
    parser.add_argument("--groups", type=Path, help="TSV run -> team (columns run, team); default: each run a team")
    parser.add_argument("--seeds", type=int, default=10, help="seeds of the random rows (mean printed)")
    parser.add_argument("--target", type=float, default=0.9)
    parser.add_argument("--tune-topics", choices=("odd", "even", "all"), default="odd")
    parser.add_argument("--report-topics", choices=("odd", "even", "all"), default="even")
    parser.add_argument("--rows", help="comma-separated rows (default all): " + ",".join(r.name for r in ROWS))
    parser.add_argument("--check", action="store_true", help="check the estimators against references and stop")
    args = parser.parse_args()
    if args.runs is None:
        args.runs = [COVID / "runs", COVID / "runs-more"]
        args.groups = args.groups or COVID / "run_groups_all.tsv"
    started = time.perf_counter()
    campaign = Campaign(args.qrels, run_files(args.runs), read_groups(args.groups))
    if args.check:
        check(campaign)
        return
    wanted = set(args.rows.split(",")) | {"depth"} if args.rows else {r.name for r in ROWS}
    unknown = wanted - {r.name for r in ROWS}
    if unknown:
        sys.exit(f"unknown rows: {', '.join(sorted(unknown))}")
    rows = [r for r in ROWS if r.name in wanted]
    bench = Bench(campaign, args.seeds, args.target)
    tune, held = campaign.half(args.tune_topics), campaign.half(args.report_topics)
    print(
        f"{len(campaign.names)} runs, {len(bench.team_list)} teams, {len(campaign.topics)} topics, "
        f"{campaign.n_judged} judgements ({campaign.n_relevant} relevant); read in "
        f"{time.perf_counter() - started:.0f} s; tuned on the {args.tune_topics} topics ({len(tune)}), reported on "
        f"the {args.report_topics} ({len(held)}); random rows: {args.seeds} seeds; target tau_b {args.target}"
    )
    tuned: dict[str, dict[str, Any]] = {}
    reported: dict[str, dict[str, Any]] = {}
    tuned_on: dict[str, str] = {}
    for row in rows:
        clock = time.perf_counter()
        tried = [bench.evaluate(row, params, tune) for params in row.settings()]
        chosen = pick(tried, tuned["depth"].get("loto_tau") if "depth" in tuned else None)
        if len(tried) > 1:
            tuned_on[row.name] = args.tune_topics
            for r in tried:
                mark = " <- chosen" if r is chosen else ""
                judged = (
                    "not reached" if r["judged"] is None else f"judged {r['judged']:.0f} loto_tau {r['loto_tau']:.3f}"
                )
                print(f"   tuning {row.name} {describe(r['params'])} on {args.tune_topics}: {judged}{mark}")
        tuned[row.name] = chosen
        reported[row.name] = chosen if held == tune else bench.evaluate(row, chosen["params"], held)
        print(f"   ({row.name}: {time.perf_counter() - clock:.0f} s)", flush=True)
    table(f"== tuning half ({args.tune_topics} topics; in-sample for tuned rows)", tuned, tuned_on)
    table(f"== held-out half ({args.report_topics} topics; nothing chosen on them)", reported, tuned_on)
    fit = {n: r for n, r in tuned.items() if r["judged"] is not None and reported[n]["judged"] is not None}
    if not fit:
        print("best: none (no row stays at the target on both halves)")
        return
    name = min(fit, key=lambda n: fit[n]["judged"])
    r, base = reported[name], reported["depth"]
    ratio = r["judged"] / base["judged"] if base["judged"] else float("nan")
    print("(best: the row with the fewest judgements on the tuning half, its numbers on the held-out half)")
    print(
        f"best: {name} judged {r['judged']:.0f} ({ratio:.2f} x depth) tau_b {r['tau']:.3f} loto_tau "
        f"{r['loto_tau']:.3f} (depth: loto_tau {base['loto_tau']:.3f})"
    )


def check(campaign: Campaign) -> None:
    """The estimators against references: MAP and statAP at full judgement against APKernel (trec_eval AP),
    xinfAP on a random sample against `analyses.budget.xinf_ap_topic`."""
    from app.evaluation.analyses.budget import TopicSample, xinf_ap_topic

    rng = np.random.default_rng(0)
    worst = {"map": 0.0, "statap": 0.0, "xinfap": 0.0, "condensed": 0.0}
    for t, topic in enumerate(campaign.topics):
        n_item = topic.crank.shape[1]
        everything = np.ones((1, n_item), dtype=bool)
        worst["map"] = max(worst["map"], float(np.abs(map_ap(topic, everything)[0] - campaign.full[:, t]).max()))
        stat = stat_ap(topic, everything, np.ones((1, n_item)))[0]
        worst["statap"] = max(worst["statap"], float(np.abs(stat - campaign.full[:, t]).max()))
        uniform: np.ndarray = rng.random(size=(5, n_item))
        judged, pooled, stratum = uniform[:3] < 0.3, uniform[3] < 0.9, (uniform[4] < 0.5).astype(np.int64)
        depth = int(topic.ranks[topic.items >= 0].max()) if (topic.items >= 0).any() else 0
        ranked = np.full((len(campaign.names), depth), -1, dtype=np.int64)
        for r in range(len(campaign.names)):
            keep = topic.items[r] >= 0
            ranked[r, (topic.ranks[r][keep] - 1).astype(np.int64)] = topic.items[r][keep]
        ranked = np.where((ranked >= 0) & pooled[np.maximum(ranked, 0)], ranked, -1)
        sample = TopicSample(
            ranked=ranked, stratum=stratum, judged=np.ones(n_item, dtype=bool), relevant=topic.relevant,
            pooled_total=np.array([np.sum(pooled & (stratum == c)) for c in (0, 1)], dtype=np.float64),
        )  # fmt: skip
        reference = xinf_ap_topic(sample, judged & pooled, judged & pooled & topic.relevant)
        mine = xinf_ap(topic, judged, pooled, stratum)
        worst["xinfap"] = max(worst["xinfap"], float(np.abs(reference - mine).max()))
        cond = condensed_ap(topic, everything)[0]  # on the full qrels: plain AP of the condensed list
        direct = np.zeros(len(campaign.names))
        for r in range(len(campaign.names)):
            rel = topic.relevant[topic.items[r][topic.items[r] >= 0]]
            hits = np.cumsum(rel)
            total_r = topic.relevant.sum()
            direct[r] = np.sum(hits[rel] / (np.flatnonzero(rel) + 1)) / total_r if total_r else 0.0
        worst["condensed"] = max(worst["condensed"], float(np.abs(cond - direct).max()))
    for name, gap in worst.items():
        print(f"check {name}: largest |difference| from its reference {gap:.2e}")
    assert max(worst.values()) < 1e-9, worst


if __name__ == "__main__":
    main()
