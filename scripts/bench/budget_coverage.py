"""Coverage of the budget advisor's intervals: `trecpool analyse budget` (the registry's compute, the command's own
code path) run over many seeds on full judgements, each interval checked against the full-judgement AP.

The truth is the full judgement of the pool the command builds (the runs pooled to the deepest stratum's depth, every
pooled doc graded from QRELS, absent = not relevant); each seed draws a new stratified sample of it. Printed per share q
(the `{q}` in `--sampled`): the coverage of the nominal `--level` interval per (topic, run) and of each run's mean over
the topics, the mean interval width, and the same for the old interval (xinfAP +- z sqrt(jackknife), no floor, no bias
correction) for comparison; `z mean`, `z old`: the mean over seeds and runs of a run's mean's error in its standard
errors, for the interval's centre and for xinfAP (the bias left); with `--order`, also the interval without the
non-random widening. `--topics odd|even` keeps half the topics (tuning on odd, reporting on even); `--order ORDER
--judged F` judges only the first share F of each topic's sample in a judging order (`pools.orders`; the advisor then
treats the order as non-random and widens its intervals) instead of all of it.

    .venv/bin/python scripts/bench/budget_coverage.py [--qrels Q] [--runs DIR ...] [--sampled 11-100:{q}]
        [--shares 0.1,0.25,0.5] [--seeds 20] [--topics odd|even|all] [--level 0.95] [--order mm_ns --judged 0.5]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path
from statistics import NormalDist

import numpy as np

from app.evaluation.analyses import budget
from app.evaluation.analyses.lines import index_lines
from app.evaluation.formats.trec_files import read_qrels, read_run
from app.evaluation.grading.prepared_runs import prepare_runs
from app.evaluation.pools.orders import make_order
from app.evaluation.records import Qrels, RunTable
from app.services.analysis_registry import ANALYSES, AnalysisData

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "trec-covid-round1"


def keep_topics(run: RunTable, topics: set[str]) -> RunTable:
    """The run's rows on `topics` only."""
    rows = np.isin(np.asarray(run.topics, dtype=str), sorted(topics))
    return RunTable(run.tag, run.topics[rows], run.docs[rows], run.ranks[rows], run.scores[rows], run.lines[rows])


def truth_of(sample: Qrels, qrels: Qrels, prepared) -> tuple[list[str], np.ndarray]:  # type: ignore[no-untyped-def]
    """Full-judgement AP [run, topic] of the pool `sample` covers: every pooled line graded from `qrels`."""
    grade = dict(zip(zip(qrels.topics.tolist(), qrels.docs.tolist(), strict=True), qrels.grades.tolist(), strict=True))
    grades = np.array([max(grade.get(k, 0), 0) for k in zip(sample.topics.tolist(), sample.docs.tolist(), strict=True)])
    full = Qrels(sample.topics, sample.docs, grades, strata=sample.strata)
    topics, samples = budget.topic_samples(index_lines(prepared, full))
    values = [
        budget.xinf_ap_topic(s, np.ones(len(s.stratum), bool), s.relevant, prepared.max_results)[0] for s in samples
    ]
    return topics, np.array(values).T


def ordered_sample(sample: Qrels, prepared, order: str, judged: float, seed: int, depth: int) -> Qrels:  # type: ignore[no-untyped-def]
    """The sample with only the first share `judged` of each topic's drawn lines judged, in the judging `order` over
    the runs' top `depth` restricted to the drawn lines (as a live pool's queue)."""
    grades = sample.grades.copy()
    topic_of = {t: i for i, t in enumerate(prepared.topics)}
    docs = np.asarray(prepared.docs)
    for topic in np.unique(sample.topics).tolist():
        lines = np.flatnonzero((sample.topics == topic) & (sample.grades >= 0))
        drawn = set(sample.docs[lines].tolist())
        p = topic_of.get(topic)
        rows = [] if p is None else list(prepared.pairs[:, p, :depth])
        lists = [[d for d in docs[prepared.pair_doc[row[row >= 0]]].tolist() if d in drawn] for row in rows]
        oracle = {
            d: bool(g >= 1) for d, g in zip(sample.docs[lines].tolist(), sample.grades[lines].tolist(), strict=True)
        }
        policy = make_order(order, lists, seed=seed, topic=topic, pool=sorted(drawn))
        keep: list[str] = []
        while len(keep) < int(round(judged * len(lines))):
            doc = policy.next()
            if doc is None:
                break
            policy.record(doc, oracle[doc])
            keep.append(doc)
        grades[lines[~np.isin(sample.docs[lines], keep)]] = -1
    return replace(sample, grades=grades)


def main() -> None:
    """Print the coverage table per share."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--qrels", type=Path, default=DATA / "qrels.txt")
    parser.add_argument("--runs", type=Path, action="append", help="a folder of runs (repeat: several; default runs/)")
    parser.add_argument("--sampled", default="11-100:{q}", help="strata, {q} the share (commas between several)")
    parser.add_argument("--shares", default="0.1,0.25,0.5")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--topics", choices=("odd", "even", "all"), default="all")
    parser.add_argument("--level", type=float, default=0.95)
    parser.add_argument("--replicates", type=int, default=20, help="tau replicates (the intervals do not use them)")
    parser.add_argument("--order", default=None, help="judge the sample in this judging order (pools.orders)")
    parser.add_argument("--judged", type=float, default=1.0, help="with --order: the share of the sample judged")
    args = parser.parse_args()
    qrels = read_qrels(args.qrels)
    folders = args.runs or [DATA / "runs"]
    runs = [read_run(p) for folder in folders for p in sorted(folder.iterdir())]
    topics = {t for t in np.unique(qrels.topics.astype(str)).tolist()}
    if args.topics != "all":
        topics = {t for t in topics if int(t) % 2 == (1 if args.topics == "odd" else 0)}
    runs = [keep_topics(r, topics) for r in runs]
    prepared = prepare_runs(runs)
    record = ANALYSES["budget"]
    data = AnalysisData(runs=list(prepared.names), qrels=qrels, prepared=prepared)
    where = ", ".join(map(str, folders))
    print(f"{args.qrels.name}, {len(runs)} runs from {where}, {args.topics} topics ({len(topics)}), "
          f"--sampled {args.sampled}, level {args.level}, seeds {args.first_seed}..{args.first_seed + args.seeds - 1}"
          + (f", order {args.order} judging {args.judged:g} of each topic's sample" if args.order else ""))  # fmt: skip
    print(f"{'q':>5} {'judged':>7} {'cover (t,r)':>11} {'cover mean':>10} {'width (t,r)':>11} {'width mean':>10} "
          f"{'old (t,r)':>9} {'old mean':>8} {'z mean':>6} {'z old':>6}"
          + (" unwidened (t,r) mean" if args.order else "")
          + f" {'seconds':>7}")  # fmt: skip
    z = NormalDist().inv_cdf(0.5 + args.level / 2)
    for q in (float(x) for x in args.shares.split(",")):
        spec = [part.replace("{q}", f"{q:g}") for part in args.sampled.split(",")]
        started = time.perf_counter()
        cover, cover_mean, width, width_mean, old, old_mean, judged = [], [], [], [], [], [], []
        plain, plain_mean = [], []  # a non-random order's interval without the widening
        z_new, z_old = [], []  # each run's mean's error in its standard errors: the new centre's, xinfAP's
        truth = None
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            params = record.params.model_validate(
                {"sampled": spec, "seed": seed, "level": args.level, "replicates": args.replicates}
            )
            if args.order:
                strata = budget.sampled_strata(spec)
                drawn = ordered_sample(budget.stratified_sample(prepared, qrels, strata, seed), prepared, args.order,
                                       args.judged, seed, strata[-1].last)  # fmt: skip
                names, samples = budget.topic_samples(index_lines(prepared, drawn))
                variance = budget.variance_of_samples(names, list(prepared.names), samples, args.replicates, seed,
                                                      prepared.max_results, random=False)  # fmt: skip
                result = budget.SampledBudget(strata, drawn, variance, None, {"topics": []}, args.level, seed)
                out = result.to_dict()
            else:
                computed = record.compute(data, params, lambda _: None)
                result, out = computed.result, computed.data
            if truth is None:
                names, truth = truth_of(result.qrels, qrels, prepared)
            judged.append(out["judged"])
            low = np.array([[t["ci_low"] for t in r["per_topic"]] for r in out["runs"]])
            high = np.array([[t["ci_high"] for t in r["per_topic"]] for r in out["runs"]])
            assert [t["topic"] for t in out["runs"][0]["per_topic"]] == names
            cover.append((truth >= low - 1e-12) & (truth <= high + 1e-12))
            width.append(high - low)
            mean_truth = truth.mean(axis=1)
            mean_low = np.array([r["ci_low"] for r in out["runs"]])
            mean_high = np.array([r["ci_high"] for r in out["runs"]])
            cover_mean.append((mean_truth >= mean_low - 1e-12) & (mean_truth <= mean_high + 1e-12))
            width_mean.append(mean_high - mean_low)
            v = result.variance
            sd = np.sqrt(np.maximum(v.variance - v.floor_variance, 0.0))
            old.append(np.abs(v.point - truth) <= z * sd + 1e-12)
            old_sd = np.sqrt(np.maximum(v.variance - v.floor_variance, 0.0).sum(axis=1)) / truth.shape[1]
            old_mean.append(np.abs(v.point.mean(axis=1) - mean_truth) <= z * old_sd + 1e-12)
            z_new.append((v.centre().mean(axis=1) - mean_truth) / np.sqrt(v.mean_variance))
            z_old.append((v.point.mean(axis=1) - mean_truth) / old_sd)
            if args.order:
                widen = budget.NON_RANDOM_WIDEN
                low, high = budget._logit_interval(v.centre(), np.sqrt(v.estimate_variance / widen), z)
                plain.append((truth >= low - 1e-12) & (truth <= high + 1e-12))
                centre = v.centre().mean(axis=1)
                low, high = budget._logit_interval(centre, np.sqrt(v.mean_variance / widen), z)
                plain_mean.append((mean_truth >= low - 1e-12) & (mean_truth <= high + 1e-12))
        print(f"{q:5g} {np.mean(judged):7.0f} {np.mean(cover):11.3f} {np.mean(cover_mean):10.3f} "
              f"{np.mean(width):11.4f} {np.mean(width_mean):10.4f} {np.mean(old):9.3f} {np.mean(old_mean):8.3f} "
              f"{np.nanmean(z_new):+6.2f} {np.nanmean(z_old):+6.2f} "
              + (f"{np.mean(plain):15.3f} {np.mean(plain_mean):5.3f} " if args.order else "")
              + f"{time.perf_counter() - started:7.0f}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
