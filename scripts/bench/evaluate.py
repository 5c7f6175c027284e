"""Benchmark: trecpool's evaluation core vs pytrec_eval (and ranx) on 100 runs x 50 topics x 1000 docs.

Usage: .venv/bin/python scripts/bench/evaluate.py [--runs 100] [--topics 50] [--depth 1000] [--seed 0]
                                                 [--repeat 3] [--real ../shared/data/trec-covid-round1]

Prints our parse and evaluate times next to pytrec_eval's parse and evaluate (and ranx's), with ratios, and "file to
numbers" as separate processes: `trecpool eval` against a pytrec_eval script (and trec_eval when it is installed),
each with its wall time and peak memory (the child's ru_maxrss).
"Evaluation only" starts from freshly parsed tables, as pytrec_eval's evaluate starts from parsed dicts: it includes
putting every run in trec_eval's order (which a table then keeps, so a second evaluation, e.g. against another qrels
version, is reported too) and every lookup. The prepared-runs path (prepare_runs once, then evaluate_prepared against
many qrels, as pool-depth and leave-out analyses do) is timed as well. Also the time to parse one run file's bytes,
the REST upload path. The box is shared and noisy: every figure is the best of a few calls, made back to back.

"Parsed runs" is the issue's comparison: ours from runs already parsed into the core's tables (freshly parsed, as
the parser leaves them: putting each run in trec_eval's order, grading against the qrels, then the measures) against
a plain numpy kernel over the grade arrays (AP, P@10, nDCG@10; checked to agree within 1e-12), which starts where our
grading ends. Rows show both parts of ours (grading: `grade_runs`; the numeric core: `evaluate_graded` over the grade
matrix), the two together (`evaluate`) and pytrec_eval from its parsed dicts; the last line is
`parsed runs: ours X ms, numpy kernel Y ms, ratio R` with ours = grading + measures (best of --repeat calls each).
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from app.evaluation.formats.trec_files import parse_trec_run, read_qrels, read_run
from app.evaluation.grading.fast_path import grade_runs
from app.evaluation.grading.grade_matrix import GradeMatrix
from app.evaluation.grading.prepared_runs import prepare_runs
from app.evaluation.measures.evaluate import evaluate, evaluate_graded, evaluate_prepared
from app.evaluation.records import Qrels, RunTable

MEASURES = ["AP", "P@10", "nDCG@10", "bpref"]
PYTREC_MEASURES = {"map", "P_10", "ndcg_cut_10", "bpref"}
KERNEL_MEASURES = ["AP", "P@10", "nDCG@10"]  # what the plain numpy kernel computes
PYTREC_KERNEL = {"map", "P_10", "ndcg_cut_10"}


def generate(directory: Path, n_runs: int, n_topics: int, depth: int, seed: int) -> tuple[Path, list[Path]]:
    """Write seeded qrels (per topic ~600 judged of a 5000-doc candidate set) and runs; return their paths."""
    rng = np.random.default_rng(seed)
    candidates = 5000
    qrels_lines = []
    for t in range(n_topics):
        judged = rng.choice(candidates, 600, replace=False)
        grades = rng.choice([0, 0, 0, 1, 2], size=len(judged))
        qrels_lines += [f"{t + 1} 0 doc{t}_{d} {g}" for d, g in zip(judged.tolist(), grades.tolist(), strict=True)]
    qrels = directory / "qrels.txt"
    qrels.write_text("\n".join(qrels_lines) + "\n")
    runs = []
    for r in range(n_runs):
        lines = []
        for t in range(n_topics):
            docs = rng.choice(candidates, depth, replace=False)
            scores = np.round(np.sort(rng.random(depth))[::-1] * 100, 2)  # rounded: some ties
            lines += [
                f"{t + 1} Q0 doc{t}_{d} {k + 1} {s} run{r}"
                for k, (d, s) in enumerate(zip(docs.tolist(), scores.tolist(), strict=True))
            ]
        path = directory / f"run{r}.txt"
        path.write_text("\n".join(lines) + "\n")
        runs.append(path)
    return qrels, runs


def timed(label: str, call: Callable[[], object]) -> tuple[float, object]:
    """Run `call`, print and return its wall time."""
    start = time.perf_counter()
    value = call()
    seconds = time.perf_counter() - start
    print(f"{label:<58} {seconds:8.3f} s")
    return seconds, value


def pytrec_parse(qrels_path: Path, run_paths: list[Path]) -> tuple[dict, dict]:
    """pytrec_eval's own file parsers (Python dict building)."""
    import pytrec_eval

    with open(qrels_path) as handle:
        qrels = pytrec_eval.parse_qrel(handle)
    runs = {}
    for path in run_paths:
        with open(path) as handle:
            runs[path.stem] = pytrec_eval.parse_run(handle)
    return qrels, runs


def pytrec_evaluate(qrels: dict, runs: dict) -> dict:
    """pytrec_eval over every run."""
    import pytrec_eval

    evaluator = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_MEASURES)
    return {name: evaluator.evaluate(run) for name, run in runs.items()}


def fresh(tables: list[RunTable]) -> list[RunTable]:
    """The parsed tables as the parser leaves them (its doc hashes), without the order a first use caches."""
    return [dataclasses.replace(table).with_doc_hashes(table.doc_hashes) for table in tables]


def best_of(call: Callable[[], object], repeat: int) -> float:
    """The shortest wall time of `repeat` calls."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


def numpy_kernel(grades: np.ndarray, ideal: np.ndarray, num_rel: np.ndarray) -> np.ndarray:
    """AP, P@10 and nDCG@10 [run, 3, topic] of int grades [run, topic, depth] in rank order, as a plain numpy kernel.

    `ideal` [topic, 10]: each topic's 10 highest judged grades (0 past them); `num_rel` [topic]. Grades past a list's
    end and of unjudged docs are below 0; a doc is relevant at grade 1 or more, its gain its grade.
    """
    n_run, n_topic, depth = grades.shape
    relevant = grades >= 1
    found = np.cumsum(relevant, axis=2, dtype=np.int32)
    precision = np.where(relevant, found / np.arange(1, depth + 1), 0.0)
    ap = np.divide(precision.sum(axis=2), num_rel, out=np.zeros((n_run, n_topic)), where=num_rel > 0)
    p10 = np.count_nonzero(relevant[:, :, :10], axis=2) / 10.0
    discount = np.log2(np.arange(2, 12, dtype=np.float64))
    top = np.maximum(grades[:, :, :10], 0)
    dcg = (top / discount[: top.shape[2]]).sum(axis=2)
    best = (ideal / discount).sum(axis=1)
    ndcg = np.divide(dcg, best, out=dcg.copy(), where=best > 0)
    return np.stack([ap, p10, ndcg], axis=1)


def kernel_inputs(matrix: GradeMatrix) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's qrels side: each topic's 10 highest grades and its relevant count (a per-qrels precomputation)."""
    topics = matrix.judged.grades
    ideal = np.zeros((len(topics), 10))
    for t, grades in enumerate(topics):
        top = np.sort(grades[grades > 0])[::-1][:10]
        ideal[t, : len(top)] = top
    return ideal, matrix.judged.num_rel.astype(np.float64)


def parsed_runs(qrels: Qrels, tables: list[RunTable], qrels_dict: dict, runs_dict: dict, repeat: int) -> str:
    """Ours, the plain numpy kernel and pytrec_eval on parsed runs (AP, P@10, nDCG@10), side by side; the summary."""
    matrix = grade_runs(fresh(tables), qrels)
    assert matrix is not None
    names = [table.tag for table in tables]
    ideal, num_rel = kernel_inputs(matrix)
    ours = evaluate(qrels, fresh(tables), KERNEL_MEASURES).values
    kernel = numpy_kernel(matrix.grades, ideal, num_rel)
    difference = float(np.max(np.abs(ours - kernel)))
    assert difference <= 1e-12, f"ours and the numpy kernel differ by {difference}"
    measures_s = best_of(lambda: evaluate_graded(matrix, names, KERNEL_MEASURES), repeat)
    kernel_s = best_of(lambda: numpy_kernel(matrix.grades, ideal, num_rel), repeat)
    grading_s = best_of(lambda: grade_runs(fresh(tables), qrels), repeat)
    ours_s = best_of(lambda: evaluate(qrels, fresh(tables), KERNEL_MEASURES), repeat)
    import pytrec_eval

    evaluator = pytrec_eval.RelevanceEvaluator(qrels_dict, PYTREC_KERNEL)
    pytrec_s = best_of(lambda: [evaluator.evaluate(run) for run in runs_dict.values()], repeat)
    print(f"\nparsed runs, {', '.join(KERNEL_MEASURES)} (best of {repeat}; grades {matrix.grades.dtype}"
          f" {matrix.grades.shape}; ours and the kernel agree within {difference:.0e}):")  # fmt: skip
    rows = [
        ("ours: measures over the grade matrix (evaluate_graded)", measures_s, measures_s / kernel_s),
        ("ours: grading the parsed tables (order, look-ups: grade_runs)", grading_s, grading_s / kernel_s),
        ("ours: grading + measures from parsed tables (evaluate)", ours_s, ours_s / kernel_s),
        ("plain numpy kernel over the grade arrays", kernel_s, 1.0),
        ("pytrec_eval: RelevanceEvaluator.evaluate from parsed dicts", pytrec_s, pytrec_s / kernel_s),
    ]
    for label, seconds, ratio in rows:
        print(f"  {label:<62} {seconds * 1e3:9.1f} ms  {ratio:6.2f}x kernel")
    print("  trec_eval: reads files only; see file to numbers below")
    ratio = ours_s / kernel_s
    return f"parsed runs: ours {ours_s * 1e3:.1f} ms, numpy kernel {kernel_s * 1e3:.1f} ms, ratio {ratio:.2f}"


def main() -> None:
    """Generate the data and print the timings."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="timed calls of each evaluation; the best counts")
    parser.add_argument("--real", type=Path, help="also time a real collection: DIR with qrels.txt and runs/")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        qrels_path, run_paths = generate(directory, args.runs, args.topics, args.depth, args.seed)
        n_lines = args.runs * args.topics * args.depth
        print(f"{args.runs} runs x {args.topics} topics x {args.depth} docs; measures {', '.join(MEASURES)}\n")

        # upload path: one run file's bytes (50k lines at the defaults), parsed as the REST upload does
        upload = run_paths[0].read_bytes()
        upload_s = best_of(lambda: parse_trec_run(upload, source="run file"), 5)
        upload_lines = upload.count(b"\n")
        print(f"{f'trecpool: parse_trec_run, one {upload_lines}-line upload (best of 5)':<58} {upload_s * 1e3:8.1f} ms")

        # the steps, each timed on its own
        parse_s, (qrels, tables) = timed("trecpool: parse qrels + runs (read_qrels, read_run)", lambda: (
            read_qrels(qrels_path), [read_run(p) for p in run_paths]))  # fmt: skip
        print(f"{'  = lines per second':<58} {n_lines / parse_s / 1e6:8.2f} M")

        ours_eval = best_of(lambda: evaluate(qrels, fresh(tables), MEASURES), args.repeat)
        print(f"{'trecpool: evaluate, fresh tables (best of ' + str(args.repeat) + ')':<58} {ours_eval:8.3f} s")
        results = evaluate(qrels, tables, MEASURES)
        again_s = best_of(lambda: evaluate(qrels, tables, MEASURES), args.repeat)
        print(f"{'trecpool: evaluate again (tables keep their order)':<58} {again_s:8.3f} s")
        prepare_s, prepared = timed("trecpool: prepare_runs (vocabulary of all pairs, once)", lambda: prepare_runs(
            tables))  # fmt: skip
        evaluate_s = best_of(lambda: evaluate_prepared(prepared, qrels, MEASURES), args.repeat)
        print(f"{'trecpool: evaluate_prepared (per qrels after that)':<58} {evaluate_s:8.3f} s")

        # (4) file to numbers, in one call
        def ours_from_files() -> object:
            return evaluate(read_qrels(qrels_path), [read_run(p) for p in run_paths], MEASURES)

        ours_files, _ = timed("trecpool: parse + evaluate from files (one call)", ours_from_files)
        pytrec_parse_s, (qrels_dict, runs_dict) = timed("pytrec_eval: parse_qrel/parse_run", lambda: pytrec_parse(
            qrels_path, run_paths))  # fmt: skip
        pytrec_eval_s = best_of(lambda: pytrec_evaluate(qrels_dict, runs_dict), args.repeat)
        print(f"{'pytrec_eval: RelevanceEvaluator.evaluate, all runs (best of ' + str(args.repeat) + ')':<58}", end="")
        print(f" {pytrec_eval_s:8.3f} s")
        reference = pytrec_evaluate(qrels_dict, runs_dict)
        ours_map = results.mean()[:, 0]  # type: ignore[attr-defined]
        theirs_map = np.array([np.mean([v["map"] for v in reference[p.stem].values()]) for p in run_paths])
        print(f"{'max |MAP difference| vs pytrec_eval':<58} {np.max(np.abs(ours_map - theirs_map)):8.1e}")

        # (3) ranx
        try:
            from ranx import Qrels as RanxQrels
            from ranx import Run as RanxRun
            from ranx import evaluate as ranx_evaluate

            ranx_qrels = RanxQrels(qrels_dict)
            ranx_runs = [RanxRun(runs_dict[p.stem], name=p.stem) for p in run_paths]
            ranx_evaluate(ranx_qrels, ranx_runs[0], ["map", "precision@10", "ndcg@10"])  # numba compilation

            def ranx_all() -> object:
                return [ranx_evaluate(ranx_qrels, run, ["map", "precision@10", "ndcg@10"]) for run in ranx_runs]

            ranx_s, _ = timed("ranx: evaluate map, P@10, nDCG@10 (no bpref; after JIT)", ranx_all)
        except Exception as exc:  # ranx or numba may be unusable here
            ranx_s = None
            print(f"ranx skipped: {type(exc).__name__}: {exc}")

        print()
        print(f"parse: {n_lines / parse_s / 1e6:.2f} M lines/s (target >= 1); upload {upload_s * 1e3:.1f} ms (<= 50)")
        print(f"parse: pytrec_eval / trecpool           = {pytrec_parse_s / parse_s:6.1f}x")
        print(f"evaluation only, from freshly parsed tables (evaluate = {ours_eval:.3f} s):")
        print(f"  pytrec_eval / trecpool                = {pytrec_eval_s / ours_eval:6.1f}x  (target >= 5x)")
        print(f"  same tables again (order kept)        = {pytrec_eval_s / again_s:6.1f}x")
        print(f"  prepared runs (evaluate_prepared)     = {pytrec_eval_s / evaluate_s:6.1f}x  (prepare_runs once: "
              f"{prepare_s:.2f} s)")  # fmt: skip
        if ranx_s is not None:
            print(f"  ranx / trecpool (from parsed tables)  = {ranx_s / ours_eval:6.1f}x")
        theirs_files = pytrec_parse_s + pytrec_eval_s
        print(f"file to numbers: pytrec_eval / trecpool = {theirs_files / ours_files:6.1f}x  (target > 1x)")
        processes(qrels_path, run_paths)
        summary = parsed_runs(qrels, tables, qrels_dict, runs_dict, args.repeat)
    if args.real is not None:
        real_data(args.real, args.repeat)
        real_runs = sorted(p for p in (args.real / "runs").iterdir() if p.is_file())
        processes(args.real / "qrels.txt", real_runs)
    print(f"\n{summary}")


# Runs a command and prints its wall time, CPU time (user + system: on a shared box the steadier figure) and peak
# resident memory (ru_maxrss of its only child, in KiB).
_MEASURE = """
import resource, subprocess, sys, time
start = time.perf_counter()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss)
"""

# pytrec_eval from files to numbers, as a script: parse the qrels and every run, evaluate, print the MAPs.
_PYTREC = """
import gzip, sys, pytrec_eval
with open(sys.argv[1]) as handle:
    qrels = pytrec_eval.parse_qrel(handle)
evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P_10", "ndcg_cut_10", "bpref"})
for path in sys.argv[2:]:
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as handle:
        scores = evaluator.evaluate(pytrec_eval.parse_run(handle))
    print(path, sum(v["map"] for v in scores.values()) / max(len(scores), 1))
"""


def measured(command: list[str]) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak MiB) of `command` run as a child process."""
    out = subprocess.run([sys.executable, "-c", _MEASURE, *command], capture_output=True, text=True, check=True)
    wall, cpu, kib = out.stdout.split()
    return float(wall), float(cpu), int(kib) / 1024


def processes(qrels_path: Path, run_paths: list[Path]) -> None:
    """File to numbers, each side a fresh process: time and peak memory of trecpool eval, pytrec_eval, trec_eval."""
    names = [str(p) for p in run_paths]
    ours = [str(Path(sys.executable).with_name("trecpool")), "eval"] + [f"-m{m}" for m in MEASURES]
    rows = [
        ("trecpool eval (streams blocks of runs)", [*ours, str(qrels_path), *names]),
        ("pytrec_eval (parse_qrel, parse_run, evaluate)", [sys.executable, "-c", _PYTREC, str(qrels_path), *names]),
    ]
    trec_eval = shutil.which("trec_eval")
    if trec_eval is not None:  # one process per run, as trec_eval takes one run: a shell loop over them all
        loop = 'for run in "$@"; do "$0" -m map -m P.10 -m ndcg_cut.10 -m bpref "$QRELS" "$run" || exit 1; done'
        rows.append(("trec_eval -m map -m P.10 -m ndcg_cut.10 -m bpref, per run",
                     ["env", f"QRELS={qrels_path}", "sh", "-c", loop, trec_eval, *names]))  # fmt: skip
    print(f"\nfile to numbers, {len(names)} runs, separate processes:")
    for label, command in rows:
        wall, cpu, mib = min((measured(command) for _ in range(2)), key=lambda m: m[1])  # best of 2 by CPU time
        print(f"  {label:<48} wall {wall:7.3f} s  cpu {cpu:7.3f} s  peak {mib:7.1f} MiB")
    if trec_eval is None:
        print("  trec_eval: not installed here (no trec_eval on PATH), not measured")


def real_data(directory: Path, repeat: int) -> None:
    """Evaluation only on a real collection (qrels.txt and runs/*, e.g. ../shared/data/trec-covid-round1)."""
    import pytrec_eval

    qrels_path = directory / "qrels.txt"
    run_paths = sorted(p for p in (directory / "runs").iterdir() if p.is_file())
    qrels, tables = read_qrels(qrels_path), [read_run(p) for p in run_paths]

    ours = best_of(lambda: evaluate(qrels, fresh(tables), MEASURES), repeat)
    with open(qrels_path) as handle:
        qrels_dict = pytrec_eval.parse_qrel(handle)
    runs_dict = {}
    for path in run_paths:
        with gzip.open(path, "rt") if path.suffix == ".gz" else open(path) as handle:
            runs_dict[path.name] = pytrec_eval.parse_run(handle)
    theirs = best_of(lambda: pytrec_evaluate(qrels_dict, runs_dict), repeat)
    rows = sum(len(table) for table in tables)
    print(f"\n{directory.name}: {len(tables)} runs, {rows} rows, {len(qrels)} judgements")
    print(f"evaluation only, from freshly parsed tables: trecpool {ours:.3f} s, pytrec_eval {theirs:.3f} s")
    print(f"  pytrec_eval / trecpool                = {theirs / ours:6.1f}x")


if __name__ == "__main__":
    main()
