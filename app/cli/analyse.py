"""`trecpool analyse ...`: reusability and meta-evaluation analyses (SPEC section 6) from files, with rich tables
and optional PNG/SVG plots. The computations live in app.evaluation.analyses.

Every command validates its options with the parameter schema the REST API uses (app/services/analysis_params.py,
imported only when a command runs): options left out take the schema's defaults, so the CLI and the service run
the same analysis for the same request. The score-based analyses (agreement, stability, ties, power) read TREC runs
against qrels, or with `--moments GROUND_TRUTH` moment runs against moment ground truth.

Output, the project's one convention: tables on stdout (`--format table`, the default) or the full result as JSON on
stdout (`--format json`; notes such as the inferred pool depth then go to stderr); `--output FILE` also writes that
JSON to a file (never to one named `-`), `--plot FILE` the figure. On a terminal, stderr shows the progress of each
step (reading, evaluating, the analysis itself); nothing when stderr is not a terminal. `-h` is `--help`.
"""

from __future__ import annotations

import gzip
import importlib
import json
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np
import typer
from rich.console import Console
from rich.table import Table

from app.evaluation.errors import FormatError, MeasureError
from app.evaluation.evaluator import evaluate
from app.evaluation.formats.trec_files import read_qrels, read_run
from app.evaluation.records import Qrels, RunTable
from app.evaluation.results import Results

if TYPE_CHECKING:  # the analyses import scipy: only when a command runs
    from app.evaluation.analyses.depth_inference import PoolDepths

cli = analyse = typer.Typer(
    help="Reusability and meta-evaluation analyses of a test collection.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class OutputFormat(StrEnum):
    """What a command prints on stdout."""

    table = "table"
    json = "json"


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
FormatOpt = Annotated[
    OutputFormat, typer.Option("--format", help="table: tables on stdout; json: the full result as JSON on stdout")
]
OutputOpt = Annotated[
    Path | None, typer.Option("--output", metavar="FILE", help="also write the full result as JSON to FILE")
]
MaxResultsOpt = Annotated[int, typer.Option("--max-results", help="cut each ranked list at this many results")]
TABLE = OutputFormat.table


def _stdout_console() -> Console:
    """The console tables go to: stdout, 200 columns wide when it is not a terminal."""
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


def _stderr_is_terminal() -> bool:
    """Whether stderr is a terminal (progress is shown only there)."""
    return sys.stderr.isatty()


class Steps:
    """A command's progress: a bar on stderr per step (reading, evaluating, the analysis), pulsing until the step
    reports a share done, or nothing at all when stderr is not a terminal. `step` returns the callable the core
    analyses take."""

    def __init__(self, bar: Any = None) -> None:
        self.bar = bar
        self.task: Any = None

    def step(self, description: str) -> Callable[[float], None]:
        """Start a step; the callable returned takes the share of it done (0..1)."""
        if self.bar is None:
            return _ignore
        if self.task is not None:
            self.bar.update(self.task, visible=False)
        task = self.task = self.bar.add_task(description, total=None)
        return lambda fraction: self.bar.update(task, total=1.0, completed=min(max(fraction, 0.0), 1.0))

    def each(self, description: str, items: list[Any]) -> Iterator[Any]:
        """The items, as one step whose share done is the share of the items handed out."""
        report = self.step(description)
        for i, item in enumerate(items):
            yield item
            report((i + 1) / len(items))


def _ignore(_: float) -> None:
    """A progress callback that shows nothing."""


@contextmanager
def _progress() -> Iterator[Steps]:
    """The progress of the work inside the block, shown on a terminal's stderr and gone when the block ends."""
    if not _stderr_is_terminal():
        yield Steps()
        return
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True, force_terminal=True), transient=True) as bar:
        yield Steps(bar)


PLOT_FORMATS = {".png": "png", ".svg": "svg"}


def check_plot_path(path: Path | None) -> None:
    """Refuse a --plot path that is not .png or .svg (before any work is done)."""
    if path is not None and path.suffix.lower() not in PLOT_FORMATS:
        raise ValueError(f"plot file must end in .png or .svg: {path}")


def check_output_path(path: Path | None) -> None:
    """Refuse an --output path that is `-` or a directory (before any work is done)."""
    if path is None:
        return
    if str(path) == "-":
        raise ValueError("--output: '-' is not a file name; use --format json to print the JSON on stdout")
    if path.is_dir():
        raise ValueError(f"--output: {path} is a directory")


def json_safe(value: object) -> object:
    """The value with NaN and infinities as null (valid JSON, as the REST API stores results)."""
    if isinstance(value, float):
        return value if np.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


@dataclass
class Out:
    """Where a command's result goes: tables (with notes) or JSON on stdout, the JSON in an --output file, the
    figure in a --plot file. Notes said while the work runs are kept and printed with the result."""

    fmt: OutputFormat = TABLE
    output: Path | None = None
    plot: Path | None = None
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        check_plot_path(self.plot)
        check_output_path(self.output)

    def note(self, text: str) -> None:
        """Say something about the run (printed before the tables; on stderr with --format json)."""
        self.notes.append(text)

    def finish(
        self,
        data: dict,
        tables: Callable[[Console], None],
        kind: str,
        run: str | None = None,
    ) -> None:
        """Print the notes and the tables (or the JSON), write the --output file and the --plot figure.

        The figures module (matplotlib) is imported only when a plot is asked for, to keep the command quick.
        """
        stdout = _stdout_console()
        said = stdout if self.fmt is TABLE else Console(stderr=True)
        for text in self.notes:
            said.print(text, highlight=False, markup=False, soft_wrap=True)
        text = json.dumps(json_safe(data), indent=1)
        if self.fmt is TABLE:
            tables(stdout)
        else:
            sys.stdout.write(text + "\n")
        if self.output is not None:
            self.output.write_text(text + "\n", encoding="utf-8")
        if self.plot is not None:
            figures = importlib.import_module("app.figures.analyses")
            figure = figures.figure_of(kind, data, run)
            self.plot.write_bytes(figures.render(figure, PLOT_FORMATS[self.plot.suffix.lower()]))
            said.print(f"plot written to {self.plot}", highlight=False, markup=False, soft_wrap=True)


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


MAX_POOL_DEPTH = 100_000


def parse_pool_depth(text: str | None) -> int | dict[str, int] | None:
    """--pool-depth: a whole number (every topic's depth), or a file of `topic depth` lines (blank lines and `#`
    comments skipped; depth 0 = the topic was not pooled)."""
    if text is None:
        return None
    if re.fullmatch(r"\s*\d+\s*", text):
        depth = int(text)
        if not 1 <= depth <= MAX_POOL_DEPTH:
            raise ValueError(f"--pool-depth: {depth} is not a depth (1..{MAX_POOL_DEPTH})")
        return depth
    path = Path(text)
    if not path.is_file():
        raise ValueError(f"--pool-depth: {text!r} is neither a depth (a whole number) nor a file of topic depths")
    depths: dict[str, int] = {}
    for number, line in enumerate(_read_bytes(path).decode("utf-8", errors="replace").splitlines(), start=1):
        cells = line.split("#", 1)[0].split()
        if not cells:
            continue
        where = f"--pool-depth {path} line {number}"
        if len(cells) != 2:
            raise ValueError(f"{where}: expected 'topic depth', got {line.strip()!r}")
        topic, value = cells
        if not value.isdigit() or int(value) > MAX_POOL_DEPTH:
            raise ValueError(f"{where}: {value!r} is not a depth (a whole number 0..{MAX_POOL_DEPTH})")
        if topic in depths:
            raise ValueError(f"{where}: topic {topic} is given twice")
        depths[topic] = int(value)
    if not depths:
        raise ValueError(f"--pool-depth {path}: no 'topic depth' lines")
    return depths


def _read_bytes(path: Path) -> bytes:
    """A file's bytes, gunzipped when it is gzip-compressed."""
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def _load(qrels_path: Path, run_paths: list[Path], steps: Steps) -> tuple[Qrels, list[RunTable]]:
    """The qrels and the runs (several files with one tag are an error)."""
    steps.step("reading the qrels")
    qrels = read_qrels(qrels_path)
    runs = [read_run(p) for p in steps.each(f"reading {len(run_paths)} runs", run_paths)]
    tags = [r.tag for r in runs]
    duplicates = sorted({t for t in tags if tags.count(t) > 1})
    if duplicates:
        raise ValueError(f"several run files have the tag {', '.join(duplicates)}")
    return qrels, runs


def _prepared(qrels_path: Path, run_paths: list[Path], max_results: int, steps: Steps) -> tuple[Qrels, Any]:
    """The qrels and the runs prepared once (ranked, cut at max_results)."""
    from app.evaluation.prepared_runs import prepare_runs

    qrels, runs = _load(qrels_path, run_paths, steps)
    steps.step("ranking the runs")
    return qrels, prepare_runs(runs, max_results)


def _scores(
    paths: list[Path],
    moments: Path | None,
    measures: list[str] | None,
    max_results: int,
    steps: Steps,
    *,
    default: str = "every",
) -> Results:
    """Per-topic scores of the runs: QRELS RUN... evaluated, or moment RUN... against the --moments ground truth.

    Without measures, `default` says which: "every" measure `trecpool eval` reports (as a REST evaluation holds
    them), "readable" the same but the counts (num_ret, num_rel, ...; agreement and ties), or "one": the one a
    campaign's leaderboard sorts by (xinfAP for stratified qrels, else AP; AxIoU@10 for moments).
    """
    if moments is not None:
        from app.evaluation.analyses.moment_results import moment_results
        from app.evaluation.moments import DEFAULT_MOMENT_MEASURES, parse_moment_ground_truth, parse_moment_run

        if not paths:
            raise ValueError("name the moment run files")
        truth = parse_moment_ground_truth(_read_bytes(moments), source=str(moments))
        tables = [parse_moment_run(_read_bytes(p), source=str(p)) for p in steps.each("reading moment runs", paths)]
        names = [r.tag or p.name for r, p in zip(tables, paths, strict=True)]
        chosen = measures or (["AxIoU@10"] if default == "one" else list(DEFAULT_MOMENT_MEASURES))
        steps.step("evaluating")
        return moment_results(truth, tables, chosen, names)
    if len(paths) < 2:
        raise ValueError("name the qrels file and at least one run file (or use --moments GROUND_TRUTH)")
    qrels, runs = _load(paths[0], paths[1:], steps)
    if not measures and default == "one":
        measures = [_default_measure(qrels, None)]
    elif not measures:
        from app.evaluation.analyses.measure_agreement import readable_measures
        from app.evaluation.measures.registry import default_measures

        every = default_measures(stratified=qrels.stratified)
        measures = readable_measures(every) if default == "readable" else every
    steps.step(f"evaluating {len(runs)} runs")
    return evaluate(qrels, runs, measures, max_results=max_results)


def _one_measure(
    paths: list[Path], moments: Path | None, measure: str | None, max_results: int, steps: Steps
) -> Results:
    """Per-topic scores of one measure (the leaderboard's default when none is given)."""
    return _scores(paths, moments, [measure] if measure else None, max_results, steps, default="one")


def _default_measure(qrels: Qrels, measure: str | None) -> str:
    return measure if measure else ("xinfAP" if qrels.stratified else "AP")


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


def _topic_list(topics: list[str], many: int = 6) -> str:
    """Topics for a sentence: "topic 20", "topics 11, 20", or "24 topics" when there are many."""
    if len(topics) > many:
        return f"{len(topics)} topics"
    return ("topic " if len(topics) == 1 else "topics ") + ", ".join(topics)


def describe_pool_depths(pool: PoolDepths, given: int | dict[str, int] | None) -> list[str]:
    """What the command says about the pool depths it used: each depth with its topics and where it came from, what
    the inferred ones were read from, and the topics of a --pool-depth file the qrels lack."""
    from app.evaluation.analyses.topic_order import natural_order

    groups: dict[tuple[int, str], list[str]] = {}
    for i in natural_order(pool.topics):
        groups.setdefault((int(pool.depths[i]), pool.sources[i]), []).append(pool.topics[i])
    if len(groups) == 1:
        (depth, source), _ = next(iter(groups.items()))
        head = f"pool depth {depth}"
        parts = ["inferred from the qrels for each topic" if source == "inferred" else source]
    else:
        ordered = sorted(groups.items(), key=lambda item: (-len(item[1]), -item[0][0]))
        head = "pool depth per topic: " + "; ".join(f"{d} for {_topic_list(t)} ({s})" for (d, s), t in ordered)
        parts = []
    facts = pool.inference()
    lines = []
    if facts is not None:
        if facts["share_at_depth"] is not None:
            after = "" if facts["share_after"] is None else f", {facts['share_after']:.1%} one rank deeper"
            parts.append(f"{facts['share_at_depth']:.1%} of the pooled runs' results judged at the depth{after}")
        if facts["gaps"]:
            parts.append(f"{facts['gaps']} unjudged results within it taken as judging slips")
        parts.append("give --pool-depth N, or a file of 'topic depth' lines, to override")
        if facts["unpooled"]:
            lines.append(
                f"{_topic_list(facts['unpooled'])}: too few of the pooled runs' first results judged (depth 0): "
                "their qrels lines came from elsewhere, or other runs were pooled"
            )
    if isinstance(given, dict):
        unknown = sorted(set(given) - set(pool.topics))
        if unknown:
            lines.append(f"--pool-depth file: {_topic_list(unknown)} without qrels lines (ignored)")
    return [head + (f" ({'; '.join(parts)})" if parts else ""), *lines]


def describe_residual(lines: int, relevant: int, total: int, fate: str, *, depth_known: bool = True) -> str:
    """The qrels lines outside every pooled run's top (a residual collection), and what the analysis did with them."""
    where = "outside every pooled run's top (its topic's pool depth)" if depth_known else "no pooled run retrieved"
    return (
        f"qrels lines {where}: {lines:,} of {total:,} ({relevant:,} relevant), judged from other sources (a residual "
        f"collection): {fate}"
    )


GroupsOpt = Annotated[
    Path | None, typer.Option("--groups", help="run_groups.tsv: run, team, contributed (yes/no), runtype")
]
MeasureOpt = Annotated[str | None, typer.Option("-m", "--measure", help="AP (default; xinfAP if stratified)")]
PoolDepthOpt = Annotated[
    str | None,
    typer.Option(
        "--pool-depth",
        metavar="N|FILE",
        help="the depth the pool was built with: N for every topic, or a file of 'topic depth' lines (the topics it "
        "lacks are inferred); default: each topic's, inferred from the qrels and printed",
    ),
]
MeasuresOpt = Annotated[list[str] | None, typer.Option("-m", "--measure", help="measure (repeat the option)")]
SeedOpt = Annotated[int | None, typer.Option("--seed", help="random seed (default 0)")]


@analyse.command("pool-depth")
@_errors_exit_2
def pool_depth_command(
    qrels_path: QrelsArg,
    run_paths: RunsArg,
    groups: GroupsOpt = None,
    measure: MeasureOpt = None,
    max_depth: Annotated[
        int | None, typer.Option("--max-depth", help="depths 1..D (default: min(100, the pool's deepest topic))")
    ] = None,
    outside: Annotated[
        str | None,
        typer.Option("--outside", help="drop (default) | keep: qrels lines outside every pooled run's top"),
    ] = None,
    pool_depth_k: PoolDepthOpt = None,
    max_results: MaxResultsOpt = 1000,
    fmt: FormatOpt = TABLE,
    output: OutputOpt = None,
    plot: PlotOpt = None,
) -> None:
    """Westerveld's pool-depth analysis: every run's score and tau_b / tau_AP vs the full qrels for depths 1..D.

    A pool cut at depth d holds, per topic, what the pooled runs rank within min(d, the topic's pool depth)."""
    from app.evaluation.analyses import index_lines, pool_depth, pool_depths, read_run_groups
    from app.evaluation.analyses.lines import run_mask

    out = Out(fmt, output, plot)
    params = _params("pool-depth", measure=measure, max_depth=max_depth, outside=outside)
    given = parse_pool_depth(pool_depth_k)
    with _progress() as steps:
        qrels, prepared = _prepared(qrels_path, run_paths, max_results, steps)
        names = list(prepared.names)
        pooled = read_run_groups(groups).pooled_runs(names) if groups else None
        try:
            pool = pool_depths(index_lines(prepared, qrels), run_mask(names, pooled), given)
        except ValueError as exc:
            if given is not None:
                raise
            out.note(f"{exc}. Depths 1..100 are cut from the pooled runs' whole lists.")
            pool = None
        if pool is not None:
            for line in describe_pool_depths(pool, given):
                out.note(line)
        deepest = 100 if pool is None else max(int(pool.depths.max(initial=0)), 1)
        result = pool_depth(
            qrels,
            prepared,
            measure=_default_measure(qrels, params.measure),
            pooled=pooled,
            max_depth=params.max_depth or min(100, deepest),
            max_results=max_results,
            outside=params.outside,
            pool=pool,
            progress=steps.step("cutting the pool at each depth"),
        )
    fate = "dropped at every depth" if result.outside == "drop" else "kept at every depth"
    residual = (result.residual_lines, result.residual_relevant, result.total_lines)
    out.note(describe_residual(*residual, fate, depth_known=pool is not None))

    def tables(console: Console) -> None:
        shown = _show_depths(result.depths)
        table = Table(title=f"Pool depth: {result.measure}, {len(result.pooled)} of {len(names)} runs pooled")
        for column in ("depth", "lines", "relevant", "tau_b", "tau_AP"):
            table.add_column(column, justify="right")
        for i in shown:
            cells = (result.lines[i], result.relevant[i], _fmt(result.tau_b[i]), _fmt(result.tau_ap[i]))
            table.add_row(str(result.depths[i]), *map(str, cells))
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

    out.finish(result.to_dict(), tables, "pool-depth")


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
    fmt: FormatOpt = TABLE,
    output: OutputOpt = None,
    plot: PlotOpt = None,
) -> None:
    """Leave one run / team / run type out: remove the qrels lines only it contributed to the pool, re-evaluate.

    A run contributed the judged documents in its top k of each topic, k the topic's pool depth (--pool-depth: one
    for every topic or a file per topic, else inferred from the qrels for each topic); only runs marked as
    contributing in the groups file count (all when it has no such column). Qrels lines outside every pooled run's
    top k (a residual collection) are never removed, and are counted.
    """
    from app.evaluation.analyses import leave_out, read_run_groups

    out = Out(fmt, output, plot)
    given = parse_pool_depth(pool_depth_k)
    depth = given if isinstance(given, int) else None
    params = _params("leave-out", {"depth": "--pool-depth"}, by=by, measure=measure, depth=depth)
    with _progress() as steps:
        qrels, prepared = _prepared(qrels_path, run_paths, max_results, steps)
        names = list(prepared.names)
        table_groups = read_run_groups(groups)
        result = leave_out(
            qrels,
            prepared,
            units=table_groups.units(names, "group" if params.by == "team" else params.by),
            by=params.by,
            measure=_default_measure(qrels, params.measure),
            pooled=table_groups.pooled_runs(names),
            depth=given,
            max_results=max_results,
            progress=steps.step(f"leaving each {params.by} out"),
        )
    for line in describe_pool_depths(result.pool, given):
        out.note(line)
    total = int(len(qrels))
    out.note(describe_residual(result.residual_lines, result.residual_relevant, total, "never removed"))

    def tables(console: Console) -> None:
        by_name = result.by
        title = (
            f"Leave one {by_name} out: {result.measure}, pool depth {result.pool.describe()} ({result.depth_source})"
        )
        units = Table(title=title)
        for column in (by_name, "removed lines", "removed relevant", "tau_b (all runs)"):
            units.add_column(column, justify="left" if column == by_name else "right")
        for u, unit in enumerate(result.units):
            cells = (str(result.removed_lines[u]), str(result.removed_relevant[u]), _fmt(result.unit_tau_b[u]))
            units.add_row(unit, *cells)
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

    out.finish(result.to_dict(), tables, "leave-out")


@analyse.command("agreement")
@_errors_exit_2
def agreement_command(
    paths: PathsArg,
    measures: Annotated[
        list[str] | None,
        typer.Option(
            "-m",
            "--measure",
            help="measure (repeat; default: those `trecpool eval` reports but the counts num_ret, ...)",
        ),
    ] = None,
    moments: MomentsOpt = None,
    max_results: MaxResultsOpt = 1000,
    fmt: FormatOpt = TABLE,
    output: OutputOpt = None,
    plot: PlotOpt = None,
) -> None:
    """tau_b between the system rankings of every pair of measures (AxIoU paper, Fig. 4); default: every measure
    `trecpool eval` reports but the counts (num_ret, num_rel, num_rel_ret, ...: they rank no systems)."""
    from app.evaluation.analyses import agreement_result  # scipy: only when the analysis runs

    out = Out(fmt, output, plot)
    params = _params("agreement", measures=measures)
    with _progress() as steps:
        results = _scores(paths, moments, params.measures, max_results, steps, default="readable")
        steps.step("comparing the rankings")
        data = agreement_result(results.measures, results.mean())
    names = list(data["measures"])  # type: ignore[call-overload]

    def tables(console: Console) -> None:
        for key, title in (
            ("tau_b", f"Measure agreement (Kendall tau_b over {len(results.runs)} runs)"),
            ("tau_ap", "tau_AP (row = the reference measure's ranking, column = the ranking compared with it)"),
        ):
            table = Table(title=title)
            table.add_column("measure")
            for name in names:
                table.add_column(name, justify="right")
            for name, row in zip(names, data[key], strict=True):  # type: ignore[call-overload]
                table.add_row(name, *[_fmt(v) for v in row])
            console.print(table)

    out.finish(data, tables, "agreement")


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
    fmt: FormatOpt = TABLE,
    output: OutputOpt = None,
    plot: PlotOpt = None,
) -> None:
    """tau_b on random topic subsets (AxIoU paper, Fig. 6): subset vs full set, and disjoint split halves."""
    from app.evaluation.analyses import stability  # scipy: only when the analysis runs

    out = Out(fmt, output, plot)
    params = _params("stability", measures=measures, trials=trials, sizes=parse_sizes(sizes), seed=seed)
    with _progress() as steps:
        results = _scores(paths, moments, params.measures, max_results, steps, default="one")
        result = stability(
            results.values,
            results.measures,
            trials=params.trials,
            seed=params.seed,
            sizes=params.sizes,
            progress=steps.step("random topic subsets"),
        )

    def tables(console: Console) -> None:
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

    out.finish(result.to_dict(), tables, "stability")


@analyse.command("label-noise")
@_errors_exit_2
def label_noise_command(
    run_paths: Annotated[list[Path], typer.Argument(help="moment run files (TSV or JSON lines, may be .gz)")],
    moments: Annotated[Path, typer.Option("--moments", help="moment ground truth (topic video start end)")],
    measures: MeasuresOpt = None,
    sigmas: Annotated[
        list[float] | None,
        typer.Option("--sigma", help="noise level in seconds (repeat; default 1 2 3 4, the authors' notebook)"),
    ] = None,
    trials: Annotated[int | None, typer.Option("--trials", help="noisy ground truths per level (default 100)")] = None,
    raters: Annotated[int | None, typer.Option("--raters", help="raters whose medians make one (default 5)")] = None,
    seed: SeedOpt = None,
    length: Annotated[
        str | None, typer.Option("--length", help="shifted: (e-s)+Exp(1) (default, SPEC 6) | exponential")
    ] = None,
    fmt: FormatOpt = TABLE,
    output: OutputOpt = None,
    plot: PlotOpt = None,
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

    out = Out(fmt, output, plot)
    params = _params(
        "label-noise", measures=measures, sigmas=sigmas, trials=trials, raters=raters, seed=seed, length=length
    )
    specs = [parse_moment_measure(m) for m in params.measures]
    with _progress() as steps:
        segments = ground_truth_segments(parse_moment_ground_truth(_read_bytes(moments), source=str(moments)))
        runs = [parse_moment_run(_read_bytes(p), source=str(p)) for p in steps.each("reading moment runs", run_paths)]
        run_names = [r.tag or p.stem for r, p in zip(runs, run_paths, strict=True)]
        ranked = rank_moments(segments, runs, max(s.k for s in specs))
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
            progress=steps.step("noisy ground truths"),
        )

    def tables(console: Console) -> None:
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
                    f"{result.mean_abs_change[i, k, r]:.4f} / {result.rmse[i, k, r]:.4f}"
                    for i in range(len(result.sigmas))
                ]
                detail.add_row(run, m, _fmt(result.clean[k, r]), *cells)
        console.print(detail)

    out.finish(result.to_dict(), tables, "label-noise")


@analyse.command("ties")
@_errors_exit_2
def ties_command(
    paths: PathsArg,
    measures: Annotated[
        list[str] | None,
        typer.Option(
            "-m",
            "--measure",
            help="measure (repeat; default: those `trecpool eval` reports but the counts num_ret, ...)",
        ),
    ] = None,
    moments: MomentsOpt = None,
    max_results: MaxResultsOpt = 1000,
    fmt: FormatOpt = TABLE,
    output: OutputOpt = None,
    plot: PlotOpt = None,
) -> None:
    """All-tied query ratio (AxIoU supplement, Fig. 1): the share of topics on which every run scores the same;
    default: every measure `trecpool eval` reports but the counts (num_rel ties on every topic)."""
    from app.evaluation.analyses import ties_result  # scipy: only when the analysis runs

    out = Out(fmt, output, plot)
    params = _params("ties", measures=measures)
    with _progress() as steps:
        results = _scores(paths, moments, params.measures, max_results, steps, default="readable")
        data = ties_result(results.measures, results.values)

    def tables(console: Console) -> None:
        table = Table(title=f"All-tied topics ({len(results.topics)} topics, {len(results.runs)} runs)")
        table.add_column("measure")
        table.add_column("all-tied ratio", justify="right")
        table.add_column("topics", justify="right")
        for m, ratio in data["ratios"].items():  # type: ignore[attr-defined]
            table.add_row(m, _fmt(ratio), str(round(ratio * len(results.topics))))
        console.print(table)

    out.finish(data, tables, "ties")


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
    fmt: FormatOpt = TABLE,
    output: OutputOpt = None,
    plot: PlotOpt = None,
) -> None:
    """Discriminative power: share of run pairs significantly different (paired randomization test)."""
    from app.evaluation.analyses import power_result  # scipy: only when the analysis runs

    out = Out(fmt, output, plot)
    params = _params("power", measures=measures, alpha=alpha, n_resamples=resamples, seed=seed)
    with _progress() as steps:
        results = _scores(paths, moments, params.measures, max_results, steps, default="one")
        data = power_result(
            results.runs,
            results.measures,
            results.values,
            alpha=params.alpha,
            n_resamples=params.n_resamples,
            seed=params.seed,
            progress=steps.step("randomization tests"),
        )

    def tables(console: Console) -> None:
        table = Table(
            title=f"Discriminative power at alpha = {params.alpha:g} ({len(results.runs)} runs, "
            f"B = {params.n_resamples})"
        )
        table.add_column("measure")
        table.add_column("power", justify="right")
        for m, value in data["power"].items():  # type: ignore[attr-defined]
            table.add_row(m, _fmt(value))
        console.print(table)

    out.finish(data, tables, "power")


@analyse.command("judged-fraction")
@_errors_exit_2
def judged_fraction_command(
    qrels_path: QrelsArg,
    run_paths: RunsArg,
    depths: Annotated[
        list[int] | None, typer.Option("--depth", help="depth d (repeat; default 1, 2, 3, 5, 10, ... max-results)")
    ] = None,
    max_results: MaxResultsOpt = 1000,
    fmt: FormatOpt = TABLE,
    output: OutputOpt = None,
    plot: PlotOpt = None,
) -> None:
    """Judged fraction (Westerveld 4.1): the share of every run's top d that the qrels judge, for each depth d."""
    from app.evaluation.analyses.judged_depth import judged_fraction

    out = Out(fmt, output, plot)
    params = _params("judged-fraction", depths=depths)
    with _progress() as steps:
        qrels, prepared = _prepared(qrels_path, run_paths, max_results, steps)
        steps.step("judged share per depth")
        result = judged_fraction(qrels, prepared, depths=params.depths, max_results=max_results)

    def tables(console: Console) -> None:
        table = Table(title=f"Judged fraction of the top d ({len(result.runs)} runs)")
        for column in ("depth", "all runs", "lowest list", "highest list", "mean list"):
            table.add_column(column, justify="right")
        for i, depth in enumerate(result.depths.tolist()):
            cells = (result.overall[i], result.list_min[i], result.list_max[i], result.list_mean[i])
            table.add_row(str(depth), *[_fmt(v) for v in cells])
        console.print(table)

    out.finish(result.to_dict(), tables, "judged-fraction")


@analyse.command("qrels-versions")
@_errors_exit_2
def qrels_versions_command(
    run_paths: RunsArg,
    qrels_paths: Annotated[list[Path], typer.Option("--qrels", help="a qrels version (repeat: at least two)")],
    measure: MeasureOpt = None,
    max_results: MaxResultsOpt = 1000,
    fmt: FormatOpt = TABLE,
    output: OutputOpt = None,
    plot: PlotOpt = None,
) -> None:
    """Qrels versions compared (Voorhees 1998): run rankings (tau_b, tau_AP) and judgements (overlap, kappa)."""
    from app.evaluation.analyses.qrels_comparison import compare_qrels
    from app.evaluation.prepared_runs import prepare_runs

    out = Out(fmt, output, plot)
    params = _params("qrels-versions", measure=measure)
    if len(qrels_paths) < 2:
        raise ValueError("--qrels: give at least two qrels files to compare")
    with _progress() as steps:
        versions = [read_qrels(p) for p in steps.each("reading the qrels versions", qrels_paths)]
        labels = [p.name for p in qrels_paths]
        if len(set(labels)) != len(labels):
            labels = [str(p) for p in qrels_paths]
        _, runs = _load(qrels_paths[0], run_paths, steps)
        chosen = params.measure or ("xinfAP" if all(q.stratified for q in versions) else "AP")
        steps.step("ranking the runs")
        prepared = prepare_runs(runs, max_results)
        result = compare_qrels(
            labels, versions, prepared, measure=chosen, progress=steps.step("evaluating each version")
        )
    data = result.to_dict()

    def tables(console: Console) -> None:
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

    out.finish(data, tables, "qrels-versions")


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
    fmt: FormatOpt = TABLE,
    output: OutputOpt = None,
    plot: PlotOpt = None,
) -> None:
    """Swap rate and minimum detectable difference (Voorhees & Buckley 2002) on disjoint random topic sets."""
    from app.evaluation.analyses.swap_rate import swap_rates
    from app.evaluation.measures.registry import aggregate_of

    out = Out(fmt, output, plot)
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
    with _progress() as steps:
        results = _one_measure(paths, moments, params.measure, max_results, steps)
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
            progress=steps.step("disjoint topic sets"),
        )
    data = result.to_dict()

    def tables(console: Console) -> None:
        table = Table(
            title=f"Swap rate of {result.measure}: {params.trials} trials per size, seed {params.seed}, "
            f"{len(results.runs)} runs, {result.n_topics} topics"
        )
        for column in ("topics", "comparisons", "swaps", "minimum detectable difference"):
            table.add_column(column, justify="right")
        for entry in data["sizes"]:
            mdd = "none" if entry["mdd"] is None else f"{entry['mdd']:.4g}"
            table.add_row(str(entry["size"]), str(entry["comparisons"]), str(entry["swaps"]), mdd)
        console.print(table)

    out.finish(data, tables, "swap-rate")


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
    fmt: FormatOpt = TABLE,
    output: OutputOpt = None,
    plot: PlotOpt = None,
) -> None:
    """Significance within each run type (the groups file's runtype column): the top runs of a type tested pairwise."""
    from app.evaluation.analyses import read_run_groups
    from app.evaluation.analyses.type_significance import significance_by_type
    from app.evaluation.measures.registry import aggregate_of

    out = Out(fmt, output, plot)
    params = _params(
        "type-significance",
        measure=measure,
        method=method,
        top=top,
        alpha=alpha,
        n_resamples=resamples,
        seed=seed,
    )
    with _progress() as steps:
        results = _one_measure([qrels_path, *run_paths], None, params.measure, max_results, steps)
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
            progress=steps.step("testing each run type"),
        )
    data = {"measure": results.measures[0], "by": "runtype", **result.to_dict()}

    def tables(console: Console) -> None:
        for group in result.types:
            table = Table(title=f"Run type {group.label}: {params.method}, alpha {params.alpha:g}")
            for column in ("run", results.measures[0], "significantly better than"):
                table.add_column(column, justify="right" if column == results.measures[0] else "left")
            for run, mean in zip(group.runs, group.means.tolist(), strict=True):
                worse = [b for a, b in group.better if a == run]
                table.add_row(run, _fmt(mean), ", ".join(worse))
            console.print(table)

    out.finish(data, tables, "type-significance")


@analyse.command("novelty")
@_errors_exit_2
def novelty_command(
    qrels_path: QrelsArg,
    run_paths: RunsArg,
    groups: GroupsNeeded,
    max_results: MaxResultsOpt = 1000,
    fmt: FormatOpt = TABLE,
    output: OutputOpt = None,
    plot: PlotOpt = None,
) -> None:
    """Novelty: relevant shots each run and team found, and those no other team found (teams from --groups)."""
    from app.evaluation.analyses import read_run_groups
    from app.evaluation.analyses.novelty import unique_relevant

    out = Out(fmt, output, plot)
    _params("novelty")
    with _progress() as steps:
        qrels, prepared = _prepared(qrels_path, run_paths, max_results, steps)
        teams = read_run_groups(groups).units(list(prepared.names), "group")
        steps.step("relevant found per team")
        data = unique_relevant(qrels, prepared, teams, max_results=max_results).to_dict()

    def tables(console: Console) -> None:
        table = Table(title=f"Unique relevant: {data['unique']} of {data['found']} relevant found by one team only")
        for column in ("team", "unique", "relevant found"):
            table.add_column(column, justify="left" if column == "team" else "right")
        for row in data["teams"]:
            table.add_row(row["team"], str(row["unique"]), str(row["hits"]))
        console.print(table)

    out.finish(data, tables, "novelty")


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
    fmt: FormatOpt = TABLE,
    output: OutputOpt = None,
    plot: PlotOpt = None,
) -> None:
    """Each run per topic against the median and best of all runs (the chart NIST sends each team); topics in
    natural order (1, 2, ..., 10)."""
    from app.evaluation.analyses.topic_comparison import topic_comparison

    out = Out(fmt, output, plot)
    params = _params("run-vs-median", measure=measure)
    with _progress() as steps:
        results = _one_measure(paths, moments, params.measure, max_results, steps)
        if run is not None and run not in results.runs:
            raise ValueError(f"--run: no run {run!r} among {', '.join(results.runs)}")
        result = topic_comparison(results.runs, results.topics, results.values[:, 0, :], measure=results.measures[0])

    def tables(console: Console) -> None:
        table = Table(title=f"{result.measure}: topics above the median and at the best, per run")
        for column in ("run", "above median", "at best", "topics"):
            table.add_column(column, justify="left" if column == "run" else "right")
        for name in result.runs:
            chart = result.run(name)
            table.add_row(name, str(chart["above_median"]), str(chart["at_best"]), str(len(result.topics)))
        console.print(table)

    out.finish(result.to_dict(), tables, "run-vs-median", run=run or result.runs[0])


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
    fmt: FormatOpt = TABLE,
    output: OutputOpt = None,
    plot: PlotOpt = None,
) -> None:
    """Score vs processing time: correlations and the runs no other run beats on both (times from --times)."""
    from app.evaluation.analyses.efficiency import score_vs_time

    out = Out(fmt, output, plot)
    params = _params("efficiency", measure=measure)
    stated = read_times(times)
    with _progress() as steps:
        results = _one_measure(paths, moments, params.measure, max_results, steps)
        seconds = np.array([stated.get(name, np.nan) for name in results.runs], dtype=np.float64)
        result = score_vs_time(results.runs, results.mean()[:, 0], seconds, measure=results.measures[0])
    data = result.to_dict()

    def tables(console: Console) -> None:
        title = f"{result.measure} vs seconds per topic ({data['n_timed']} of {len(result.runs)} runs timed)"
        table = Table(title=title)
        for column in ("run", result.measure, "seconds", "no run faster and better"):
            table.add_column(column, justify="left" if column == "run" else "right")
        for row in data["runs"]:
            seconds_text = "" if row["seconds"] is None else f"{row['seconds']:g}"
            front = "yes" if row["run"] in data["front"] else ""
            table.add_row(row["run"], _fmt(row["score"]), seconds_text, front)
        console.print(table)
        rho = data["spearman"]
        console.print(f"Spearman rho = {'nan' if rho is None else f'{rho:.4f}'}")

    out.finish(data, tables, "efficiency")


@analyse.command("strata")
@_errors_exit_2
def strata_command(
    qrels_path: QrelsArg,
    fmt: FormatOpt = TABLE,
    output: OutputOpt = None,
    plot: PlotOpt = None,
) -> None:
    """Strata of sample_eval qrels: pooled, judged and relevant shots per stratum; inferred relevant per topic."""
    from app.evaluation.analyses.strata import stratum_summary

    out = Out(fmt, output, plot)
    _params("strata")
    with _progress() as steps:
        steps.step("reading the qrels")
        qrels = read_qrels(qrels_path)
        steps.step("counting each stratum")
        data = stratum_summary(qrels).to_dict()

    def tables(console: Console) -> None:
        title = f"Strata ({len(data['topics'])} topics, {data['inferred_relevant']:.1f} inferred relevant)"
        table = Table(title=title)
        for column in ("stratum", "pooled", "judged", "relevant", "judged share", "relevant share"):
            table.add_column(column, justify="right")
        for s in data["strata"]:
            shares = [_fmt_num(s["judged_share"]), _fmt_num(s["relevant_share"])]
            table.add_row(str(s["stratum"]), str(s["pooled"]), str(s["judged"]), str(s["relevant"]), *shares)
        console.print(table)

    out.finish(data, tables, "strata")


@analyse.command("moment-effectiveness")
@_errors_exit_2
def moment_effectiveness_command(
    run_paths: Annotated[list[Path], typer.Argument(help="moment run files (TSV or JSON lines, may be .gz)")],
    moments: Annotated[Path, typer.Option("--moments", help="moment ground truth (topic video start end)")],
    measures: MeasuresOpt = None,
    sort_by: Annotated[
        str | None, typer.Option("--sort-by", help="measure to sort by (default: mean R@K,theta)")
    ] = None,
    fmt: FormatOpt = TABLE,
    output: OutputOpt = None,
    plot: PlotOpt = None,
) -> None:
    """Each system's score under every moment measure, systems sorted (AxIoU paper, Fig. 5)."""
    from app.evaluation.analyses.moment_effectiveness import moment_effectiveness

    out = Out(fmt, output, plot)
    params = _params("moment-effectiveness", measures=measures, sort_by=sort_by)
    with _progress() as steps:
        results = _scores(run_paths, moments, params.measures, 1000, steps)
        result = moment_effectiveness(results.runs, results.measures, results.mean(), sort_by=params.sort_by)

    def tables(console: Console) -> None:
        table = Table(title=f"Systems by measure, sorted by {result.sort_by}")
        table.add_column("run")
        for m in result.measures:
            table.add_column(m, justify="right")
        for r, run in enumerate(result.runs):
            table.add_row(run, *[_fmt(v) for v in result.scores[r]])
        console.print(table)

    out.finish(result.to_dict(), tables, "moment-effectiveness")
