"""`trecpool analyse KIND ...`: reusability and meta-evaluation analyses (SPEC section 6) from files, with tables,
JSON and optional PNG/SVG plots.

Every command is made from its record in the analysis registry (app/services/analysis_registry.py): its options from
the parameter model's fields (names, types, defaults and help from the field descriptions, validated by the same
model the REST API uses, so options left out take the same defaults), its arguments from what the record reads
(QRELS RUN..., moment runs with --moments, --qrels versions, --groups, --pool-depth, --times), and the computation
is the record's `compute`, the one the service's jobs run. This module reads the files into the record's
`AnalysisData`; app/cli/analysis_tables.py prints each kind's tables (a generic table for a kind without its own).

Output, the project's one convention: tables on stdout (`--format table`, the default) or the full result as JSON on
stdout (`--format json`; notes such as the inferred pool depth then go to stderr); `--output FILE` also writes that
JSON to a file (never to one named `-`), `--json FILE` the same and `--json -` the JSON on stdout (as `--format
json`), `--plot FILE` the figure. On a terminal, stderr shows the progress of each step (reading, evaluating, the
analysis itself); nothing when stderr is not a terminal. `-h` is `--help`.
"""

from __future__ import annotations

import functools
import gzip
import importlib
import json
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from app.cli.analysis_tables import Shown
from app.evaluation.errors import FormatError, MeasureError
from app.evaluation.formats.trec_files import read_qrels, read_run
from app.services.analysis_registry import (
    ANALYSES,
    Analysis,
    AnalysisData,
    Computed,
    Parameter,
    Scores,
    describe_error,
    figure_data,
    json_safe,
    parameters,
)

if TYPE_CHECKING:  # the core analyses import scipy: only when a command runs
    from app.evaluation.analyses.groups import RunGroups
    from app.evaluation.grading.prepared_runs import PreparedRuns
    from app.evaluation.records import Qrels, RunTable
    from app.evaluation.results import Results

HELP_OPTIONS = ["-h", "--help"]
PATH = click.Path(path_type=Path)


class OutputFormat(StrEnum):
    """What a command prints on stdout."""

    table = "table"
    json = "json"


TABLE = OutputFormat.table


class AnalyseGroup(click.Group):
    """`trecpool analyse`: one command per record of the registry, made when it is listed or run."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every analysis kind, in the registry's order."""
        return list(ANALYSES)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command of the analysis `cmd_name` (None if there is none)."""
        record = ANALYSES.get(cmd_name)
        return None if record is None else command(record)


cli = analyse = AnalyseGroup(
    name="analyse",
    help="Reusability and meta-evaluation analyses of a test collection (`trecpool analyses` lists them).",
    no_args_is_help=True,
    context_settings={"help_option_names": HELP_OPTIONS},
)


# ---------------------------------------------------------------------------------------------------------------------
# The command of a record


ARGUMENTS = {
    "scores": "QRELS RUN...: TREC or sample_eval qrels and TREC or AVS XML runs (may be .gz); with --moments "
    "GROUND_TRUTH, moment RUN... (TSV or JSON lines).",
    "runs": "QRELS RUN...: TREC or sample_eval qrels and TREC or AVS XML runs (may be .gz).",
    "qrels": "QRELS: TREC or sample_eval qrels (may be .gz).",
    "qrels-versions": "RUN...: TREC or AVS XML runs, compared under each --qrels version.",
    "moment-runs": "RUN...: moment runs (TSV or JSON lines, may be .gz), against --moments GROUND_TRUTH.",
}


def _moments_only(record: Analysis) -> bool:
    """Whether the analysis is for moment campaigns alone (its files are moment runs, --moments is required)."""
    return "shots" not in record.task_kinds


def _reads_trec_runs(record: Analysis) -> bool:
    """Whether the command can read TREC runs (and takes --max-results)."""
    return record.reads in ("scores", "runs", "qrels-versions") and not _moments_only(record)


def _inputs(record: Analysis) -> list[click.Parameter]:
    """The command's arguments and input options, from what the record reads and needs."""
    runs = click.Argument(["run_files"], nargs=-1, required=True, type=PATH, metavar="RUN...")
    qrels = click.Argument(["qrels_file"], type=PATH, metavar="QRELS")
    truth_help = "moment ground truth (topic video start end)"
    by_reads: dict[str, list[click.Parameter]] = {
        "scores": [
            click.Argument(
                ["paths"],
                nargs=-1,
                required=True,
                type=PATH,
                metavar="RUN..." if _moments_only(record) else "QRELS RUN...",
            ),
            click.Option(
                ["--moments"],
                type=PATH,
                required=_moments_only(record),
                metavar="GROUND_TRUTH",
                help=truth_help if _moments_only(record) else f"{truth_help}: the files are moment runs",
            ),
        ],
        "runs": [qrels, runs],
        "qrels": [qrels],
        "qrels-versions": [
            runs,
            click.Option(
                ["--qrels", "qrels_files"],
                type=PATH,
                multiple=True,
                required=True,
                metavar="QRELS",
                help="a qrels version (repeat: at least two)",
            ),
        ],
        "moment-runs": [runs, click.Option(["--moments"], type=PATH, required=True, help=truth_help)],
    }
    inputs = by_reads[record.reads]
    if "units" in record.needs or "pool" in record.needs:
        inputs.append(
            click.Option(
                ["--groups"],
                type=PATH,
                required="units" in record.needs,
                metavar="FILE",
                help="run_groups.tsv: run, team, contributed (yes/no), runtype"
                + ("" if "units" in record.needs else " (its contributed column: the pooled runs; default all)"),
            )
        )
    if "pool" in record.needs:
        inputs.append(
            click.Option(
                ["--pool-depth", "pool_depth_text"],
                metavar="N|FILE",
                help="the depth the pool was built with: N for every topic, or a file of 'topic depth' lines (the "
                "topics it lacks are inferred); default: each topic's, inferred from the qrels and printed",
            )
        )
    if "times" in record.needs:
        inputs.append(
            click.Option(
                ["--times"], type=PATH, required=True, metavar="FILE", help="TSV: run, mean elapsed seconds per topic"
            )
        )
    if record.figure_per_run:
        inputs.append(click.Option(["--run"], help="the run whose chart --plot draws (default: the first)"))
    return inputs


def _option_help(parameter: Parameter) -> str:
    """An option's help: the field's description, how to write it, its default."""
    text = parameter.description + (f"; {parameter.syntax}" if parameter.syntax else "")
    if parameter.multiple and parameter.parse is None:
        text += " (repeat the option)"
    return f"{text} (default: {parameter.default_words})"


def _options(record: Analysis) -> list[click.Parameter]:
    """The command's options from the parameter model's fields (see `analysis_registry.parameters`)."""
    options: list[click.Parameter] = []
    for p in parameters(record):
        if not p.options:
            continue
        metavar = "[" + "|".join(p.choices) + "]" if p.choices else None
        if p.type is bool:
            options.append(click.Option([*p.options, p.name], is_flag=True, default=False, help=_option_help(p)))
        elif p.parse is not None:
            options.append(click.Option([*p.options, p.name], metavar=metavar or "TEXT", help=_option_help(p)))
        else:
            kind = {int: click.INT, float: click.FLOAT}.get(p.type, click.STRING)
            options.append(
                click.Option(
                    [*p.options, p.name], type=kind, multiple=p.multiple, metavar=metavar, help=_option_help(p)
                )
            )
    return options


def _outputs(record: Analysis) -> list[click.Parameter]:
    """--max-results (for TREC runs) and the output options every command has."""
    common: list[click.Parameter] = []
    if _reads_trec_runs(record):
        common.append(
            click.Option(
                ["--max-results"], type=click.INT, default=1000, show_default=True, help="cut each ranked list here"
            )
        )
    return [
        *common,
        click.Option(
            ["--format", "fmt"],
            type=click.Choice([f.value for f in OutputFormat]),
            default="table",
            show_default=True,
            help="table: tables on stdout; json: the full result as JSON on stdout",
        ),
        click.Option(["--output"], type=PATH, metavar="FILE", help="also write the full result as JSON to FILE"),
        click.Option(
            ["--json", "json_path"],
            metavar="FILE|-",
            help="the full result as JSON: to FILE (as --output), or to stdout with - (as --format json)",
        ),
        click.Option(["--plot"], type=PATH, metavar="FILE", help="write the figure (.png or .svg)"),
    ]


def command(record: Analysis) -> click.Command:
    """The `trecpool analyse` command of an analysis, made from its record."""
    params = [*_inputs(record), *_options(record), *_outputs(record)]
    names = [p.name for p in params]
    clashes = sorted({n for n in names if names.count(n) > 1 and n is not None})
    if clashes:
        raise ValueError(f"analysis {record.name}: parameters named like the command's own options: {clashes}")
    return click.Command(
        record.name,
        params=params,
        callback=functools.partial(_run, record),
        help=f"{record.description}\n\n{ARGUMENTS[record.reads]}\n\nReproduces: {record.reproduces}.",
        short_help=record.description,
        context_settings={"help_option_names": HELP_OPTIONS},
    )


def _fail(message: str) -> None:
    """Say `error: message` on stderr and exit with status 2."""
    Console(stderr=True).print(f"[red]error:[/] {message}", highlight=False, markup=True)
    raise click.exceptions.Exit(2)


def _run(record: Analysis, **given: Any) -> None:
    """Run the analysis on the command's arguments; input errors are one line on stderr with exit code 2."""
    try:
        _analyse(record, given)
    except (FormatError, MeasureError, ValueError, OSError, ImportError) as exc:
        _fail(str(exc))


@dataclass
class Files:
    """What a command read from its arguments, before any analysis work."""

    paths: list[Path] = field(default_factory=list)
    qrels: Path | None = None
    runs: list[Path] = field(default_factory=list)
    qrels_versions: list[Path] = field(default_factory=list)
    moments: Path | None = None
    groups: Path | None = None
    pool_depth: int | dict[str, int] | None = None
    times: dict[str, float] = field(default_factory=dict)
    run: str | None = None
    max_results: int = 1000


def _analyse(record: Analysis, given: dict[str, Any]) -> None:
    """Check the options, read the files, compute, print."""
    fmt, output, json_path = OutputFormat(given.pop("fmt")), given.pop("output"), given.pop("json_path")
    if json_path == "-":
        fmt = OutputFormat.json
    elif json_path is not None:
        if output is not None:
            raise ValueError("--json FILE and --output FILE both name the JSON file: give one")
        output = Path(json_path)
    out = Out(fmt, output, given.pop("plot"))
    params = _params(record, {p.name: given.pop(p.name) for p in parameters(record) if p.options})
    files = Files(
        paths=list(given.get("paths", ())),
        qrels=given.get("qrels_file"),
        runs=list(given.get("run_files", ())),
        qrels_versions=list(given.get("qrels_files", ())),
        moments=given.get("moments"),
        groups=given.get("groups"),
        pool_depth=parse_pool_depth(given.get("pool_depth_text")),
        times=read_times(given["times"]) if given.get("times") is not None else {},
        run=given.get("run"),
        max_results=given.get("max_results", 1000),
    )
    if record.reads == "qrels-versions" and len(files.qrels_versions) < 2:
        raise ValueError("--qrels: give at least two qrels files to compare")
    with _progress() as steps:
        data = gather(record, params, files, steps)
        if files.run is not None and files.run not in data.runs:
            raise ValueError(f"--run: no run {files.run!r} among {', '.join(data.runs)}")
        computed = record.compute(data, params, steps.step(record.step or record.name))
    run = files.run or (data.runs[0] if record.figure_per_run and data.runs else None)
    out.finish(record, computed, Shown(record, params, data, computed), run)


def _params(record: Analysis, options: dict[str, Any]) -> Any:
    """The validated parameters from the options given (None = not given: the model's default); an error quotes
    each parameter by its option."""
    from pydantic import ValidationError

    by_name = {p.name: p for p in parameters(record)}
    given: dict[str, object] = {}
    for name, value in options.items():
        p = by_name[name]
        if p.parse is not None:
            if value is None:
                continue
            try:
                value = p.parse(value)
            except ValueError as exc:
                raise ValueError(f"{p.options[-1]}: {exc}") from None
        elif p.multiple:
            value = list(value) or None
        elif p.type is bool:
            value = True if value else None
        if value is not None:
            given[name] = value
    try:
        return record.params.model_validate(given)
    except ValidationError as exc:
        raise ValueError(describe_error(exc, {p.name: p.options[-1] for p in by_name.values() if p.options})) from None


# ---------------------------------------------------------------------------------------------------------------------
# Reading the files into the record's AnalysisData


def gather(record: Analysis, params: Any, files: Files, steps: Steps) -> AnalysisData:
    """What the analysis reads (`record.reads`, `record.needs`), from the command's files."""
    if record.reads == "scores":
        named = getattr(params, "measures", None) or ([params.measure] if getattr(params, "measure", None) else None)
        results = _scores(files.paths, files.moments, named, files.max_results, steps, default=record.measures)
        scores = Scores(
            list(results.runs), list(results.measures), list(results.topics), results.values, results.mean()
        )
        data = AnalysisData(runs=scores.runs, max_results=files.max_results, scores=scores)
    elif record.reads == "runs":
        qrels, prepared = _prepared(_given(files.qrels), files.runs, files.max_results, steps)
        data = AnalysisData(runs=list(prepared.names), max_results=files.max_results, qrels=qrels, prepared=prepared)
    elif record.reads == "qrels":
        steps.step("reading the qrels")
        data = AnalysisData(runs=[], qrels=read_qrels(_given(files.qrels)))
    elif record.reads == "qrels-versions":
        data = _qrels_versions(files, steps)
    else:
        data = _moment_runs(files, steps)
    if "units" in record.needs or ("pool" in record.needs and files.groups is not None):
        from app.evaluation.analyses import read_run_groups

        groups = read_run_groups(_given(files.groups))
        data.units = functools.partial(_units, groups, data.runs)
        data.pooled = groups.pooled_runs(data.runs)
    if "pool" in record.needs:
        data.depth = files.pool_depth
    data.seconds = files.times
    return data


def _given(path: Path | None) -> Path:
    """A file the command requires (click has checked that it was given)."""
    if path is None:
        raise ValueError("a required file is missing")
    return path


def _units(groups: RunGroups, runs: list[str], which: str) -> tuple[str, list[str]]:
    """Each run's team or run type from the groups file, and the name the result gives it."""
    if which == "team":
        return "team", groups.units(runs, "group")
    if which in ("type", "system_type"):
        return "runtype", groups.units(runs, "type")
    raise ValueError(f"the groups file has no {which} column")


def _read_bytes(path: Path) -> bytes:
    """A file's bytes, gunzipped when it is gzip-compressed."""
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def _read_runs(run_paths: Sequence[Path], steps: Steps) -> list[RunTable]:
    """The runs (several files with one tag are an error)."""
    runs = [read_run(p) for p in steps.each(f"reading {len(run_paths)} runs", list(run_paths))]
    tags = [r.tag for r in runs]
    duplicates = sorted({t for t in tags if tags.count(t) > 1})
    if duplicates:
        raise ValueError(f"several run files have the tag {', '.join(duplicates)}")
    return runs


def _load(qrels_path: Path, run_paths: Sequence[Path], steps: Steps) -> tuple[Qrels, list[RunTable]]:
    """The qrels and the runs."""
    steps.step("reading the qrels")
    qrels = read_qrels(qrels_path)
    return qrels, _read_runs(run_paths, steps)


def _prepared(
    qrels_path: Path, run_paths: Sequence[Path], max_results: int, steps: Steps
) -> tuple[Qrels, PreparedRuns]:
    """The qrels and the runs prepared once (ranked, cut at max_results)."""
    from app.evaluation.grading.prepared_runs import prepare_runs

    qrels, runs = _load(qrels_path, run_paths, steps)
    steps.step("ranking the runs")
    return qrels, prepare_runs(runs, max_results)


def _qrels_versions(files: Files, steps: Steps) -> AnalysisData:
    """The --qrels versions (labelled by file name, or path when names repeat) and the runs, prepared."""
    from app.evaluation.grading.prepared_runs import prepare_runs

    versions = [read_qrels(p) for p in steps.each("reading the qrels versions", files.qrels_versions)]
    labels = [p.name for p in files.qrels_versions]
    if len(set(labels)) != len(labels):
        labels = [str(p) for p in files.qrels_versions]
    runs = _read_runs(files.runs, steps)
    steps.step("ranking the runs")
    prepared = prepare_runs(runs, files.max_results)
    return AnalysisData(
        runs=list(prepared.names),
        max_results=files.max_results,
        prepared=prepared,
        versions=list(zip(labels, versions, strict=True)),
    )


def _moment_runs(files: Files, steps: Steps) -> AnalysisData:
    """The --moments ground truth and the moment runs (named by their tag, else the file's stem)."""
    from app.evaluation.moments import parse_moment_ground_truth, parse_moment_run

    moments = _given(files.moments)
    truth = parse_moment_ground_truth(_read_bytes(moments), source=str(moments))
    runs = [parse_moment_run(_read_bytes(p), source=str(p)) for p in steps.each("reading moment runs", files.runs)]
    names = [r.tag or p.stem for r, p in zip(runs, files.runs, strict=True)]
    return AnalysisData(runs=names, truth=truth, moment_runs=runs)


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
    from app.evaluation.measures.evaluate import evaluate

    qrels, runs = _load(paths[0], paths[1:], steps)
    if not measures and default == "one":
        measures = ["xinfAP" if qrels.stratified else "AP"]
    elif not measures:
        from app.evaluation.analyses.measure_agreement import readable_measures
        from app.evaluation.measures.registry import default_measures

        every = default_measures(stratified=qrels.stratified)
        measures = readable_measures(every) if default == "readable" else every
    steps.step(f"evaluating {len(runs)} runs")
    return evaluate(qrels, runs, measures, max_results=max_results)


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


# ---------------------------------------------------------------------------------------------------------------------
# Progress and output


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
        bar = self.bar
        return lambda fraction: bar.update(task, total=1.0, completed=min(max(fraction, 0.0), 1.0))

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


def _stdout_console() -> Console:
    """The console tables go to: stdout, 200 columns wide when it is not a terminal."""
    return Console(width=200) if not sys.stdout.isatty() else Console()


@dataclass
class Out:
    """Where a command's result goes: tables (with notes) or JSON on stdout, the JSON in an --output file, the
    figure in a --plot file."""

    fmt: OutputFormat = TABLE
    output: Path | None = None
    plot: Path | None = None

    def __post_init__(self) -> None:
        check_plot_path(self.plot)
        check_output_path(self.output)

    def finish(self, record: Analysis, computed: Computed, shown: Shown, run: str | None = None) -> None:
        """Print the notes and the tables (or the JSON), write the --output file and the --plot figure.

        The tables and figures modules are imported only when they are needed (matplotlib only for a plot).
        """
        from app.cli.analysis_tables import printer

        tables, notes = printer(record.name)
        stdout = _stdout_console()
        said = stdout if self.fmt is TABLE else Console(stderr=True)
        for text in [*computed.notes, *(notes(shown) if notes else [])]:
            said.print(text, highlight=False, markup=False, soft_wrap=True)
        text = json.dumps(json_safe(computed.data), indent=1)
        if self.fmt is TABLE:
            tables(stdout, shown)
        else:
            sys.stdout.write(text + "\n")
        if self.output is not None:
            self.output.write_text(text + "\n", encoding="utf-8")
        if self.plot is not None:
            figures = importlib.import_module("app.figures.analyses")
            figure = figures.draw(record.figure, figure_data(record.name, computed.data, run))
            self.plot.write_bytes(figures.render(figure, PLOT_FORMATS[self.plot.suffix.lower()]))
            said.print(f"plot written to {self.plot}", highlight=False, markup=False, soft_wrap=True)
