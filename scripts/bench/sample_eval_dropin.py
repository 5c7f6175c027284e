"""Benchmark: `trecpool sample_eval -q` on the four TRECVID AVS 2021 runs, next to sample_eval.pl or `trecpool eval`.

Usage: .venv/bin/python scripts/bench/sample_eval_dropin.py [--repeat 5] [--data ../shared/data/trecvid-avs-2021]
                                                            [--sample-eval PATH/sample_eval.pl]

Each command runs `--repeat` times per run file in a fresh process; the script prints the median CPU time (user +
system, from the children's rusage) and wall time per run file, and whether the output equals the expected file
byte for byte. The reference is `perl sample_eval.pl -q` when perl and the script are available (--sample-eval, or
sample_eval.pl on PATH); it is third-party code and is not part of this repository. Without it, the comparison is
our previous path, `trecpool eval -q --run-topics-only` with the same sample_eval measures (which prints
trec_eval-style lines, not sample_eval's). Also the in-process time of the three stages (read the qrels and the run,
evaluate, write the report), best of --repeat. The box is shared and noisy.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RUNS = ["syn7_0", "syn7_1", "syn7_2", "syn7_3"]


def measure(command: list[str], repeat: int, cwd: Path) -> tuple[float, float, bytes]:
    """Median CPU seconds, median wall seconds and the output of `command` over `repeat` fresh runs."""
    cpu, wall = [], []
    output = b""
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        output = subprocess.run(command, check=True, capture_output=True, cwd=cwd).stdout
        wall.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return statistics.median(cpu), statistics.median(wall), output


def in_process(data: Path, repeat: int) -> dict[str, float]:
    """Best-of-`repeat` seconds of each stage of one drop-in call on syn7_1, in this process."""
    import numpy as np

    from app.evaluation.formats.trec_files import read_qrels, read_run
    from app.evaluation.measures.evaluate import evaluate
    from app.evaluation.output.sample_eval import MAX_RESULTS, MEASURES, sample_eval_report

    best = {"read qrels + run": float("inf"), "evaluate": float("inf"), "report": float("inf")}
    for _ in range(repeat):
        started = time.perf_counter()
        qrels = read_qrels(data / "avs.qrels.main.tv21")
        run = read_run(data / "runs" / "syn7_1")
        read = time.perf_counter()
        results = evaluate(qrels, [run], list(MEASURES), max_results=MAX_RESULTS)
        evaluated = time.perf_counter()
        topics, counts = np.unique(np.asarray(run.topics).astype(str), return_counts=True)
        sample_eval_report(results, dict(zip(topics.tolist(), counts.tolist(), strict=True)), per_topic=True)
        done = time.perf_counter()
        for name, seconds in zip(best, (read - started, evaluated - read, done - evaluated), strict=True):
            best[name] = min(best[name], seconds)
    return best


def main() -> None:
    """Time the commands and print a table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "trecvid-avs-2021")
    parser.add_argument("--sample-eval", default=shutil.which("sample_eval.pl"), help="path of sample_eval.pl")
    args = parser.parse_args()
    data = args.data.resolve()
    trecpool = str(Path(sys.executable).with_name("trecpool"))
    perl = shutil.which("perl")
    measures = [
        "xinfAP", "infNDCG", *(f"iP@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
        "inum_rel_ret", "inum_rel", "num_ret", *(f"iprec@rec{i / 10:.2f}" for i in range(11)),
    ]  # fmt: skip
    commands = {"trecpool sample_eval -q": [trecpool, "sample_eval", "-q", "avs.qrels.main.tv21"]}
    if perl and args.sample_eval and Path(args.sample_eval).is_file():
        commands["perl sample_eval.pl -q (reference)"] = [perl, args.sample_eval, "-q", "avs.qrels.main.tv21"]
    else:
        print(
            f"sample_eval.pl is not available here (perl: {perl or 'missing'}, script: "
            f"{args.sample_eval or 'not on PATH, no --sample-eval'}): comparing with `trecpool eval` instead\n"
        )
        flags = ["eval", "-q", "--run-topics-only", *(f"-m{m}" for m in measures), "avs.qrels.main.tv21"]
        commands["trecpool eval -q --run-topics-only (previous path)"] = [trecpool, *flags]
    print(f"{'command':<52} {'run':<7} {'CPU s':>7} {'wall s':>7}  output   (median of {args.repeat})")
    totals: dict[str, list[float]] = {}
    for name, command in commands.items():
        for run in RUNS:
            cpu, wall, output = measure([*command, f"runs/{run}"], args.repeat, data)
            expected = (data / "expected" / f"{run}.sample_eval.txt").read_bytes()
            same = "identical" if output == expected else "differs"
            print(f"{name:<52} {run:<7} {cpu:>7.3f} {wall:>7.3f}  {same}")
            totals.setdefault(name, []).extend([cpu, wall])
    for name, values in totals.items():
        print(f"{name:<52} {'4 runs':<7} {sum(values[0::2]):>7.3f} {sum(values[1::2]):>7.3f}")
    print("\nin process, syn7_1, best of", args.repeat)
    for stage, seconds in in_process(data, args.repeat).items():
        print(f"  {stage:<20} {seconds * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
