"""`trecpool eval -m official` and `-m all_trec` print trec_eval 10.0's nickname measures, in its order, as
`trecpool trec_eval -m official` does (runid and relstring aside: they are no numbers)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli import cli

runner = CliRunner()
QRELS = "1 0 d1 1\n1 0 d2 0\n1 0 d6 2\n2 0 d3 1\n2 0 d4 1\n"
RUN = "1 Q0 d2 1 0.9 tag\n1 Q0 d1 2 0.5 tag\n2 Q0 d3 1 0.7 tag\n2 Q0 d5 2 0.6 tag\n"
RANKS = ["5", "10", "15", "20", "30", "100", "200", "500", "1000"]
LEVELS = ["0.00", "0.10", "0.20", "0.30", "0.40", "0.50", "0.60", "0.70", "0.80", "0.90", "1.00"]
OFFICIAL = ["num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
            *(f"iprec_at_recall.{level}" for level in LEVELS), *(f"P.{rank}" for rank in RANKS)]  # fmt: skip


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    """A qrels file and a run file."""
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    return str(tmp_path / "qrels"), str(tmp_path / "run")


def _lines(*args: str) -> list[list[str]]:
    """The tab-separated fields of each line `trecpool eval ARGS` prints, after checking it succeeded."""
    result = runner.invoke(cli, ["eval", *args])
    assert result.exit_code == 0 and result.stderr == "", (result.exit_code, result.stderr)
    return [line.split("\t") for line in result.stdout.splitlines()]


def test_official_prints_trec_eval_official_measures_in_its_order(files: tuple[str, str]) -> None:
    lines = _lines("-m", "official", *files)
    assert [fields[0] for fields in lines] == OFFICIAL
    values = {name: float(value) for name, _, value in lines}
    assert (values["num_q"], values["num_ret"], values["num_rel"], values["num_rel_ret"]) == (2, 4, 4, 2)
    assert values["map"] == pytest.approx((1 / 2 / 2 + 1 / 2) / 2)  # topic 1: d1 at 2 of 2 rel; topic 2: d3 at 1
    assert values["P.5"] == pytest.approx(0.2) and values["recip_rank"] == pytest.approx(0.75)


def test_official_is_the_same_as_its_measures_named_one_by_one(files: tuple[str, str]) -> None:
    named = [arg for name in ("num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                              "recip_rank", f"iprec_at_recall.{','.join(LEVELS)}", f"P.{','.join(RANKS)}")
             for arg in ("-m", name)]  # fmt: skip
    assert _lines("-m", "official", *files) == _lines(*named, *files)


def test_all_trec_adds_the_rest_of_trec_eval_all_trec_after_official(files: tuple[str, str]) -> None:
    names = [fields[0] for fields in _lines("-m", "all_trec", *files)]
    assert names[: len(OFFICIAL)] == OFFICIAL
    assert names[len(OFFICIAL) : len(OFFICIAL) + 12] == [*(f"recall.{rank}" for rank in RANKS), "unj.5", "unj.10",
                                                         "unj.20"]  # fmt: skip
    assert names[-5:] == ["set_recall", "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret"]
    assert len(names) == 98 and "runid" not in names and "relstring" not in names
