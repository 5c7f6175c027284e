"""`trecpool analyse ...`: reusability and meta-evaluation analyses (SPEC section 6) from files, with rich tables
and optional PNG/SVG plots. The computations live in app.evaluation.analyses."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer
from rich.console import Console
from rich.table import Table

from app.evaluation.errors import FormatError, MeasureError
from app.evaluation.evaluator import evaluate
from app.evaluation.formats.trec_files import read_qrels, read_run
from app.evaluation.records import Qrels, RunTable

cli = analyse = typer.Typer(
    help="Reusability and meta-evaluation analyses of a test collection.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

QrelsArg = Annotated[Path, typer.Argument(help="qrels file (TREC 4 columns or sample_eval 5 columns)")]
RunsArg = Annotated[list[Path], typer.Argument(help="run files (TREC 6 columns or TRECVID AVS XML, may be .gz)")]
PlotOpt = Annotated[Path | None, typer.Option("--plot", help="write a figure (.png or .svg)")]
JsonOpt = Annotated[Path | None, typer.Option("--json", help="write the full result as JSON")]
MaxResultsOpt = Annotated[int, typer.Option("--max-results", help="cut each ranked list at this many results")]


def _console() -> Console:
    return Console(width=200) if not sys.stdout.isatty() else Console()


def _fail(message: str) -> None:
    Console(stderr=True).print(f"[red]error:[/] {message}", highlight=False, markup=True)
    raise typer.Exit(2)


def _errors_exit_2(function: Callable[..., None]) -> Callable[..., None]:
    """Report input errors on stderr with exit code 2 instead of a traceback."""

    @wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            function(*args, **kwargs)
        except (FormatError, MeasureError, ValueError, OSError, ImportError) as exc:
            _fail(str(exc))

    return wrapper


def _load(qrels_path: Path, run_paths: list[Path]) -> tuple[Qrels, list[RunTable]]:
    qrels = read_qrels(qrels_path)
    runs = [read_run(p) for p in run_paths]
    tags = [r.tag for r in runs]
    duplicates = sorted({t for t in tags if tags.count(t) > 1})
    if duplicates:
        raise ValueError(f"several run files have the tag {', '.join(duplicates)}")
    return qrels, runs


def _default_measure(qrels: Qrels, measure: str | None) -> str:
    return measure if measure else ("xinfAP" if qrels.stratified else "AP")


def _write_json(path: Path | None, data: dict) -> None:
    if path is not None:
        path.write_text(json.dumps(data, indent=1, allow_nan=True), encoding="utf-8")


PLOT_FORMATS = {".png": "png", ".svg": "svg"}


def check_plot_path(path: Path | None) -> None:
    """Refuse a --plot path that is not .png or .svg (before any work is done)."""
    if path is not None and path.suffix.lower() not in PLOT_FORMATS:
        raise ValueError(f"plot file must end in .png or .svg: {path}")


def _write_outputs(
    console: Console, json_path: Path | None, data: dict, plot: Path | None, kind: str, figure_data: dict | None = None
) -> None:
    """Write the --json file and, with --plot, the analysis figure of `kind` drawn from the same data.

    The figures module (matplotlib) is imported only when a plot is asked for, to keep the command quick to start.
    """
    _write_json(json_path, data)
    if plot is not None:  # the command checked the suffix before its work
        figures = importlib.import_module("app.figures.analyses")
        figure = figures.FIGURES[kind](data if figure_data is None else figure_data)
        plot.write_bytes(figures.render(figure, PLOT_FORMATS[plot.suffix.lower()]))
        console.print(f"plot written to {plot}")


def _fmt(value: float) -> str:
    return "nan" if value != value else f"{value:.4f}"


def _show_depths(depths: np.ndarray) -> list[int]:
    """Indices of the depths to print: all when few, else 1-2-5 steps and the last."""
    if len(depths) <= 25:
        return list(range(len(depths)))
    marks = {d for e in range(7) for d in (10**e, 2 * 10**e, 3 * 10**e, 5 * 10**e)}
    picked = [i for i, d in enumerate(depths.tolist()) if d in marks]
    return sorted(set(picked) | {0, len(depths) - 1})


@analyse.command("pool-depth")
@_errors_exit_2
def pool_depth_command(
    qrels_path: QrelsArg,
    run_paths: RunsArg,
    groups: Annotated[Path | None, typer.Option("--groups", help="run_groups.tsv (pooled: yes)")] = None,
    measure: Annotated[str | None, typer.Option("-m", "--measure", help="AP (default; xinfAP if stratified)")] = None,
    max_depth: Annotated[int, typer.Option("--max-depth", help="depths 1..D")] = 100,
    outside: Annotated[str, typer.Option("--outside", help="keep|drop: lines no pooled run retrieved")] = "keep",
    max_results: MaxResultsOpt = 1000,
    plot: PlotOpt = None,
    json_path: JsonOpt = None,
) -> None:
    """Westerveld's pool-depth analysis: every run's score and tau_b / tau_AP vs the full qrels for depths 1..D."""
    from app.evaluation.analyses import pool_depth, read_run_groups  # scipy: only when the analysis runs

    check_plot_path(plot)
    qrels, runs = _load(qrels_path, run_paths)
    names = [r.tag for r in runs]
    pooled = read_run_groups(groups).pooled_runs(names) if groups else None
    result = pool_depth(
        qrels,
        runs,
        measure=_default_measure(qrels, measure),
        pooled=pooled,
        max_depth=max_depth,
        max_results=max_results,
        outside=outside,
    )
    console = _console()
    shown = _show_depths(result.depths)
    table = Table(title=f"Pool depth: {result.measure}, {len(result.pooled)} of {len(names)} runs pooled")
    for column in ("depth", "lines", "relevant", "tau_b", "tau_AP"):
        table.add_column(column, justify="right")
    for i in shown:
        table.add_row(
            str(result.depths[i]),
            str(result.lines[i]),
            str(result.relevant[i]),
            _fmt(result.tau_b[i]),
            _fmt(result.tau_ap[i]),
        )
    table.add_row("full", str(result.total_lines), str(result.total_relevant), "1.0000", "1.0000")
    console.print(table)
    runs_table = Table(title=f"{result.measure} per run (full qrels and selected depths)")
    runs_table.add_column("run")
    runs_table.add_column("full", justify="right")
    few = [i for i in shown if result.depths[i] in (1, 5, 10, 20, 50, 100)] or shown[:3]
    few = sorted(set(few) | {len(result.depths) - 1})
    for i in few:
        runs_table.add_column(f"d={result.depths[i]}", justify="right")
    for r in np.argsort(-result.full, kind="stable").tolist():
        runs_table.add_row(result.runs[r], _fmt(result.full[r]), *[_fmt(result.scores[i, r]) for i in few])
    console.print(runs_table)
    _write_outputs(console, json_path, result.to_dict(), plot, "pool-depth")


@analyse.command("leave-out")
@_errors_exit_2
def leave_out_command(
    qrels_path: QrelsArg,
    run_paths: RunsArg,
    groups: Annotated[Path, typer.Option("--groups", help="run_groups.tsv: run, team, contributed, runtype")],
    by: Annotated[str, typer.Option("--by", help="run | group | type")] = "group",
    measure: Annotated[str | None, typer.Option("-m", "--measure", help="AP (default; xinfAP if stratified)")] = None,
    pool_depth_k: Annotated[
        int | None, typer.Option("--pool-depth", help="a run contributes the judged docs in its top k (default all)")
    ] = None,
    max_results: MaxResultsOpt = 1000,
    plot: PlotOpt = None,
    json_path: JsonOpt = None,
) -> None:
    """Leave one run / group / run type out: remove the qrels lines only it contributed and re-evaluate."""
    from app.evaluation.analyses import leave_out, read_run_groups  # scipy: only when the analysis runs

    check_plot_path(plot)
    if by not in ("run", "group", "type"):
        raise ValueError("--by must be run, group or type")
    qrels, runs = _load(qrels_path, run_paths)
    names = [r.tag for r in runs]
    table_groups = read_run_groups(groups)
    result = leave_out(
        qrels,
        runs,
        units=table_groups.units(names, by),
        by=by,
        measure=_default_measure(qrels, measure),
        pooled=table_groups.pooled_runs(names),
        depth=pool_depth_k,
        max_results=max_results,
    )
    console = _console()
    units = Table(title=f"Leave one {by} out: {result.measure}, pool depth {result.depth}")
    for column in (by, "removed lines", "removed relevant", "tau_b (all runs)"):
        units.add_column(column, justify="left" if column == by else "right")
    for u, unit in enumerate(result.units):
        units.add_row(unit, str(result.removed_lines[u]), str(result.removed_relevant[u]), _fmt(result.unit_tau_b[u]))
    console.print(units)
    per_run = Table(title="Per run (its own unit left out)")
    for column in ("run", by, "original", "reduced", "delta", "% delta", "rank change"):
        per_run.add_column(column, justify="left" if column in ("run", by) else "right")
    for r in np.argsort(-result.original, kind="stable").tolist():
        per_run.add_row(
            result.runs[r],
            result.unit_of_run[r],
            _fmt(result.original[r]),
            _fmt(result.reduced[r]),
            f"{result.delta[r]:+.4f}",
            f"{result.percent_delta[r]:+.2f}",
            f"{result.rank_change[r]:+d}",
        )
    console.print(per_run)
    console.print(
        f"tau_b = {result.tau_b:.4f}  tau_AP = {result.tau_ap:.4f}  "
        f"max drop = {result.max_drop:.4f} ({result.max_percent_drop:.2f}%)"
    )
    _write_outputs(console, json_path, result.to_dict(), plot, "leave-out")


MeasuresOpt = Annotated[list[str], typer.Option("-m", "--measure", help="measure (repeat the option)")]


@analyse.command("agreement")
@_errors_exit_2
def agreement_command(
    qrels_path: QrelsArg,
    run_paths: RunsArg,
    measures: MeasuresOpt,
    max_results: MaxResultsOpt = 1000,
    plot: PlotOpt = None,
    json_path: JsonOpt = None,
) -> None:
    """tau_b between the system rankings of every pair of measures (AxIoU paper, Fig. 4)."""
    from app.evaluation.analyses import measure_agreement  # scipy: only when the analysis runs

    check_plot_path(plot)
    if len(measures) < 2:
        raise ValueError("name at least two measures with -m")
    qrels, runs = _load(qrels_path, run_paths)
    results = evaluate(qrels, runs, measures, max_results=max_results)
    names, matrix = measure_agreement(results)
    table = Table(title=f"Measure agreement (Kendall tau_b over {len(runs)} runs)")
    table.add_column("measure")
    for name in names:
        table.add_column(name, justify="right")
    for i, name in enumerate(names):
        table.add_row(name, *[_fmt(v) for v in matrix[i]])
    console = _console()
    console.print(table)
    _write_outputs(console, json_path, {"measures": names, "tau_b": matrix.tolist()}, plot, "agreement")


@analyse.command("stability")
@_errors_exit_2
def stability_command(
    qrels_path: QrelsArg,
    run_paths: RunsArg,
    measures: MeasuresOpt,
    trials: Annotated[int, typer.Option("--trials", help="random subsets per size")] = 1000,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    max_results: MaxResultsOpt = 1000,
    plot: PlotOpt = None,
    json_path: JsonOpt = None,
) -> None:
    """tau_b on random topic subsets: subset vs full set, and disjoint split halves (mean and variance)."""
    from app.evaluation.analyses import results_stability  # scipy: only when the analysis runs

    check_plot_path(plot)
    qrels, runs = _load(qrels_path, run_paths)
    results = evaluate(qrels, runs, measures, max_results=max_results)
    result = results_stability(results, trials=trials, seed=seed)
    console = _console()
    table = Table(title=f"Stability: mean (variance) of tau_b, {trials} trials, seed {seed}")
    table.add_column("topics", justify="right")
    for m in result.measures:
        table.add_column(f"{m} vs full", justify="right")
        table.add_column(f"{m} halves", justify="right")
    split_at = {int(s): k for k, s in enumerate(result.split_sizes.tolist())}
    for j, size in enumerate(result.sizes.tolist()):
        cells = []
        for i in range(len(result.measures)):
            cells.append(f"{_fmt(result.full_mean[i, j])} ({result.full_var[i, j]:.4f})")
            k = split_at.get(size)
            cells.append("" if k is None else f"{_fmt(result.split_mean[i, k])} ({result.split_var[i, k]:.4f})")
        table.add_row(str(size), *cells)
    console.print(table)
    _write_outputs(console, json_path, result.to_dict(), plot, "stability")


@analyse.command("label-noise")
@_errors_exit_2
def label_noise_command(
    run_paths: Annotated[list[Path], typer.Argument(help="moment run files (TSV or JSON lines)")],
    moments: Annotated[Path, typer.Option("--moments", help="moment ground truth (topic video start end)")],
    measures: Annotated[list[str] | None, typer.Option("-m", "--measure", help="moment measure (repeat)")] = None,
    sigmas: Annotated[list[float] | None, typer.Option("--sigma", help="noise level in seconds (repeat)")] = None,
    trials: Annotated[int, typer.Option("--trials")] = 100,
    raters: Annotated[int, typer.Option("--raters")] = 5,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    length: Annotated[str, typer.Option("--length", help="exponential (paper) | shifted (SPEC 6)")] = "exponential",
    plot: PlotOpt = None,
    json_path: JsonOpt = None,
) -> None:
    """Label-noise stability of moment measures (AxIoU paper, Fig. 7): per run, mean |change| and RMSE."""
    from app.evaluation.analyses import label_noise  # scipy: only when the analysis runs

    check_plot_path(plot)
    from app.evaluation.analyses.label_noise import DEFAULT_SIGMAS
    from app.evaluation.moments import (
        ground_truth_segments,
        parse_moment_ground_truth,
        parse_moment_measure,
        parse_moment_run,
        rank_moments,
    )

    names = measures or ["AxIoU@1", "AxIoU@5", "AxIoU@10", "R@1,0.5", "R@1,0.7", "R@5,0.5", "R@5,0.7"]
    specs = [parse_moment_measure(m) for m in names]
    segments = ground_truth_segments(parse_moment_ground_truth(moments.read_bytes(), source=str(moments)))
    runs = [parse_moment_run(p.read_bytes(), source=str(p)) for p in run_paths]
    run_names = [r.tag or p.stem for r, p in zip(runs, run_paths, strict=True)]
    ranked = rank_moments(segments, runs, max(s.k for s in specs))
    result = label_noise(
        segments,
        ranked,
        names,
        runs=run_names,
        sigmas=sigmas or list(DEFAULT_SIGMAS),
        trials=trials,
        raters=raters,
        seed=seed,
        length=length,
    )
    console = _console()
    summary = Table(title=f"Label noise: mean RMSE over runs ({trials} trials, {raters} raters, length {length})")
    summary.add_column("sigma", justify="right")
    summary.add_column("IoU(orig, noisy)", justify="right")
    for m in result.measures:
        summary.add_column(m, justify="right")
    for i, sigma in enumerate(result.sigmas.tolist()):
        summary.add_row(f"{sigma:g}", _fmt(result.noisy_iou[i]), *[_fmt(v) for v in result.mean_rmse[i]])
    console.print(summary)
    detail = Table(title="Per run: clean score, mean |change|, RMSE")
    for column in ("run", "measure", "clean", *[f"sigma={s:g}" for s in result.sigmas.tolist()]):
        detail.add_column(column, justify="left" if column in ("run", "measure") else "right")
    for r, run in enumerate(result.runs):
        for k, m in enumerate(result.measures):
            cells = [
                f"{result.mean_abs_change[i, k, r]:.4f} / {result.rmse[i, k, r]:.4f}" for i in range(len(result.sigmas))
            ]
            detail.add_row(run, m, _fmt(result.clean[k, r]), *cells)
    console.print(detail)
    _write_outputs(console, json_path, result.to_dict(), plot, "label-noise")


@analyse.command("ties")
@_errors_exit_2
def ties_command(
    qrels_path: QrelsArg,
    run_paths: RunsArg,
    measures: MeasuresOpt,
    max_results: MaxResultsOpt = 1000,
    plot: PlotOpt = None,
    json_path: JsonOpt = None,
) -> None:
    """All-tied query ratio: the share of topics on which every run scores the same, per measure."""
    from app.evaluation.analyses import all_tied_ratios  # scipy: only when the analysis runs

    check_plot_path(plot)
    qrels, runs = _load(qrels_path, run_paths)
    results = evaluate(qrels, runs, measures, max_results=max_results)
    ratios = all_tied_ratios(results)
    table = Table(title=f"All-tied topics ({len(results.topics)} topics, {len(runs)} runs)")
    table.add_column("measure")
    table.add_column("all-tied ratio", justify="right")
    table.add_column("topics", justify="right")
    for m, ratio in ratios.items():
        table.add_row(m, _fmt(ratio), str(round(ratio * len(results.topics))))
    console = _console()
    console.print(table)
    _write_outputs(console, json_path, ratios, plot, "ties", {"ratios": ratios})


@analyse.command("power")
@_errors_exit_2
def power_command(
    qrels_path: QrelsArg,
    run_paths: RunsArg,
    measures: MeasuresOpt,
    alpha: Annotated[float, typer.Option("--alpha")] = 0.05,
    resamples: Annotated[int, typer.Option("--resamples", help="randomization test resamples B")] = 10_000,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    max_results: MaxResultsOpt = 1000,
    json_path: JsonOpt = None,
) -> None:
    """Discriminative power: share of run pairs significantly different (paired randomization test)."""
    from app.evaluation.analyses import discriminative_power  # scipy: only when the analysis runs

    qrels, runs = _load(qrels_path, run_paths)
    results = evaluate(qrels, runs, measures, max_results=max_results)
    table = Table(title=f"Discriminative power at alpha = {alpha:g} ({len(runs)} runs, B = {resamples})")
    table.add_column("measure")
    table.add_column("power", justify="right")
    out = {}
    for i, m in enumerate(results.measures):
        power = discriminative_power(results.values[:, i, :], alpha=alpha, n_resamples=resamples, seed=seed)
        out[m] = power
        table.add_row(m, _fmt(power))
    _console().print(table)
    _write_json(json_path, out)
