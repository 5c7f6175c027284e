"""`trecpool analyse ...`: reusability and meta-evaluation analyses (SPEC section 6) from files, with rich tables
and optional PNG/SVG plots. The computations live in app.evaluation.analyses.

Every command validates its options with the parameter schema the REST API uses (app/services/analysis_params.py,
imported only when a command runs): options left out take the schema's defaults, so the CLI and the service run
the same analysis for the same request. The score-based analyses (agreement, stability, ties, power) read TREC runs
against qrels, or with `--moments GROUND_TRUTH` moment runs against moment ground truth.
"""

from __future__ import annotations

import gzip
import importlib
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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
from app.evaluation.results import Results

cli = analyse = typer.Typer(
    help="Reusability and meta-evaluation analyses of a test collection.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

QrelsArg = Annotated[Path, typer.Argument(help="qrels file (TREC 4 columns or sample_eval 5 columns)")]
RunsArg = Annotated[list[Path], typer.Argument(help="run files (TREC 6 columns or TRECVID AVS XML, may be .gz)")]
PathsArg = Annotated[
    list[Path],
    typer.Argument(
        help="QRELS RUN... (TREC or sample_eval qrels, TREC or AVS XML runs); with --moments: moment RUN..."
    ),
]
MomentsOpt = Annotated[
    Path | None, typer.Option("--moments", help="moment ground truth: the files are moment runs (AxIoU@K, R@K,theta)")
]
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


# Parameters whose option is not the field's name in kebab case.
OPTION_NAMES = {"measures": "--measure", "n_resamples": "--resamples", "sigmas": "--sigma", "depths": "--depth"}


def _params(kind: str, renamed: dict[str, str] | None = None, **given: object) -> Any:
    """The validated parameters of `kind` from the options given (None = not given: the schema's default).

    An error quotes each parameter by its option: `--` and the field in kebab case, unless `OPTION_NAMES` or
    `renamed` (field -> option) says otherwise.
    """
    from pydantic import ValidationError

    from app.services.analysis_params import describe_error, parse_params

    names = {f: OPTION_NAMES.get(f, "--" + f.replace("_", "-")) for f in given} | (renamed or {})
    try:
        return parse_params(kind, {k: v for k, v in given.items() if v is not None})
    except ValidationError as exc:
        raise ValueError(describe_error(exc, names)) from None


@contextmanager
def _progress(description: str) -> Iterator[Callable[[float], None] | None]:
    """A progress bar on a terminal's stderr, fed with fractions; nothing when stderr is not a terminal."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(description, total=1.0)
        yield lambda fraction: bar.update(task, completed=fraction)


def parse_sizes(text: str | None) -> list[int] | None:
    """Subset sizes from '10,20,50,100-1800:100' (lists, ranges a-b, ranges with a step a-b:s)."""
    if text is None:
        return None
    sizes: set[int] = set()
    for part in (p.strip() for p in text.split(",")):
        try:
            if "-" in part:
                span, _, step = part.partition(":")
                first, last = (int(x) for x in span.split("-", 1))
                sizes.update(range(first, last + 1, int(step) if step else 1))
            else:
                sizes.add(int(part))
        except ValueError:
            raise ValueError(f"--sizes: {part!r} is not a size, a range a-b or a range with a step a-b:s") from None
    return sorted(sizes)


def _read_bytes(path: Path) -> bytes:
    """A file's bytes, gunzipped when it is gzip-compressed."""
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def _scores(
    paths: list[Path], moments: Path | None, measures: list[str] | None, max_results: int, *, every: bool = True
) -> Results:
    """Per-topic scores of the runs: QRELS RUN... evaluated, or moment RUN... against the --moments ground truth.

    Without measures: every measure `trecpool eval` reports (as a REST evaluation holds them) when `every`, else
    the one a campaign's leaderboard sorts by (xinfAP for stratified qrels, else AP; AxIoU@10 for moments).
    """
    if moments is not None:
        from app.evaluation.analyses.moment_results import moment_results
        from app.evaluation.moments import DEFAULT_MOMENT_MEASURES, parse_moment_ground_truth, parse_moment_run

        if not paths:
            raise ValueError("name the moment run files")
        truth = parse_moment_ground_truth(_read_bytes(moments), source=str(moments))
        runs = [parse_moment_run(_read_bytes(p), source=str(p)) for p in paths]
        names = [r.tag or p.name for r, p in zip(runs, paths, strict=True)]
        chosen = measures or (list(DEFAULT_MOMENT_MEASURES) if every else ["AxIoU@10"])
        return moment_results(truth, runs, chosen, names)
    if len(paths) < 2:
        raise ValueError("name the qrels file and at least one run file (or use --moments GROUND_TRUTH)")
    qrels, runs = _load(paths[0], paths[1:])
    if not measures:
        from app.evaluation.measures.registry import default_measures

        measures = default_measures(stratified=qrels.stratified) if every else [_default_measure(qrels, None)]
    return evaluate(qrels, runs, measures, max_results=max_results)


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
    console: Console,
    json_path: Path | None,
    data: dict,
    plot: Path | None,
    kind: str,
    figure_data: dict | None = None,
    run: str | None = None,
) -> None:
    """Write the --json file and, with --plot, the analysis figure of `kind` drawn from the same data.

    The figures module (matplotlib) is imported only when a plot is asked for, to keep the command quick to start.
    """
    _write_json(json_path, data)
    if plot is not None:  # the command checked the suffix before its work
        figures = importlib.import_module("app.figures.analyses")
        figure = figures.figure_of(kind, data if figure_data is None else figure_data, run)
        plot.write_bytes(figures.render(figure, PLOT_FORMATS[plot.suffix.lower()]))
        console.print(f"plot written to {plot}")


def _fmt(value: float) -> str:
    return "nan" if value != value else f"{value:.4f}"


def _fmt_num(value: float | None) -> str:
    """A JSON number (None: NaN) as the tables print it."""
    return _fmt(np.nan if value is None else value)


def _show_depths(depths: np.ndarray) -> list[int]:
    """Indices of the depths to print: all when few, else 1-2-5 steps and the last."""
    if len(depths) <= 25:
        return list(range(len(depths)))
    marks = {d for e in range(7) for d in (10**e, 2 * 10**e, 3 * 10**e, 5 * 10**e)}
    picked = [i for i, d in enumerate(depths.tolist()) if d in marks]
    return sorted(set(picked) | {0, len(depths) - 1})


GroupsOpt = Annotated[
    Path | None, typer.Option("--groups", help="run_groups.tsv: run, team, contributed (yes/no), runtype")
]
MeasureOpt = Annotated[str | None, typer.Option("-m", "--measure", help="AP (default; xinfAP if stratified)")]
PoolDepthOpt = Annotated[
    int | None,
    typer.Option("--pool-depth", help="the depth the pool was built with (default: inferred from the qrels, printed)"),
]
MeasuresOpt = Annotated[list[str] | None, typer.Option("-m", "--measure", help="measure (repeat the option)")]
SeedOpt = Annotated[int | None, typer.Option("--seed", help="random seed (default 0)")]


def _pool_depth_of(
    console: Console, qrels: Qrels, prepared: object, pooled: list[str] | None, given: int | None
) -> tuple[int, str]:
    """The pool depth: given, else inferred from the qrels (printed with the judged shares it was read from)."""
    from app.evaluation.analyses import index_lines, infer_pool_depth
    from app.evaluation.analyses.lines import run_mask

    if given is not None:
        console.print(f"pool depth {given} (given)")
        return given, "given"
    estimate = infer_pool_depth(index_lines(prepared, qrels), run_mask(prepared.names, pooled))  # type: ignore[attr-defined]
    facts = estimate.to_dict()
    after = "" if facts["share_after"] is None else f", {facts['share_after']:.1%} at rank {estimate.depth + 1}"
    console.print(
        f"pool depth {estimate.depth} (inferred from the qrels: {facts['share_at_depth']:.1%} of the pooled runs' "
        f"results judged at rank {estimate.depth}{after}; give --pool-depth to override)"
    )
    return estimate.depth, "inferred"


@analyse.command("pool-depth")
@_errors_exit_2
def pool_depth_command(
    qrels_path: QrelsArg,
    run_paths: RunsArg,
    groups: GroupsOpt = None,
    measure: MeasureOpt = None,
    max_depth: Annotated[
        int | None, typer.Option("--max-depth", help="depths 1..D (default: min(100, pool depth))")
    ] = None,
    outside: Annotated[
        str | None, typer.Option("--outside", help="drop (default) | keep: qrels lines no pooled run retrieved")
    ] = None,
    pool_depth_k: PoolDepthOpt = None,
    max_results: MaxResultsOpt = 1000,
    plot: PlotOpt = None,
    json_path: JsonOpt = None,
) -> None:
    """Westerveld's pool-depth analysis: every run's score and tau_b / tau_AP vs the full qrels for depths 1..D."""
    from app.evaluation.analyses import pool_depth, read_run_groups  # scipy: only when the analysis runs
    from app.evaluation.prepared_runs import prepare_runs

    check_plot_path(plot)
    params = _params("pool-depth", measure=measure, max_depth=max_depth, outside=outside)
    qrels, runs = _load(qrels_path, run_paths)
    names = [r.tag for r in runs]
    pooled = read_run_groups(groups).pooled_runs(names) if groups else None
    prepared = prepare_runs(runs, max_results)
    console = _console()
    depth_range = params.max_depth
    if depth_range is None:
        try:
            depth_range = min(100, _pool_depth_of(console, qrels, prepared, pooled, pool_depth_k)[0])
        except ValueError as exc:
            console.print(f"{exc}: depths 1..100")
            depth_range = 100
    result = pool_depth(
        qrels,
        prepared,
        measure=_default_measure(qrels, params.measure),
        pooled=pooled,
        max_depth=depth_range,
        max_results=max_results,
        outside=params.outside,
    )
    shown = _show_depths(result.depths)
    console.print(
        f"qrels lines no pooled run retrieved: {'dropped' if result.outside == 'drop' else 'kept'} at every depth"
    )
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
    by: Annotated[str | None, typer.Option("--by", help="run | team (= group, default) | type")] = None,
    measure: MeasureOpt = None,
    pool_depth_k: PoolDepthOpt = None,
    max_results: MaxResultsOpt = 1000,
    plot: PlotOpt = None,
    json_path: JsonOpt = None,
) -> None:
    """Leave one run / team / run type out: remove the qrels lines only it contributed to the pool, re-evaluate.

    A run contributed the judged documents in its top k, k the pool's depth (--pool-depth, else inferred from the
    qrels); only runs marked as contributing in the groups file count (all when it has no such column).
    """
    from app.evaluation.analyses import leave_out, read_run_groups  # scipy: only when the analysis runs
    from app.evaluation.prepared_runs import prepare_runs

    check_plot_path(plot)
    params = _params("leave-out", {"depth": "--pool-depth"}, by=by, measure=measure, depth=pool_depth_k)
    qrels, runs = _load(qrels_path, run_paths)
    names = [r.tag for r in runs]
    table_groups = read_run_groups(groups)
    pooled = table_groups.pooled_runs(names)
    prepared = prepare_runs(runs, max_results)
    console = _console()
    depth, source = _pool_depth_of(console, qrels, prepared, pooled, params.depth)
    result = leave_out(
        qrels,
        prepared,
        units=table_groups.units(names, "group" if params.by == "team" else params.by),
        by=params.by,
        measure=_default_measure(qrels, params.measure),
        pooled=pooled,
        depth=depth,
        depth_source=source,
        max_results=max_results,
    )
    by_name = result.by
    units = Table(title=f"Leave one {by_name} out: {result.measure}, pool depth {result.depth} ({source})")
    for column in (by_name, "removed lines", "removed relevant", "tau_b (all runs)"):
        units.add_column(column, justify="left" if column == by_name else "right")
    for u, unit in enumerate(result.units):
        units.add_row(unit, str(result.removed_lines[u]), str(result.removed_relevant[u]), _fmt(result.unit_tau_b[u]))
    console.print(units)
    per_run = Table(title="Per run (its own unit left out)")
    for column in ("run", by_name, "original", "reduced", "delta", "% delta", "rank change"):
        per_run.add_column(column, justify="left" if column in ("run", by_name) else "right")
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


@analyse.command("agreement")
@_errors_exit_2
def agreement_command(
    paths: PathsArg,
    measures: MeasuresOpt = None,
    moments: MomentsOpt = None,
    max_results: MaxResultsOpt = 1000,
    plot: PlotOpt = None,
    json_path: JsonOpt = None,
) -> None:
    """tau_b between the system rankings of every pair of measures (AxIoU paper, Fig. 4); default: every measure."""
    from app.evaluation.analyses import agreement_result, measure_agreement  # scipy: only when the analysis runs

    check_plot_path(plot)
    params = _params("agreement", measures=measures)
    results = _scores(paths, moments, params.measures, max_results)
    names, matrix = measure_agreement(results)
    data = agreement_result(names, results.mean())
    table = Table(title=f"Measure agreement (Kendall tau_b over {len(results.runs)} runs)")
    table.add_column("measure")
    for name in names:
        table.add_column(name, justify="right")
    for i, name in enumerate(names):
        table.add_row(name, *[_fmt(v) for v in matrix[i]])
    console = _console()
    console.print(table)
    tau_ap = Table(title="tau_AP (row = the reference measure's ranking, column = the ranking compared with it)")
    tau_ap.add_column("measure")
    for name in names:
        tau_ap.add_column(name, justify="right")
    for name, row in zip(names, data["tau_ap"], strict=True):  # type: ignore[call-overload]
        tau_ap.add_row(name, *[_fmt(v) for v in row])
    console.print(tau_ap)
    _write_outputs(console, json_path, data, plot, "agreement")


@analyse.command("stability")
@_errors_exit_2
def stability_command(
    paths: PathsArg,
    measures: MeasuresOpt = None,
    moments: MomentsOpt = None,
    trials: Annotated[int | None, typer.Option("--trials", help="random subsets per size (default 5000)")] = None,
    sizes: Annotated[
        str | None,
        typer.Option("--sizes", help="subset sizes, e.g. 10,20,50,100-1800:100 (default 1..n; 100 sizes above n=100)"),
    ] = None,
    seed: SeedOpt = None,
    max_results: MaxResultsOpt = 1000,
    plot: PlotOpt = None,
    json_path: JsonOpt = None,
) -> None:
    """tau_b on random topic subsets (AxIoU paper, Fig. 6): subset vs full set, and disjoint split halves."""
    from app.evaluation.analyses import stability  # scipy: only when the analysis runs

    check_plot_path(plot)
    params = _params("stability", measures=measures, trials=trials, sizes=parse_sizes(sizes), seed=seed)
    results = _scores(paths, moments, params.measures, max_results, every=False)
    with _progress("stability") as progress:
        result = stability(
            results.values,
            results.measures,
            trials=params.trials,
            seed=params.seed,
            sizes=params.sizes,
            progress=progress,
        )
    console = _console()
    title = f"Stability: mean (variance) of tau_b, {params.trials} trials per size, seed {params.seed}"
    table = Table(title=f"{title}, {result.n_topics} topics, {len(results.runs)} runs")
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
    run_paths: Annotated[list[Path], typer.Argument(help="moment run files (TSV or JSON lines, may be .gz)")],
    moments: Annotated[Path, typer.Option("--moments", help="moment ground truth (topic video start end)")],
    measures: MeasuresOpt = None,
    sigmas: Annotated[
        list[float] | None, typer.Option("--sigma", help="noise level in seconds (repeat; default 0.5 1 2 4)")
    ] = None,
    trials: Annotated[int | None, typer.Option("--trials", help="noisy ground truths per level (default 100)")] = None,
    raters: Annotated[int | None, typer.Option("--raters", help="raters whose medians make one (default 5)")] = None,
    seed: SeedOpt = None,
    length: Annotated[
        str | None, typer.Option("--length", help="shifted: (e-s)+Exp(1) (default, SPEC 6) | exponential")
    ] = None,
    plot: PlotOpt = None,
    json_path: JsonOpt = None,
) -> None:
    """Label-noise stability of moment measures (AxIoU paper, Fig. 7): per run, mean |change| and RMSE."""
    from app.evaluation.analyses import label_noise  # scipy: only when the analysis runs
    from app.evaluation.moments import (
        ground_truth_segments,
        parse_moment_ground_truth,
        parse_moment_measure,
        parse_moment_run,
        rank_moments,
    )

    check_plot_path(plot)
    params = _params(
        "label-noise", measures=measures, sigmas=sigmas, trials=trials, raters=raters, seed=seed, length=length
    )
    specs = [parse_moment_measure(m) for m in params.measures]
    segments = ground_truth_segments(parse_moment_ground_truth(_read_bytes(moments), source=str(moments)))
    runs = [parse_moment_run(_read_bytes(p), source=str(p)) for p in run_paths]
    run_names = [r.tag or p.stem for r, p in zip(runs, run_paths, strict=True)]
    ranked = rank_moments(segments, runs, max(s.k for s in specs))
    with _progress("label noise") as progress:
        result = label_noise(
            segments,
            ranked,
            params.measures,
            runs=run_names,
            sigmas=params.sigmas,
            trials=params.trials,
            raters=params.raters,
            seed=params.seed,
            length=params.length,
            progress=progress,
        )
    console = _console()
    summary = Table(
        title=f"Label noise: mean absolute change of a run's score, mean over runs (Fig. 7); "
        f"{result.trials} trials, {result.raters} raters, length {result.length}"
    )
    summary.add_column("sigma", justify="right")
    summary.add_column("IoU(orig, noisy)", justify="right")
    for m in result.measures:
        summary.add_column(m, justify="right")
    for i, sigma in enumerate(result.sigmas.tolist()):
        summary.add_row(f"{sigma:g}", _fmt(result.noisy_iou[i]), *[_fmt(v) for v in result.mean_change[i]])
    console.print(summary)
    detail = Table(title="Per run: clean score, mean |change| / RMSE")
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
    paths: PathsArg,
    measures: MeasuresOpt = None,
    moments: MomentsOpt = None,
    max_results: MaxResultsOpt = 1000,
    plot: PlotOpt = None,
    json_path: JsonOpt = None,
) -> None:
    """All-tied query ratio (AxIoU supplement, Fig. 1): the share of topics on which every run scores the same."""
    from app.evaluation.analyses import ties_result  # scipy: only when the analysis runs

    check_plot_path(plot)
    params = _params("ties", measures=measures)
    results = _scores(paths, moments, params.measures, max_results)
    data = ties_result(results.measures, results.values)
    table = Table(title=f"All-tied topics ({len(results.topics)} topics, {len(results.runs)} runs)")
    table.add_column("measure")
    table.add_column("all-tied ratio", justify="right")
    table.add_column("topics", justify="right")
    for m, ratio in data["ratios"].items():  # type: ignore[attr-defined]
        table.add_row(m, _fmt(ratio), str(round(ratio * len(results.topics))))
    console = _console()
    console.print(table)
    _write_outputs(console, json_path, data, plot, "ties")


@analyse.command("power")
@_errors_exit_2
def power_command(
    paths: PathsArg,
    measures: MeasuresOpt = None,
    moments: MomentsOpt = None,
    alpha: Annotated[float | None, typer.Option("--alpha", help="significance level (default 0.05)")] = None,
    resamples: Annotated[
        int | None, typer.Option("--resamples", help="randomization test resamples B (default 10000)")
    ] = None,
    seed: SeedOpt = None,
    max_results: MaxResultsOpt = 1000,
    plot: PlotOpt = None,
    json_path: JsonOpt = None,
) -> None:
    """Discriminative power: share of run pairs significantly different (paired randomization test)."""
    from app.evaluation.analyses import power_result  # scipy: only when the analysis runs

    check_plot_path(plot)
    params = _params("power", measures=measures, alpha=alpha, n_resamples=resamples, seed=seed)
    results = _scores(paths, moments, params.measures, max_results, every=False)
    with _progress("power") as progress:
        data = power_result(
            results.runs,
            results.measures,
            results.values,
            alpha=params.alpha,
            n_resamples=params.n_resamples,
            seed=params.seed,
            progress=progress,
        )
    table = Table(
        title=f"Discriminative power at alpha = {params.alpha:g} ({len(results.runs)} runs, B = {params.n_resamples})"
    )
    table.add_column("measure")
    table.add_column("power", justify="right")
    for m, value in data["power"].items():  # type: ignore[attr-defined]
        table.add_row(m, _fmt(value))
    console = _console()
    console.print(table)
    _write_outputs(console, json_path, data, plot, "power")


def _prepared(qrels_path: Path, run_paths: list[Path], max_results: int) -> tuple[Qrels, Any]:
    """The qrels and the runs prepared once (ranked, cut at max_results)."""
    from app.evaluation.prepared_runs import prepare_runs

    qrels, runs = _load(qrels_path, run_paths)
    return qrels, prepare_runs(runs, max_results)


def _one_measure(paths: list[Path], moments: Path | None, measure: str | None, max_results: int) -> Results:
    """Per-topic scores of one measure (the leaderboard's default when none is given)."""
    return _scores(paths, moments, [measure] if measure else None, max_results, every=False)


@analyse.command("judged-fraction")
@_errors_exit_2
def judged_fraction_command(
    qrels_path: QrelsArg,
    run_paths: RunsArg,
    depths: Annotated[
        list[int] | None, typer.Option("--depth", help="depth d (repeat; default 1, 2, 3, 5, 10, ... max-results)")
    ] = None,
    max_results: MaxResultsOpt = 1000,
    plot: PlotOpt = None,
    json_path: JsonOpt = None,
) -> None:
    """Judged fraction (Westerveld 4.1): the share of every run's top d that the qrels judge, for each depth d."""
    from app.evaluation.analyses.judged_depth import judged_fraction

    check_plot_path(plot)
    params = _params("judged-fraction", depths=depths)
    qrels, prepared = _prepared(qrels_path, run_paths, max_results)
    result = judged_fraction(qrels, prepared, depths=params.depths, max_results=max_results)
    table = Table(title=f"Judged fraction of the top d ({len(result.runs)} runs)")
    for column in ("depth", "all runs", "lowest list", "highest list", "mean list"):
        table.add_column(column, justify="right")
    for i, depth in enumerate(result.depths.tolist()):
        cells = (result.overall[i], result.list_min[i], result.list_max[i], result.list_mean[i])
        table.add_row(str(depth), *[_fmt(v) for v in cells])
    console = _console()
    console.print(table)
    _write_outputs(console, json_path, result.to_dict(), plot, "judged-fraction")


@analyse.command("qrels-versions")
@_errors_exit_2
def qrels_versions_command(
    run_paths: RunsArg,
    qrels_paths: Annotated[list[Path], typer.Option("--qrels", help="a qrels version (repeat: at least two)")],
    measure: MeasureOpt = None,
    max_results: MaxResultsOpt = 1000,
    plot: PlotOpt = None,
    json_path: JsonOpt = None,
) -> None:
    """Qrels versions compared (Voorhees 1998): run rankings (tau_b, tau_AP) and judgements (overlap, kappa)."""
    from app.evaluation.analyses.qrels_comparison import compare_qrels
    from app.evaluation.prepared_runs import prepare_runs

    check_plot_path(plot)
    params = _params("qrels-versions", measure=measure)
    if len(qrels_paths) < 2:
        raise ValueError("--qrels: give at least two qrels files to compare")
    versions = [read_qrels(p) for p in qrels_paths]
    labels = [p.name for p in qrels_paths]
    if len(set(labels)) != len(labels):
        labels = [str(p) for p in qrels_paths]
    _, runs = _load(qrels_paths[0], run_paths)
    chosen = params.measure or ("xinfAP" if all(q.stratified for q in versions) else "AP")
    result = compare_qrels(labels, versions, prepare_runs(runs, max_results), measure=chosen)
    data = result.to_dict()
    console = _console()
    table = Table(title=f"Rankings by {result.measure} under each qrels version: tau_b / tau_AP (row = reference)")
    table.add_column("qrels")
    for label in labels:
        table.add_column(label, justify="right")
    for i, label in enumerate(labels):
        cells = [f"{_fmt_num(data['tau_b'][i][j])} / {_fmt_num(data['tau_ap'][i][j])}" for j in range(len(labels))]
        table.add_row(label, *cells)
    console.print(table)
    pairs = Table(title="Judgements: relevant-set overlap and Cohen's kappa")
    for column in ("a", "b", "overlap", "kappa"):
        pairs.add_column(column, justify="left" if column in "ab" else "right")
    for pair in data["judgements"]["pairs"]:
        pairs.add_row(pair["a"], pair["b"], _fmt_num(pair["overlap"]), _fmt_num(pair["kappa"]))
    console.print(pairs)
    _write_outputs(console, json_path, data, plot, "qrels-versions")


@analyse.command("swap-rate")
@_errors_exit_2
def swap_rate_command(
    paths: PathsArg,
    measure: MeasureOpt = None,
    moments: MomentsOpt = None,
    trials: Annotated[int | None, typer.Option("--trials", help="pairs of disjoint topic sets per size (1000)")] = None,
    sizes: Annotated[
        str | None, typer.Option("--sizes", help="topic-set sizes, e.g. 5,10-25:5 (default 1..n/2)")
    ] = None,
    seed: SeedOpt = None,
    bin_width: Annotated[float | None, typer.Option("--bin-width", help="difference bin width (0.01)")] = None,
    relative: Annotated[bool, typer.Option("--relative", help="bin relative differences")] = False,
    threshold: Annotated[float | None, typer.Option("--threshold", help="largest acceptable swap rate (0.05)")] = None,
    min_comparisons: Annotated[
        int | None, typer.Option("--min-comparisons", help="comparisons a bin needs to count (10)")
    ] = None,
    max_results: MaxResultsOpt = 1000,
    plot: PlotOpt = None,
    json_path: JsonOpt = None,
) -> None:
    """Swap rate and minimum detectable difference (Voorhees & Buckley 2002) on disjoint random topic sets."""
    from app.evaluation.analyses.swap_rate import swap_rates
    from app.evaluation.measures.registry import aggregate_of

    check_plot_path(plot)
    params = _params(
        "swap-rate",
        measure=measure,
        trials=trials,
        sizes=parse_sizes(sizes),
        seed=seed,
        bin_width=bin_width,
        relative=relative or None,
        threshold=threshold,
        min_comparisons=min_comparisons,
    )
    results = _one_measure(paths, moments, params.measure, max_results)
    with _progress("swap rate") as progress:
        result = swap_rates(
            results.values[:, 0, :],
            results.runs,
            measure=results.measures[0],
            sizes=params.sizes,
            trials=params.trials,
            seed=params.seed,
            bin_width=params.bin_width,
            relative=params.relative,
            threshold=params.threshold,
            min_comparisons=params.min_comparisons,
            aggregate=aggregate_of(results.measures[0]),
            progress=progress,
        )
    data = result.to_dict()
    table = Table(
        title=f"Swap rate of {result.measure}: {params.trials} trials per size, seed {params.seed}, "
        f"{len(results.runs)} runs, {result.n_topics} topics"
    )
    for column in ("topics", "comparisons", "swaps", "minimum detectable difference"):
        table.add_column(column, justify="right")
    for entry in data["sizes"]:
        mdd = "none" if entry["mdd"] is None else f"{entry['mdd']:.4g}"
        table.add_row(str(entry["size"]), str(entry["comparisons"]), str(entry["swaps"]), mdd)
    console = _console()
    console.print(table)
    _write_outputs(console, json_path, data, plot, "swap-rate")


GroupsNeeded = Annotated[Path, typer.Option("--groups", help="run_groups.tsv: run, team, contributed, runtype")]


@analyse.command("type-significance")
@_errors_exit_2
def type_significance_command(
    qrels_path: QrelsArg,
    run_paths: RunsArg,
    groups: GroupsNeeded,
    measure: MeasureOpt = None,
    method: Annotated[
        str | None, typer.Option("--method", help="pairwise (default) | holm | bonferroni | tukey")
    ] = None,
    top: Annotated[int | None, typer.Option("--top", help="runs of each type tested, best first (10)")] = None,
    alpha: Annotated[float | None, typer.Option("--alpha", help="significance level (0.05)")] = None,
    resamples: Annotated[int | None, typer.Option("--resamples", help="randomization resamples (10000)")] = None,
    seed: SeedOpt = None,
    max_results: MaxResultsOpt = 1000,
    plot: PlotOpt = None,
    json_path: JsonOpt = None,
) -> None:
    """Significance within each run type (the groups file's runtype column): the top runs of a type tested pairwise."""
    from app.evaluation.analyses import read_run_groups
    from app.evaluation.analyses.type_significance import significance_by_type
    from app.evaluation.measures.registry import aggregate_of

    check_plot_path(plot)
    params = _params(
        "type-significance",
        measure=measure,
        method=method,
        top=top,
        alpha=alpha,
        n_resamples=resamples,
        seed=seed,
    )
    results = _one_measure([qrels_path, *run_paths], None, params.measure, max_results)
    types = read_run_groups(groups).units(results.runs, "type")
    result = significance_by_type(
        results.runs,
        types,
        results.values[:, 0, :],
        method=params.method,
        top=params.top,
        alpha=params.alpha,
        n_resamples=params.n_resamples,
        seed=params.seed,
        aggregate=aggregate_of(results.measures[0]),
    )
    data = {"measure": results.measures[0], "by": "runtype", **result.to_dict()}
    console = _console()
    for group in result.types:
        table = Table(title=f"Run type {group.label}: {params.method}, alpha {params.alpha:g}")
        for column in ("run", results.measures[0], "significantly better than"):
            table.add_column(column, justify="right" if column == results.measures[0] else "left")
        for run, mean in zip(group.runs, group.means.tolist(), strict=True):
            worse = [b for a, b in group.better if a == run]
            table.add_row(run, _fmt(mean), ", ".join(worse))
        console.print(table)
    _write_outputs(console, json_path, data, plot, "type-significance")


@analyse.command("novelty")
@_errors_exit_2
def novelty_command(
    qrels_path: QrelsArg,
    run_paths: RunsArg,
    groups: GroupsNeeded,
    max_results: MaxResultsOpt = 1000,
    plot: PlotOpt = None,
    json_path: JsonOpt = None,
) -> None:
    """Novelty: relevant shots each run and team found, and those no other team found (teams from --groups)."""
    from app.evaluation.analyses import read_run_groups
    from app.evaluation.analyses.novelty import unique_relevant

    check_plot_path(plot)
    _params("novelty")
    qrels, prepared = _prepared(qrels_path, run_paths, max_results)
    teams = read_run_groups(groups).units(list(prepared.names), "group")
    data = unique_relevant(qrels, prepared, teams, max_results=max_results).to_dict()
    console = _console()
    table = Table(title=f"Unique relevant: {data['unique']} of {data['found']} relevant found by one team only")
    for column in ("team", "unique", "relevant found"):
        table.add_column(column, justify="left" if column == "team" else "right")
    for row in data["teams"]:
        table.add_row(row["team"], str(row["unique"]), str(row["hits"]))
    console.print(table)
    _write_outputs(console, json_path, data, plot, "novelty")


@analyse.command("run-vs-median")
@_errors_exit_2
def run_vs_median_command(
    paths: PathsArg,
    measure: MeasureOpt = None,
    moments: MomentsOpt = None,
    run: Annotated[
        str | None, typer.Option("--run", help="the run whose chart --plot draws (default: the first)")
    ] = None,
    max_results: MaxResultsOpt = 1000,
    plot: PlotOpt = None,
    json_path: JsonOpt = None,
) -> None:
    """Each run per topic against the median and best of all runs (the chart NIST sends each team)."""
    from app.evaluation.analyses.topic_comparison import topic_comparison

    check_plot_path(plot)
    params = _params("run-vs-median", measure=measure)
    results = _one_measure(paths, moments, params.measure, max_results)
    if run is not None and run not in results.runs:
        raise ValueError(f"--run: no run {run!r} among {', '.join(results.runs)}")
    result = topic_comparison(results.runs, results.topics, results.values[:, 0, :], measure=results.measures[0])
    console = _console()
    table = Table(title=f"{result.measure}: topics above the median and at the best, per run")
    for column in ("run", "above median", "at best", "topics"):
        table.add_column(column, justify="left" if column == "run" else "right")
    for name in result.runs:
        chart = result.run(name)
        table.add_row(name, str(chart["above_median"]), str(chart["at_best"]), str(len(result.topics)))
    console.print(table)
    _write_outputs(console, json_path, result.to_dict(), plot, "run-vs-median", run=run or result.runs[0])


def read_times(path: Path) -> dict[str, float]:
    """A TSV of run name and mean elapsed seconds per topic (a header line is skipped)."""
    times: dict[str, float] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        cells = line.split("\t")
        if not line.strip() or (number == 1 and cells[0].strip().lower() in ("run", "run_id", "tag")):
            continue
        if len(cells) != 2:
            raise ValueError(f"{path} line {number}: expected run<TAB>seconds")
        try:
            times[cells[0].strip()] = float(cells[1])
        except ValueError:
            raise ValueError(f"{path} line {number}: {cells[1]!r} is not a number of seconds") from None
    return times


@analyse.command("efficiency")
@_errors_exit_2
def efficiency_command(
    paths: PathsArg,
    times: Annotated[Path, typer.Option("--times", help="TSV: run, mean elapsed seconds per topic")],
    measure: MeasureOpt = None,
    moments: MomentsOpt = None,
    max_results: MaxResultsOpt = 1000,
    plot: PlotOpt = None,
    json_path: JsonOpt = None,
) -> None:
    """Score vs processing time: correlations and the runs no other run beats on both (times from --times)."""
    from app.evaluation.analyses.efficiency import score_vs_time

    check_plot_path(plot)
    params = _params("efficiency", measure=measure)
    stated = read_times(times)
    results = _one_measure(paths, moments, params.measure, max_results)
    seconds = np.array([stated.get(name, np.nan) for name in results.runs], dtype=np.float64)
    result = score_vs_time(results.runs, results.mean()[:, 0], seconds, measure=results.measures[0])
    data = result.to_dict()
    console = _console()
    table = Table(title=f"{result.measure} vs seconds per topic ({data['n_timed']} of {len(result.runs)} runs timed)")
    for column in ("run", result.measure, "seconds", "no run faster and better"):
        table.add_column(column, justify="left" if column == "run" else "right")
    for row in data["runs"]:
        seconds_text = "" if row["seconds"] is None else f"{row['seconds']:g}"
        table.add_row(row["run"], _fmt(row["score"]), seconds_text, "yes" if row["run"] in data["front"] else "")
    console.print(table)
    rho = data["spearman"]
    console.print(f"Spearman rho = {'nan' if rho is None else f'{rho:.4f}'}")
    _write_outputs(console, json_path, data, plot, "efficiency")


@analyse.command("strata")
@_errors_exit_2
def strata_command(
    qrels_path: QrelsArg,
    plot: PlotOpt = None,
    json_path: JsonOpt = None,
) -> None:
    """Strata of sample_eval qrels: pooled, judged and relevant shots per stratum; inferred relevant per topic."""
    from app.evaluation.analyses.strata import stratum_summary

    check_plot_path(plot)
    _params("strata")
    data = stratum_summary(read_qrels(qrels_path)).to_dict()
    table = Table(title=f"Strata ({len(data['topics'])} topics, {data['inferred_relevant']:.1f} inferred relevant)")
    for column in ("stratum", "pooled", "judged", "relevant", "judged share", "relevant share"):
        table.add_column(column, justify="right")
    for s in data["strata"]:
        shares = [_fmt_num(s["judged_share"]), _fmt_num(s["relevant_share"])]
        table.add_row(str(s["stratum"]), str(s["pooled"]), str(s["judged"]), str(s["relevant"]), *shares)
    console = _console()
    console.print(table)
    _write_outputs(console, json_path, data, plot, "strata")


@analyse.command("moment-effectiveness")
@_errors_exit_2
def moment_effectiveness_command(
    run_paths: Annotated[list[Path], typer.Argument(help="moment run files (TSV or JSON lines, may be .gz)")],
    moments: Annotated[Path, typer.Option("--moments", help="moment ground truth (topic video start end)")],
    measures: MeasuresOpt = None,
    sort_by: Annotated[
        str | None, typer.Option("--sort-by", help="measure to sort by (default: mean R@K,theta)")
    ] = None,
    plot: PlotOpt = None,
    json_path: JsonOpt = None,
) -> None:
    """Each system's score under every moment measure, systems sorted (AxIoU paper, Fig. 5)."""
    from app.evaluation.analyses.moment_effectiveness import moment_effectiveness

    check_plot_path(plot)
    params = _params("moment-effectiveness", measures=measures, sort_by=sort_by)
    results = _scores(run_paths, moments, params.measures, 1000)
    result = moment_effectiveness(results.runs, results.measures, results.mean(), sort_by=params.sort_by)
    table = Table(title=f"Systems by measure, sorted by {result.sort_by}")
    table.add_column("run")
    for m in result.measures:
        table.add_column(m, justify="right")
    for r, run in enumerate(result.runs):
        table.add_row(run, *[_fmt(v) for v in result.scores[r]])
    console = _console()
    console.print(table)
    _write_outputs(console, json_path, result.to_dict(), plot, "moment-effectiveness")
