"""Benchmark: pool-depth (100 depths) and leave-one-group-out (20 groups) against a naive loop; topic-subset
stability in the AxIoU paper's setting (Fig. 6) against a per-trial loop.

Seeded synthetic campaign: 100 runs x 50 topics x 1000 docs, 20 groups of 5 runs (2 pooled per group),
qrels = union of the pooled runs' top 100 per topic plus some judged docs nobody retrieved.

ours:  `pool_depth` / `leave_out` from RunTables (runs prepared once inside, AP for every qrels subset from the
       relevant retrieved entries).
naive: per depth / group, what a script around a plain evaluator would do: write the filtered qrels as text,
       re-parse it, re-prepare (sort and cut) all runs and evaluate them. Only the first few iterations are timed
       and the total is extrapolated (said so in the output). The naive scores of those iterations are checked
       against ours.

stability: synthetic per-topic scores of Charades-STA's size (3,720 topics, the paper's 6 systems, 4 measures:
two continuous like AxIoU, two 0/1 like R@K,theta), 5,000 trials per size, sizes 10, 20, 50, 100, 200, ..., 1800
(the x axis of the paper's Fig. 6 as we read it: up to half the topics, so that split halves exist). Timed whole.
naive: per trial and size, a permutation, two slices, their means and scipy's kendalltau, as a script would; a few
trials per size timed and extrapolated; on single trials its taus are checked equal to ours on the same subsets.

    .venv/bin/python scripts/bench/analyses.py [--naive-iterations 3] [--only pool|stability]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

from app.evaluation.analyses import index_lines, leave_out, line_min_rank, pool_depth, stability
from app.evaluation.analyses.leave_out import unique_owner
from app.evaluation.analyses.stability import trial_orders
from app.evaluation.formats.trec_files import parse_qrels
from app.evaluation.grading.prepared_runs import prepare_runs
from app.evaluation.measures.evaluate import evaluate, evaluate_prepared
from app.evaluation.records import Qrels, RunTable

N_RUN, N_TOPIC, DEPTH, N_DOC, N_GROUP, POOL_K = 100, 50, 1000, 20000, 20, 100


def campaign(seed: int = 0) -> tuple[list[RunTable], Qrels, list[str], list[str]]:
    rng = np.random.default_rng(seed)
    doc_names = np.array([f"D{i:05d}" for i in range(N_DOC)])
    topic_names = np.array([f"{t + 1}" for t in range(N_TOPIC)])
    relevant = rng.random((N_TOPIC, N_DOC)) < 0.02
    popularity = rng.standard_normal((N_TOPIC, N_DOC))  # shared signal: runs overlap
    skill = np.linspace(0.5, 3.0, N_RUN)
    rng.shuffle(skill)
    runs, top_docs = [], []
    for r in range(N_RUN):
        noisy = skill[r] * relevant + popularity + 1.2 * rng.standard_normal((N_TOPIC, N_DOC))
        top = np.argpartition(-noisy, DEPTH, axis=1)[:, :DEPTH]
        scores = np.round(np.take_along_axis(noisy, top, axis=1), 3)  # rounding makes ties
        top_docs.append(top[np.arange(N_TOPIC)[:, None], np.argsort(-scores, axis=1)])
        n = N_TOPIC * DEPTH
        runs.append(
            RunTable(
                tag=f"run{r:03d}",
                topics=np.repeat(topic_names, DEPTH),
                docs=doc_names[top.reshape(-1)],
                ranks=np.tile(np.arange(1, DEPTH + 1), N_TOPIC),
                scores=scores.reshape(-1),
                lines=np.arange(1, n + 1),
            )
        )
    groups = [f"g{r % N_GROUP:02d}" for r in range(N_RUN)]
    pooled = [runs[r].tag for r in range(N_RUN) if r // N_GROUP < 2]  # 2 runs per group
    judged = np.zeros((N_TOPIC, N_DOC), dtype=bool)
    for r in range(N_RUN):
        if runs[r].tag in pooled:
            judged[np.arange(N_TOPIC)[:, None], top_docs[r][:, :POOL_K]] = True
    judged |= rng.random((N_TOPIC, N_DOC)) < 0.002  # judged from outside the pool
    t, d = np.nonzero(judged)
    qrels = Qrels(
        topics=topic_names[t], docs=doc_names[d], grades=relevant[t, d].astype(np.int64) * rng.integers(1, 3, len(t))
    )
    return runs, qrels, groups, pooled


def qrels_text(qrels: Qrels, keep: np.ndarray) -> str:
    return "".join(
        f"{t} 0 {d} {g}\n"
        for t, d, g in zip(
            qrels.topics[keep].tolist(), qrels.docs[keep].tolist(), qrels.grades[keep].tolist(), strict=True
        )
    )


def naive_scores(runs: list[RunTable], qrels: Qrels, keep: np.ndarray, n_topic: int) -> np.ndarray:
    reduced = parse_qrels(qrels_text(qrels, keep))
    results = evaluate(reduced, prepare_runs(runs), ["AP"])
    return results.values[:, 0, :].sum(axis=1) / n_topic


STAB_TOPICS, STAB_SYSTEMS, STAB_TRIALS = 3720, 6, 5000
STAB_SIZES = [10, 20, 50, *range(100, 1900, 100)]
STAB_MEASURES = ["AxIoU@1", "AxIoU@5", "R@1,0.5", "R@5,0.7"]


def stability_scores(seed: int = 0) -> np.ndarray:
    """[system, measure, topic] synthetic scores: close systems, per-topic difficulty, two 0/1 measures."""
    rng = np.random.default_rng(seed)
    skill = np.linspace(0.30, 0.50, STAB_SYSTEMS)[:, None]
    difficulty = rng.normal(0, 0.15, STAB_TOPICS)[None, :]
    axiou1 = np.clip(skill + difficulty + rng.normal(0, 0.2, (STAB_SYSTEMS, STAB_TOPICS)), 0, 1)
    axiou5 = np.clip(axiou1 + rng.uniform(0, 0.2, axiou1.shape), 0, 1)
    r1 = (axiou1 > 0.5).astype(float)
    r5 = (axiou5 > 0.7).astype(float)
    return np.stack([axiou1, axiou5, r1, r5], axis=1)


def naive_stability_trial(values: np.ndarray, first: np.ndarray, second: np.ndarray | None) -> list[float]:
    """One trial the plain way: means over the chosen topics and scipy's kendalltau, per measure."""
    out = []
    for m in range(values.shape[1]):
        full = values[:, m, :].mean(axis=1)
        a = values[:, m, first].mean(axis=1)
        out.append(stats.kendalltau(a, full).statistic)
        if second is not None:
            out.append(stats.kendalltau(a, values[:, m, second].mean(axis=1)).statistic)
    return out


def bench_stability(naive_iterations: int) -> None:
    values = stability_scores()
    print(
        f"stability: {STAB_SYSTEMS} systems x {len(STAB_MEASURES)} measures x {STAB_TOPICS} topics, "
        f"{STAB_TRIALS} trials per size, {len(STAB_SIZES)} sizes ({STAB_SIZES[0]}..{STAB_SIZES[-1]})"
    )
    t0 = time.perf_counter()
    result = stability(values, STAB_MEASURES, trials=STAB_TRIALS, seed=0, sizes=STAB_SIZES)
    ours = time.perf_counter() - t0
    # naive: a few trials per size timed, extrapolated to every trial
    k = max(1, naive_iterations)
    t0 = time.perf_counter()
    for s in STAB_SIZES:
        rng = np.random.default_rng(s)
        split = 2 * s <= STAB_TOPICS
        for _ in range(k):
            order = rng.permutation(STAB_TOPICS)
            naive_stability_trial(values, order[:s], order[s : 2 * s] if split else None)
    naive_time = (time.perf_counter() - t0) / (k * len(STAB_SIZES)) * STAB_TRIALS * len(STAB_SIZES)
    # equality of the two ways on one trial (same seed, same order of the topics), at the smallest and largest size
    one = stability(values, STAB_MEASURES, trials=1, seed=7, sizes=[STAB_SIZES[0], STAB_SIZES[-1]])
    order = trial_orders(np.random.default_rng(7), 1, STAB_TOPICS)[0]
    for j, s in enumerate((STAB_SIZES[0], STAB_SIZES[-1])):
        naive = naive_stability_trial(values, order[:s], order[s : 2 * s])
        ours_taus = [v for m in range(len(STAB_MEASURES)) for v in (one.full_mean[m, j], one.split_mean[m, j])]
        assert np.allclose(ours_taus, naive, atol=1e-12), (s, ours_taus, naive)
    print(
        f"  ours {ours:.1f} s; naive per-trial loop {naive_time / 60:.0f} min (extrapolated from {k} trials per "
        f"size, {naive_time / ours:.0f}x); taus checked equal on single trials"
    )
    for m, name in enumerate(STAB_MEASURES):
        means = " ".join(f"{s}:{result.split_mean[m, j]:.3f}" for j, s in enumerate(result.split_sizes.tolist()[::4]))
        print(f"  {name:<9} split-halves mean tau_b by size  {means}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--naive-iterations", type=int, default=3)
    parser.add_argument("--only", choices=["pool", "stability"])
    args = parser.parse_args()
    if args.only != "pool":
        bench_stability(args.naive_iterations)
        if args.only == "stability":
            return
        print()
    started = time.perf_counter()
    runs, qrels, groups, pooled = campaign()
    print(
        f"campaign: {N_RUN} runs x {N_TOPIC} topics x {DEPTH} docs, {len(qrels)} qrels lines "
        f"({int((qrels.grades > 0).sum())} relevant), {N_GROUP} groups, {len(pooled)} pooled runs "
        f"(generated in {time.perf_counter() - started:.1f} s)"
    )

    t0 = time.perf_counter()
    prepared = prepare_runs(runs)
    t1 = time.perf_counter()
    evaluate_prepared(prepared, qrels, ["AP"])
    t2 = time.perf_counter()
    one_eval = t2 - t0
    print(f"one evaluation of all runs (AP): prepare {t1 - t0:.2f} s + evaluate {t2 - t1:.2f} s = {one_eval:.2f} s")

    t0 = time.perf_counter()
    depth_result = pool_depth(qrels, runs, pooled=pooled, max_depth=100)
    ours_depth = time.perf_counter() - t0
    t0 = time.perf_counter()
    loo = leave_out(qrels, runs, units=groups, by="group", pooled=pooled, depth=POOL_K)
    ours_loo = time.perf_counter() - t0

    t0 = time.perf_counter()
    pool_depth(qrels, prepared, pooled=pooled, max_depth=100)
    depth_prepared = time.perf_counter() - t0
    t0 = time.perf_counter()
    leave_out(qrels, prepared, units=groups, by="group", pooled=pooled, depth=POOL_K)
    loo_prepared = time.perf_counter() - t0

    # naive loops, a few iterations timed, the rest extrapolated
    index = index_lines(prepared, qrels)
    mask = np.array([r.tag in pooled for r in runs])
    best = line_min_rank(index, mask)
    best = np.where(best == np.iinfo(np.int64).max, 0, best)  # same outside="keep" rule as ours
    k = max(1, args.naive_iterations)
    t0 = time.perf_counter()
    for i, d in enumerate(range(1, k + 1)):
        naive = naive_scores(runs, qrels, best <= d, len(index.topics))
        assert np.allclose(naive, depth_result.scores[i], atol=1e-12), d
    naive_depth = (time.perf_counter() - t0) / k * len(depth_result.depths)

    codes = np.array([int(g[1:]) for g in groups])
    owner = unique_owner(index, codes, mask, POOL_K)
    t0 = time.perf_counter()
    for u in range(k):
        naive = naive_scores(runs, qrels, owner != u, len(index.topics))
        assert np.allclose(naive, loo.unit_scores[loo.units.index(f"g{u:02d}")], atol=1e-12), u
    naive_loo = (time.perf_counter() - t0) / k * len(loo.units)

    print()
    print(f"{'analysis':<32}{'ours':>10}{'naive':>12}{'ratio':>9}{'ours / one eval':>18}")
    rows = [
        (f"pool depth, {len(depth_result.depths)} depths", ours_depth, naive_depth),
        (f"leave one group out, {len(loo.units)} groups", ours_loo, naive_loo),
    ]
    for name, ours, naive in rows:
        print(f"{name:<32}{ours:>9.2f}s{naive:>11.1f}s{naive / ours:>8.0f}x{ours / one_eval:>17.1f}x")
    print(
        f"on runs already prepared: pool depth {depth_prepared:.2f} s, leave one group out {loo_prepared:.2f} s "
        f"(evaluate alone: {t2 - t1:.2f} s)"
    )
    print(f"\nnaive totals extrapolated from {k} timed iterations each (parse filtered qrels text, prepare all runs,")
    print("evaluate); their scores were checked equal to ours. Ours includes preparing the runs (once).")
    print(
        f"tau_b at depth 1 / 10 / 100: {depth_result.tau_b[0]:.4f} / {depth_result.tau_b[9]:.4f} / "
        f"{depth_result.tau_b[99]:.4f}; leave-one-group-out tau_b {loo.tau_b:.4f}, max drop {loo.max_drop:.4f}"
    )


if __name__ == "__main__":
    main()
