"""sample_eval.pl's computation written out plainly in Python: dicts, one rank at a time, its sums in its order.

This is the reference the vectorised core and `trecpool sample_eval` are tested against. It follows the script step
by step (the same quotients, the same order of additions, its constants 0.00001 and 0.00003, the C library's log),
so its doubles are the script's: tests compare it with the script's own outputs in data/trecvid-avs-2021/expected/
byte for byte, then compare our output with it byte for byte on inputs the script's outputs do not cover (graded
qrels, missing topics, long runs, ties), in the script's own 4 decimals and widened to 12. Slow and obvious on
purpose; it shares no code with app/.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field

MAX_RESULTS = 1000
CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, MAX_RESULTS)
LEVELS = ("0", ".1", ".2", ".3", ".4", ".5", ".6", ".7", ".8", ".9", "1")  # the script's recall levels, as strings


def perl_number(text: str) -> float:
    """What Perl's numeric context makes of a string: its leading decimal number, else 0."""
    match = re.match(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", text)
    return float(match.group()) if match else 0.0


@dataclass
class TopicResult:
    """One topic's values, as the script holds them before printing."""

    infap: float
    infndcg: float
    precision: dict[int, float]
    num_rel_ret: float
    num_rel: float
    num_ret: int
    estimated_at_rank: list[float] = field(default_factory=list)  # num_rel_rank_k by rank 1..n


@dataclass
class Evaluation:
    """Everything the script prints: per-topic results, in its topic order, and the `all` values."""

    topics: dict[str, TopicResult]
    all: dict[str, float]
    num_ret_all: int


def evaluate(qrels_text: str, run_text: str, max_results: int = MAX_RESULTS) -> Evaluation:
    """sample_eval.pl over the text of a 5-column qrels file and a 6-column run file."""
    qrel: dict[str, dict[str, int]] = {}
    category: dict[str, dict[str, str]] = {}
    docs_per_category: dict[str, dict[str, int]] = {}
    sampled_docs: dict[str, dict[str, int]] = {}
    sampled_rel: dict[str, dict[str, int]] = {}
    per_grade: dict[str, dict[str, dict[str, int]]] = {}
    words = qrels_text.split()
    for i in range(0, len(words), 5):
        topic, _, doc, cat, grade_text = words[i : i + 5]
        grade = int(grade_text)
        qrel.setdefault(topic, {})[doc] = grade
        category.setdefault(topic, {})[doc] = cat
        counts = docs_per_category.setdefault(topic, {})
        counts[cat] = counts.get(cat, 0) + 1
        if grade >= 0:
            sampled = sampled_docs.setdefault(topic, {})
            sampled[cat] = sampled.get(cat, 0) + 1
        if grade > 0:
            grades = per_grade.setdefault(topic, {}).setdefault(cat, {})
            grades[grade_text] = grades.get(grade_text, 0) + 1
            relevant = sampled_rel.setdefault(topic, {})
            relevant[cat] = relevant.get(cat, 0) + 1

    # estimated relevant per topic, and its total over every qrels topic
    num_rels: dict[str, float] = {}
    sum_num_rel: float = 0
    for topic in sorted(qrel):
        num_rels[topic] = 0
        for cat in sorted(docs_per_category[topic]):
            n = sampled_docs.get(topic, {}).get(cat, 0)
            if n != 0:
                num_rels[topic] += sampled_rel.get(topic, {}).get(cat, 0) * docs_per_category[topic][cat] / n
        sum_num_rel += num_rels[topic]

    # estimated docs of each grade, then the ideal DCG
    optimal: dict[str, float] = {}
    for topic in sorted(qrel):
        estimated: dict[str, float] = {}
        for cat in sorted(docs_per_category[topic]):
            for grade_text in sorted(per_grade.get(topic, {}).get(cat, {})):
                count = per_grade[topic][cat][grade_text]
                term = count * docs_per_category[topic][cat] / sampled_docs[topic][cat]
                estimated[grade_text] = estimated.get(grade_text, 0) + term
        total: float = 0
        start: float = 0
        for grade_text in sorted(estimated, reverse=True):
            rank = start + 1
            while rank <= start + estimated[grade_text]:
                total += int(grade_text) / (math.log(rank + 1) / math.log(2))
                if rank >= max_results:
                    break
                rank += 1
            start += estimated[grade_text]
        optimal[topic] = total

    run: dict[str, dict[str, float]] = {}
    num_ret: dict[str, int] = {}
    words = run_text.split()
    for i in range(0, len(words), 6):
        topic, _, doc, _, score, _ = words[i : i + 6]
        run.setdefault(topic, {})[doc] = float(score)
        num_ret[topic] = num_ret.get(topic, 0) + 1

    results: dict[str, TopicResult] = {}
    sum_num_ret = 0
    for topic in sorted(run, key=lambda t: (perl_number(t), t)):
        if topic not in qrel:
            continue
        scores = run[topic]

        def order(a: str, b: str, scores: dict[str, float] = scores) -> int:
            """The script's sort: score descending, then docno descending."""
            by_score = (scores[b] > scores[a]) - (scores[b] < scores[a])
            return by_score or (b > a) - (b < a)

        cats = sorted(docs_per_category[topic])
        sap: dict[str, float] = {}
        gain: dict[str, float] = {}
        num_sampled: dict[str, int] = {}
        num_relevant: dict[str, int] = {}
        num_docs: dict[str, int] = {}
        pooled = 0
        estimated_at: list[float] = []
        precision: dict[int, float] = {}
        for rank, doc in enumerate(sorted(scores, key=functools.cmp_to_key(order)), start=1):
            sum_num_ret += 1
            grade = qrel[topic].get(doc)
            cat = category[topic].get(doc)
            if grade is not None and grade > 0:
                above: float = 0
                for c in cats:
                    if pooled != 0:
                        share = num_docs.get(c, 0) / pooled
                        if share != 0:
                            above += share * (num_relevant.get(c, 0) + 0.00001) / (num_sampled.get(c, 0) + 0.00003)
                prec = 1 / rank + (pooled / rank) * above
                sap[cat] = sap.get(cat, 0) + prec
                num_relevant[cat] = num_relevant.get(cat, 0) + 1
                gain[cat] = gain.get(cat, 0) + grade / (math.log(rank + 1) / math.log(2))
            if grade is not None:
                pooled += 1
                num_docs[cat] = num_docs.get(cat, 0) + 1
                if grade >= 0:
                    num_sampled[cat] = num_sampled.get(cat, 0) + 1
            at_rank: float = 0
            for c in cats:
                at_rank += num_docs.get(c, 0) * (num_relevant.get(c, 0) + 0.00001) / (num_sampled.get(c, 0) + 0.00003)
            estimated_at.append(at_rank)
            if rank in CUTOFFS:
                precision[rank] = at_rank / rank
            if rank >= max_results:
                break
        num_rel_ret = estimated_at[-1]
        for cutoff in CUTOFFS:
            precision.setdefault(cutoff, num_rel_ret / cutoff)

        ap: float = 0
        for c in cats:
            n = sampled_docs.get(topic, {}).get(c, 0)
            if n != 0:
                r = sampled_rel.get(topic, {}).get(c, 0)
                estimate = r * docs_per_category[topic][c] / n
                if num_rels[topic] != 0:
                    share = estimate / num_rels[topic]
                    ap_c = sap.get(c, 0) / r if r != 0 else 0
                    ap += share * ap_c
        if num_rels[topic] > max_results:
            ap = ap * num_rels[topic] / max_results

        dcg: float = 0
        for c in cats:
            if pooled != 0:
                share = num_docs.get(c, 0) / pooled
                if num_sampled.get(c, 0) != 0:
                    dcg += share * gain.get(c, 0) / num_sampled[c]
        ndcg = pooled * dcg / optimal[topic] if optimal[topic] != 0 else 0

        results[topic] = TopicResult(ap, ndcg, precision, num_rel_ret, num_rels[topic], num_ret[topic], estimated_at)

    n_topics = len(results)
    interpolated = [0.0] * len(LEVELS)
    for topic in sorted(results):
        estimated_at = results[topic].estimated_at_rank
        cutoffs = [float(level) * results[topic].num_rel for level in LEVELS]
        best = 0.0
        current = len(cutoffs) - 1
        while current >= 0 and cutoffs[current] > results[topic].num_rel_ret:
            current -= 1
        for rank in range(len(estimated_at), 0, -1):
            best = max(best, estimated_at[rank - 1] / rank)
            if current >= 0 and cutoffs[current] > estimated_at[rank - 1]:
                interpolated[current] += best
                current -= 1
        while current >= 0:
            interpolated[current] += best
            current -= 1

    means: dict[str, float] = {}
    ordered = list(results.values())

    def total(values: list[float]) -> float:
        """Left-to-right sum, as `+=`."""
        out: float = 0
        for v in values:
            out += v
        return out

    means["infAP"] = total([r.infap for r in ordered]) / n_topics
    means["infNDCG"] = total([r.infndcg for r in ordered]) / n_topics
    for i in range(len(LEVELS)):
        means[f"iprec@rec{i / 10:4.2f}"] = interpolated[i] / n_topics
    for cutoff in CUTOFFS:
        means[f"iP{cutoff}"] = total([r.precision[cutoff] for r in ordered]) / n_topics
    means["inum_rel_ret"] = total([r.num_rel_ret for r in ordered])
    means["inum_rel"] = sum_num_rel
    return Evaluation(results, means, sum_num_ret)


def report(evaluation: Evaluation, per_topic: bool, digits: int = 12) -> str:
    """The script's printed lines: its formats %6.4f, %14.4f and %9d with `digits` decimals instead of 4 (12, the
    default here, as the widened reference outputs <run>.sample_eval.txt; 4 as NIST's <run>.sample_eval.nist.txt)."""
    d = digits
    lines = []
    if per_topic:
        for topic, r in evaluation.topics.items():
            lines.append(f"infAP\t\t{topic}\t\t{r.infap:6.{d}f}")
            lines.append(f"infNDCG\t\t{topic}\t\t{r.infndcg:6.{d}f}")
            lines += [f"iP{cutoff}\t\t{topic}\t\t{r.precision[cutoff]:6.{d}f}" for cutoff in CUTOFFS]
            lines.append(f"inum_rel_ret\t{topic}\t{r.num_rel_ret:14.{d}f}")
            lines.append(f"inum_rel\t{topic}\t{r.num_rel:14.{d}f}")
            lines.append(f"num_ret\t\t{topic}\t{r.num_ret:9d}")
    means = evaluation.all
    lines.append(f"infAP\t\tall\t\t{means['infAP']:6.{d}f}")
    lines.append(f"infNDCG\t\tall\t\t{means['infNDCG']:6.{d}f}")
    levels = [f"iprec@rec{i / 10:4.2f}" for i in range(len(LEVELS))]
    lines += [f"{level}\tall\t\t{means[level]:6.{d}f}" for level in levels]
    lines += [f"iP{cutoff}\t\tall\t\t{means[f'iP{cutoff}']:6.{d}f}" for cutoff in CUTOFFS]
    lines.append(f"inum_rel_ret\tall\t{means['inum_rel_ret']:14.{d}f}")
    lines.append(f"inum_rel\tall\t{means['inum_rel']:14.{d}f}")
    lines.append(f"num_ret\t\tall\t{evaluation.num_ret_all:9d}")
    return "\n".join(lines) + "\n"
