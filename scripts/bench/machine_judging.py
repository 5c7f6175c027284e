"""Model-assisted judging on real qrels: a simulated model labels every pooled item, people verify a random share of
them, and `statistics.prediction_powered` estimates each run's score; how well does that rank the runs?

The qrels' items are the pool, so the depth pool's human judgement count is the number of qrels entries. Per error
rate of the simulated judge (`app.judges.simulated`, noise 0.5) and per human share, over `--seeds` verification draws:
the human judgements needed (and their multiple of the depth pool's), Kendall's tau_b of the run ranking by the
estimated MAP, P@10 and nDCG@10 against the full human qrels' ranking, the empirical coverage of the nominal 95 %
intervals of each run's mean (of the full-human mean on these topics), and, for comparison, tau_b of the model-only
qrels (the model's grades as if they were people's: the bias the estimator removes). `--stratify` also runs the
sampling stratified by the model's confidence. `--tune-topics even --report-topics odd` picks the stratified design's
floor on one half of the topics and reports on the other. The last line: the smallest share whose MAP tau_b reaches
0.9 at every error rate in 0.2..0.3 (uniform sampling, or stratified when asked and better).

A judge that errs at random barely reorders the runs; real ones favour systems of their own model family. `--bias B
--favour-group G --favour-depth K` makes the simulated judge share a family with the runs of team G (the `team`
column of `--groups`, run_groups_all.tsv): a non-relevant item those runs rank in their top K is called relevant,
confidently, with the extra probability B (`app.judges.simulated`; `--overrate O` adds a general rate). Per error
rate the bench prints the favoured runs' mean rank shift (places climbed, true rank minus rank by the scores) under
the model-only qrels and under the prediction-powered estimates, each with a 95 % percentile interval from 1000
bootstrap resamples of the topics (both rankings recomputed on each resample). The rule: a ranking is flagged BIASED
when that interval excludes 0 (for the estimates: the share of verification draws flagged, which should stay near
the 5 % a valid rule allows). The same shift under the judge without bias is printed as the control.

    .venv/bin/python scripts/bench/machine_judging.py [--qrels Q] [--runs DIR ...] [--error-rate 0.2 0.3]
        [--shares 0.05 0.1 0.15 0.2 0.3] [--seeds 20] [--stratify] [--tune-topics even --report-topics odd]
        [--bias 0.4 --favour-group Technion --favour-depth 20 --overrate 0]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from scipy import stats

from app.evaluation.formats.trec_files import read_qrels, read_run
from app.evaluation.measures.evaluate import evaluate
from app.evaluation.pools.builders import build_pool
from app.evaluation.records import Qrels, RunTable
from app.evaluation.statistics.prediction_powered import (
    VerifiedItems,
    inclusion_probabilities,
    prediction_powered,
    verification_draw,
)
from app.judges.simulated import simulate

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "trec-covid-round1"
MEASURES = ["map", "P_10", "ndcg_cut_10"]
FLOORS = (0.05, 0.2, 0.5)
BOOTSTRAP = 1000


def half(qrels: Qrels, which: str) -> Qrels:
    """The qrels on the odd or even topics (by their place in the sorted topic list), or all of them."""
    if which == "all":
        return qrels
    names = qrels.topic_names()
    keep = set(names[(0 if which == "even" else 1) :: 2])
    return qrels.subset(np.isin(qrels.topics.astype(str), list(keep)))


def tau(a: np.ndarray, b: np.ndarray) -> float:
    """Kendall's tau_b of two score vectors."""
    return float(stats.kendalltau(a, b).statistic)


def run_name(path: Path) -> str:
    """A run's name from its file name (`T5R1.gz` -> `T5R1`)."""
    return path.name.removesuffix(".gz")


def teams(path: Path) -> dict[str, str]:
    """run -> team from a run_groups tsv (header `run team ...`)."""
    rows = [line.split("\t") for line in path.read_text().splitlines()[1:] if line.strip()]
    return {row[0]: row[1] for row in rows}


def rank_shift(truth: np.ndarray, scores: np.ndarray, favoured: np.ndarray) -> tuple[float, float, float]:
    """The favoured runs' mean rank shift (true rank - rank by `scores`, > 0: they climb) from per-run x topic values,
    and its 95 % percentile interval over `BOOTSTRAP` topic resamples (seeded)."""
    n_topic = truth.shape[1]
    picks = np.random.default_rng(0).integers(0, n_topic, (BOOTSTRAP, n_topic))
    both = np.stack([truth, scores])  # [2, run, topic]
    full = stats.rankdata(-both.mean(axis=2), axis=1)  # 1 = best, ties averaged
    resampled = stats.rankdata(-both[:, :, picks].mean(axis=3), axis=1)  # [2, run, resample]
    shifts = (resampled[0] - resampled[1])[favoured].mean(axis=0)
    low, high = np.percentile(shifts, [2.5, 97.5])
    return float((full[0] - full[1])[favoured].mean()), float(low), float(high)


def trial(
    runs: list[RunTable],
    qrels: Qrels,
    model: tuple[np.ndarray, np.ndarray],
    share: float,
    stratify: bool,
    floor: float,
    seeds: int,
    truth: np.ndarray,
    favoured: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """Over `seeds` draws: human judgements, tau_b per measure, coverage per measure (mean over runs), and with
    `favoured` (the runs' flags, the true per-run x topic MAP) the favoured runs' MAP rank shift and its flag."""
    grade, probability = model
    topics = qrels.topics.astype(str)
    groups = [(name, np.flatnonzero(topics == name)) for name in qrels.topic_names()]
    pi = np.zeros(len(qrels))
    for _, rows in groups:
        pi[rows] = inclusion_probabilities(probability[rows], share, stratify=stratify, floor=floor)
    humans, taus, covers, shifts, flags = [], [], [], [], []
    for seed in range(seeds):
        drawn = np.zeros(len(qrels), dtype=bool)
        for name, rows in groups:
            drawn[rows] = verification_draw(seed, name, qrels.docs[rows].tolist(), pi[rows])
        items = VerifiedItems(topics, qrels.docs, grade, probability, np.where(drawn, qrels.grades, -1), pi, drawn)
        est = prediction_powered(runs, items, MEASURES)
        humans.append(est.n_human)
        taus.append([tau(est.mean[:, m], truth[:, m]) for m in range(len(MEASURES))])
        covers.append(((est.ci_low <= truth) & (truth <= est.ci_high)).mean(axis=0))
        if favoured is not None and favoured[0].any():
            shift, low, high = rank_shift(favoured[1], est.values[:, 0, :], favoured[0])
            shifts.append(shift)
            flags.append(low > 0 or high < 0)
    return {"human": np.array(humans), "tau": np.array(taus), "cover": np.array(covers), "shift": np.array(shifts),
            "flag": np.array(flags, dtype=bool)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--qrels", default=str(DATA / "qrels.txt"))
    parser.add_argument("--runs", action="append", default=None, help="a directory of runs (repeatable)")
    parser.add_argument("--error-rate", type=float, nargs="+", default=[0.2, 0.3])
    parser.add_argument("--shares", type=float, nargs="+", default=[0.05, 0.1, 0.15, 0.2, 0.3])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--noise", type=float, default=0.5)
    parser.add_argument("--stratify", action="store_true", help="also sample stratified by model confidence")
    parser.add_argument("--tune-topics", choices=["even", "odd"], default=None)
    parser.add_argument("--report-topics", choices=["even", "odd", "all"], default="all")
    parser.add_argument("--bias", type=float, default=0.4, help="extra false-positive rate on favoured items")
    parser.add_argument("--overrate", type=float, default=0.0, help="general extra false-positive rate")
    parser.add_argument("--favour-group", default="Technion", help="the team whose runs the judge favours ('' none)")
    parser.add_argument("--favour-depth", type=int, default=20, help="favoured: the items in those runs' top K")
    parser.add_argument("--groups", default=str(DATA / "run_groups_all.tsv"), help="tsv: run, team, ...")
    args = parser.parse_args()
    started = time.perf_counter()
    full = read_qrels(args.qrels)
    paths = [path for folder in args.runs or [str(DATA / "runs")] for path in sorted(Path(folder).iterdir())]
    runs = [read_run(path) for path in paths]
    print(f"{len(runs)} runs, {len(full)} qrels entries = the depth pool's human judgements (the qrels are the pool)")
    team = teams(Path(args.groups)) if args.favour_group else {}
    favoured = np.array([team.get(run_name(p)) == args.favour_group for p in paths], dtype=bool)
    family = [run_name(p) for p, f in zip(paths, favoured, strict=True) if f]
    favour: frozenset[tuple[str, str]] = frozenset()
    if family:
        pool = build_pool([run for run, f in zip(runs, favoured, strict=True) if f], depth=args.favour_depth)
        favour = frozenset(zip(pool.topics.astype(str).tolist(), pool.docs.astype(str).tolist(), strict=True))
        print(f"judge favours team {args.favour_group} ({', '.join(family)}): their top {args.favour_depth}, "
              f"bias {args.bias:g}, overrate {args.overrate:g}")  # fmt: skip
    elif args.favour_group:
        print(f"no run of team {args.favour_group!r} among the runs: overrate {args.overrate:g} only")

    def model_of(qrels: Qrels, error_rate: float, bias: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        keys = list(zip(qrels.topics.astype(str).tolist(), qrels.docs.astype(str).tolist(), strict=True))
        top = int(qrels.grades.max())
        return simulate(qrels.grades, keys, error_rate=error_rate, noise=args.noise, seed=1, max_grade=top,
                        favour=favour, bias=args.bias if bias is None else bias,
                        overrate=args.overrate if bias is None else 0.0)  # fmt: skip

    def shift_text(shift: tuple[float, float, float]) -> str:
        """`+3.2 [+1.0, +5.3] BIASED` or `... not flagged`."""
        flag = "BIASED" if shift[1] > 0 or shift[2] < 0 else "not flagged"
        return f"{shift[0]:+.1f} [{shift[1]:+.1f}, {shift[2]:+.1f}] {flag}"

    floor = 0.05
    if args.stratify and args.tune_topics:
        tune = half(full, args.tune_topics)
        truth = evaluate(tune, runs, MEASURES).mean()
        scores = {}
        for candidate in FLOORS:
            taus = [
                trial(runs, tune, model_of(tune, e), s, True, candidate, max(args.seeds // 2, 2), truth)["tau"][:, 0]
                for e in args.error_rate
                for s in args.shares[:2]
            ]
            scores[candidate] = float(np.mean(taus))
        floor = max(scores, key=lambda f: scores[f])
        tried = ", ".join(f"{f:g}: tau_b {t:.3f}" for f, t in scores.items())
        print(f"floor tuned on {args.tune_topics} topics: {tried} -> {floor:g}")
    qrels = half(full, args.report_topics)
    depth = len(qrels)
    truth_results = evaluate(qrels, runs, MEASURES)
    truth = truth_results.mean()
    true_values = np.nan_to_num(truth_results.values)  # [run, measure, topic], a missing topic 0 (trec_eval -c)
    print(f"report on {args.report_topics} topics: {len(qrels.topic_names())} topics, depth pool {depth} judgements")
    designs = [False, True] if args.stratify else [False]
    results: dict[tuple[bool, float, float], dict[str, np.ndarray]] = {}
    for error_rate in args.error_rate:
        model = model_of(qrels, error_rate)
        only = evaluate(Qrels(qrels.topics, qrels.docs, model[0]), runs, MEASURES)
        model_tau = [tau(a, b) for a, b in zip(only.mean().T, truth.T, strict=True)]
        print(f"\nerror rate {error_rate:g}: model-only qrels tau_b MAP {model_tau[0]:.3f} P_10 {model_tau[1]:.3f} "
              f"ndcg_cut_10 {model_tau[2]:.3f} (no human check)")  # fmt: skip
        if favoured.any():
            values = np.nan_to_num(only.values)
            shifts = [rank_shift(true_values[:, m], values[:, m], favoured) for m in range(len(MEASURES))]
            print("  favoured runs' rank shift, model-only: "
                  + "; ".join(f"{name} {shift_text(s)}" for name, s in zip(MEASURES, shifts, strict=True)))  # fmt: skip
            plain = evaluate(Qrels(qrels.topics, qrels.docs, model_of(qrels, error_rate, 0.0)[0]), runs, MEASURES)
            control = rank_shift(true_values[:, 0], np.nan_to_num(plain.values)[:, 0], favoured)
            print(f"  control, the same judge without bias: MAP {shift_text(control)}")
        print(f"{'design':10} {'share':>5} {'human':>6} {'x depth':>7} {'tau MAP':>7} {'min':>5} {'tau P10':>7} "
              f"{'tau nDCG':>8} {'cov MAP':>7} {'cov P10':>7} {'cov nDCG':>8} {'model':>6} {'shift':>6} {'flag':>5} "
              f"{'s':>5}")  # fmt: skip
        for stratify in designs:
            for share in args.shares:
                out = trial(runs, qrels, model, share, stratify, floor, args.seeds, truth,
                            (favoured, true_values[:, 0]) if favoured.any() else None)  # fmt: skip
                results[(stratify, error_rate, share)] = out
                t, c = out["tau"].mean(axis=0), out["cover"].mean(axis=0)
                human = float(out["human"].mean())
                shift = f"{out['shift'].mean():+6.2f} {out['flag'].mean():5.2f}" if len(out["shift"]) else f"{'':12}"
                print(f"{'stratified' if stratify else 'uniform':10} {share:5g} {human:6.0f} {human / depth:7.3f} "
                      f"{t[0]:7.3f} {out['tau'][:, 0].min():5.2f} {t[1]:7.3f} {t[2]:8.3f} {c[0]:7.3f} {c[1]:7.3f} "
                      f"{c[2]:8.3f} {model_tau[0]:6.3f} {shift} {time.perf_counter() - started:5.0f}",
                      flush=True)  # fmt: skip
    issue = [e for e in args.error_rate if 0.2 - 1e-9 <= e <= 0.3 + 1e-9] or list(args.error_rate)
    best: tuple[float, bool, float, float, float] | None = None
    for share in sorted(args.shares):
        for stratify in designs:
            found = [results[(stratify, e, share)] for e in issue]
            worst = min(float(out["tau"][:, 0].mean()) for out in found)
            if worst >= 0.9 and best is None:
                human = max(float(out["human"].mean()) for out in found)
                cover = min(float(out["cover"].mean()) for out in found)
                best = (share, stratify, human, worst, cover)
    if best is None:
        print("no share reached tau_b 0.9 on MAP at error rates " + ", ".join(f"{e:g}" for e in issue))
        top = max(float(o["tau"][:, 0].mean()) for o in results.values())
        print(f"best: share none human 0 (0.000 x depth) tau_b {top:.3f} coverage nan")
        return
    share, stratify, human, worst, cover = best
    print(f"design: {'stratified' if stratify else 'uniform'}")
    print(
        f"best: share {share:g} human {human:.0f} ({human / depth:.3f} x depth) tau_b {worst:.3f} coverage {cover:.3f}"
    )


if __name__ == "__main__":
    main()
