"""Writing {run: {measure: {topic or "all": value}}} results as trec_eval text, JSON or CSV, with or without
each mean's confidence interval (`trecpool eval --ci`).

With intervals (`Intervals`, run -> measure -> `Interval`; measures that are totals have none):
* trec: the `all` line of a mean gets two more columns, `measure<TAB>all<TAB>mean<TAB>ci_low<TAB>ci_high`; every
  other line is unchanged;
* json: the `all` entry of a mean becomes {"mean", "ci_low", "ci_high", "level", "method", "sampling"}; a total
  stays a number;
* csv: the columns run,measure,topic,value,mean,ci_low,ci_high,level,method,sampling; a mean's `all` row fills them
  all (value = mean), per-topic rows and totals only `value`.
Without intervals every format is exactly what it was.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TextIO

Nested = Mapping[str, Mapping[str, Mapping[str, float]]]
ALL = "all"
_COUNTS = ("num_ret", "num_rel", "num_rel_ret", "num_q", "num_nonrel_judged_ret")
CSV_HEADER = ["run", "measure", "topic", "value"]
CI_COLUMNS = ["mean", "ci_low", "ci_high", "level", "method", "sampling"]
SAMPLING = ("none", "included", "not included")  # the qrels are complete / sampled, variance added / sampled, not


@dataclass(frozen=True)
class Interval:
    """One run's mean of one measure with its confidence interval (NaN bounds: none could be computed)."""

    mean: float
    low: float
    high: float
    level: float
    method: str  # "percentile" or "BCa"
    sampling: str  # one of SAMPLING: whether the judgement sampling variance is in the interval


Intervals = Mapping[str, Mapping[str, Interval]]


@dataclass(frozen=True)
class Block:
    """One block of runs' results with, for `--ci`, each mean's interval."""

    results: Nested
    intervals: Intervals | None = None


def format_value(measure: str, value: float, digits: int | None) -> str:
    """A value as text: counts as integers, else full precision (repr) or `digits` decimals."""
    if math.isnan(value):
        return "nan"
    if measure in _COUNTS and float(value).is_integer():
        return str(int(value))
    return repr(float(value)) if digits is None else f"{value:.{digits}f}"


def _topics(per_measure: Mapping[str, Mapping[str, float]]) -> list[str]:
    """Every topic named under any measure, in first-seen order, without `all`."""
    seen: dict[str, None] = {}
    for values in per_measure.values():
        seen.update((t, None) for t in values if t != ALL)
    return list(seen)


def rows(results: Nested, *, per_topic: bool) -> list[tuple[str, str, str, float]]:
    """(run, measure, topic, value) rows: per topic (topic-major, as trec_eval -q) if asked, then the `all` rows."""
    out: list[tuple[str, str, str, float]] = []
    for run, per_measure in results.items():
        if per_topic:
            for topic in _topics(per_measure):
                out.extend((run, m, topic, v[topic]) for m, v in per_measure.items() if topic in v)
        out.extend((run, m, ALL, v[ALL]) for m, v in per_measure.items() if ALL in v)
    return out


def _interval(intervals: Intervals | None, run: str, measure: str, topic: str) -> Interval | None:
    """The interval printed on this row: only on a mean's `all` row, when intervals are asked for."""
    if intervals is None or topic != ALL:
        return None
    return intervals.get(run, {}).get(measure)


def _number(value: float | None) -> float | None:
    """A finite float, or None (JSON null) for NaN, infinities and None."""
    return None if value is None or not math.isfinite(value) else float(value)


def format_trec(
    results: Nested, *, per_topic: bool = False, digits: int | None = None, intervals: Intervals | None = None
) -> str:
    """trec_eval's `measure<TAB>topic<TAB>value` lines; with several runs each line starts with `run<TAB>`; with
    intervals a mean's `all` line ends `<TAB>ci_low<TAB>ci_high`."""
    several = len(results) > 1
    lines = []
    for run, measure, topic, value in rows(results, per_topic=per_topic):
        text = f"{measure}\t{topic}\t{format_value(measure, value, digits)}"
        interval = _interval(intervals, run, measure, topic)
        if interval is not None:
            text += f"\t{format_value(measure, interval.low, digits)}\t{format_value(measure, interval.high, digits)}"
        lines.append(f"{run}\t{text}" if several else text)
    return "\n".join(lines) + ("\n" if lines else "")


def format_json(results: Nested, *, per_topic: bool = True, intervals: Intervals | None = None) -> str:
    """JSON {run: {measure: {topic or "all": value}}} (NaN written as null); with intervals a mean's "all" is
    {"mean", "ci_low", "ci_high", "level", "method", "sampling"}."""
    clean: dict[str, dict[str, dict[str, object]]] = {}
    for run, per_measure in results.items():
        clean[run] = {}
        for m, values in per_measure.items():
            entry: dict[str, object] = {
                t: (None if math.isnan(v) else v) for t, v in values.items() if per_topic or t == ALL
            }
            interval = _interval(intervals, run, m, ALL)
            if interval is not None and ALL in entry:
                entry[ALL] = {
                    "mean": entry[ALL],
                    "ci_low": _number(interval.low),
                    "ci_high": _number(interval.high),
                    "level": interval.level,
                    "method": interval.method,
                    "sampling": interval.sampling,
                }
            clean[run][m] = entry
    return json.dumps(clean, indent=2) + "\n"


def format_csv(
    results: Nested, *, per_topic: bool = False, digits: int | None = None, intervals: Intervals | None = None
) -> str:
    """CSV with a header `run,measure,topic,value`; with intervals also `mean,ci_low,ci_high,level,method,sampling`,
    filled on a mean's `all` row (empty on per-topic rows and totals)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_HEADER if intervals is None else CSV_HEADER + CI_COLUMNS)
    for run, measure, topic, value in rows(results, per_topic=per_topic):
        row = [run, measure, topic, format_value(measure, value, digits)]
        if intervals is not None:
            interval = _interval(intervals, run, measure, topic)
            if interval is None:
                row += [""] * len(CI_COLUMNS)
            else:
                bounds = [_number(interval.low), _number(interval.high)]
                row += [row[3], *("" if b is None else format_value(measure, b, digits) for b in bounds),
                        repr(interval.level), interval.method, interval.sampling]  # fmt: skip
        writer.writerow(row)
    return buffer.getvalue()


def format_results(
    results: Nested,
    fmt: str,
    *,
    per_topic: bool = False,
    digits: int | None = None,
    intervals: Intervals | None = None,
) -> str:
    """Results in the named format: trec, json or csv (with each mean's interval when `intervals` is given)."""
    if fmt == "trec":
        return format_trec(results, per_topic=per_topic, digits=digits, intervals=intervals)
    if fmt == "json":
        return format_json(results, per_topic=per_topic, intervals=intervals)
    if fmt == "csv":
        return format_csv(results, per_topic=per_topic, digits=digits, intervals=intervals)
    raise ValueError(f"unknown output format {fmt!r} (trec, json or csv)")


def write_results(
    blocks: Iterable[Nested | Block],
    fmt: str,
    out: TextIO,
    *,
    several: bool,
    per_topic: bool = False,
    digits: int | None = None,
    ci: bool = False,
) -> None:
    """Write results block by block (runs evaluated a block at a time) as `format_results` writes them all at once.

    `several` says whether more than one run is written in all (trec lines then start with the run); the text is
    the same as `format_results` on the union of the blocks, each block flushed as soon as it is written. With `ci`
    the layout is the one with intervals (each `Block` carries its own).
    """
    if fmt not in ("trec", "json", "csv"):
        raise ValueError(f"unknown output format {fmt!r} (trec, json or csv)")
    first = True
    for item in blocks:
        block, intervals = (item.results, item.intervals) if isinstance(item, Block) else (item, None)
        if ci and intervals is None:
            intervals = {}
        if fmt == "trec":
            text = format_trec(block, per_topic=per_topic, digits=digits, intervals=intervals)
            if several and len(block) == 1:  # format_trec adds the run column only for several runs
                run = next(iter(block))
                text = "".join(f"{run}\t{line}\n" for line in text.splitlines())
        elif fmt == "csv":
            text = format_csv(block, per_topic=per_topic, digits=digits, intervals=intervals)
            text = text if first else text.split("\n", 1)[1]
        else:  # the members of one JSON object, indented as json.dumps(indent=2) indents them
            members = json.loads(format_json(block, per_topic=per_topic, intervals=intervals))
            text = "".join(
                ("{\n" if first and i == 0 else ",\n")
                + f"  {json.dumps(run)}: "
                + json.dumps(value, indent=2).replace("\n", "\n  ")
                for i, (run, value) in enumerate(members.items())
            )
            if members:
                first = False
        if fmt != "json":
            first = False
        out.write(text)
        out.flush()
    if fmt == "json":
        out.write("{}\n" if first else "\n}\n")
    elif fmt == "csv" and first:
        out.write(format_csv({}, intervals={} if ci else None))
