"""Reproducing NIST sample_eval.pl's outputs (TRECVID AVS 2021) and pytrec_eval on TREC-COVID round 1."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from app.evaluation.errors import MeasureError
from app.evaluation.formats.trec_files import read_qrels, read_run
from app.evaluation.measures.evaluate import evaluate
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


# ------------------------------------------------------------------------ sample_eval.pl's own printed bytes


@pytest.mark.parametrize("run", AVS_RUNS)
def test_sample_eval_drop_in_prints_nist_bytes(run: str, data_dir: Path) -> None:
    """NIST's sample_eval.pl prints `%6.4f`, `%14.4f` (inum_rel_ret, inum_rel) and `%9d` (num_ret): the drop-in's
    default; `digits=12` is the script with its formats widened (the reference files for checking values)."""
    from app.cli.sample_eval import run_sample_eval

    avs = data_dir / "trecvid-avs-2021"
    qrels, run_path = avs / "avs.qrels.main.tv21", avs / "runs" / run
    nist = (avs / "expected" / f"{run}.sample_eval.nist.txt").read_text()
    assert run_sample_eval(qrels, run_path, per_topic=True, mapping={}) == nist
    wide = (avs / "expected" / f"{run}.sample_eval.txt").read_text()
    assert run_sample_eval(qrels, run_path, per_topic=True, mapping={}, digits=12) == wide


def test_trecpool_eval_keeps_its_own_format_on_sample_eval_qrels(data_dir: Path) -> None:
    # only the drop-in prints the script's layout; `trecpool eval` prints its names at full precision
    from click.testing import CliRunner

    from app.cli import cli

    avs = data_dir / "trecvid-avs-2021"
    result = CliRunner().invoke(cli, ["eval", "--run-topics-only", str(avs / "avs.qrels.main.tv21"),
                                      str(avs / "runs" / "syn7_0")])  # fmt: skip
    assert result.exit_code == 0, result.stderr
    rows = {name: value for name, topic, value in (line.split("\t") for line in result.stdout.splitlines())}
    expected = read_expected(avs / "expected" / "syn7_0.sample_eval.txt")
    assert float(rows["xinfAP"]) == pytest.approx(expected["infAP"]["all"], abs=1e-12)
    assert len(rows["xinfAP"]) > 12 and rows["num_ret"] == "14627"  # repr, not %6.4f; counts as integers
    assert "infAP" not in rows and "iP5" not in rows and "iP@5" in rows


# ------------------------------------------------------------------------ trec_eval 10.0, hand-worked from its source


def trec_eval_10(tmp_path: Path, qrels: str, run: str, *argv: str, zscores: str | None = None) -> tuple[int, str, str]:
    """(status, stdout, stderr) of the drop-in on these qrels and run texts (and -Z file text)."""
    import io

    from app.evaluation.trec_eval import main

    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    extra = []
    if zscores is not None:
        (tmp_path / "z").write_text(zscores)
        extra = ["-Z", str(tmp_path / "z")]
    out, err = io.StringIO(), io.StringIO()
    status = main([*argv, *extra, str(tmp_path / "qrels"), str(tmp_path / "run")], out, err)
    return status, out.getvalue(), err.getvalue()


def line(name: str, topic: str, value: str) -> str:
    """One trec_eval line: `%-22s\\t%s\\t` then the value as printed."""
    return f"{name:<22}\t{topic}\t{value}\n"


def zline(name: str, topic: str, value: str) -> str:
    """One trec_eval -Z line: `Z%-22s\\t%s\\t%6.4f`."""
    return "Z" + line(name, topic, value)


def test_trec_eval_c_num_rel_counts_every_qrels_line_graded_above_0(tmp_path: Path) -> None:
    """trec_eval 10.0, m_num_rel.c: with -c, num_rel's calc_avg replaces the summed topics by a count of every qrels
    line (of every topic, answered or not) whose grade is above 0, whatever -l says; per topic num_rel still counts
    the grades >= -l. Hand-worked: grades > 0 are a, b, d, f, g (e is -1, c is 0): 5."""
    qrels = "1 0 a 2\n1 0 b 1\n1 0 c 0\n2 0 d 1\n2 0 e -1\n3 0 f 3\n3 0 g 2\n"
    run = "1 Q0 a 1 2.0 r\n1 Q0 c 2 1.0 r\n3 Q0 f 1 1.0 r\n"
    status, out, _ = trec_eval_10(tmp_path, qrels, run, "-c", "-l2", "-q", "-m", "num_rel")
    assert status == 0
    assert out == line("num_rel", "1", "1") + line("num_rel", "2", "0") + line("num_rel", "3", "2") + line(
        "num_rel", "all", "5"
    )  # the topics add up to 3
    _, out, _ = trec_eval_10(tmp_path, qrels, run, "-c", "-l0", "-m", "num_rel")
    assert out == line("num_rel", "all", "5")  # -l0 topics: 3 + 1 + 2 = 6
    _, out, _ = trec_eval_10(tmp_path, qrels, run + "2 Q0 d 1 1.0 r\n", "-l2", "-m", "num_rel")
    assert out == line("num_rel", "all", "3")  # without -c: the topics' own counts, summed
    _, out, _ = trec_eval_10(tmp_path, qrels, run, "-c", "-l2", "-m", "num_rel", zscores="1 num_rel 0 1\n")
    assert out == zline("num_rel", "all", "5.0000")  # calc_avg comes after the z-scores: the count, %6.4f


def test_trec_eval_z_names_and_formats(tmp_path: Path) -> None:
    """trec_eval 10.0 with -Z (convert_zscores.c, meas_print_single.c, meas_print_final.c): each value becomes
    (value - mean) / stddev from the file's `topic measure mean stddev` line for its topic and value name (P_1, not P),
    0 when stddev is 0 and the value is the mean, else -1000000 (also when the file lacks the line); every number is
    printed `Z%-22s\\t%s\\t%6.4f`, counts included; num_q's summary stays the topic count, gm_map's is
    exp(mean of z-scores); runid and relstring print as without -Z.

    Hand-worked: topic 1 ranks a (1), x: num_ret 2, map 1, P_1 1, gm_map log 1 = 0; topic 2 ranks y, c (1): num_ret 2,
    map 1/2, P_1 0, gm_map log 0.5."""
    qrels = "1 0 a 1\n1 0 b 0\n2 0 c 1\n"
    run = "1 Q0 a 1 2.0 tag\n1 Q0 x 2 1.0 tag\n2 Q0 y 1 1.0 tag\n2 Q0 c 2 0.5 tag\n"
    z = "1 num_ret 1 0.5\n2 num_ret 2 0\n1 map 0.5 0.25\n2 map 0.25 0.5\n1 P_1 1 0\n2 P_1 1 0\n1 gm_map 0 1\n"
    argv = ["-q", "-m", "num_ret", "-m", "map", "-m", "gm_map", "-m", "P.1", "-m", "relstring.3", "-m", "runid",
            "-m", "num_q"]  # fmt: skip
    status, out, err = trec_eval_10(tmp_path, qrels, run, *argv, zscores=z)
    assert (status, err) == (0, "")
    assert out == (
        zline("num_ret", "1", "2.0000")  # (2 - 1) / 0.5
        + zline("map", "1", "2.0000")  # (1 - 0.5) / 0.25
        + zline("P_1", "1", "0.0000")  # stddev 0, value = mean
        + line("relstring_3", "1", "'1-'")
        + zline("num_ret", "2", "0.0000")
        + zline("map", "2", "0.5000")  # (0.5 - 0.25) / 0.5
        + zline("P_1", "2", "-1000000.0000")  # stddev 0, value 0 is not the mean 1
        + line("relstring_3", "2", "'-1'")
        + line("runid", "all", "tag")
        + zline("num_q", "all", "2.0000")
        + zline("num_ret", "all", "2.0000")  # counts: the sum
        + zline("map", "all", "1.2500")
        + zline("gm_map", "all", "0.0000")  # exp((0 - 1000000) / 2): topic 2 has no gm_map line
        + zline("P_1", "all", "-500000.0000")
    )
    # the layout of trec_eval's own test/out.test.aqZ (10.0's `make quicktest`), line for line
    assert zline("num_nonrel_judged_ret", "301", "-0.2633") == "Znum_nonrel_judged_ret \t301\t-0.2633\n"
    assert zline("num_ret", "301", "-1.8922") == "Znum_ret               \t301\t-1.8922\n"


def test_trec_eval_empty_lists_print_negative_nan(tmp_path: Path) -> None:
    """trec_eval 10.0, m_iprec_at_recall.c and m_11pt_avg.c: interpolation starts from num_rel_ret / num_ret, which is
    0.0 / 0.0 = -nan (x86-64's default NaN, printed `-nan`) when nothing is retrieved, and that value is handed to
    every level whose cutoff lround(level x num_rel) is at most num_rel_ret = 0; 11pt_avg adds it into its sum. Nothing
    is retrieved for a -c placeholder under -J (its one doc, not in the qrels, is dropped), for a topic whose docs
    -J drops, and under -M0. The `all` lines add the -nan in.

    Hand-worked: topic 1 (R 1) retrieves a then z (not judged): with -J only a, every level 1.0. Topic 2 (R 2, lacking):
    cutoffs 0, 0, 0, 1, ...: -nan at 0.00, 0.10, 0.20. Topic 5 (R 5, lacking): lround(0.5) = 1, so -nan at 0.00 only."""
    qrels = "1 0 a 1\n1 0 b 0\n2 0 c 1\n2 0 d 1\n" + "".join(f"5 0 j{i} 1\n" for i in range(5))
    run = "1 Q0 a 1 2.0 r\n1 Q0 z 2 1.0 r\n"
    status, out, _ = trec_eval_10(tmp_path, qrels, run, "-c", "-J", "-q", "-m", "iprec_at_recall..0,.1,.2,.3,1",
                                  "-m", "11pt_avg", "-m", "num_ret")  # fmt: skip
    assert status == 0
    iprec = ("iprec_at_recall_0.00", "iprec_at_recall_0.10", "iprec_at_recall_0.20", "iprec_at_recall_0.30",
             "iprec_at_recall_1.00")  # fmt: skip

    def block(topic: str, ret: str, levels: list[str], avg: str) -> str:
        """The lines of one topic."""
        middle = "".join(map(line, iprec, [topic] * 5, levels))
        return line("num_ret", topic, ret) + middle + line("11pt_avg", topic, avg)

    nan, zero, one = "  -nan", "0.0000", "1.0000"
    assert out == (
        block("1", "1", [one] * 5, one)
        + block("2", "0", [nan, nan, nan, zero, zero], nan)
        + block("5", "0", [nan, zero, zero, zero, zero], nan)
        + block("all", "1", [nan, nan, nan, "0.3333", "0.3333"], nan)
    )
    # without -J the placeholder keeps its one doc (num_ret 1, then reset to 0): 0 / 1, no -nan
    _, out, _ = trec_eval_10(tmp_path, qrels, run, "-c", "-q", "-m", "iprec_at_recall..0", "-m", "11pt_avg")
    assert "nan" not in out and line("iprec_at_recall_0.00", "2", zero) in out
    # an answered topic whose docs -J drops, here with no relevant doc at all (R 0): every cutoff is 0
    status, out, _ = trec_eval_10(tmp_path, "3 0 h 0\n", "3 Q0 y 1 1.0 r\n", "-J", "-m", "iprec_at_recall",
                                  "-m", "11pt_avg")  # fmt: skip
    assert status == 0 and out.count("  -nan\n") == 12 and out.count("\n") == 12
    # -M0 retrieves nothing: R 1 gives cutoffs 0 up to level 0.4 (lround(0.5) = 1); 11pt_avg over .5 and 1 adds none
    _, out, _ = trec_eval_10(tmp_path, "1 0 a 1\n", "1 Q0 a 1 1.0 r\n", "-M0", "-m", "iprec_at_recall",
                             "-m", "11pt_avg.0.5,1")  # fmt: skip
    values = [text.split("\t")[2] for text in out.splitlines()]
    assert values == [nan] * 5 + [zero] * 6 + [zero]
    assert out.splitlines()[-1].startswith("11pt_avg_0.5,1 ")


def test_trec_eval_without_c_a_lacking_topic_repeats_the_last_one_found(tmp_path: Path) -> None:
    """trec_eval 10.0, trec_eval.c: the loop over the qrels topics (strcmp order) only replaces `this_result` when the
    run has the topic, and only -c swaps in its placeholder; without -c a lacking topic is evaluated with the last
    topic found (form_res_rels.c's cache, keyed by that topic's id, returns its ranking): that topic's lines print
    again under its own id and it counts again in num_q and every `all`. Before any topic is found the pointer is
    unset (undefined behaviour): the drop-in stops there with status 4. The drop-in warns on stderr each time."""
    qrels = "1 0 a 1\n1 0 b 0\n2 0 c 1\n3 0 d 1\n4 0 e 1\n"
    run = "1 Q0 b 1 2.0 r\n1 Q0 a 2 1.0 r\n3 Q0 d 1 1.0 r\n"
    status, out, err = trec_eval_10(tmp_path, qrels, run, "-q", "-m", "num_q", "-m", "map")
    assert status == 0
    assert out == (
        line("map", "1", "0.5000") + line("map", "1", "0.5000") + line("map", "3", "1.0000")
        + line("map", "3", "1.0000") + line("num_q", "all", "4") + line("map", "all", "0.7500")
    )  # fmt: skip
    run_path = tmp_path / "run"
    assert err == (
        f"trec_eval: warning: qrels topic '2' has no results in '{run_path}': without -c, trec_eval 10.0 evaluates "
        "topic '1' again in its place (printed and averaged twice); use -c\n"
        f"trec_eval: warning: qrels topic '4' has no results in '{run_path}': without -c, trec_eval 10.0 evaluates "
        "topic '3' again in its place (printed and averaged twice); use -c\n"
    )
    status, out, _ = trec_eval_10(tmp_path, qrels, run, "-c", "-q", "-m", "num_q", "-m", "map")
    assert out == (
        line("map", "1", "0.5000") + line("map", "2", "0.0000") + line("map", "3", "1.0000")
        + line("map", "4", "0.0000") + line("num_q", "all", "4") + line("map", "all", "0.3750")
    )  # fmt: skip
    # strcmp order: "10" comes before "9", so a run with topic 9 only lacks the first topic: undefined in 10.0
    status, out, err = trec_eval_10(tmp_path, "9 0 a 1\n10 0 b 1\n", "9 Q0 a 1 1.0 r\n", "-m", "map")
    assert (status, out) == (4, "")
    assert err.startswith(f"trec_eval: qrels topic '10' has no results in '{run_path}' and no qrels topic before it")
