"""The core's sample_eval.pl measures against the plain transcription of the script (sample_eval_reference.py).

The transcription reproduces the script's own outputs byte for byte (first test), so agreeing with it to the last bit
means agreeing with the script, also on what its outputs do not cover: graded qrels (infNDCG's ideal from the grades),
topics a run lacks, grade -1, runs longer than 1000, ties, R_hat > 1000, topics without relevant docs.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from app.evaluation.formats.trec_files import parse_qrels, parse_trec_run
from app.evaluation.measures.evaluate import evaluate
from tests.evaluation import sample_eval_reference as reference
from tests.evaluation.cases import graded_copy, synthetic

AVS_RUNS = ["syn7_0", "syn7_1", "syn7_2", "syn7_3"]
OURS = {"infAP": "xinfAP", "infNDCG": "infNDCG", "inum_rel_ret": "inum_rel_ret", "inum_rel": "inum_rel"}
OURS.update({f"iP{k}": f"iP@{k}" for k in reference.CUTOFFS})


@pytest.fixture(scope="module")
def avs(shared_data: Path) -> Path:
    """The TRECVID AVS 2021 data directory."""
    return shared_data / "trecvid-avs-2021"


@pytest.fixture(scope="module")
def tv21_qrels(avs: Path) -> str:
    """The real tv21 sample_eval qrels, as text."""
    return (avs / "avs.qrels.main.tv21").read_text()


def ours(qrels_text: str, run_text: str) -> dict[str, dict[str, float]]:
    """Our per-topic values for the run's topics that the qrels judge, by the script's names."""
    results = evaluate(parse_qrels(qrels_text), [parse_trec_run(run_text)], sorted(set(OURS.values())))
    out: dict[str, dict[str, float]] = {}
    for name, measure in OURS.items():
        row = results.values[0, results.measures.index(measure)]
        answered = results.answered[0]
        out[name] = {t: float(v) for t, v, a in zip(results.topics, row, answered, strict=True) if a}
    return out


def theirs(evaluation: reference.Evaluation) -> dict[str, dict[str, float]]:
    """The transcription's per-topic values, by the script's names."""
    fields = {"infAP": "infap", "infNDCG": "infndcg", "inum_rel_ret": "num_rel_ret", "inum_rel": "num_rel"}
    out: dict[str, dict[str, float]] = {}
    for name in OURS:
        if name in fields:
            out[name] = {t: getattr(r, fields[name]) for t, r in evaluation.topics.items()}
        else:
            out[name] = {t: r.precision[int(name[2:])] for t, r in evaluation.topics.items()}
    return out


@pytest.mark.parametrize("run", AVS_RUNS)
def test_the_transcription_reproduces_sample_eval_outputs(run: str, avs: Path, tv21_qrels: str) -> None:
    expected = (avs / "expected" / f"{run}.sample_eval.txt").read_text()
    evaluation = reference.evaluate(tv21_qrels, (avs / "runs" / run).read_text())
    assert reference.report(evaluation, per_topic=True) == expected


@pytest.mark.parametrize("run", AVS_RUNS)
def test_core_equals_the_transcription_to_the_bit(run: str, avs: Path, tv21_qrels: str) -> None:
    run_text = (avs / "runs" / run).read_text()
    assert ours(tv21_qrels, run_text) == theirs(reference.evaluate(tv21_qrels, run_text))


def test_infndcg_hand_worked_graded_case() -> None:
    # stratum 1 fully judged: a (2), b (1), c (0); stratum 2 half sampled: d (2), f (0) judged, e, g, h unjudged
    qrels = "1 0 a 1 2\n1 0 b 1 1\n1 0 c 1 0\n1 0 d 2 2\n1 0 e 2 -1\n1 0 f 2 0\n1 0 g 2 -1\n1 0 h 2 -1\n"
    # ranked: d (s2, 2), e (s2, unjudged), a (s1, 2), x (not pooled), b (s1, 1), f (s2, 0)
    run = "".join(f"1 Q0 {doc} {k} {10 - k} r\n" for k, doc in enumerate("deaxbf", start=1))
    # docs of grade 2: 1 * 3/3 + 1 * 5/2 = 3.5; of grade 1: 1 * 3/3 = 1. The ideal puts grade 2 at ranks 1, 2, 3
    # (<= 3.5), then grade 1 from rank 3.5 + 1 = 4.5 (<= 3.5 + 1): a fractional rank, as the script counts.
    ideal = 2 / math.log2(2) + 2 / math.log2(3) + 2 / math.log2(4) + 1 / math.log2(5.5)
    # the run: stratum 1 has d_1 = 2 docs, s_1 = 2 judged, gains 2/log2(4) (a) + 1/log2(6) (b);
    # stratum 2 has d_2 = 3, s_2 = 2, gain 2/log2(2) (d). DCG = sum_c d_c G_c / s_c.
    dcg = 2 * (2 / math.log2(4) + 1 / math.log2(6)) / 2 + 3 * (2 / math.log2(2)) / 2
    value = ours(qrels, run)["infNDCG"]["1"]
    assert value == pytest.approx(dcg / ideal, abs=1e-12)
    assert value == pytest.approx(0.9396792820, abs=1e-9)
    # gain 1 for every relevant doc over floor(R_hat) = floor(2 + 2.5) = 4 ranks (the old ideal) would give 1.7125...
    assert value != pytest.approx(dcg / sum(1 / math.log2(k + 1) for k in range(1, 5)), abs=1e-3)
    assert value == reference.evaluate(qrels, run).topics["1"].infndcg


@pytest.mark.parametrize("run", AVS_RUNS)
def test_infndcg_on_graded_tv21_equals_the_transcription(run: str, avs: Path, tv21_qrels: str) -> None:
    graded = graded_copy(tv21_qrels)
    twos = sum(1 for line in graded.splitlines() if line.endswith(" 2"))
    assert 0.35 < twos / (7021 + 5174 + 3454) < 0.45
    run_text = (avs / "runs" / run).read_text()
    expected = reference.evaluate(graded, run_text)
    got = ours(graded, run_text)
    assert got["infNDCG"] == {t: r.infndcg for t, r in expected.topics.items()}
    assert got == theirs(expected)  # the other measures do not look at grades: unchanged, and equal too
    binary = reference.evaluate(tv21_qrels, run_text)
    changed = [t for t in expected.topics if expected.topics[t].infndcg != binary.topics[t].infndcg]
    assert len(changed) >= len(expected.topics) // 2  # the grades do move infNDCG


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_core_equals_the_transcription_on_edge_cases(seed: int) -> None:
    qrels, run = synthetic(seed)
    assert ours(qrels, run) == theirs(reference.evaluate(qrels, run))


@pytest.mark.parametrize("seed", [3, 4])
def test_core_equals_the_transcription_with_grades_past_nine(seed: int) -> None:
    # the script takes grades as strings for the ideal: "9" sorts after "12", so grade 9 fills the first ranks
    qrels, run = synthetic(seed, grades=(0, 1, 2, 9, 12))
    assert ours(qrels, run) == theirs(reference.evaluate(qrels, run))


def test_edge_cases_are_in_the_synthetic_data() -> None:
    qrels, run = synthetic(0)
    evaluation = reference.evaluate(qrels, run)
    assert list(evaluation.topics) == ["99", "101", "102", "104", "106"]  # numeric order; 105 unanswered, 777 unjudged
    assert evaluation.topics["101"].num_ret == 1500 and len(evaluation.topics["101"].estimated_at_rank) == 1000
    assert evaluation.topics["102"].num_rel > 1000 and evaluation.topics["104"].num_rel == 0
    assert evaluation.num_ret_all == 1000 + sum(evaluation.topics[t].num_ret for t in ("99", "102", "104", "106"))


def test_iprec_levels_equal_the_transcription_on_edge_cases() -> None:
    # the `all` iprec values: eleven levels handed out at most one per rank, a topic with R_hat = 0 included
    for seed in (0, 1, 2):
        qrels, run = synthetic(seed)
        results = evaluate(parse_qrels(qrels), [parse_trec_run(run)], [f"iprec@rec{i / 10:.2f}" for i in range(11)])
        answered = results.answered[0]
        topics = sorted(t for t, a in zip(results.topics, answered, strict=True) if a)
        expected = reference.evaluate(qrels, run).all
        for m, name in enumerate(results.measures):
            total = 0.0
            for t in topics:
                total += float(results.values[0, m, results.topics.index(t)])
            assert total / len(topics) == expected[name], (seed, name)


def test_iprec_of_a_topic_without_relevant_docs_is_its_best_precision() -> None:
    # R_hat = 0: every cutoff is 0, no rank is below it, so every level gets the best precision over the list
    qrels = "1 0 a 1 0\n1 0 b 1 0\n1 0 c 2 -1\n"
    run = "1 Q0 a 1 3 r\n1 Q0 c 2 2 r\n1 Q0 z 3 1 r\n"
    results = evaluate(parse_qrels(qrels), [parse_trec_run(run)], ["iprec@rec0.00", "iprec@rec0.50", "iprec@rec1.00"])
    # inferred relevant docs: a (judged, not relevant) 1e-5 / (1 + 3e-5); c (unjudged, its stratum unsampled) adds
    # 1e-5 / 3e-5; z is not pooled. Precision 1e-5/(1 + 3e-5), then (that + 1/3) / 2, then the same / 3.
    first = 1e-5 / (1 + 3e-5)
    best = (first + 1e-5 / 3e-5) / 2
    assert results.values[0, :, 0].tolist() == pytest.approx([best] * 3, rel=1e-12)
    assert reference.evaluate(qrels, run).all["iprec@rec0.50"] == results.values[0, 1, 0]


def test_ties_are_broken_by_docno_descending() -> None:
    qrels = "1 0 a 1 1\n1 0 b 1 0\n"
    first = ours(qrels, "1 Q0 a 1 1.0 r\n1 Q0 b 2 1 r\n")  # equal scores: b ranks above a
    assert first["iP5"]["1"] == reference.evaluate(qrels, "1 Q0 a 1 1.0 r\n1 Q0 b 2 1 r\n").topics["1"].precision[5]
    assert first["infAP"]["1"] == pytest.approx(0.5 + 0.5 * (1e-5 / (1 + 3e-5)), abs=1e-12)


@pytest.mark.parametrize(
    ("twos", "ones", "unjudged"), [(1100, 40, 0), (998, 5, 0), (700, 500, 3), (3, 2, 1), (3, 2, 2)]
)
def test_ideal_dcg_at_and_past_max_results_equals_the_transcription(twos: int, ones: int, unjudged: int) -> None:
    # past rank 1000 the script stops a grade after one rank >= 1000, and each later grade still adds one term
    # there; with unjudged docs in stratum 2 the estimates are fractional, and so are the later grades' ranks
    lines = [f"7 0 t{i} 1 2" for i in range(twos)] + [f"7 0 o{i} 1 1" for i in range(ones)]
    lines += [f"7 0 u{i} 2 {2 if i % 3 == 0 else -1}" for i in range(3 * unjudged)] + ["7 0 n 2 0"]
    qrels = "\n".join(lines) + "\n"
    run = "".join(f"7 Q0 {doc} 1 {-k} r\n" for k, doc in enumerate(["o0", "t0", "u0", "x", "n", "t1"]))
    value = ours(qrels, run)["infNDCG"]["7"]
    assert value == reference.evaluate(qrels, run).topics["7"].infndcg
    assert value > 0
