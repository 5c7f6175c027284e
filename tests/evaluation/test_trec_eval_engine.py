"""The trec_eval drop-in's engine: every all_trec value per topic against pytrec_eval (with -l, -J and -M), trec_eval's
-c placeholder for missing topics, -Z, -n, measure selection and parameter names."""

from __future__ import annotations

import math

import numpy as np
import pytest

from app.evaluation.trec_eval.engine import evaluate
from app.evaluation.trec_eval.options import UsageError, parse_arguments
from app.evaluation.trec_eval.report import c_float, c_long, format_report
from app.evaluation.trec_eval.table import select
from tests.evaluation.cases import random_case, to_qrels, to_run, v9_rounding_agrees

pytrec_eval = pytest.importorskip("pytrec_eval")

NOT_IN_PYTREC_EVAL = {"runid", "relstring", "rbp", "rbp_resid", "unj_5", "unj_10", "unj_20"}  # hand-worked elsewhere
GAINS = ("ndcg", "G", "Rndcg", "ndcg_rel", "ndcg_cut_")  # pytrec_eval's gain loops never end on negative grades


def trec_order(run: dict[str, float]) -> list[str]:
    """trec_eval's ranking of one topic: score descending, docno descending."""
    return [doc for doc, _ in sorted(run.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)]


@pytest.mark.parametrize(
    "flags", [[], ["-l2"], ["-J"], ["-M5"], ["-J", "-l", "3"]], ids=["plain", "l2", "J", "M5", "J-l3"]
)
@pytest.mark.parametrize("seed", range(25))
def test_all_trec_per_topic_matches_pytrec_eval(seed: int, flags: list[str]) -> None:
    unjudged = seed % 2 == 1
    qrels, runs = random_case(np.random.default_rng(4000 + seed), unjudged)
    options = parse_arguments([*flags, "-q", "-m", "all_trec", "qrels", "run"])
    tables = [to_run(name, run) for name, run in runs.items()]
    reports = evaluate(tables, to_qrels(qrels), select(options.measures), options)
    level = options.relevance_level
    for (name, run), report in zip(runs.items(), reports, strict=True):
        if options.max_per_topic is not None:
            run = {t: {d: docs[d] for d in trec_order(docs)[: options.max_per_topic]} for t, docs in run.items()}
        evaluator = pytrec_eval.RelevanceEvaluator(
            qrels, {"all_trec"}, relevance_level=level, judged_docs_only_flag=options.judged_only
        )
        reference = evaluator.evaluate(run)
        assert report.topics == [t for t in sorted(qrels) if t in run]
        for output in report.outputs:
            if output.name in NOT_IN_PYTREC_EVAL or output.summary is None and output.prints == "text":
                continue
            if unjudged and output.name.startswith(GAINS):
                continue
            for index, topic in enumerate(report.topics):
                num_rel = sum(g >= level for g in qrels[topic].values())
                if output.name.startswith(("iprec", "11pt")) and not v9_rounding_agrees(num_rel):
                    continue
                if output.prints in ("count", "runid"):
                    continue
                ours = float(output.per_topic[index])
                theirs = reference[topic][output.name]
                if math.isnan(theirs):
                    assert math.isnan(ours), (name, output.name, topic)
                else:
                    assert ours == pytest.approx(theirs, abs=1e-9, rel=0), (name, output.name, topic, flags)


def _report(argv: list[str], qrels: dict, run: dict) -> str:
    """The text the drop-in prints for one run."""
    options = parse_arguments([*argv, "q", "r"])
    (report,) = evaluate([to_run("tag", run)], to_qrels(qrels), select(options.measures), options)
    return format_report(report, per_topic=options.query, summary=options.summary)


QRELS = {"a": {"x": 1, "y": 0, "z": 2}, "b": {"x": 1, "w": 1}, "c": {"v": 0}}
RUN = {"a": {"x": 2.0, "q": 1.5, "z": 1.0}, "c": {"v": 1.0, "u": 0.5}}


def test_complete_prints_a_missing_topic_as_trec_eval_10_does() -> None:
    text = _report(["-q", "-c", "-m", "all_trec"], QRELS, RUN)
    lines = [line.split("\t") for line in text.splitlines()]
    topic_b = {name.strip(): value for name, topic, value in lines if topic == "b"}
    assert topic_b["num_ret"] == "0" and topic_b["num_rel"] == "2" and topic_b["relstring"] == "''"
    others = {k: v for k, v in topic_b.items() if k not in ("num_ret", "num_rel", "relstring")}
    assert set(others.values()) == {"0", "0.0000"}, others  # utility, unj, rbp_resid, iprec reset, the rest is 0
    assert len(others) == 93  # 96 lines per topic in all_trec
    summary = {name.strip(): value for name, topic, value in lines if topic == "all"}
    assert summary["num_q"] == "3" and summary["num_ret"] == "5" and summary["runid"] == "tag"
    ap_a = (1 / 1 + 2 / 3) / 2
    assert summary["map"] == f"{ap_a / 3:6.4f}"
    assert summary["gm_map"] == f"{math.exp((math.log(ap_a) + 2 * math.log(1e-5)) / 3):6.4f}"
    without = _report(["-q", "-m", "all_trec"], QRELS, RUN)
    assert "\tb\t" not in without and "num_q                 \tall\t2\n" in without


def test_selection_follows_trec_eval_order_and_first_parameters() -> None:
    text = _report(["-m", "P.10", "-m", "map", "-m", "P.5", "-m", "recall.20,5"], QRELS, RUN)
    assert [line.split("\t")[0].strip() for line in text.splitlines()] == ["map", "P_10", "recall_5", "recall_20"]
    names = [line.split("\t")[0] for line in _report(["-m", "set"], QRELS, RUN).splitlines()]
    assert [n.strip() for n in names] == ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
                                           "set_relative_P", "set_recall", "set_map", "set_F"]  # fmt: skip
    text = _report(["-m", "utility.2,-1,0,0", "-m", "iprec_at_recall..5,.1", "-m", "ndcg.1=3,2=9", "-m",
                    "relstring.3", "-q", "-m", "11pt_avg..25,.5", "-m", "rbp.p=0.5"], QRELS, RUN)  # fmt: skip
    names = [line.split("\t")[0].strip() for line in text.splitlines() if "\ta\t" in line]
    assert names == ["iprec_at_recall_0.10", "iprec_at_recall_0.50", "relstring_3", "utility_2,-1,0,0",
                     "11pt_avg_.25,.5", "ndcg_1=3,2=9", "rbp_p=0.5"]  # fmt: skip
    assert "relstring_3           \ta\t'1-2'\n" in text


def test_nosummary_zscores_and_judged_only() -> None:
    assert "\tall\t" not in _report(["-q", "-n", "-m", "map"], QRELS, RUN)
    options = parse_arguments(["-q", "-m", "map", "-m", "num_ret", "q", "r"])
    zscores = {("a", "map"): (0.5, 0.25), ("a", "num_ret"): (1.0, 0.0)}
    (report,) = evaluate([to_run("tag", RUN)], to_qrels(QRELS), select(options.measures), options, zscores)
    text = format_report(report, per_topic=True, summary=True)
    ap_a = (1 / 1 + 2 / 3) / 2
    assert f"map                   \ta\t{(ap_a - 0.5) / 0.25:6.4f}\n" in text
    assert "num_ret               \ta\t-1000000\n" in text  # 3 is not the mean and the stddev is 0
    assert "map                   \tc\t-1000000.0000\n" in text  # no z-score for topic c
    judged = _report(["-J", "-q", "-m", "num_ret", "-m", "P.1"], QRELS, RUN)
    assert "num_ret               \ta\t2\n" in judged and "P_1                   \ta\t1.0000\n" in judged


def test_c_number_formats() -> None:
    assert (c_float(0.03125), c_float(float("nan")), c_float(-float("nan")), c_float(-0.0)) == (
        "0.0312", "   nan", "  -nan", "-0.0000",
    )  # fmt: skip
    assert (c_long(2352.0), c_long(-909.9), c_long(float("nan"))) == ("2352", "-909", str(-(2**63)))


def test_refusals() -> None:
    for argv, message in [
        (["-m", "nonsense"], "illegal measure 'nonsense'"),
        (["-m", "P."], "improper measure in parameter 'P'"),
        (["-m", "P.0"], "Negative cutoff detected"),
        (["-m", "P.5,5"], "duplicate cutoffs detected"),
        (["-m", "ndcg.1"], "malformed pair parameters"),
        (["-m", "all_prefs"], "does not read"),
    ]:
        with pytest.raises(UsageError, match=message):
            select(parse_arguments([*argv, "q", "r"]).measures)
