"""`trecpool eval`: trec_eval / sample_eval-style evaluation of run files against qrels."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

if TYPE_CHECKING:
    from app.evaluation.records import Qrels

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

With --moments, QRELS is a moment ground-truth file and RUN moment runs (evaluated by app.evaluation.moments).
"""


STDIN = "-"


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
    "--block-rows", type=click.IntRange(min=1), default=1_000_000, show_default=True, help="rows of runs per block"
)
def cli(
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
) -> None:
    """Evaluate runs against qrels, like trec_eval / sample_eval.pl."""
    from app.evaluation.errors import FormatError, MeasureError
    from app.evaluation.output.writers import write_results

    measures = list(measure)
    names: dict[str, str] = {}
    try:
        with _readable([qrels, *runs], names) as (qrels, *run_list):
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
                )
            write_results(blocks, fmt, sys.stdout, several=len(runs) > 1, per_topic=per_topic, digits=digits)
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
) -> Iterator[dict[str, dict[str, dict[str, float]]]]:
    """Parse and evaluate shot/document runs a block at a time (about `block_rows` rows), yielding each block's results.

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
    return _blocks(qrels, run_paths, measures, run_topics_only, max_results, block_rows)


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
) -> Iterator[dict[str, dict[str, dict[str, float]]]]:
    """Each block's results; a block's tables are dropped before the next block is read."""
    from app.evaluation.formats.trec_files import read_run
    from app.evaluation.measures.evaluate import evaluate

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
            tables, names, rows = [], [], 0
            yield replace(results, measures=list(measures)).to_dict()  # printed as asked: map stays map


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
