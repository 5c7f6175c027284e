"""`trecpool sample_eval`: a drop-in for NIST's sample_eval.pl, with its command line and its output byte for byte."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

if TYPE_CHECKING:
    from app.evaluation.records import Qrels

USAGE = "usage: trecpool sample_eval [-q] [--digits N] QRELS RUN [-G GRADE=GAIN ...]"

HELP = """Evaluate one RUN against stratified QRELS and print what NIST's sample_eval.pl prints, byte for byte.

The command line is sample_eval.pl's: `[-q] QRELS RUN`, -q adding one block of lines per topic, and its `-G`
relevance mapping after the files (`-G 1=3 2=5`: grade 1 counts as 3, grade 2 as 5; single-digit grades, whole
numbers). QRELS has sample_eval's 5 columns (topic iteration docno stratum grade; grade -1 = pooled, not sampled);
RUN is TREC 6-column (or TRECVID AVS XML, optionally .gz).

Output, as TRECVID's sample_eval.pl prints it (%6.4f, %14.4f for inum_rel_ret and inum_rel, %9d for num_ret): per
topic (-q) infAP, infNDCG, iP5 ... iP1000, inum_rel_ret, inum_rel, num_ret, for the run's topics that the qrels judge,
in numeric order; then the `all` lines: the means of infAP, infNDCG, iprec@rec0.00 ... 1.00 and iP@k over those
topics, and the totals inum_rel_ret, inum_rel (over every qrels topic) and num_ret. Lists are ranked by score
descending, ties by docno descending, and cut at 1000 results (the per-topic num_ret counts the lines before the cut,
the `all` line after, as the script does). --digits N prints N decimals instead of the script's 4 (--digits 12: the
script with its formats widened, as data/trecvid-avs-2021/expected/<run>.sample_eval.txt). Lines of a TREC RUN
whose first non-blank character is '#' are skipped, as trec_eval 10.0 skips them.

Unlike the script, a run or qrels file with a duplicate docno in a topic, a grade below -1 or a malformed line is
refused (status 2, naming the lines) instead of being read loosely.
"""

_MAPPING = re.compile(r"^(?P<grade>\d)=(?P<gain>-?\d{1,3})$")
MAX_DIGITS = 20


def _fail(message: str) -> NoReturn:
    """Print an error to stderr and exit with status 2."""
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


@click.command(
    "sample_eval",
    help=HELP,
    context_settings={"ignore_unknown_options": True, "help_option_names": ["-h", "--help"]},
)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def cli(args: tuple[str, ...]) -> None:
    """Evaluate a run like sample_eval.pl and print its output (a closed stdout is the group's ClosedPipeGuard's)."""
    from app.evaluation.errors import FormatError, MeasureError

    per_topic, qrels_path, run_path, mapping, digits = parse_arguments(list(args))
    try:
        text = run_sample_eval(qrels_path, run_path, per_topic=per_topic, mapping=mapping, digits=digits)
    except (FormatError, MeasureError, OSError) as exc:
        _fail(str(exc))
    sys.stdout.write(text)


def parse_arguments(args: list[str]) -> tuple[bool, Path, Path, dict[int, int], int]:
    """(-q given, qrels path, run path, grade mapping, decimals) from sample_eval.pl's command line with trecpool's
    --digits; exits 2 on a bad one."""
    from app.evaluation.output.sample_eval import DIGITS

    mapping: dict[int, int] = {}
    if "-G" in args:
        at = args.index("-G")
        pairs, args = args[at + 1 :], args[:at]
        if not pairs:
            _fail(f"-G needs at least one GRADE=GAIN mapping\n{USAGE}")
        for pair in pairs:
            match = _MAPPING.match(pair)
            if match is None:
                _fail(f"-G mapping {pair!r} is not GRADE=GAIN (a one-digit grade, a whole gain of 1-3 characters)")
            mapping[int(match.group("grade"))] = int(match.group("gain"))
    digits, args = _digits(args, DIGITS)
    per_topic = False
    if args and args[0] == "-q":
        per_topic, args = True, args[1:]
    if len(args) != 2 or any(a.startswith("-") and a != "-" for a in args):
        _fail(f"expected [-q] QRELS RUN, got {' '.join(args) or 'nothing'}\n{USAGE}")
    return per_topic, Path(args[0]), Path(args[1]), mapping, digits


def _digits(args: list[str], default: int) -> tuple[int, list[str]]:
    """The value of `--digits N` / `--digits=N` (the last one given) and the other arguments; exits 2 on a bad one."""
    digits, rest = default, []
    words = iter(args)
    for word in words:
        if word == "--digits" or word.startswith("--digits="):
            text = word.partition("=")[2] if "=" in word else next(words, "")
            if not (text.isascii() and text.isdigit()) or int(text) > MAX_DIGITS:
                _fail(f"--digits needs a whole number of decimals from 0 to {MAX_DIGITS}, got {text!r}\n{USAGE}")
            digits = int(text)
        else:
            rest.append(word)
    return digits, rest


def run_sample_eval(
    qrels_path: Path, run_path: Path, *, per_topic: bool, mapping: dict[int, int], digits: int | None = None
) -> str:
    """sample_eval.pl's output for one run file against one qrels file (`digits` decimals; the script's 4 if None)."""
    import numpy as np

    from app.evaluation.errors import MeasureError
    from app.evaluation.formats.trec_files import read_qrels, read_run
    from app.evaluation.measures.evaluate import evaluate
    from app.evaluation.output.sample_eval import DIGITS, MAX_RESULTS, MEASURES, sample_eval_report

    qrels = read_qrels(qrels_path)
    if not qrels.stratified:
        raise MeasureError(f"{qrels_path}: sample_eval needs 5-column qrels (topic iteration docno stratum grade)")
    if mapping:
        qrels = map_grades(qrels, mapping)
    run = read_run(run_path)
    results = evaluate(qrels, [run], list(MEASURES), max_results=MAX_RESULTS)
    topics, counts = np.unique(np.asarray(run.topics).astype(str), return_counts=True)
    returned = dict(zip(topics.tolist(), counts.tolist(), strict=True))
    return sample_eval_report(results, returned, per_topic=per_topic, digits=DIGITS if digits is None else digits)


def map_grades(qrels: Qrels, mapping: dict[int, int]) -> Qrels:
    """The qrels with each grade in `mapping` replaced by its gain, all at once (sample_eval.pl's -G)."""
    import dataclasses

    import numpy as np

    grades = np.asarray(qrels.grades)
    mapped = grades.copy()
    for grade, gain in mapping.items():
        mapped[grades == grade] = gain
    return dataclasses.replace(qrels, grades=mapped)
