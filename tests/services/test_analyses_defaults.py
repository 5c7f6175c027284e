"""The analysis jobs' defaults are the CLI's: agreement and ties leave the counts out unless named, label noise uses
the authors' noise levels; both read the same schema."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from app.evaluation.measures.registry import default_measures
from app.services.analyses import _scores
from app.services.analysis_registry import ANALYSES, AnalysisData, Computed, default_words, parse_params
from app.services.scores import ScoreTable


def _table() -> ScoreTable:
    """An evaluation of five runs on four topics under `trecpool eval`'s default measures (num_rel the same for all)."""
    measures = default_measures(stratified=False)
    rng = np.random.default_rng(0)
    values = rng.random((5, len(measures), 4))
    values[:, measures.index("num_rel"), :] = 7.0
    runs = [SimpleNamespace(name=f"run{i}", team_id=1) for i in range(5)]
    return ScoreTable(runs, {1: "t"}, measures, ["1", "2", "3", "4"], values, values.mean(axis=2))  # type: ignore[arg-type]


def _score_analysis(table: ScoreTable, kind: str, params: object) -> dict:
    """The job's result: the stored scores the record reads, through the record's compute."""
    record = ANALYSES[kind]
    scores = _scores(None, table, record, params)  # type: ignore[arg-type] - no campaign: measures named or all
    computed: Computed = record.compute(AnalysisData(runs=scores.runs, scores=scores), params, lambda _: None)
    return computed.data


@pytest.mark.parametrize("kind", ["agreement", "ties"])
def test_agreement_and_ties_leave_the_counts_out_unless_named(kind):
    table = _table()
    result = _score_analysis(table, kind, parse_params(kind, {}))
    names = result["measures"] if kind == "agreement" else list(result["ratios"])  # type: ignore[call-overload]
    assert len(names) == 28 and not any(n.startswith("num_") for n in names)
    if kind == "agreement":  # no NaN row: num_rel, the same for every run, ranks nothing
        assert not np.isnan(np.array(result["tau_b"], dtype=float)).any()
    named = parse_params(kind, {"measures": ["AP", "num_rel"]})
    result = _score_analysis(table, kind, named)
    names = result["measures"] if kind == "agreement" else list(result["ratios"])  # type: ignore[call-overload]
    assert names == ["AP", "num_rel"]


def test_defaults_described_and_shared_with_the_cli():
    assert parse_params("label-noise", {}).sigmas == [1.0, 2.0, 3.0, 4.0]
    for kind in ("agreement", "ties"):
        field = ANALYSES[kind].params.model_fields["measures"]
        schema = ANALYSES[kind].params.model_json_schema()["properties"]["measures"]["description"]
        for description in (default_words(field), schema):  # the CLI's help and the REST schema say it
            assert "but the counts" in description and "num_ret" in description
