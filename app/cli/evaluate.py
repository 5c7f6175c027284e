"""`trecpool eval`: trec_eval / sample_eval-style evaluation of run files against qrels."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

if TYPE_CHECKING:
    import numpy as np

    from app.evaluation.output.writers import Block, Interval
    from app.evaluation.records import Qrels, RunTable
    from app.evaluation.results import Results

HELP = """Evaluate RUN files (TREC 6-column or TRECVID AVS XML) against QRELS: qrels first, then runs.

Files may be gzip, bzip2 or xz compressed (told by their first bytes, not their names). A file named `-` is read
from stdin (one of them at most), as are pipes such as `<(zcat run.gz)`.

QRELS with 4 columns are TREC qrels; with 5 columns (topic iteration docno stratum grade) they are sample_eval
qrels, and the default measures then also include xinfAP, infNDCG, iP@k, inum_rel and inum_rel_ret.

Output (--format trec): trec_eval's `measure<TAB>topic<TAB>value` lines, `all` for the mean (for counts such as
num_ret, the total); per-topic lines only with -q. With several runs every line starts with `run<TAB>` (the run
tag). Values are printed at full precision unless --digits is given (--digits 4 looks like trec_eval). Measures
take the spellings of trecpool, trec_eval, pytrec_eval and ir_measures (AP, map, P@10, P_10, P.10, P.5,10,
ndcg_cut.10, RBP(p=0.5); `trecpool measures` lists them) and print under the name given. For trec_eval's own
command line and output, byte for byte, use `trecpool trec_eval`.

Means run over every topic in the qrels, a topic a run lacks scoring 0 (trec_eval -c); --run-topics-only averages
over the topics each run answers (as sample_eval.pl and trec_eval without -c). Ranking: score descending, ties by
docno descending; the rank column is ignored; lists are cut at --max-results.

Runs are read and evaluated a block at a time (about --block-rows rows each) and each block's results are printed
before the next is read: memory holds the qrels and one block, not every run. A run file with errors stops the
command (status 2) after the blocks before it were printed. --format json writes one JSON object
{run: {measure: {topic or "all": value}}} to stdout; --format csv has the columns run,measure,topic,value.

With --ci, each run's mean of each measure (the `all` value) gets a confidence interval: a paired bootstrap over
the topics of that mean (every qrels topic, a missing one scoring 0; with --run-topics-only the run's own topics),
--ci-resamples resamples of the topics drawn with --ci-seed (the same draws as scipy.stats.bootstrap, and the same
for every run with the same number of topics, so runs stay paired whatever the blocks), percentile or BCa
(--ci-method), at --ci-level (a fraction: 0.95). A geometric mean (gm_map, gm_bpref) gets the interval of the mean
log, exponentiated. Counts (num_ret, num_rel, num_rel_ret, num_q, num_nonrel_judged_ret, inum_rel, inum_rel_ret) are
totals, not means: they get no interval. Where the qrels are sampled (lines graded -1), xinfAP's interval is widened
by the judgement sampling variance (the stratified jackknife of app.evaluation.analyses.budget, added in quadrature
to each side); no other measure has a variance estimator here, so theirs is the plain bootstrap interval, too narrow,
marked sampling "not included" (and named once on stderr). Any --ci-* option implies --ci. The output then:
trec, a mean's `all` line ends with two more columns, `measure<TAB>all<TAB>mean<TAB>ci_low<TAB>ci_high` (all other
lines unchanged); json, a mean's "all" becomes {"mean", "ci_low", "ci_high", "level", "method", "sampling"} (a total
stays a number); csv, the columns run,measure,topic,value,mean,ci_low,ci_high,level,method,sampling, filled on a
mean's `all` row (value = mean) and empty after `value` on per-topic rows (-q) and totals. sampling is "none"
(the qrels have no unjudged lines), "included" or "not included".

With --moments, QRELS is a moment ground-truth file and RUN moment runs (evaluated by app.evaluation.moments).
"""


STDIN = "-"
CI_OPTIONS = ("ci_level", "ci_method", "ci_resamples", "ci_seed")


@dataclass(frozen=True)
class CiOptions:
    """How --ci computes each mean's interval."""

    level: float
    method: str
    n_resamples: int
    seed: int


def _ci_level(context: click.Context, parameter: click.Parameter, value: float) -> float:
    """--ci-level as a fraction in (0, 1) (95 is refused with a hint, not read as 0.95)."""
    if not 0.0 < value < 1.0:
        hint = f"; did you mean {value / 100:g}?" if 1.0 < value < 100.0 else ""
        raise click.BadParameter(
            f"{value:g} is not a confidence level: give a fraction between 0 and 1, e.g. 0.95{hint}"
        )
    return value


class InputError(ValueError):
    """The files cannot be read as given: in the wrong order, or stdin named twice."""


def _fail(message: str) -> NoReturn:
    """Print an error to stderr and exit with status 2."""
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


# A plain click command, not typer: typer's parameter coercion imports pydantic (about 0.1 s of CPU), and this
# command must start about as fast as trec_eval.
@click.command("eval", help=HELP)
@click.argument("qrels", type=click.Path(path_type=Path))
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "-m", "--measure", "measure", multiple=True, help="measure, e.g. AP, P@10, nDCG@10, map, P.10 (repeatable)"
)
@click.option("-q", "--per-topic", is_flag=True, help="also print one line per topic")
@click.option("--digits", type=int, default=None, help="decimals to print (default: full precision)")
@click.option("--format", "fmt", type=click.Choice(["trec", "json", "csv"]), default="trec", help="output format")
@click.option("--run-topics-only", is_flag=True, help="average over the topics a run answers")
@click.option("--max-results", type=int, default=1000, show_default=True, help="cut each ranked list at this many")
@click.option("--moments", is_flag=True, help="evaluate moment runs against moment ground truth")
@click.option(
    "--block-rows", type=click.IntRange(min=1), default=250_000, show_default=True, help="rows of runs per block"
)
@click.option("--ci", is_flag=True, help="add each mean's confidence interval (paired bootstrap over topics)")
@click.option(
    "--ci-level", type=float, default=0.95, show_default=True, callback=_ci_level, help="confidence level, in (0, 1)"
)
@click.option(
    "--ci-method",
    type=click.Choice(["percentile", "BCa"], case_sensitive=False),
    default="percentile",
    show_default=True,
    metavar="[percentile|BCa]",
    help="bootstrap interval",
)
@click.option(
    "--ci-resamples", type=click.IntRange(min=1), default=10_000, show_default=True, help="bootstrap resamples"
)
@click.option(
    "--ci-seed", type=click.IntRange(min=0), default=0, show_default=True, help="seed of the resampled topics"
)
@click.pass_context
def cli(
    context: click.Context,
    qrels: Path,
    runs: tuple[Path, ...],
    measure: tuple[str, ...],
    per_topic: bool,
    digits: int | None,
    fmt: str,
    run_topics_only: bool,
    max_results: int,
    moments: bool,
    block_rows: int,
    ci: bool,
    ci_level: float,
    ci_method: str,
    ci_resamples: int,
    ci_seed: int,
) -> None:
    """Evaluate runs against qrels, like trec_eval / sample_eval.pl."""
    from app.evaluation.errors import FormatError, MeasureError
    from app.evaluation.output.writers import write_results

    given = any(context.get_parameter_source(name) != click.core.ParameterSource.DEFAULT for name in CI_OPTIONS)
    options = CiOptions(ci_level, ci_method, ci_resamples, ci_seed) if ci or given else None
    if options is not None and moments:
        _fail("--ci is not available with --moments")
    measures = list(measure)
    names: dict[str, str] = {}
    try:
        with _readable([qrels, *runs], names) as (qrels, *run_list):
            blocks: Iterator[dict[str, dict[str, dict[str, float]]] | Block]
            if moments:
                blocks = iter([_evaluate_moments(qrels, run_list, measures or None)])
            else:
                blocks = _evaluate_runs(
                    qrels,
                    run_list,
                    measures,
                    run_topics_only=run_topics_only,
                    max_results=max_results,
                    block_rows=block_rows,
                    names=names,
                    ci=options,
                )
            write_results(
                blocks,
                fmt,
                sys.stdout,
                several=len(runs) > 1,
                per_topic=per_topic,
                digits=digits,
                ci=options is not None,
            )
    except (FormatError, MeasureError, InputError, OSError) as exc:
        sys.stdout.flush()
        message = str(exc)
        for copy, name in names.items():
            message = message.replace(copy, name)
        _fail(message)


@contextmanager
def _readable(paths: list[Path], names: dict[str, str]) -> Iterator[list[Path]]:
    """The paths checked (one line naming a missing file or a directory), with stdin (`-`) and pipes copied to
    temporary files first: a file is read again whole when its fast pass declines it. `names` gets each copy's path
    and the name to show for it."""
    from app.evaluation.formats.streams import check_readable

    if sum(str(path) == STDIN for path in paths) > 1:
        raise InputError("only one file can be read from stdin (-)")
    regular = [str(path) != STDIN and check_readable(path) for path in paths]
    if all(regular):
        yield paths
        return
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory(prefix="trecpool-eval-") as directory:
        local = []
        for number, (path, plain) in enumerate(zip(paths, regular, strict=True)):
            if plain:
                local.append(path)
                continue
            shown = "stdin" if str(path) == STDIN else str(path)
            copy = Path(directory, str(number), Path(shown).name)
            copy.parent.mkdir()
            with copy.open("wb") as out:
                if str(path) == STDIN:
                    shutil.copyfileobj(sys.stdin.buffer, out, 1 << 20)
                else:
                    with open(path, "rb") as source:
                        shutil.copyfileobj(source, out, 1 << 20)
            names[str(copy)] = shown
            local.append(copy)
        yield local


def _evaluate_runs(
    qrels_path: Path,
    run_paths: list[Path],
    measures: list[str],
    *,
    run_topics_only: bool,
    max_results: int,
    block_rows: int,
    names: dict[str, str],
    ci: CiOptions | None = None,
) -> Iterator[dict[str, dict[str, dict[str, float]]] | Block]:
    """Parse and evaluate shot/document runs a block at a time (about `block_rows` rows), yielding each block's results
    (with `ci`, a `Block` with each mean's interval).

    The qrels and the measures are checked before the first run is read. `names` maps copied inputs (stdin) to the
    names shown.
    """
    from app.evaluation.errors import FormatError, MeasureError
    from app.evaluation.formats.trec_files import read_qrels
    from app.evaluation.measures.registry import default_measures, expand_names, resolve

    measures = [one for name in measures for one in expand_names(name)]  # trec_eval's P.5,10 is P.5 and P.10
    for name in measures:
        resolve(name)
    try:
        qrels = read_qrels(qrels_path)
    except FormatError:
        _check_order(qrels_path, run_paths[0], names)
        raise
    if not measures:
        measures = default_measures(qrels.stratified)
    if not qrels.stratified:
        stratified = [name for name in measures if resolve(name).stratified]
        if stratified:
            raise MeasureError(f"{', '.join(stratified)} need sample_eval (5-column, stratified) qrels")
    if ci is not None:
        _note_unsampled(qrels, measures)
    return _blocks(qrels, run_paths, measures, run_topics_only, max_results, block_rows, ci)


def _note_unsampled(qrels: Qrels, measures: list[str]) -> None:
    """On sampled qrels, name once on stderr the means whose interval leaves out the judgement sampling variance."""
    from app.evaluation.measures.registry import resolve

    if not _sampled(qrels):
        return
    left = [name for name in measures if resolve(name).aggregate in ("mean", "gm") and resolve(name).name != "xinfAP"]
    if left:
        click.echo(
            f"note: the qrels are sampled (lines graded -1); the intervals of {', '.join(left)} leave out the "
            'judgement sampling variance (no estimator for them): too narrow, marked sampling "not included"',
            err=True,
        )


def _sampled(qrels: Qrels) -> bool:
    """Whether the qrels hold pooled lines left unjudged (grade -1): a sample of the pool was judged."""
    import numpy as np

    return bool(np.any(np.asarray(qrels.grades) < 0))


def _check_order(qrels_path: Path, run_path: Path, names: dict[str, str]) -> None:
    """Raise InputError when the qrels file that did not parse looks like a run (and the first run like qrels)."""
    qrels_look, run_look = _looks_like(qrels_path), _looks_like(run_path)
    if qrels_look is None or not qrels_look.startswith("a run"):
        return
    shown = names.get(str(qrels_path), str(qrels_path)), names.get(str(run_path), str(run_path))
    usage = "give the qrels first, then the runs (trecpool eval QRELS RUN...)"
    if run_look is not None and run_look.startswith("qrels"):
        raise InputError(f"wrong order: {shown[0]} looks like {qrels_look} and {shown[1]} like {run_look}; {usage}")
    raise InputError(f"{shown[0]} looks like {qrels_look}, not qrels (4 or 5 columns); {usage}")


def _looks_like(path: Path) -> str | None:
    """What the first line of a file looks like: "a run (6 columns)", "a run (TRECVID XML)", "qrels (4 columns)",
    "qrels (5 columns)", or None."""
    from app.evaluation.errors import FormatError
    from app.evaluation.formats.streams import first_line

    try:
        line = first_line(path)
    except FormatError:
        return None
    if line.startswith(b"<"):
        return "a run (TRECVID XML)"
    width = len(line.split())
    return {6: "a run (6 columns)", 4: "qrels (4 columns)", 5: "qrels (5 columns)"}.get(width)


def _blocks(
    qrels: Qrels,
    run_paths: list[Path],
    measures: list[str],
    run_topics_only: bool,
    max_results: int,
    block_rows: int,
    ci: CiOptions | None = None,
) -> Iterator[dict[str, dict[str, dict[str, float]]] | Block]:
    """Each block's results (with `ci`, and their intervals); a block's tables are dropped before the next block is
    read."""
    from app.evaluation.formats.trec_files import read_run
    from app.evaluation.measures.evaluate import evaluate
    from app.evaluation.output.writers import Block

    seen: dict[str, int] = {}
    tables, names, rows = [], [], 0
    for number, path in enumerate(run_paths):
        table = read_run(path)
        tables.append(table)
        names.append(_unique_name(table.tag or path.name, seen))
        rows += len(table)
        if rows >= block_rows or number == len(run_paths) - 1:
            results = evaluate(
                qrels, tables, measures, max_results=max_results, run_topics_only=run_topics_only, names=names
            )
            variance = None
            if ci is not None and "xinfAP" in results.measures and _sampled(qrels):
                variance = xinfap_sampling_variance(qrels, tables, names, max_results, results.topics)
            shown = replace(results, measures=list(measures))  # printed as asked: map stays map
            tables, names, rows = [], [], 0
            if ci is None:
                yield shown.to_dict()
            else:
                sampling = _sampling_marks(results.measures, _sampled(qrels))
                yield Block(shown.to_dict(), mean_intervals_of(shown, ci, sampling, variance))


def _sampling_marks(canonical: list[str], sampled: bool) -> list[str]:
    """Per measure, whether its interval holds the judgement sampling variance: "none" on complete qrels, else
    "included" for xinfAP (the jackknife) and "not included" for the rest (no estimator)."""
    if not sampled:
        return ["none"] * len(canonical)
    return ["included" if name == "xinfAP" else "not included" for name in canonical]


def xinfap_sampling_variance(
    qrels: Qrels, tables: list[RunTable], names: list[str], max_results: int, topics: list[str]
) -> np.ndarray:
    """xinfAP's judgement sampling variance [run, topic] (topics in the order given): the stratified jackknife of
    app.evaluation.analyses.budget, a few runs at a time so memory stays bounded (`budget.run_chunks`)."""
    import numpy as np

    from app.evaluation.analyses.budget import by_run_sum, jackknife_components, run_chunks, topic_samples
    from app.evaluation.analyses.lines import index_lines
    from app.evaluation.grading.prepared_runs import prepare_runs

    prepared = prepare_runs(tables, max_results, names=names)
    sample_topics, samples = topic_samples(index_lines(prepared, qrels))
    column = {topic: t for t, topic in enumerate(topics)}
    variance = np.zeros((len(tables), len(topics)))
    for topic, sample in zip(sample_topics, samples, strict=True):
        start = 0
        for part in run_chunks(sample):
            deviations, _ = jackknife_components(part, max_results)
            variance[start : start + len(part.ranked), column[topic]] = by_run_sum(deviations**2)
            start += len(part.ranked)
    return variance


def mean_intervals_of(
    results: Results, ci: CiOptions, sampling: list[str], variance: np.ndarray | None = None
) -> dict[str, dict[str, Interval]]:
    """Each run's interval for each measure that is a mean (or a geometric mean), over the topics of the mean printed
    (those with a value: every qrels topic, or the run's own with --run-topics-only); `variance` [run, topic] is added
    where `sampling` says "included". Runs with the same topics share one set of draws (paired)."""
    import numpy as np

    from app.evaluation.output.writers import Interval
    from app.evaluation.statistics.intervals import mean_intervals, topic_draws

    draws: dict[int, np.ndarray] = {}
    means = results.mean()
    out: dict[str, dict[str, Interval]] = {run: {} for run in results.runs}
    for m, name in enumerate(results.measures):
        aggregate = results.aggregates[m]
        if aggregate not in ("mean", "gm"):
            continue  # a total: no interval
        values = results.values[:, m, :]
        counted = ~np.isnan(values)
        patterns, group = np.unique(counted, axis=0, return_inverse=True)
        for g, topics in enumerate(patterns):
            rows = np.flatnonzero(group.reshape(-1) == g)
            scores = values[np.ix_(rows, topics)]
            if aggregate == "gm":  # trec_eval's floor, then the mean log
                scores = np.log(np.maximum(scores, 1e-5))
            n_topic = scores.shape[1]
            low = high = np.full(len(rows), np.nan)
            if np.all(np.isfinite(scores)):
                if n_topic and n_topic not in draws:
                    draws[n_topic] = topic_draws(n_topic, ci.n_resamples, ci.seed)
                extra = variance[np.ix_(rows, topics)] if sampling[m] == "included" and variance is not None else None
                found = mean_intervals(scores, level=ci.level, method=ci.method, n_resamples=ci.n_resamples,
                                       seed=ci.seed, sampling_variance=extra, draws=draws.get(n_topic))  # fmt: skip
                low, high = (np.exp(found.low), np.exp(found.high)) if aggregate == "gm" else (found.low, found.high)
            for i, r in enumerate(rows.tolist()):
                out[results.runs[r]][name] = Interval(
                    float(means[r, m]), float(low[i]), float(high[i]), ci.level, ci.method, sampling[m]
                )
    return out


def _unique_name(name: str, seen: dict[str, int]) -> str:
    """The run name made distinct from those in `seen` (repeats suffixed #2, #3, ...), recorded there."""
    seen[name] = seen.get(name, 0) + 1
    return name if seen[name] == 1 else f"{name}#{seen[name]}"


def _evaluate_moments(
    ground_truth: Path, run_paths: list[Path], measures: list[str] | None
) -> dict[str, dict[str, dict[str, float]]]:
    """Delegate moment runs to app.evaluation.moments."""
    from app.evaluation.moments import evaluate_moment_files

    return evaluate_moment_files(str(ground_truth), [str(p) for p in run_paths], measures)
