"""sample_eval.pl's report, byte for byte: its measure names, tab layout, number formats, topic order and `all` lines.

The layout is that of TRECVID's sample_eval.pl (maxResultSize 1000, iP at 5, 10, 15, 20, 30, 100, 200, 500 and
1000) and so are its formats: `%6.4f` for the means and per-topic values, `%14.4f` for inum_rel_ret and inum_rel,
`%9d` for num_ret, as in data/trecvid-avs-2021/expected/<run>.sample_eval.nist.txt. `digits` widens the decimals
(12 gives the script with its formats widened, <run>.sample_eval.txt there). Per topic (with -q),
for each topic of the run that the qrels judge, in numeric topic order: infAP, infNDCG, iP@k, inum_rel_ret,
inum_rel, num_ret (the run's lines for the topic, before the 1000 cut). Then the `all` lines: infAP, infNDCG,
iprec@rec0.00..1.00, iP@k (means over those topics), inum_rel_ret (their total), inum_rel (the total over every
qrels topic, answered or not) and num_ret (the total after the cut). Means and totals are running sums in the
script's topic order (iprec's in string order, as its hash keys), so they are its doubles too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np

from app.evaluation.errors import MeasureError
from app.evaluation.results import Results

MAX_RESULTS = 1000  # sample_eval.pl's maxResultSize
DIGITS = 4  # the script's decimals (%6.4f, %14.4f)
CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)  # its precisionranks: (5, 10, 15, 20, 30, 100, 200, 500, max)
LEVELS = tuple(f"iprec@rec{i / 10:.2f}" for i in range(11))
PER_TOPIC = ("xinfAP", "infNDCG", *(f"iP@{k}" for k in CUTOFFS), "inum_rel_ret", "inum_rel", "num_ret")
MEASURES = (*PER_TOPIC, *LEVELS)  # what to evaluate for the report
PRINTED = {"xinfAP": "infAP", **{f"iP@{k}": f"iP{k}" for k in CUTOFFS}}  # our name -> the script's
_NUMBER = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def perl_number(text: str) -> float:
    """The number Perl reads in a string (its leading decimal number; 0 if there is none), to order topics."""
    match = _NUMBER.match(text)
    return float(match.group()) if match else 0.0


def topic_order(topics: Sequence[str]) -> list[str]:
    """Topics in sample_eval.pl's order, `sort { $a <=> $b }` (equal numbers, which it leaves to chance, by string)."""
    return sorted(topics, key=lambda t: (perl_number(t), t))


def running_sum(values: Sequence[float]) -> float:
    """The values added one at a time, left to right, as the script's `+=` (no pairwise or compensated sum)."""
    total = 0.0
    for value in values:
        total += value
    return total


def _line(name: str, topic: str, value: float | int, digits: int = DIGITS) -> str:
    """One line, laid out as sample_eval.pl prints that measure (`digits` decimals; the script has 4)."""
    if name == "num_ret":
        return f"num_ret\t\t{topic}\t{int(value):9d}\n"
    if name in ("inum_rel_ret", "inum_rel"):
        return f"{name}\t{topic}\t{value:14.{digits}f}\n"
    if name.startswith("iprec@rec"):
        return f"{name}\t{topic}\t\t{value:6.{digits}f}\n"
    return f"{PRINTED.get(name, name)}\t\t{topic}\t\t{value:6.{digits}f}\n"


def sample_eval_report(
    results: Results, returned: Mapping[str, int], *, per_topic: bool = False, run: int = 0, digits: int = DIGITS
) -> str:
    """sample_eval.pl's output for run `run` of `results` (evaluated with MEASURES at max_results 1000), its numbers
    with `digits` decimals (the script's 4 by default).

    `returned` counts the run file's lines per topic (the per-topic num_ret, uncut). Raises MeasureError when the
    run answers none of the qrels' topics (the script dies there, dividing by zero).
    """
    column = {name: results.measures.index(name) for name in MEASURES}
    values = results.values[run]
    index = {topic: i for i, topic in enumerate(results.topics)}
    answered = [t for t, a in zip(results.topics, results.answered[run].tolist(), strict=True) if a]
    if not answered:
        raise MeasureError("the run answers none of the qrels' topics (sample_eval.pl dies dividing by zero)")
    numeric = [index[t] for t in topic_order(answered)]
    lexical = [index[t] for t in sorted(answered)]  # `sort keys`: the order of the iprec sums
    n = len(numeric)

    def series(name: str, topics: list[int]) -> list[float]:
        """The per-topic values of measure `name` for `topics`, as Python floats."""
        numbers: list[float] = np.asarray(values[column[name], topics], dtype=np.float64).tolist()
        return numbers

    out: list[str] = []
    if per_topic:
        table = {name: series(name, numeric) for name in PER_TOPIC}
        for i, t in enumerate(topic_order(answered)):
            for name in PER_TOPIC:
                value = returned.get(t, 0) if name == "num_ret" else table[name][i]
                out.append(_line(name, t, value, digits))
    out.append(_line("xinfAP", "all", running_sum(series("xinfAP", numeric)) / n, digits))
    out.append(_line("infNDCG", "all", running_sum(series("infNDCG", numeric)) / n, digits))
    out.extend(_line(level, "all", running_sum(series(level, lexical)) / n, digits) for level in LEVELS)
    out.extend(_line(f"iP@{k}", "all", running_sum(series(f"iP@{k}", numeric)) / n, digits) for k in CUTOFFS)
    out.append(_line("inum_rel_ret", "all", running_sum(series("inum_rel_ret", numeric)), digits))
    everything = list(range(len(results.topics)))
    out.append(_line("inum_rel", "all", running_sum(series("inum_rel", everything)), digits))
    out.append(_line("num_ret", "all", sum(int(v) for v in series("num_ret", numeric))))
    return "".join(out)
