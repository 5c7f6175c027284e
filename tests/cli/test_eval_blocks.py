"""`trecpool eval` evaluates runs a block at a time: the output is the same whatever the block size."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from app.cli import cli
from app.evaluation.output.writers import format_results, write_results

runner = CliRunner()


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    """A qrels and five random runs (one repeating another's tag, one lacking a topic)."""
    rng = np.random.default_rng(7)
    directory = tmp_path_factory.mktemp("blocks")
    qrels = directory / "qrels"
    qrels.write_text("".join(f"{t} 0 d{d} {int(rng.integers(0, 3))}\n" for t in (1, 2, 3) for d in range(12)))
    runs = []
    for r, tag in enumerate(["a", "b", "a", "c", "d"]):
        topics = (1, 2) if r == 3 else (1, 2, 3)
        lines = [
            f"{t} Q0 d{d} {k} {round(float(rng.random()), 1)} {tag}\n"
            for t in topics
            for k, d in enumerate(rng.choice(15, 8, replace=False).tolist())
        ]
        path = directory / f"run{r}"
        path.write_text("".join(lines))
        runs.append(path)
    return qrels, runs


@pytest.mark.parametrize("fmt", ["trec", "json", "csv"])
@pytest.mark.parametrize("per_topic", [False, True])
def test_blocks_print_what_one_block_prints(collection, fmt: str, per_topic: bool) -> None:
    qrels, runs = collection
    args = ["eval", "-m", "AP", "-m", "P@5", "-m", "num_ret", "--format", fmt, str(qrels), *map(str, runs)]
    args += ["-q"] if per_topic else []
    whole = runner.invoke(cli, args)
    assert whole.exit_code == 0, whole.output
    for rows in ("1", "20", "30"):
        blocks = runner.invoke(cli, [*args, "--block-rows", rows])
        assert blocks.exit_code == 0, blocks.output
        assert blocks.stdout == whole.stdout
    if fmt == "json":
        assert list(json.loads(whole.stdout)) == ["a", "b", "a#2", "c", "d"]


@pytest.mark.parametrize("fmt", ["trec", "json", "csv"])
def test_write_results_equals_format_results(fmt: str) -> None:
    one = {"r1": {"AP": {"1": 0.5, "all": 0.5}}}
    two = {"r2": {"AP": {"1": float("nan"), "all": 0.25}}, "r3": {"AP": {"all": 1.0}}}
    out = io.StringIO()
    write_results([one, {}, two], fmt, out, several=True, per_topic=True, digits=None)
    assert out.getvalue() == format_results({**one, **two}, fmt, per_topic=True)
    out = io.StringIO()
    write_results([], fmt, out, several=False)
    assert out.getvalue() == format_results({}, fmt)


def test_a_bad_run_after_a_good_block_stops_with_status_2(collection, tmp_path: Path) -> None:
    qrels, runs = collection
    bad = tmp_path / "bad"
    bad.write_text("1 Q0 d1 one 1 x\n")
    result = runner.invoke(cli, ["eval", "-m", "AP", "--block-rows", "1", str(qrels), str(runs[0]), str(bad)])
    assert result.exit_code == 2
    assert result.stdout == "a\tAP\tall\t" + result.stdout.split("\t")[-1]
    assert "line 1: rank 'one' is not an integer" in result.stderr
