"""Check the budget advisor by simulation: xinfAP's sampling variance, the expected tau_b and the tau advice, each
predicted from ONE stratified sample, against many samples drawn from a known truth.

Truth (TREC-COVID round 1, 30 runs, 30 topics): every doc some run ranks in its top 100 is pooled, relevant when the
round 1 qrels grade it >= 1 (unjudged = not relevant); stratum 1 = best rank 1-10, stratum 2 = 11-100 (`--three`:
11-30 and 31-100). The pool builder's sample judges all of stratum 1 and a share q of the rest (simple random
sampling without replacement within each stratum, SPEC section 5). Printed per q:

- variance: per topic, the variance of xinfAP over `--truth` fresh samples (the true sampling variance) against the
  estimator computed from one sample, averaged over `--samples` samples; the ratio estimated / true (summed over
  runs) per topic, its mean, min and max over topics, for the jackknife (`xinfap_variance`) and the old
  pseudo-population bootstrap (`bootstrap_replicates` here);
- tau: tau_b between the ranking by mean xinfAP of one sample and the truth's MAP ranking, against the advisor's
  `expected_tau` from the same sample: mean of each, mean and max |error| over `--samples` samples;
- at a share: tau_b predicted from the sample for a further 30 % of every stratum's unjudged docs judged, against
  the tau_b reached when they are;
- advice: for target tau_b (0.9, 0.95), the share of every stratum's unjudged docs the advisor asks to judge next,
  then that share judged (more docs drawn at random from each stratum) and the tau_b reached, averaged.

    .venv/bin/python scripts/bench/budget_check.py [--samples 30] [--truth 1000] [--rates 0.1,0.25,0.5]
        [--three] [--synthetic] [--skip-tau]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from app.evaluation.analyses import budget
from app.evaluation.analyses.budget import TopicSample
from app.evaluation.analyses.kendall import tau_b
from app.evaluation.analyses.lines import index_lines
from app.evaluation.formats.trec_files import read_qrels, read_run
from app.evaluation.grading.prepared_runs import prepare_runs
from app.evaluation.records import Qrels

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "trec-covid-round1"
DEPTH = 100


def covid_truth(cuts: tuple[int, ...]) -> tuple[list[str], list[str], list[TopicSample], list[np.ndarray]]:
    """The TREC-COVID round 1 pool to depth 100, fully judged, strata by best rank (upper bounds `cuts`)."""
    qrels = read_qrels(DATA / "qrels.txt")
    prepared = prepare_runs([read_run(p) for p in sorted((DATA / "runs").iterdir())])
    grade = {(str(t), str(d)): int(g) for t, d, g in zip(qrels.topics, qrels.docs, qrels.grades, strict=True)}
    rows: list[tuple[str, str, int, int]] = []
    for p, topic in enumerate(prepared.topics):
        block = prepared.pairs[:, p, :DEPTH]
        best: dict[int, int] = {}
        for rank in range(block.shape[1]):
            for pair in block[:, rank]:
                if pair >= 0:
                    best.setdefault(int(pair), rank + 1)
        for pair, rank in best.items():
            doc = prepared.docs[prepared.pair_doc[pair]]
            rows.append((topic, doc, grade.get((topic, doc), 0), int(np.searchsorted(cuts, rank)) + 1))
    topics, docs, grades, strata = (np.array(c) for c in zip(*rows, strict=True))
    full = Qrels(topics, docs, grades.astype(np.int64), strata=strata.astype(np.int64))
    names, samples = budget.topic_samples(index_lines(prepared, full))
    samples = [TopicSample(s.ranked[:, :DEPTH], s.stratum, s.judged, s.relevant, s.pooled_total) for s in samples]
    return names, list(prepared.names), samples, [s.relevant.copy() for s in samples]


def synthetic_truth(seed: int = 0) -> tuple[list[str], list[str], list[TopicSample], list[np.ndarray]]:
    """A hard case: twenty synthetic topics, 8 runs of close quality (some near ties in MAP)."""
    rng = np.random.default_rng(seed)
    samples, truths = [], []
    for _ in range(20):
        n_item, depth = 300, 100
        quality = rng.uniform(0.3, 1.0, 8)
        ranked = np.array([rng.permutation(n_item)[:depth] for _ in quality])
        best = np.full(n_item, 10**6)
        for row in ranked:
            np.minimum.at(best, row, np.arange(1, depth + 1))
        truth = rng.random(n_item) < np.clip(0.6 - best / 150, 0.03, 1)
        for r, q in enumerate(quality):  # better runs move their relevant docs up
            key = np.arange(depth) - q * 60 * truth[ranked[r]] + rng.normal(0, 10, depth)
            ranked[r] = ranked[r][np.argsort(key)]
        best = np.full(n_item, 10**6)
        for row in ranked:
            np.minimum.at(best, row, np.arange(1, depth + 1))
        stratum = (best > 10).astype(np.int64)
        pooled = np.bincount(stratum, minlength=2).astype(float)
        samples.append(TopicSample(ranked, stratum, np.ones(n_item, bool), truth.copy(), pooled))
        truths.append(truth)
    return [str(t) for t in range(20)], [f"r{r}" for r in range(8)], samples, truths


def design(sample: TopicSample, truth: np.ndarray, rates: list[float]) -> TopicSample:
    """The sample shape the pool builder draws: n_c = max(2, round(q_c N_c)) judged in stratum c."""
    judged = np.zeros(len(truth), dtype=bool)
    for c, q in enumerate(rates):
        members = np.flatnonzero(sample.stratum == c)
        judged[members[: min(len(members), max(2, round(q * len(members))))]] = True
    return TopicSample(sample.ranked, sample.stratum, judged, judged & truth, sample.pooled_total)


def draw(rng: np.random.Generator, shape: TopicSample, truth: np.ndarray) -> TopicSample:
    """One stratified sample of the truth with `shape`'s n_c."""
    judged = budget._resample(rng, shape, truth, 1)[0]
    return TopicSample(shape.ranked, shape.stratum, judged, judged & truth, shape.pooled_total)


def extend(rng: np.random.Generator, sample: TopicSample, truth: np.ndarray, more: np.ndarray) -> TopicSample:
    """The sample with `more[c]` further unjudged docs of each stratum judged, at random."""
    judged = sample.judged.copy()
    for c, k in enumerate(more.astype(int)):
        left = np.flatnonzero((sample.stratum == c) & ~judged)
        judged[rng.choice(left, size=min(k, len(left)), replace=False)] = True
    return TopicSample(sample.ranked, sample.stratum, judged, judged & truth, sample.pooled_total)


def counts(sample: TopicSample) -> np.ndarray:
    """Judged docs per stratum."""
    return np.bincount(sample.stratum[sample.judged], minlength=len(sample.pooled_total)).astype(float)


def mean_xinfap(samples: list[TopicSample]) -> np.ndarray:
    """Mean xinfAP over topics per run."""
    return np.mean([budget.xinf_ap_topic(s, s.judged, s.relevant)[0] for s in samples], axis=0)


def bootstrap_replicates(
    sample: TopicSample, replicates: int = 200, seed: int = 0, max_results: int = 1000
) -> np.ndarray:
    """The old estimator, for comparison: xinfAP [B, run] over pseudo-population replicates (unjudged docs imputed
    at their stratum's share, then the stratified sample drawn afresh)."""
    rng = np.random.default_rng(seed)
    n_item = len(sample.stratum)
    truth = np.zeros((replicates, n_item), dtype=bool)
    truth[:, sample.relevant] = True
    for c in range(len(sample.pooled_total)):
        members = np.flatnonzero(sample.stratum == c)
        seen = sample.judged[members]
        unseen = members[~seen]
        if len(unseen) == 0:
            continue
        share = float(sample.relevant[members[seen]].mean()) if seen.any() else 0.0
        truth[:, unseen] = rng.random((replicates, len(unseen))) < share
    judged = budget._resample(rng, sample, truth[0], replicates)
    return budget.xinf_ap_topic(sample, judged, judged & truth, max_results)


def check_variance(rng, shapes, truths, n_samples: int, n_truth: int, topics: range) -> dict[str, np.ndarray]:
    """Per topic: estimated / true variance, summed over runs, for the jackknife and the old bootstrap."""
    ratios: dict[str, list[float]] = {"jackknife": [], "bootstrap": []}
    for t in topics:
        true = budget.simulate_samples(shapes[t], truths[t], n_truth, seed=t).var(axis=0, ddof=1)
        if true.sum() <= 1e-12:
            continue
        jack, boot = [], []
        for i in range(n_samples):
            one = draw(rng, shapes[t], truths[t])
            jack.append(np.sum(budget.jackknife_components(one)[0] ** 2, axis=0))
            boot.append(bootstrap_replicates(one, 200, seed=i).var(axis=0, ddof=1))
        ratios["jackknife"].append(np.mean(jack, axis=0).sum() / true.sum())
        ratios["bootstrap"].append(np.mean(boot, axis=0).sum() / true.sum())
    return {k: np.array(v) for k, v in ratios.items()}


def check_tau(rng, topics, runs, shapes, truths, n_samples: int, targets: tuple[float, ...]) -> dict:
    """Predicted vs simulated tau_b, and the tau reached when the advised share is judged."""
    reference = mean_xinfap([TopicSample(s.ranked, s.stratum, np.ones(len(t), bool), t, s.pooled_total)
                             for s, t in zip(shapes, truths, strict=True)])  # fmt: skip
    actual, predicted, at_share = [], [], []
    advice: dict[float, list[tuple[float, float, float, float]]] = {t: [] for t in targets}
    for i in range(n_samples):
        samples = [draw(rng, s, t) for s, t in zip(shapes, truths, strict=True)]
        result = budget.variance_of_samples(topics, runs, samples, replicates=200, seed=i)
        actual.append(tau_b(result.point.mean(axis=1), reference))
        predicted.append(result.expected_tau())
        pooled, judged = np.array([s.pooled_total for s in samples]), np.array([counts(s) for s in samples])
        more = np.ceil(0.3 * (pooled - judged))
        bigger = [extend(rng, s, t, m) for s, t, m in zip(samples, truths, more, strict=True)]
        at_share.append((result.expected_tau(budget._stratum_scale(pooled, judged, more)),
                         tau_b(mean_xinfap(bigger), reference)))  # fmt: skip
        for target in targets:
            tip = budget.tau_advice(result, samples, target)
            if tip["share"] is None:
                continue
            reached = []
            for _ in range(4):
                more = [np.ceil(tip["share"] * (s.pooled_total - counts(s))) for s in samples]
                bigger = [extend(rng, s, t, m) for s, t, m in zip(samples, truths, more, strict=True)]
                reached.append(tau_b(mean_xinfap(bigger), reference))
            advice[target].append((tip["share"], tip["predicted_tau"], float(np.mean(reached)), actual[-1]))
    return {"actual": np.array(actual), "predicted": np.array(predicted), "advice": advice,
            "at_share": np.array(at_share)}  # fmt: skip


def main() -> None:
    """Print predicted against simulated, per sampling rate."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--truth", type=int, default=1000)
    parser.add_argument("--rates", default="0.1,0.25,0.5")
    parser.add_argument("--three", action="store_true", help="three strata: 1-10, 11-30, 31-100")
    parser.add_argument("--synthetic", action="store_true", help="the synthetic pool instead of TREC-COVID")
    parser.add_argument("--skip-tau", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.synthetic:
        topics, runs, full, truths = synthetic_truth(args.seed)
    else:
        topics, runs, full, truths = covid_truth((10, 30, DEPTH) if args.three else (10, DEPTH))
    n_strata = len(full[0].pooled_total)
    print(f"{'synthetic' if args.synthetic else 'TREC-COVID round 1'}: {len(topics)} topics, {len(runs)} runs, "
          f"{n_strata} strata, pooled {int(sum(s.pooled_total.sum() for s in full))}, "
          f"relevant {int(sum(t.sum() for t in truths))}")  # fmt: skip
    for q in (float(x) for x in args.rates.split(",")):
        rng = np.random.default_rng(args.seed)
        rates = [1.0] + [q] * (n_strata - 1)
        shapes = [design(s, t, rates) for s, t in zip(full, truths, strict=True)]
        judged = sum(int(s.judged.sum()) for s in shapes)
        started = time.perf_counter()
        ratios = check_variance(rng, shapes, truths, args.samples, args.truth, range(0, len(topics), 2))
        print(f"\nq = {q}: {judged} judgements per sample")
        for name, r in ratios.items():
            print(f"  variance {name:9s} est/true over {len(r)} topics: mean {r.mean():.3f}  "
                  f"median {np.median(r):.3f}  min {r.min():.3f}  max {r.max():.3f}")  # fmt: skip
        if args.skip_tau:
            continue
        tau = check_tau(rng, topics, runs, shapes, truths, args.samples, (0.9, 0.95))
        err = tau["predicted"] - tau["actual"]
        print(f"  tau_b(sample, truth): simulated mean {tau['actual'].mean():.3f} (sd {tau['actual'].std():.3f}), "
              f"predicted mean {tau['predicted'].mean():.3f}; error mean {err.mean():+.3f}, "
              f"(se {err.std(ddof=1) / np.sqrt(len(err)):.3f}), mean |error| {np.abs(err).mean():.3f}, "
              f"max |error| {np.abs(err).max():.3f}")  # fmt: skip
        promised, reached = tau["at_share"].T
        print(f"  a further 30 % of every stratum's unjudged docs: predicted {promised.mean():.3f}, "
              f"reached {reached.mean():.3f} (difference {np.mean(promised - reached):+.3f}, "
              f"se {np.std(promised - reached, ddof=1) / np.sqrt(len(reached)):.3f})")  # fmt: skip
        for target, rows in tau["advice"].items():
            if not rows:
                print(f"  advice tau >= {target}: unreachable in all samples")
                continue
            share, pred, reached, before = np.array(rows).T
            print(f"  advice tau >= {target}: share mean {share.mean():.2f} ({len(rows)} samples); predicted "
                  f"{pred.mean():.3f}, reached {reached.mean():.3f} (before {before.mean():.3f}); "
                  f"share of samples reaching the target {np.mean(reached >= target):.2f}")  # fmt: skip
        print(f"  ({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
