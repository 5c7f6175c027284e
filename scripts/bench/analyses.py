"""Benchmark: pool-depth (100 depths) and leave-one-group-out (20 groups) against a naive loop.

Seeded synthetic campaign: 100 runs x 50 topics x 1000 docs, 20 groups of 5 runs (2 pooled per group),
qrels = union of the pooled runs' top 100 per topic plus some judged docs nobody retrieved.

ours:  `pool_depth` / `leave_out` from RunTables (runs prepared once inside, AP for every qrels subset from the
       relevant retrieved entries).
naive: per depth / group, what a script around a plain evaluator would do: write the filtered qrels as text,
       re-parse it, re-prepare (sort and cut) all runs and evaluate them. Only the first few iterations are timed
       and the total is extrapolated (said so in the output). The naive scores of those iterations are checked
       against ours.

    .venv/bin/python scripts/bench/analyses.py [--naive-iterations 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from app.evaluation.analyses import index_lines, leave_out, line_min_rank, pool_depth
from app.evaluation.analyses.leave_out import unique_owner
from app.evaluation.evaluator import evaluate, evaluate_prepared
from app.evaluation.formats.trec_files import parse_qrels
from app.evaluation.prepared_runs import prepare_runs
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--naive-iterations", type=int, default=3)
    args = parser.parse_args()
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
