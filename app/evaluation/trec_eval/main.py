"""The trec_eval command: read the command line and the files, evaluate, print; returns the exit status."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import BinaryIO, TextIO

from app.evaluation.errors import FormatError
from app.evaluation.formats.trec_files import parse_trec_qrels, parse_trec_run, read_bytes, without_comment_lines
from app.evaluation.trec_eval.engine import evaluate
from app.evaluation.trec_eval.options import USAGE, UsageError, parse_arguments
from app.evaluation.trec_eval.report import format_report
from app.evaluation.trec_eval.table import TABLE, select

VERSION = "trecpool trec_eval: a drop-in for trec_eval version 10.0"
UNSET_RESULTS_STATUS = 4  # a qrels topic without results before any with: 10.0's behaviour is undefined; trecpool stops

HELP = """Usage: trecpool trec_eval [-h] [-q] [-m measure[.params]] [-c] [-n] [-l <num>] [-N <num>] [-M <num>]
   [-J] [-R qrels] [-T trec_results] [-Z zscore_file] rel_info_file results_file

A drop-in for NIST trec_eval 10.0: the same command line and the same output, byte for byte, for the qrels and
trec_results formats. results_file '-' is read from stdin; either file may be gzip-compressed; lines of the
results_file whose first non-blank character is '#' are skipped, as trec_eval 10.0 skips them.

 -h, --help: this help.
 -v, --version: print the version and exit.
 -q, --query_eval_wanted: also print the evaluation of each topic.
 -m, --measure measure[.params]: add a measure, or a nickname (official, all_trec, set), to those printed;
     params after the first '.', separated by ',' (P.5,10  iprec_at_recall..1,.5  ndcg.1=3,2=9  rbp.p=0.5).
     Repeatable; 'official' when none is given. Measures print in trec_eval's order.
 -c, --complete_rel_info_wanted: average over every topic of the qrels (a topic the run lacks scores 0, -nan for
     iprec_at_recall and 11pt_avg with -J); num_rel's `all` then counts every qrels line graded above 0.
     Without -c, trec_eval 10.0 evaluates the last topic found again in the place of a qrels topic the run lacks
     (a warning on stderr says so) and has no defined behaviour if the first qrels topics are lacking (status 4).
 -n, --nosummary: do not print the summary (`all`) lines.
 -l, --level_for_rel num: the lowest grade that counts as relevant (default 1).
 -N, --Number_docs_in_coll num: number of docs in the collection (for utility).
 -M, --Max_retrieved_per_topic num: evaluate only the top num docs of each topic.
 -J, --Judged_docs_only: drop unjudged docs from the rankings first.
 -R, --Rel_info_format qrels: only 'qrels' (prefs, qrels_prefs and qrels_jg are not supported).
 -T, --Results_format trec_results: only 'trec_results'.
 -Z, --Zscore file: print z-scores (value - mean) / stddev, from lines 'topic measure mean stddev', named
     'Z' + measure and printed %6.4f (the counts too); -1000000 where the file lacks the topic or measure.
 -D (debug output) is not supported; -o is accepted and ignored, as in trec_eval 10.0.

Measures: {measures}
"""


def main(
    argv: list[str], stdout: TextIO | None = None, stderr: TextIO | None = None, stdin: BinaryIO | None = None
) -> int:
    """Run trec_eval's command line `argv` (without the program name); the exit status trec_eval would give.

    The report is written once it is complete; an error writing it (a closed pipe) is left to the caller.
    """
    err = stderr or sys.stderr
    status, text = _run(argv, err, stdin)
    if text:
        (stdout or sys.stdout).write(text)
    return status


def _run(argv: list[str], err: TextIO, stdin: BinaryIO | None) -> tuple[int, str]:
    """(exit status, text for stdout) of trec_eval's command line; messages go to `err`."""
    try:
        options = parse_arguments(argv)
        selected = select(options.measures)  # trec_eval refuses a bad -m while reading its options
        if options.help:
            names = ", ".join(entry.name for entry in TABLE if entry.supported)
            return 0, HELP.format(measures=names)
        if options.version:
            err.write(f"{VERSION}\n")
            return 0, ""
        if len(options.operands) != 2:
            raise UsageError("expected two files: rel_info_file results_file")
        if options.rel_info_format != "qrels":
            raise UsageError(f"Illegal rel_format '{options.rel_info_format}' (only qrels is supported)", 2, False)
        if options.results_format != "trec_results":
            raise UsageError(f"Illegal retrieval results format '{options.results_format}'", 2, False)
        if options.relevance_level < 0:
            raise UsageError("-l below 0 is not supported by trecpool trec_eval", 1, False)
        if options.max_per_topic is not None and options.max_per_topic < 0:
            raise UsageError("-M below 0 is not supported by trecpool trec_eval", 1, False)
        qrels_path, run_path = options.operands
        qrels = parse_trec_qrels(read_bytes(qrels_path), source=qrels_path)
        run_data = (stdin or sys.stdin.buffer).read() if run_path == "-" else read_bytes(run_path)
        run = parse_trec_run(without_comment_lines(run_data), source=run_path)  # 10.0 skips '#' lines
        zscores = read_zscores(options.zscore_file) if options.zscore_file else None
        (report,) = evaluate([run], qrels, selected, options, zscores, stand_ins=True)
    except UsageError as exc:
        for line in str(exc).splitlines():
            err.write(f"trec_eval: {line}\n")
        if exc.usage:
            err.write(USAGE)
        return exc.status, ""
    except FormatError as exc:
        err.write(f"trec_eval: {exc}\n")
        return 2, ""
    except (OSError, ValueError) as exc:
        err.write(f"trec_eval: {exc}\n")
        return 2, ""
    if report.stand_ins and report.stand_ins[0][1] is None:
        lacking = report.stand_ins[0][0]
        err.write(
            f"trec_eval: qrels topic '{lacking}' has no results in '{run_path}' and no qrels topic before it has: "
            "without -c, trec_eval 10.0 evaluates it with a results pointer it never set (undefined behaviour, "
            "usually a crash); use -c to evaluate every qrels topic\n"
        )
        return UNSET_RESULTS_STATUS, ""
    for lacking, stand_in in report.stand_ins:
        err.write(
            f"trec_eval: warning: qrels topic '{lacking}' has no results in '{run_path}': without -c, trec_eval 10.0 "
            f"evaluates topic '{stand_in}' again in its place (printed and averaged twice); use -c\n"
        )
    if not report.topics:
        err.write("trec_eval: No queries with both results and relevance info\n")
        return 7, ""
    zscored = zscores is not None
    return 0, format_report(report, per_topic=options.query, summary=options.summary, zscore=zscored)


def read_zscores(path: str) -> dict[tuple[str, str], tuple[float, float]]:
    """trec_eval's -Z file: lines `topic measure mean stddev` -> {(topic, measure): (mean, stddev)}."""
    from app.evaluation.trec_eval.table import atof

    out: dict[tuple[str, str], tuple[float, float]] = {}
    text = Path(path).read_bytes().decode("utf-8", errors="replace")
    for number, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 4:
            raise ValueError(f"get_zscores: Malformed line {number} in '{path}'")
        out.setdefault((parts[0], parts[1]), (atof(parts[2]), atof(parts[3])))
    return out
