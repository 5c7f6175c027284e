"""`trecpool eval`: trec_eval / sample_eval-style evaluation of run files against qrels."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from app.evaluation.errors import FormatError, MeasureError
from app.evaluation.evaluator import evaluate
from app.evaluation.output import format_results
from app.evaluation.registry import default_measures, resolve
from app.evaluation.trec_files import read_qrels, read_run

HELP = """Evaluate RUN files (TREC 6-column or TRECVID AVS XML, optionally .gz) against QRELS.

QRELS with 4 columns are TREC qrels; with 5 columns (topic iteration docno stratum grade) they are sample_eval
qrels, and the default measures then also include xinfAP, infNDCG, iP@k, inum_rel and inum_rel_ret.

Output (--format trec): trec_eval's `measure<TAB>topic<TAB>value` lines, `all` for the mean (for counts such as
num_ret, the total); per-topic lines only with -q. With several runs every line starts with `run<TAB>` (the run
tag). Values are printed at full precision unless --digits is given (--digits 4 looks like trec_eval).

Means run over every topic in the qrels, a topic a run lacks scoring 0 (trec_eval -c); --run-topics-only averages
over the topics each run answers (as sample_eval.pl and trec_eval without -c). Ranking: score descending, ties by
docno descending; the rank column is ignored; lists are cut at --max-results.

With --moments, QRELS is a moment ground-truth file and RUN moment runs (evaluated by app.evaluation.moments).
"""


def _fail(message: str) -> None:
    """Print an error to stderr and exit with status 2."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def eval_command(
    qrels: Path = typer.Argument(..., help="qrels (TREC or sample_eval) or, with --moments, moment ground truth"),
    runs: list[Path] = typer.Argument(..., help="run files"),
    measure: list[str] = typer.Option(None, "-m", "--measure", help="measure, e.g. AP, P@10, nDCG@10 (repeatable)"),
    per_topic: bool = typer.Option(False, "-q", "--per-topic", help="also print one line per topic"),
    digits: int = typer.Option(None, "--digits", help="decimals to print (default: full precision)"),
    fmt: str = typer.Option("trec", "--format", help="trec, json or csv"),
    run_topics_only: bool = typer.Option(False, "--run-topics-only", help="average over the topics a run answers"),
    max_results: int = typer.Option(1000, "--max-results", help="cut each ranked list at this many results"),
    moments: bool = typer.Option(False, "--moments", help="evaluate moment runs against moment ground truth"),
) -> None:
    """Evaluate runs against qrels, like trec_eval / sample_eval.pl."""
    if fmt not in ("trec", "json", "csv"):
        _fail(f"unknown --format {fmt!r} (trec, json or csv)")
    measures = list(measure or [])
    try:
        if moments:
            results = _evaluate_moments(qrels, runs, measures or None)
        else:
            results = _evaluate_runs(qrels, runs, measures, run_topics_only=run_topics_only, max_results=max_results)
    except FormatError as exc:
        _fail(str(exc))
    except (MeasureError, OSError) as exc:
        _fail(str(exc))
    sys.stdout.write(format_results(results, fmt, per_topic=per_topic, digits=digits))


def _evaluate_runs(
    qrels_path: Path, run_paths: list[Path], measures: list[str], *, run_topics_only: bool, max_results: int
) -> dict[str, dict[str, dict[str, float]]]:
    """Parse and evaluate shot/document runs."""
    for name in measures:
        resolve(name)
    qrels = read_qrels(qrels_path)
    if not measures:
        measures = default_measures(qrels.stratified)
    if not qrels.stratified:
        stratified = [name for name in measures if resolve(name).stratified]
        if stratified:
            raise MeasureError(f"{', '.join(stratified)} need sample_eval (5-column, stratified) qrels")
    tables = [read_run(path) for path in run_paths]
    names = _unique_names([table.tag or path.name for table, path in zip(tables, run_paths, strict=True)])
    results = evaluate(qrels, tables, measures, max_results=max_results, run_topics_only=run_topics_only, names=names)
    return results.to_dict()


def _unique_names(names: list[str]) -> list[str]:
    """Run names made distinct by suffixing repeats with #2, #3, ..."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return out


def _evaluate_moments(
    ground_truth: Path, run_paths: list[Path], measures: list[str] | None
) -> dict[str, dict[str, dict[str, float]]]:
    """Delegate moment runs to app.evaluation.moments."""
    try:
        from app.evaluation.moments import evaluate_moment_files
    except ImportError as exc:
        raise MeasureError(f"moment evaluation is not available ({exc})") from None
    return evaluate_moment_files(str(ground_truth), [str(p) for p in run_paths], measures)


def register(cli: typer.Typer) -> None:
    """Add the `eval` command."""
    cli.command("eval", help=HELP)(eval_command)
