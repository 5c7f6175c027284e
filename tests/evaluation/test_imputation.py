"""Multiple imputation of unjudged pooled items: the posterior predictive per topic and stratum, checked by hand."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from app.evaluation.analyses.imputation import cells, impute, imputed_values
from app.evaluation.formats.trec_files import parse_qrels, parse_trec_run
from app.evaluation.grading.prepared_runs import prepare_runs

# topic 1: stratum 1 judged in full (a relevant, b not), stratum 2 two judged (c relevant, d not) and two not (e, f);
# topic 2: nothing judged (g, h)
QRELS = b"1 0 a 1 1\n1 0 b 1 0\n1 0 c 2 1\n1 0 d 2 0\n1 0 e 2 -1\n1 0 f 2 -1\n2 0 g 1 -1\n2 0 h 1 -1\n"
RUN = (
    b"1 Q0 a 1 6 r\n1 Q0 b 2 5 r\n1 Q0 c 3 4 r\n1 Q0 d 4 3 r\n1 Q0 e 5 2 r\n1 Q0 f 6 1 r\n2 Q0 g 1 2 r\n2 Q0 h 2 1 r\n"
)


def test_cells_count_lines_judged_and_relevant_per_topic_and_stratum():
    found = cells(parse_qrels(QRELS))
    assert found.lines.tolist() == [2, 4, 2]
    assert found.judged.tolist() == [2, 2, 0]
    assert found.relevant.tolist() == [1, 1, 0]
    assert found.cell.tolist() == [0, 0, 1, 1, 1, 1, 2, 2]


def test_an_imputation_keeps_the_judgements_and_grades_only_the_unjudged():
    qrels = parse_qrels(QRELS)
    completed = impute(qrels, np.random.default_rng(0))
    assert completed.grades[:4].tolist() == [1, 0, 1, 0]
    assert set(completed.grades[4:].tolist()) <= {0, 1}
    assert completed.strata is not None and completed.strata.tolist() == qrels.strata.tolist()  # type: ignore[union-attr]


def test_the_unjudged_items_follow_the_beta_binomial_posterior_predictive():
    """Stratum 2 of topic 1 (2 judged, 1 relevant): the 2 unjudged items' relevant count is BetaBinomial(2, 2, 2)
    (Beta(1 + 1, 1 + 1) posterior); topic 2 (nothing judged) has rate Beta(1, 1): BetaBinomial(2, 1, 1)."""
    qrels = parse_qrels(QRELS)
    rng = np.random.default_rng(5)
    draws = np.array([impute(qrels, rng).grades for _ in range(20_000)])
    for columns, (a, b) in (([4, 5], (2, 2)), ([6, 7], (1, 1))):
        count = draws[:, columns].sum(axis=1)
        expected = stats.betabinom(2, a, b)
        assert count.mean() == pytest.approx(expected.mean(), abs=0.02)
        assert count.var() == pytest.approx(expected.var(), rel=0.05)


def test_graded_qrels_draw_grades_among_the_strata_relevant_grades():
    qrels = parse_qrels(b"1 0 a 1 3\n1 0 b 1 3\n1 0 c 1 -1\n1 0 d 1 -1\n1 0 e 1 -1\n")
    rng = np.random.default_rng(1)
    grades = np.concatenate([impute(qrels, rng).grades[2:] for _ in range(200)])
    assert set(grades.tolist()) == {0, 3}


def test_rubins_between_variance_is_the_predictive_variance_of_the_measure():
    """P@6 of topic 1 is (2 + X) / 6 with X ~ BetaBinomial(2, 2, 2): Var = 0.6 / 36; Rubin adds (1 + 1/M) B."""
    prepared = prepare_runs([parse_trec_run(RUN)], 1000, names=["r"])
    found = imputed_values(prepared, parse_qrels(QRELS), ["P@6"], imputations=4000, seed=3)
    assert found.topics == ["1", "2"] and found.values.shape == (4000, 1, 1, 2)
    variance = found.between_variance()[0, 0]
    assert variance[0] == pytest.approx((1 + 1 / 4000) * stats.betabinom(2, 2, 2).var() / 36, rel=0.06)
    assert variance[1] == pytest.approx((1 + 1 / 4000) * stats.betabinom(2, 1, 1).var() / 36, rel=0.06)
    again = imputed_values(prepared, parse_qrels(QRELS), ["P@6"], imputations=5, seed=3)
    assert np.array_equal(again.values, found.values[:5])  # seeded: the same draws in the same order


def test_one_imputation_adds_no_between_variance_and_none_is_refused():
    prepared = prepare_runs([parse_trec_run(RUN)], 1000, names=["r"])
    assert not imputed_values(prepared, parse_qrels(QRELS), ["AP"], imputations=1).between_variance().any()
    with pytest.raises(ValueError, match="positive"):
        imputed_values(prepared, parse_qrels(QRELS), ["AP"], imputations=0)
