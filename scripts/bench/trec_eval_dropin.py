"""Benchmark: `trecpool trec_eval -q -m all_trec` on the 30 TREC-COVID round 1 runs vs pytrec_eval doing the same.

Usage: .venv/bin/python scripts/bench/trec_eval_dropin.py [--data ../shared/data/trec-covid-round1] [--repeat 3]
                                                          [--trec-eval PATH]

Two comparisons, each the best of --repeat rounds (the box is shared and noisy):
- per file, one process per run, as trec_eval is used: `trecpool trec_eval -q -m all_trec qrels run` for each of
  the 30 runs, against a small pytrec_eval script run the same way (it reads the qrels and the run into dicts,
  evaluates all_trec and prints trec_eval's per-topic lines), and trec_eval itself when it is installed or given;
- in one process, step by step: our engine (parse the qrels and 30 runs, evaluate every all_trec measure of every
  run x topic in one pass, format the 30 reports) against pytrec_eval (parse into dicts, evaluate each run, format
  its lines; it computes neither relstring nor gm_map's summary, which we print).
The wall time and, for the per-file rounds, the children's CPU time are printed, with our time over pytrec_eval's.
The child processes keep compiled bytecode in a temporary cache (PYTHONPYCACHEPREFIX), warmed by one untimed run, as
an installed package has its .pyc files; without it every process would compile trecpool's modules again.

Files to numbers (`--official` for it alone; printed last by default): every run of runs/ and runs-more/ (143 for
TREC-COVID round 1) with trec_eval's official measures, `trecpool eval -m official` in one process against a
`trec_eval -m official` loop (one process per run, as trec_eval takes one run), both reading the same plain (gunzipped)
copies; ours on .gz too. CPU is each side's user + system time and peak memory each process's max RSS (os.wait4, per
child), best of --repeat; the last line is `files to numbers: ours X s, trec_eval Y s, ratio R` (trec_eval from
--trec-eval, $TREC_EVAL or PATH; without one the ratio is left out). trec_eval 10.0 can be rebuilt from
usnistgov/trec_eval with its Makefile (`make`); give the binary as --trec-eval or $TREC_EVAL.
"""

from __future__ import annotations

import argparse
import gzip
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "trec-covid-round1"

PYTREC_SCRIPT = """
import gzip, sys
import pytrec_eval

def lines(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\\x1f\\x8b":
        raw = gzip.decompress(raw)
    return raw.decode().splitlines()

qrels, run = {}, {}
for line in lines(sys.argv[1]):
    if line.strip():
        topic, _, doc, grade = line.split()
        qrels.setdefault(topic, {})[doc] = int(grade)
for line in lines(sys.argv[2]):
    if line.strip():
        topic, _, doc, _, score, _ = line.split()
        run.setdefault(topic, {})[doc] = float(score)
results = pytrec_eval.RelevanceEvaluator(qrels, {"all_trec"}).evaluate(run)
out = []
for topic in sorted(results):
    for name, value in results[topic].items():
        out.append(f"{name:<22}\\t{topic}\\t{value:6.4f}\\n")
sys.stdout.write("".join(out))
"""


def per_file(commands: list[list[str]], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (children's user + system) to run the commands one after another."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    for command in commands:
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def ours_in_process(qrels_path: Path, run_paths: list[Path]) -> tuple[float, float, float]:
    """Seconds for our engine to parse, evaluate all_trec for every run at once, and format the reports."""
    from app.evaluation.formats.trec_files import parse_trec_qrels, parse_trec_run, read_bytes
    from app.evaluation.trec_eval.engine import evaluate
    from app.evaluation.trec_eval.options import parse_arguments
    from app.evaluation.trec_eval.report import format_report
    from app.evaluation.trec_eval.table import select

    started = time.perf_counter()
    options = parse_arguments(["-q", "-m", "all_trec", "q", "r"])
    qrels = parse_trec_qrels(read_bytes(qrels_path))
    runs = [parse_trec_run(read_bytes(path)) for path in run_paths]
    parsed = time.perf_counter()
    reports = evaluate(runs, qrels, select(options.measures), options)
    evaluated = time.perf_counter()
    text = "".join(format_report(report, per_topic=True, summary=True) for report in reports)
    assert text
    return parsed - started, evaluated - parsed, time.perf_counter() - evaluated


def pytrec_in_process(qrels_path: Path, run_paths: list[Path]) -> tuple[float, float, float]:
    """Seconds for pytrec_eval to parse into dicts, evaluate all_trec run by run, and format trec_eval's lines."""
    import pytrec_eval

    parse = evaluate = output = 0.0
    started = time.perf_counter()
    qrels: dict[str, dict[str, int]] = {}
    for line in qrels_path.read_text().splitlines():
        if line.strip():
            topic, _, doc, grade = line.split()
            qrels.setdefault(topic, {})[doc] = int(grade)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"all_trec"})
    parse += time.perf_counter() - started
    out: list[str] = []
    for path in run_paths:
        started = time.perf_counter()
        run: dict[str, dict[str, float]] = {}
        for line in gzip.decompress(path.read_bytes()).decode().splitlines():
            if line.strip():
                topic, _, doc, _, score, _ = line.split()
                run.setdefault(topic, {})[doc] = float(score)
        parsed = time.perf_counter()
        results = evaluator.evaluate(run)
        evaluated = time.perf_counter()
        for topic in sorted(results):
            out.extend(f"{name:<22}\t{topic}\t{value:6.4f}\n" for name, value in results[topic].items())
        parse, evaluate, output = (
            parse + parsed - started,
            evaluate + evaluated - parsed,
            output + time.perf_counter() - evaluated,
        )
    assert out
    return parse, evaluate, output


def measured(commands: list[list[str]], env: dict[str, str]) -> tuple[float, float, float]:
    """CPU seconds (user + system), wall seconds and the largest max RSS in MiB of the commands run one by one."""
    cpu, peak = 0.0, 0
    started = time.perf_counter()
    for command in commands:
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode:
            raise SystemExit(f"failed ({child.returncode}): {' '.join(command[:4])} ...")
        cpu += usage.ru_utime + usage.ru_stime
        peak = max(peak, usage.ru_maxrss)
    return cpu, time.perf_counter() - started, peak / 1024


def files_to_numbers(data: Path, trec_eval: str | None, repeat: int, env: dict[str, str], tmp: Path) -> None:
    """Every run of runs/ and runs-more/ with the official measures: trecpool eval in one process vs a trec_eval
    loop, on the same plain files; print CPU, wall, peak memory and the ratio."""
    gz = sorted((data / "runs").glob("*.gz")) + sorted((data / "runs-more").glob("*.gz"))
    plain = []
    for path in gz:
        target = tmp / "plain" / path.parent.name / path.stem
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(gzip.decompress(path.read_bytes()))
        plain.append(target)
    qrels = str(data / "qrels.txt")
    ours = [str(Path(sys.executable).with_name("trecpool")), "eval", "-m", "official", qrels]
    candidates = {
        "trecpool eval, plain files (one process)": [[*ours, *map(str, plain)]],
        "trecpool eval, .gz files (one process)": [[*ours, *map(str, gz)]],
    }
    if trec_eval:
        candidates["trec_eval -m official, plain files (one per run)"] = [
            [trec_eval, "-m", "official", qrels, str(path)] for path in plain
        ]
    print(f"\nfiles to numbers: {len(gz)} runs, trec_eval's official measures, best of {repeat}")
    print(f"  {'':<52} {'CPU s':>8} {'wall s':>8} {'max MiB':>8}")
    best = {}
    for label, commands in candidates.items():
        measured(commands[:1], env)  # warm the bytecode cache and the page cache
        best[label] = min(measured(commands, env) for _ in range(repeat))
        cpu, wall, peak = best[label]
        print(f"  {label:<52} {cpu:8.2f} {wall:8.2f} {peak:8.1f}")
    ours_cpu = best["trecpool eval, plain files (one process)"][0]
    if not trec_eval:
        print("  trec_eval: not found (give --trec-eval or set TREC_EVAL, or put it on PATH)")
        print(f"files to numbers: ours {ours_cpu:.2f} s, trec_eval not measured")
        return
    theirs = best["trec_eval -m official, plain files (one per run)"][0]
    print(f"files to numbers: ours {ours_cpu:.2f} s, trec_eval {theirs:.2f} s, ratio {ours_cpu / theirs:.2f}")


def main() -> None:
    """Time both ways and print a table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--trec-eval", default=os.environ.get("TREC_EVAL") or shutil.which("trec_eval"))
    parser.add_argument("--official", action="store_true", help="only the files-to-numbers comparison")
    args = parser.parse_args()
    if args.official:
        with tempfile.TemporaryDirectory() as tmp:
            env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
            env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
            files_to_numbers(args.data, args.trec_eval, args.repeat, env, Path(tmp))
        return
    qrels = args.data / "qrels.txt"
    runs = sorted((args.data / "runs").glob("*.gz"))
    print(f"{len(runs)} runs of {args.data.name}, trec_eval -q -m all_trec, best of {args.repeat}")

    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "pytrec_all_trec.py"
        script.write_text(PYTREC_SCRIPT)
        trecpool = [sys.executable, "-m", "app.cli", "trec_eval", "-q", "-m", "all_trec", str(qrels)]
        pytrec = [sys.executable, str(script), str(qrels)]
        plain = []  # trec_eval reads plain files
        for path in runs:
            target = Path(tmp) / path.stem
            target.write_bytes(gzip.decompress(path.read_bytes()))
            plain.append(target)
        candidates = {
            "trecpool trec_eval": [[*trecpool, str(path)] for path in runs],
            "pytrec_eval script": [[*pytrec, str(path)] for path in runs],
        }
        if args.trec_eval:
            candidates["trec_eval"] = [[args.trec_eval, "-q", "-m", "all_trec", str(qrels), str(p)] for p in plain]
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        for commands in candidates.values():  # warm the bytecode cache
            per_file(commands[:1], env)
        print(f"\nper file, one process per run ({len(runs)} processes)       wall s    CPU s")
        best = {}
        for label, commands in candidates.items():
            rounds = [per_file(commands, env) for _ in range(args.repeat)]
            best[label] = min(rounds)
            print(f"  {label:<52} {best[label][0]:8.2f} {best[label][1]:8.2f}")
        mine, baseline = best["trecpool trec_eval"], best["pytrec_eval script"]
        print(f"  ratio trecpool / pytrec_eval{'':<26} {mine[0] / baseline[0]:8.2f} {mine[1] / baseline[1]:8.2f}")

    print("\nin one process, best of each step                      parse  evaluate   format    total")
    ours = [min(step) for step in zip(*(ours_in_process(qrels, runs) for _ in range(args.repeat)), strict=True)]
    theirs = [min(step) for step in zip(*(pytrec_in_process(qrels, runs) for _ in range(args.repeat)), strict=True)]
    for label, steps in (("trecpool engine (30 runs in one pass)", ours), ("pytrec_eval (run by run)", theirs)):
        print(f"  {label:<50} " + " ".join(f"{s:8.2f}" for s in (*steps, sum(steps))))
    ratios = [a / b for a, b in zip([*ours, sum(ours)], [*theirs, sum(theirs)], strict=True)]
    print(f"  {'ratio trecpool / pytrec_eval':<50} " + " ".join(f"{r:8.2f}" for r in ratios))
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        files_to_numbers(args.data, args.trec_eval, args.repeat, env, Path(tmp))


if __name__ == "__main__":
    main()
