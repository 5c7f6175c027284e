"""Plain helpers of the `trecpool analyse` tests (their fixtures, `files` and `moment_files`, are in
tests/cli/conftest.py): the small collections they run on and the moment evaluator's reference scores."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from app.evaluation.moments import evaluate_moments, parse_moment_ground_truth, parse_moment_run
from tests.evaluation.analyses.brute import random_collection

# the moment measures the moment analyses are checked on
MEASURES = ["AxIoU@1", "AxIoU@5", "R@1,0.5", "R@5,0.7"]


def write_collection(folder: Path):  # type: ignore[no-untyped-def]
    """Five random runs on four topics, their qrels and a groups file (run0, run2 and run3 pooled) in `folder`;
    (runs, qrels, qrels path, run paths, groups path)."""
    runs, qrels = random_collection(21, n_run=5, n_topic=4)
    paths = []
    for run in runs:
        path = folder / f"{run.tag}.txt"
        lines = [
            f"{t} Q0 {d} {i + 1} {s:g} {run.tag}"
            for i, (t, d, s) in enumerate(zip(run.topics.tolist(), run.docs.tolist(), run.scores.tolist(), strict=True))
        ]
        path.write_text("\n".join(lines) + "\n")
        paths.append(str(path))
    qrels_path = folder / "qrels.txt"
    qrels_path.write_text(
        "".join(f"{t} 0 {d} {g}\n" for t, d, g in zip(qrels.topics, qrels.docs, qrels.grades.tolist(), strict=True))
    )
    groups = folder / "groups.tsv"
    groups.write_text(
        "run\tteam\tcontributed_judgments\truntype\n"
        "run0\tA\tyes\tauto\nrun1\tA\tno\tauto\nrun2\tB\tyes\tmanual\nrun3\tC\tyes\tauto\nrun4\tC\tno\tmanual\n"
    )
    return runs, qrels, str(qrels_path), paths, str(groups)


def write_moment_collection(folder: Path) -> tuple[Path, list[Path]]:
    """Ground truth for 12 topics and 5 runs of random windows near it (run k a little worse than run k-1) in
    `folder`; (ground truth path, run paths)."""
    rng = np.random.default_rng(4)
    truth_lines, segments = [], {}
    for t in range(1, 13):
        start = float(rng.uniform(10, 40))
        end = start + float(rng.uniform(3, 15))
        segments[t] = (start, end)
        truth_lines.append(f"{t}\tv{t % 4}\t{start:.2f}\t{end:.2f}")
    truth = folder / "gt.tsv"
    truth.write_text("\n".join(truth_lines) + "\n")
    runs = []
    for r in range(5):
        lines = []
        for t, (start, end) in segments.items():
            for k in range(6):
                jitter = rng.normal(0, 1 + 2 * r + k, size=2)
                s, e = max(0.0, start + jitter[0]), end + jitter[1]
                if e <= s:
                    e = s + 1
                lines.append(f"{t}\tv{t % 4}\t{s:.2f}\t{e:.2f}\t{1 - 0.1 * k:.2f}\tsys{r}")
        path = folder / f"sys{r}.tsv"
        path.write_text("\n".join(lines) + "\n")
        runs.append(path)
    return truth, runs


def moment_reference(truth: Path, runs: list[Path], measures: list[str]) -> tuple[list[str], list[str], np.ndarray]:
    """Per-topic scores [run, measure, topic] from the moment evaluator (independent of the analyses' reader);
    (run names, topics, scores)."""
    gt = parse_moment_ground_truth(truth.read_bytes())
    tables = [parse_moment_run(p.read_bytes()) for p in runs]
    nested = evaluate_moments(gt, tables, measures)
    names = list(nested)
    topics = [t for t in nested[names[0]][measures[0]] if t != "all"]
    values = np.array([[[nested[n][m][t] for t in topics] for m in measures] for n in names])
    return names, topics, values


def table_row(output: str, first: str) -> list[str]:
    """The cells of the table row (rich's box characters) that starts with `first`."""
    for line in output.splitlines():
        cells = [c.strip() for c in re.split(r"[│┃]", line) if c.strip()]
        if cells and cells[0] == first:
            return cells
    raise AssertionError(f"no row {first!r} in\n{output}")
