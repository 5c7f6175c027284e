"""`trecpool measures` lists the registry: every measure with parameters, a description and a reference."""

from __future__ import annotations

import json

from click.testing import CliRunner

from app.cli import cli
from app.evaluation.measures.registry import MEASURES, SAMPLE_EVAL_DEFAULT, TREC_DEFAULT, describe, measure_family


def test_measures_lists_every_registry_entry_with_its_reference() -> None:
    result = CliRunner().invoke(cli, ["measures", "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.output)}
    assert list(rows) == [m.name for m in MEASURES]
    assert rows["AP"]["reference"].startswith("trec_eval")
    assert rows["AP"]["aliases"] == ["map", "MAP", "map_cut"]
    assert "sample_eval.pl" in rows["xinfAP"]["reference"]
    assert "AxIoU paper" in rows["AxIoU"]["reference"]
    assert rows["P"]["parameters"] == "@k: rank cutoff (required)"
    assert all(row["description"] and row["reference"] for row in rows.values())


def test_measures_table_names_each_measure() -> None:
    result = CliRunner().invoke(cli, ["measures"])
    assert result.exit_code == 0, result.output
    assert "  iprec@rec\n" in result.output and "  mAP\n" in result.output
    assert "moments (--moments):" in result.output


def test_every_default_measure_is_described() -> None:
    for name in TREC_DEFAULT + SAMPLE_EVAL_DEFAULT + ["AxIoU@10", "R@5,0.5", "mAP@0.5"]:
        assert describe(name), name
    assert describe("P@10") == "Precision: relevant docs in the top k, over k. (cutoff 10)"
    assert measure_family("ndcg_cut_10").name == "nDCG"
    assert measure_family("R@5,>0.5").name == "R@K,theta"
    assert describe("no_such_measure") == ""
