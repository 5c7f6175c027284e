"""Benchmark: judgements each judging order needs to reproduce the ranking of the full qrels, replaying real qrels
as an oracle assessor.

Setting (TREC-COVID round 1: 30 runs of 10 teams, 30 topics, 8,691 judgements). The qrels are the only verdicts we
know, so every run's list is *condensed* to its judged docs (Sakai's condensed lists); the orders work over those
lists, per topic, with every run an arm, and the oracle answers from the qrels (grade >= 1 relevant).

Rows (MAP rows: unjudged = not relevant; the last two estimate MAP with xinfAP instead):

- depth: the fixed-depth pool on the condensed lists, grown one depth at a time (judgements = pool size at depth d);
  the baseline of every `/depth` ratio;
- shuffled: the seeded shuffle of all judged docs, MAP on the judged prefix (mean over `--seeds` seeds);
- move_to_front, mm_ns (discount 0.9), hedge (beta 0.1), mtc (Carterette, Allan & Sitaraman, SIGIR 2006: the doc
  whose relevance moves the runs' pairwise AP differences most): the online orders of `app/evaluation/pools/orders.py`;
- infap: the same seeded simple random sample of each topic's pool (a shuffled prefix of ceil(f N) docs, f in
  steps of 0.01), scored with the inferred AP of Yilmaz & Aslam (CIKM 2006) as sample_eval's xinfAP with one
  stratum (`analyses.budget.xinf_ap_topic`), mean over `--seeds` seeds;
- xinfap_d3: the stratified design of Yilmaz, Kanoulas & Aslam (SIGIR 2008): every doc at condensed rank <= 3 of
  some run judged (a census stratum), a seeded random share f of the rest, xinfAP; mean over `--seeds` seeds. The
  census depth 3 was picked on TREC-COVID itself among 0, 1, 3, 5, 10 (tuned on the evaluation target, so its
  row is optimistic).

The order rows get the same budget n per topic (the first n docs each picks, all if fewer); the sampled rows the
same share f per topic. Per-topic stopping rules and a cross-topic allocation (the next judgement to the topic
whose discounted Beta mean of recent yield is highest) were tried with these orders and needed *more* judgements
than the equal budget (MAP weighs every topic alike, and starving low-yield topics hurts it); they are not rows.

The qrels judged so far give every run's score (the uncondensed runs, trec_eval's AP or xinfAP over the full
qrels' topics) and tau_b against the MAP ranking on the full qrels. Printed per row: the judgements (all topics)
at the first budget reaching tau_b >= 0.9 and >= 0.95, and their share of the depth pool's judgements for the same
tau ("first reaching"), and, as a stricter criterion, the judgements at the first budget after which tau stays >=
the target at every larger budget ("stays"; a curve that touches the target early and dips again is charged up to
where it stops dipping), with its share of the depth pool's by the same criterion. At the first-reaching budget,
leave-one-team-out is done by *rebuilding the judgements without the team*: the order (or the sample design, same
seed and share) is replayed over the other teams' lists with the same per-topic budget, the team's runs are scored
on those qrels, and the largest drop in their score (against the qrels built with the team) and the tau_b of the
ranking with each team's runs so scored are printed. That is the question reusability
asks of an adaptive order (a team that did not take part gets judged docs picked without it), and it treats the
depth pool the same way (the same depth, pooled from the other teams' runs).

AVS 2021 (`--avs`): NIST's stratified qrels have no real runs, only four synthetic ones (`runs/syn7_*`); the same
replay runs over the judged shots with each run its own team, but tau over 4 runs only takes 7 values, so it is
printed as a curiosity, not evidence.

    .venv/bin/python scripts/bench/judging_cost.py [--seeds 3] [--avs]
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import numpy as np

from app.evaluation.analyses.budget import TopicSample, topic_samples, xinf_ap_topic
from app.evaluation.analyses.kendall import tau_b
from app.evaluation.analyses.lines import APKernel, index_lines
from app.evaluation.formats.trec_files import read_qrels, read_run
from app.evaluation.grading.prepared_runs import prepare_runs
from app.evaluation.pools.orders import make_order

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
ORDERS = ("depth", "shuffled", "move_to_front", "mm_ns", "hedge", "mtc", "infap", "xinfap_d3")
SAMPLED = {"infap": 0, "xinfap_d3": 3}  # census depth k0 of the sampled designs (xinfAP estimator, not MAP)
RANDOM = ("shuffled", "infap", "xinfap_d3")  # averaged over --seeds
TARGETS = (0.9, 0.95)
SHARES = np.round(np.arange(0.0, 1.0001, 0.01), 2)  # sampling rates tried below the census


class Replay:
    """Runs, qrels and the condensed lists of one collection."""

    def __init__(self, qrels_path: Path, run_paths: list[Path], team_of: dict[str, str] | None) -> None:
        self.qrels = read_qrels(qrels_path)
        runs = [read_run(p) for p in run_paths]
        self.prepared = prepare_runs(runs)
        self.names = list(self.prepared.names)
        self.teams = [team_of.get(n, n) if team_of else n for n in self.names]
        judged_only = np.asarray(self.qrels.grades) >= 0
        self.index = index_lines(self.prepared, self.qrels)
        self.kernel = APKernel(self.index)
        self.relevant = self.index.relevant & judged_only
        self.judged_line = judged_only
        self.full = self.kernel.mean(self.relevant)
        self.samples = topic_samples(self.index)[1]
        self.topic_lines = [np.flatnonzero(self.index.line_topic == t) for t in range(len(self.index.topics))]
        prepared_topic = {name: i for i, name in enumerate(self.prepared.topics)}
        self.topic_lists: list[list[list[int]]] = []  # [topic][run] condensed list of judged line ids
        for topic in self.index.topics:
            p = prepared_topic.get(topic)
            lists = []
            for r in range(len(self.names)):
                if p is None:
                    lists.append([])
                    continue
                block = self.prepared.pairs[r, p]
                line = self.index.pair_line[np.where(block >= 0, block, len(self.index.pair_line) - 1)]
                line = line[line >= 0]
                lists.append(line[self.judged_line[line]].tolist())
            self.topic_lists.append(lists)

    def sequence(self, order: str, topic: int, runs: list[int], seed: int) -> np.ndarray:
        """The judged line ids of one topic in the order `order` picks them from the lists of `runs`."""
        lists = [self.topic_lists[topic][r] for r in runs]
        if order == "depth":
            best: dict[int, tuple[int, int]] = {}
            for r, ranked in enumerate(lists):
                for k, line in enumerate(ranked):
                    best[line] = min(best.get(line, (k, r)), (k, r))
            return np.array(sorted(best, key=lambda line: (best[line], line)), dtype=np.int64)
        policy = make_order(order, [[str(x) for x in ranked] for ranked in lists], seed=seed,
                            topic=self.index.topics[topic])  # fmt: skip
        out = []
        while True:
            doc = policy.next()
            if doc is None:
                break
            line = int(doc)
            policy.record(doc, bool(self.relevant[line]))
            out.append(line)
        return np.array(out, dtype=np.int64)

    def depth_budgets(self, runs: list[int]) -> list[np.ndarray]:
        """Per depth d = 1, 2, ...: the size per topic [topic] of the depth-d pool of `runs` (condensed lists)."""
        best_ranks = []
        for t in range(len(self.topic_lists)):
            best: dict[int, int] = {}
            for r in runs:
                for k, line in enumerate(self.topic_lists[t][r], start=1):
                    best[line] = min(best.get(line, k), k)
            best_ranks.append(np.sort(np.array(list(best.values()), dtype=np.int64)))
        longest = max((int(b[-1]) for b in best_ranks if len(b)), default=0)
        depths = np.arange(1, longest + 1)
        sizes = np.stack([np.searchsorted(b, depths, side="right") for b in best_ranks], axis=1)  # [depth, topic]
        return list(sizes)

    def keep(self, sequences: list[np.ndarray], budget: np.ndarray) -> np.ndarray:
        """bool [line]: judged relevant within the per-topic budget."""
        mask = np.zeros(self.index.n_lines, dtype=bool)
        for t, seq in enumerate(sequences):
            mask[seq[: int(budget[t])]] = True
        return mask & self.relevant

    def sampled(self, census: int, runs: list[int], seed: int, shares: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per share f: judgements (all topics) and each run's mean xinfAP over the topics, for the design that judges
        every doc at condensed rank <= `census` in some run of `runs` (stratum 0) and a seeded simple random sample of
        ceil(f N_1) of the rest of their pool (stratum 1); docs only the other runs retrieve are not pooled."""
        spent = np.zeros(len(shares), dtype=np.int64)
        total = np.zeros((len(shares), len(self.names)))
        for t, lines in enumerate(self.topic_lines):
            item = {int(line): i for i, line in enumerate(lines)}
            best: dict[int, int] = {}
            for r in runs:
                for k, line in enumerate(self.topic_lists[t][r], start=1):
                    best[item[line]] = min(best.get(item[line], k), k)
            top = np.array([i for i, b in best.items() if b <= census], dtype=np.int64)
            rest = np.array(sorted(i for i, b in best.items() if b > census), dtype=np.int64)
            rest = rest[np.random.default_rng([seed, t]).permutation(len(rest))]
            pooled = np.zeros(len(lines), dtype=bool)
            pooled[list(best)] = True
            base = self.samples[t]
            stratum = np.zeros(len(lines), dtype=np.int64)
            stratum[rest] = 1
            sample = TopicSample(
                ranked=np.where((base.ranked >= 0) & pooled[np.maximum(base.ranked, 0)], base.ranked, -1),
                stratum=stratum, judged=base.judged, relevant=base.relevant,
                pooled_total=np.array([len(top), len(rest)], dtype=np.float64),
            )  # fmt: skip
            judged = np.zeros((len(shares), len(lines)), dtype=bool)
            judged[:, top] = True
            for j, share in enumerate(shares):
                judged[j, rest[: int(np.ceil(share * len(rest)))]] = True
            spent += judged.sum(axis=1)
            total += xinf_ap_topic(sample, judged, base.relevant[None, :] & judged)
        return spent, total / len(self.topic_lines)


def study_sampled(replay: Replay, order: str, seed: int) -> dict:
    """Judgements to each target tau of a sampled design (xinfAP), and leave-one-team-out at the same share."""
    everyone = list(range(len(replay.names)))
    census = SAMPLED[order]
    spent, scores = replay.sampled(census, everyone, seed, SHARES)
    taus = [tau_b(replay.full, row) for row in scores]
    teams = list(dict.fromkeys(replay.teams))
    out: dict = {}
    for target in TARGETS:
        reached = [j for j, tau in enumerate(taus) if tau >= target]
        if not reached:
            out[target] = None
            continue
        j = reached[0]
        with_all, reduced = scores[j], scores[j].copy()
        for team in teams:
            others = [r for r in everyone if replay.teams[r] != team]
            mine = np.array([replay.teams[r] == team for r in everyone])
            reduced[mine] = replay.sampled(census, others, seed, SHARES[j : j + 1])[1][0][mine]
        out[target] = {
            "judgements": int(spent[j]),
            "tau": taus[j],
            "loto_max_drop": float(max(0.0, np.max(with_all - reduced))),
            "loto_tau": tau_b(with_all, reduced),
            "stays": stays(list(zip(spent.tolist(), taus, strict=True)), target),
        }
    return out


def budgets_for(replay: Replay, order: str, sequences: list[np.ndarray], runs: list[int]) -> list[np.ndarray]:
    """The per-topic budgets tried, in increasing order."""
    if order == "depth":
        return replay.depth_budgets(runs)
    longest = max(len(s) for s in sequences)
    return [np.full(len(sequences), n) for n in range(1, longest + 1)]


def study(replay: Replay, order: str, seed: int) -> dict:
    """Judgements to each target tau and leave-one-team-out at that budget."""
    everyone = list(range(len(replay.names)))
    sequences = [replay.sequence(order, t, everyone, seed) for t in range(len(replay.index.topics))]
    found: dict[float, tuple[int, np.ndarray, float, int]] = {}
    curve: list[tuple[int, float]] = []  # (judgements, tau) at every budget, for the "stays" criterion
    for step, budget in enumerate(budgets_for(replay, order, sequences, everyone)):
        scores = replay.kernel.mean(replay.keep(sequences, budget))
        tau = tau_b(replay.full, scores)
        spent = int(sum(min(int(b), len(s)) for b, s in zip(budget, sequences, strict=True)))
        curve.append((spent, tau))
        for target in TARGETS:
            if target not in found and tau >= target:
                found[target] = (spent, budget, tau, step)
    out: dict = {}
    teams = list(dict.fromkeys(replay.teams))
    for target in TARGETS:
        if target not in found:
            out[target] = None
            continue
        spent, budget, tau, step = found[target]
        with_all = replay.kernel.mean(replay.keep(sequences, budget))
        reduced = with_all.copy()
        for team in teams:
            others = [r for r in everyone if replay.teams[r] != team]
            mine = np.array([replay.teams[r] == team for r in everyone])
            seq_without = [replay.sequence(order, t, others, seed) for t in range(len(sequences))]
            if order == "depth":  # the same depth, pooled from the other teams' runs
                sizes = replay.depth_budgets(others)
                budget_without = sizes[min(step, len(sizes) - 1)]
            else:
                budget_without = budget
            scores = replay.kernel.mean(replay.keep(seq_without, budget_without))
            reduced[mine] = scores[mine]
        out[target] = {
            "judgements": spent,
            "tau": tau,
            "loto_max_drop": float(max(0.0, np.max(with_all - reduced))),
            "loto_tau": tau_b(with_all, reduced),
            "stays": stays(curve, target),
        }
    return out


def stays(curve: list[tuple[int, float]], target: float) -> int:
    """Judgements at the first budget after which tau stays >= target at every larger budget (all if never)."""
    below = [k for k, (_, tau) in enumerate(curve) if tau < target]
    k = below[-1] + 1 if below else 0
    return curve[k][0] if k < len(curve) else curve[-1][0]


def report(name: str, replay: Replay, seeds: int) -> None:
    """Print the table for one collection."""
    print(f"\n== {name}: {len(replay.names)} runs, {len(set(replay.teams))} teams, {len(replay.index.topics)} topics, "
          f"{int(replay.judged_line.sum())} judged lines ({int(replay.relevant.sum())} relevant)")  # fmt: skip
    results: dict[str, dict] = {}
    for order in ORDERS:
        started = time.perf_counter()
        work = study_sampled if order in SAMPLED else study
        runs = [work(replay, order, seed) for seed in range(seeds if order in RANDOM else 1)]
        merged = {}
        for target in TARGETS:
            found = [r[target] for r in runs if r[target] is not None]
            merged[target] = None if len(found) < len(runs) else {
                key: float(np.mean([f[key] for f in found])) for key in found[0]
            }  # fmt: skip
        results[order] = merged
        print(f"   ({order}: {time.perf_counter() - started:.1f} s)")
    head = "".join(f"{'tau_b >= ' + str(t):^58}" for t in TARGETS)
    print(f"{'':<15}{head}")
    print(f"{'':<15}" + f"{'first reaching':^38}{'stays':^18}  " * len(TARGETS))
    print(f"{'order':<15}" + f"{'judged':>10}{'/depth':>8}{'LOTO drop':>11}{'LOTO tau':>9}{'judged':>10}{'/depth':>8}  "
          * len(TARGETS))  # fmt: skip
    for order in ORDERS:
        line = f"{order:<15}"
        for target in TARGETS:
            r, base = results[order][target], results["depth"][target]
            if r is None:
                line += f"{'not reached':>56}  "
                continue
            share = r["judgements"] / base["judgements"] if base else float("nan")
            kept = r["stays"] / base["stays"] if base else float("nan")
            line += (f"{r['judgements']:>10.0f}{share:>8.2f}{r['loto_max_drop']:>11.4f}{r['loto_tau']:>9.3f}"
                     f"{r['stays']:>10.0f}{kept:>8.2f}  ")  # fmt: skip
        print(line)


def main() -> None:
    """Replay TREC-COVID round 1 (and AVS 2021 with --avs)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3, help="seeds for the random rows (mean printed)")
    parser.add_argument("--avs", action="store_true", help="also replay AVS 2021 over its 4 synthetic runs")
    args = parser.parse_args()
    covid = SHARED / "trec-covid-round1"
    with open(covid / "run_groups.tsv", newline="") as handle:
        team_of = {row["run"]: row["team"] for row in csv.DictReader(handle, delimiter="\t")}
    report("TREC-COVID round 1", Replay(covid / "qrels.txt", sorted((covid / "runs").glob("*.gz")), team_of),
           args.seeds)  # fmt: skip
    if args.avs:
        avs = SHARED / "trecvid-avs-2021"
        print("\nAVS 2021: only 4 synthetic runs exist; tau over 4 runs takes 7 values (a curiosity, not evidence).")
        report("AVS 2021 (judged shots, AP)", Replay(avs / "avs.qrels.main.tv21", sorted((avs / "runs").iterdir()),
               None), 1)  # fmt: skip


if __name__ == "__main__":
    main()
