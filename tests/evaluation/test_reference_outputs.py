"""Reproducing NIST sample_eval.pl's outputs (TRECVID AVS 2021) and pytrec_eval on TREC-COVID round 1."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from app.evaluation.errors import MeasureError
from app.evaluation.evaluator import evaluate
from app.evaluation.formats.trec_files import read_qrels, read_run
from app.evaluation.measures.registry import default_measures, resolve
from app.evaluation.records import Qrels, RunTable


@pytest.fixture(scope="module")
def data_dir(shared_data: Path) -> Path:
    """The shared data directory (the root conftest skips when it is absent)."""
    return shared_data


AVS_RUNS = ["syn7_0", "syn7_1", "syn7_2", "syn7_3"]
SAMPLE_EVAL_NAMES = {
    "infAP": "xinfAP",  # sample_eval.pl prints xinfAP as infAP
    "infNDCG": "infNDCG",
    "inum_rel": "inum_rel",
    "inum_rel_ret": "inum_rel_ret",
    "num_ret": "num_ret",
    **{f"iP{k}": f"iP@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)},
    **{f"iprec@rec{i / 10:.2f}": f"iprec@rec{i / 10:.2f}" for i in range(11)},  # printed for `all` only
}


def read_expected(path: Path) -> dict[str, dict[str, float]]:
    """{measure: {topic or all: value}} from a sample_eval.pl output file."""
    out: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            measure, topic, value = line.split()
            out.setdefault(measure, {})[topic] = float(value)
    return out


@pytest.fixture(scope="module")
def avs_results(data_dir: Path):
    """Our evaluation of the four synthetic AVS runs, averaged over the topics each run answers."""
    avs = data_dir / "trecvid-avs-2021"
    qrels = read_qrels(avs / "avs.qrels.main.tv21")
    runs = [read_run(avs / "runs" / name) for name in AVS_RUNS]
    measures = sorted(set(SAMPLE_EVAL_NAMES.values()))
    return evaluate(qrels, runs, measures, run_topics_only=True).to_dict()


@pytest.mark.parametrize("run", AVS_RUNS)
def test_sample_eval_outputs_reproduced(run: str, data_dir: Path, avs_results) -> None:
    expected = read_expected(data_dir / "trecvid-avs-2021" / "expected" / f"{run}.sample_eval.txt")
    ours = avs_results[run]
    checked = 0
    assert {f"iprec@rec{i / 10:.2f}" for i in range(11)} <= set(expected)
    for measure, per_topic in expected.items():
        name = SAMPLE_EVAL_NAMES[measure]
        if measure.startswith("iprec@rec"):
            assert set(per_topic) == {"all"}, (run, measure)
        else:
            assert set(per_topic) == set(ours[name]), (run, measure)
        for topic, value in per_topic.items():
            # the file has 12 decimals: agreement to 1e-9 on the printed value
            assert ours[name][topic] == pytest.approx(value, abs=1e-9, rel=0), (run, measure, topic)
            checked += 1
    assert checked >= 13 * 19 + 11


def test_sample_eval_infndcg_reproduced(data_dir: Path, avs_results) -> None:
    # stratum 3 is sampled, so this pins the run's own d_c / s_c weighting, not the pool's N_c / n_c
    for run in AVS_RUNS:
        expected = read_expected(data_dir / "trecvid-avs-2021" / "expected" / f"{run}.sample_eval.txt")
        for topic, value in expected["infNDCG"].items():
            assert avs_results[run]["infNDCG"][topic] == pytest.approx(value, abs=1e-9, rel=0)


def test_syn7_0_lacks_a_topic_and_is_averaged_over_its_own(avs_results) -> None:
    assert "1676" not in avs_results["syn7_0"]["xinfAP"]
    assert len(avs_results["syn7_0"]["xinfAP"]) == 20  # 19 topics + all


def test_trec_covid_round1_matches_pytrec_eval(data_dir: Path) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    covid = data_dir / "trec-covid-round1"
    run_paths = sorted((covid / "runs").glob("*.gz"))
    assert len(run_paths) == 30
    qrels = read_qrels(covid / "qrels.txt")
    tables = [read_run(p) for p in run_paths]
    names = {"AP": "map", "bpref": "bpref", "P@5": "P_5", "nDCG@10": "ndcg_cut_10"}
    ours = evaluate(qrels, tables, list(names))
    qrels_dict: dict[str, dict[str, int]] = {}
    for t, d, g in zip(qrels.topics.tolist(), qrels.docs.tolist(), qrels.grades.tolist(), strict=True):
        qrels_dict.setdefault(t, {})[d] = g
    evaluator = pytrec_eval.RelevanceEvaluator(qrels_dict, set(names.values()))
    for r, table in enumerate(tables):
        run_dict: dict[str, dict[str, float]] = {}
        for t, d, s in zip(table.topics.tolist(), table.docs.tolist(), table.scores.tolist(), strict=True):
            run_dict.setdefault(t, {})[d] = s
        reference = evaluator.evaluate(run_dict)
        for m, theirs in enumerate(names.values()):
            expected = np.array([reference.get(t, {}).get(theirs, 0.0) for t in ours.topics])
            np.testing.assert_allclose(ours.values[r, m], expected, atol=1e-9, rtol=0)
            assert ours.mean()[r, m] == pytest.approx(expected.mean(), abs=1e-9)


def test_iprec_per_topic_values_are_interpolated(avs_results) -> None:
    # sample_eval prints iprec for `all` only; ours has every answered topic too, non-increasing in the level
    for run in AVS_RUNS:
        levels = [avs_results[run][f"iprec@rec{i / 10:.2f}"] for i in range(11)]
        assert set(levels[0]) == set(avs_results[run]["xinfAP"])
        for topic in levels[0]:
            values = [per_topic[topic] for per_topic in levels]
            assert all(a >= b for a, b in zip(values, values[1:], strict=False)), (run, topic, values)


def test_iprec_walks_back_from_the_end_where_inferred_recall_dips() -> None:
    # R_hat = 2 + 1 * 4/2 = 4. Ranked a, c, e, d, f: inferred relevant 1, 2, 3, 2.5, 3 (eps aside), so
    # precision 1, 1, 1, .625, .6 and recall .25, .5, .75, .625, .75: the judged non-relevant d lowers the estimate.
    qrels = Qrels(
        topics=np.array(["1"] * 6),
        docs=np.array(["a", "b", "c", "d", "e", "f"]),
        grades=np.array([1, 1, 1, 0, -1, -1]),
        strata=np.array([1, 1, 2, 2, 2, 2]),
    )
    docs = ["a", "c", "e", "d", "f"]
    run = RunTable(
        tag="r",
        topics=np.array(["1"] * 5),
        docs=np.array(docs),
        ranks=np.arange(1, 6),
        scores=np.arange(5, 0, -1, dtype=np.float64),
        lines=np.arange(1, 6),
    )
    levels = ["iprec@rec0.00", "iprec@rec0.6", "iprec@rec.7", "iprec@rec0.74", "iprec@rec0.80", "iprec@rec1"]
    results = evaluate(qrels, [run], levels)
    assert results.measures == [
        "iprec@rec0.00", "iprec@rec0.60", "iprec@rec0.70", "iprec@rec0.74", "iprec@rec0.80", "iprec@rec1.00",
    ]  # fmt: skip
    values = results.values[0, :, 0]
    # 0.7 and 0.74: rank 3 has recall .75 but rank 4 dips below; from the last rank below (rank 4, included) to the
    # end gives max(.625, .6), not trec_eval's 1.0 at rank 3. 0.8 and 1: the recall at the end (.75) is below them.
    np.testing.assert_allclose(values, [1.0, 1.0, 0.625, 0.625, 0.0, 0.0], atol=1e-4)


@pytest.mark.parametrize(
    ("name", "canonical"),
    [("iprec@rec0.50", "iprec@rec0.50"), ("iprec@rec0.5", "iprec@rec0.50"), ("iprec@rec1", "iprec@rec1.00"),
     ("iprec@rec.1", "iprec@rec0.10"), ("iprec@rec0", "iprec@rec0.00")],
)  # fmt: skip
def test_iprec_names(name: str, canonical: str) -> None:
    spec = resolve(name)
    assert (spec.name, spec.stratified, spec.aggregate) == (canonical, True, "mean")


@pytest.mark.parametrize("name", ["iprec@rec1.5", "iprec@rec0.125", "iprec@rec", "iprec@rec."])
def test_iprec_bad_levels(name: str) -> None:
    with pytest.raises(MeasureError):
        resolve(name)


def test_iprec_in_sample_eval_defaults_only() -> None:
    levels = [f"iprec@rec{i / 10:.2f}" for i in range(11)]
    assert set(levels) <= set(default_measures(stratified=True))
    assert not set(levels) & set(default_measures(stratified=False))
