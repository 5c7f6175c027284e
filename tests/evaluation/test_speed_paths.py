"""The vectorised fast paths give exactly what the list-based / dict-based paths give, on random and odd inputs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from app.evaluation.errors import FormatError
from app.evaluation.fast.columns import parse_floats, parse_ints, split_columns
from app.evaluation.formats.trec_files import parse_trec_run
from app.evaluation.grading import prepared_runs as ranking
from app.evaluation.grading.prepared_runs import prepare_runs
from app.evaluation.records import RunTable
from tests.evaluation.cases import random_runs
from tests.evaluation.reference import _parse_trec_run_from_lists, prepare_runs_with_dicts


def outcome(call, data):
    """The parsed table's contents, or the error list."""
    try:
        table = call(data)
    except FormatError as exc:
        return ("error", exc.errors)
    assert isinstance(table, RunTable)
    return (
        table.tag,
        [str(v) for v in table.topics.tolist()],
        [str(v) for v in table.docs.tolist()],
        table.ranks.tolist(),
        table.scores.view(np.int64).tolist(),  # bitwise: -0.0 and 0.0 differ
        table.lines.tolist(),
    )


def same_as_lists(data: bytes | str) -> tuple:
    """Assert the fast and the list-based parsers agree; return the outcome."""
    fast = outcome(parse_trec_run, data)
    slow = outcome(lambda d: _parse_trec_run_from_lists(d, max_errors=50, source="run"), data)
    assert fast == slow
    return fast


DOCS = ["d1", "caf\u00e9", "\u65e5\u672c", "x" * 300, "a.b-c_d", "D\U0001f600", "shot1_2"]
SCORES = [
    "1",
    "0.5",
    "-0.0",
    "1e-3",
    "+2.5",
    "3.",
    ".25",
    "0.1234567890123456789",
    "-7",
    "1E5",
    "12345678901234",
]


@pytest.mark.parametrize("seed", range(40))
def test_random_runs_parse_like_the_list_path(seed: int) -> None:
    rng = np.random.default_rng(seed)
    lines = []
    for topic in rng.choice(["1", "2", "30", "t\u00e9"], size=3, replace=False).tolist():
        docs = rng.choice(DOCS + [f"doc{i}" for i in range(30)], size=int(rng.integers(1, 12)), replace=False)
        for k, doc in enumerate(docs.tolist()):
            score = str(rng.choice(SCORES)) if rng.random() < 0.5 else repr(float(rng.normal()))
            sep = str(rng.choice([" ", "\t", "  ", " \t "]))
            lines.append(sep.join([topic, "Q0", doc, str(k + 1), score, "tag"]) + str(rng.choice(["", " ", "\r"])))
            if rng.random() < 0.1:
                lines.append(str(rng.choice(["", "  ", "\t", "\r"])))
    text = "\n".join(lines) + str(rng.choice(["", "\n", "\n\n", "\r\n"]))
    result = same_as_lists(text.encode())
    assert result[0] != "error"
    same_as_lists(text)


@pytest.mark.parametrize(
    "text",
    [
        "1 Q0 a 1 1 t\r\n1 Q0 b 2 0.5 t\r\n",
        "\n\n1 Q0 a 1 1 t\n\n\n1 Q0 b 2 0.5 t",
        "1 Q0 a 1 1 t   \n  1\tQ0\tb\t2\t0.5\tt\t\n",
        "1 Q0 caf\u00e9 1 1 t\n1 Q0 b 2 0.5 t\n",
        "1 Q0 a\u00a0b 1 1 t\n",  # NBSP splits a token (str.split)
        "1 Q0 a\u3000b 1 1 t x\n",
        "1 Q0 a\x1cb 1 1 t x\n",  # \x1c is white space to str.split
        "1 Q0 a\x01b 1 1 t\n",  # other control characters are not
        "1 Q0 a\x00 1 1 t\n",
        "1 Q0 a 1 1 t\n1 Q0 a 2 1 t\n",  # duplicate
        "1 Q0 a 1 1 t\n2 Q0 a 2 1 t\n1 Q0 b 3 1 u\n",  # tag differs
        "1 Q0 a 1 inf t\n",
        "1 Q0 a 1 nan t\n",
        "1 Q0 a 1 1e400 t\n",
        "1 Q0 a x 1 t\n",
        "1 Q0 a +3 1 t\n1 Q0 b -4 1 t\n1 Q0 c 1_0 1 t\n",
        "1 Q0 a 99999999999999999999 1 t\n",
        "1 Q0 a 1 1 t\n1 Q0 b 2 t\n",
        "1 Q0 a 1 1 t 1 Q0 b 2 1 t\n",
        "1 Q0 a 1 1 t\n1 Q0\n b 2 1 t\n",
        "1 Q0 a 1 - t\n1 Q0 b 1 . t\n1 Q0 c 1 -.5 t\n",
        "1 Q0 a 1 1.2.3 t\n",
        "1 Q0 a 1 \u0661 t\n",  # Arabic-Indic digit: float() reads it
        "1 Q0 " + "y" * 100_000 + " 1 1 t\n1 Q0 b 2 1 t\n",
        "",
        "   \n\n",
        "1 Q0 a 1 1 t",
    ],
)
def test_odd_runs_parse_like_the_list_path(text: str) -> None:
    same_as_lists(text.encode())
    same_as_lists(text)


def test_parser_keeps_str_compatible_arrays_and_doc_hashes() -> None:
    table = parse_trec_run(b"1 Q0 caf\xc3\xa9 1 1 t\n1 Q0 b 2 0.5 t\n")
    assert [str(v) for v in table.docs.tolist()] == ["caf\u00e9", "b"]
    assert np.unique(table.topics.astype(str)).tolist() == ["1"]
    assert table.doc_hashes is not None and not table.docs.flags.writeable


def test_number_columns() -> None:
    tokens = ["0", "-12", "+7", "123456789012345678", "1.5", "", "-", "1_0"]
    for token in tokens:
        columns = split_columns(f"{token or 'x'} y\n", 2, source="t")
        assert columns is not None
        ints = parse_ints(columns.matrix(0))
        try:
            expected = int(token or "x")
        except ValueError:
            expected = None
        assert (ints is None and (expected is None or "_" in token)) or ints.tolist() == [expected]
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.normal(size=500) * 10.0 ** rng.integers(-8, 8, 500), rng.random(500)])
    texts = [f"{v:.{int(p)}f}" for v, p in zip(values.tolist(), rng.integers(0, 12, len(values)).tolist(), strict=True)]
    texts += [repr(v) for v in values.tolist()]
    columns = split_columns("\n".join(f"{t} x" for t in texts), 2, source="t")
    assert columns is not None
    floats = parse_floats(columns.matrix(0))
    assert floats is not None
    assert floats.view(np.int64).tolist() == np.array([float(t) for t in texts]).view(np.int64).tolist()


# ------------------------------------------------------------------------------------------------- prepare_runs


def assert_same_prepared(a, b) -> None:
    """Every field of two PreparedRuns is equal."""
    assert (a.names, a.topics, a.docs, a.max_results) == (b.names, b.topics, b.docs, b.max_results)
    for field in ("pairs", "lengths", "pair_topic", "pair_doc"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field


@pytest.mark.parametrize("seed", range(30))
def test_prepare_runs_matches_the_dict_path(seed: int) -> None:
    runs = random_runs(seed)
    for max_results in (1000, 5, 1):
        assert_same_prepared(prepare_runs(runs, max_results), prepare_runs_with_dicts(runs, max_results))


@pytest.mark.parametrize("mask", [0, 0xC000000000000000])  # every hash equal; 4 distinct hashes
def test_prepare_runs_splits_hash_collisions_exactly(monkeypatch: pytest.MonkeyPatch, mask: int) -> None:
    real = ranking.group_hashes
    monkeypatch.setattr(ranking, "group_hashes", lambda hashes: real(hashes & np.uint64(mask)))
    for seed in range(5):
        runs = random_runs(seed)
        assert_same_prepared(prepare_runs(runs, 7), prepare_runs_with_dicts(runs, 7))


def test_prepare_runs_of_unicode_arrays_and_empty_runs() -> None:
    unicode_run = RunTable(
        "u",
        np.array(["2", "2", "1"]),
        np.array(["b", "\u00e9", "b"]),
        np.array([1, 2, 1]),
        np.array([1.0, 1.0, 0.0]),
        np.array([1, 2, 3]),
    )
    empty = RunTable(
        "e", np.zeros(0, dtype=str), np.zeros(0, dtype=str), np.zeros(0, int), np.zeros(0), np.zeros(0, int)
    )
    for runs in ([unicode_run, empty], [empty], []):
        assert_same_prepared(prepare_runs(runs), prepare_runs_with_dicts(runs))


@pytest.mark.parametrize("seed", range(4))
def test_stratum_sums_are_the_running_sums_last_values_bit_for_bit(seed: int) -> None:
    """xinfAP's and infNDCG's per-stratum sums at the relevant docs, by a bincount in rank order, against the running
    sum down each list taken at its last rank (the script's one-term-at-a-time order)."""
    from app.evaluation.formats.trec_files import parse_qrels
    from app.evaluation.grading.grade_matrix import grade_matrix
    from app.evaluation.measures import inferred
    from app.evaluation.measures.trec import RankedLists

    rng = np.random.default_rng(seed + 300)
    runs = random_runs(seed)
    docs = [f"d{i}" for i in range(40)] + ["caf\u00e9", "\u65e5\u672c", "D\U0001f600", "z" * 40, "a", "b"]
    lines = [
        f"{t} 0 {d} {rng.integers(1, 4)} {rng.choice([-1, 0, 1, 2])}"
        for t in ["1", "2", "10", "t\u00e9", "3"]
        for d in rng.choice(docs, 25, replace=False).tolist()
    ]
    matrix = grade_matrix(prepare_runs(runs, 1000), parse_qrels("\n".join(lines) + "\n"))
    st = inferred._Strata(RankedLists(matrix))
    values = np.random.default_rng(seed).random(matrix.grades.shape) * 3.0
    _, _, relevant = st.own
    for c, found in enumerate(inferred._stratum_sums(st, values)):
        running = np.cumsum(np.where(relevant[c], values, 0.0), axis=2)
        assert found.tobytes() == st.last_of_list(running).tobytes()
    assert any(np.any(r) for r in relevant)


def _dense_xinf_ap(lists, st) -> np.ndarray:
    """sample_eval.pl's xinfAP with P_k worked out at every rank of every list (the form before `inferred._sap`)."""
    from app.evaluation.measures import inferred
    from app.evaluation.measures.trec import _safe_divide

    d, s, rho = (count - own for count, own in zip(st.counts, st.own, strict=True))
    pooled_above = np.sum(d, axis=0)
    above = np.zeros(d.shape[1:])
    for c in st.order:
        share = _safe_divide(d[c], pooled_above)
        above = above + share * (rho[c] + inferred.INFAP_EPSILON) / (s[c] + inferred.SAMPLED_EPSILON)
    precision = 1.0 / lists.ranks + (pooled_above / lists.ranks) * above
    sums = inferred._stratum_sums(st, precision)
    value = np.zeros(lists.matrix.lengths.shape)
    for c in st.order:
        relevant = st.relevant_total[None, :, c]
        estimate = _safe_divide(relevant * st.pooled_total[None, :, c], st.judged_total[None, :, c])
        term = _safe_divide(estimate, st.r_hat) * _safe_divide(sums[c], relevant)
        value = value + np.where((st.judged_total[None, :, c] != 0) & (st.r_hat != 0), term, 0.0)
    limit = float(lists.matrix.max_results)
    return np.where(st.r_hat > limit, value * st.r_hat / limit, value)


@pytest.mark.parametrize("seed", range(4))
def test_xinfap_at_the_relevant_docs_is_the_dense_formula_bit_for_bit(seed: int) -> None:
    from app.evaluation.formats.trec_files import parse_qrels
    from app.evaluation.grading.grade_matrix import grade_matrix
    from app.evaluation.measures import inferred
    from app.evaluation.measures.trec import RankedLists

    rng = np.random.default_rng(seed + 400)
    docs = [f"d{i}" for i in range(40)] + ["a", "b"]
    lines = [
        f"{t} 0 {d} {rng.integers(1, 4)} {rng.choice([-1, 0, 1, 2])}"
        for t in ["1", "2", "10", "t\u00e9", "3"]
        for d in rng.choice(docs, 30, replace=False).tolist()
    ]
    matrix = grade_matrix(prepare_runs(random_runs(seed), 1000), parse_qrels("\n".join(lines) + "\n"))
    for max_results in (1000, 2):  # 2: R_hat above the cut
        lists = RankedLists(dataclasses.replace(matrix, max_results=max_results))
        expected = _dense_xinf_ap(lists, inferred._Strata(lists))
        found = inferred.xinf_ap(lists)
        assert found.tobytes() == expected.tobytes() and np.any(found > 0)
