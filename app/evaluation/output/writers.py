"""Writing {run: {measure: {topic or "all": value}}} results as trec_eval text, JSON or CSV."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Mapping
from typing import TextIO

Nested = Mapping[str, Mapping[str, Mapping[str, float]]]
ALL = "all"
_COUNTS = ("num_ret", "num_rel", "num_rel_ret", "num_q", "num_nonrel_judged_ret")


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


def format_trec(results: Nested, *, per_topic: bool = False, digits: int | None = None) -> str:
    """trec_eval's `measure<TAB>topic<TAB>value` lines; with several runs each line starts with `run<TAB>`."""
    several = len(results) > 1
    lines = []
    for run, measure, topic, value in rows(results, per_topic=per_topic):
        text = f"{measure}\t{topic}\t{format_value(measure, value, digits)}"
        lines.append(f"{run}\t{text}" if several else text)
    return "\n".join(lines) + ("\n" if lines else "")


def format_json(results: Nested, *, per_topic: bool = True) -> str:
    """JSON {run: {measure: {topic or "all": value}}} (NaN written as null)."""
    clean = {
        run: {
            m: {t: (None if math.isnan(v) else v) for t, v in values.items() if per_topic or t == ALL}
            for m, values in per_measure.items()
        }
        for run, per_measure in results.items()
    }
    return json.dumps(clean, indent=2) + "\n"


def format_csv(results: Nested, *, per_topic: bool = False, digits: int | None = None) -> str:
    """CSV with a header `run,measure,topic,value`."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["run", "measure", "topic", "value"])
    for run, measure, topic, value in rows(results, per_topic=per_topic):
        writer.writerow([run, measure, topic, format_value(measure, value, digits)])
    return buffer.getvalue()


def format_results(results: Nested, fmt: str, *, per_topic: bool = False, digits: int | None = None) -> str:
    """Results in the named format: trec, json or csv."""
    if fmt == "trec":
        return format_trec(results, per_topic=per_topic, digits=digits)
    if fmt == "json":
        return format_json(results, per_topic=per_topic)
    if fmt == "csv":
        return format_csv(results, per_topic=per_topic, digits=digits)
    raise ValueError(f"unknown output format {fmt!r} (trec, json or csv)")


def write_results(
    blocks: Iterable[Nested],
    fmt: str,
    out: TextIO,
    *,
    several: bool,
    per_topic: bool = False,
    digits: int | None = None,
) -> None:
    """Write results block by block (runs evaluated a block at a time) as `format_results` writes them all at once.

    `several` says whether more than one run is written in all (trec lines then start with the run); the text is
    the same as `format_results` on the union of the blocks, each block flushed as soon as it is written.
    """
    if fmt not in ("trec", "json", "csv"):
        raise ValueError(f"unknown output format {fmt!r} (trec, json or csv)")
    first = True
    for block in blocks:
        if fmt == "trec":
            text = format_trec(block, per_topic=per_topic, digits=digits)
            if several and len(block) == 1:  # format_trec adds the run column only for several runs
                run = next(iter(block))
                text = "".join(f"{run}\t{line}\n" for line in text.splitlines())
        elif fmt == "csv":
            text = format_csv(block, per_topic=per_topic, digits=digits)
            text = text if first else text.split("\n", 1)[1]
        else:  # the members of one JSON object, indented as json.dumps(indent=2) indents them
            members = json.loads(format_json(block, per_topic=per_topic))
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
        out.write(format_csv({}))
