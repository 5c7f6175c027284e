"""trec_eval's printed lines: `%-22s\\t%s\\t%6.4f` for numbers, `%ld` for counts, `'%s'` for relstring.

With -q every evaluated topic prints its values first (gm_map, gm_bpref, num_q and runid print only in `all`,
relstring only per topic), then, unless -n, the `all` lines. With -Z (trec_eval's meas_print_single.c and
meas_print_final.c) every number is a z-score printed `Z%-22s\\t%s\\t%6.4f`, the counts too (num_ret, num_rel,
num_rel_ret, num_nonrel_judged_ret, num_q); runid and relstring print as without -Z.
"""

from __future__ import annotations

import math

from app.evaluation.trec_eval.engine import RunReport
from app.evaluation.trec_eval.table import COUNT, GEOMETRIC, LONG, RUNID, TEXT

_LONG_MIN = -(2**63)


def c_float(value: float) -> str:
    """printf's %6.4f (glibc): nan and inf with their sign, right-aligned in 6."""
    if math.isnan(value):
        text = "-nan" if math.copysign(1.0, value) < 0 else "nan"
        return f"{text:>6}"
    return f"{value:6.4f}"


def c_long(value: float) -> str:
    """printf's %ld of C's (long) cast: truncation toward 0 (x86's LONG_MIN when it does not fit)."""
    if math.isnan(value) or math.isinf(value) or not -(2.0**63) <= value < 2.0**63:
        return str(_LONG_MIN)
    return str(int(value))


def _number(prints: str, value: float, zscore: bool) -> str:
    """A value as trec_eval prints it: %ld for counts (unless -Z), else %6.4f."""
    return c_long(value) if prints in (LONG, COUNT) and not zscore else c_float(value)


def format_report(report: RunReport, *, per_topic: bool, summary: bool, zscore: bool = False) -> str:
    """The text trec_eval prints for one run (`zscore`: the values are -Z z-scores)."""
    prefix = "Z" if zscore else ""
    lines: list[str] = []
    if per_topic:
        for index, topic in enumerate(report.topics):
            for output in report.outputs:
                if output.prints in (GEOMETRIC, COUNT, RUNID):
                    continue
                if output.prints == TEXT:
                    lines.append(f"{output.name:<22}\t{topic}\t'{output.per_topic[index]}'\n")
                else:
                    value = _number(output.prints, float(output.per_topic[index]), zscore)
                    lines.append(f"{prefix}{output.name:<22}\t{topic}\t{value}\n")
    if summary:
        for output in report.outputs:
            if output.summary is None:
                continue
            if output.prints == RUNID:
                lines.append(f"{'runid':<22}\tall\t{output.summary}\n")
            else:
                value = _number(output.prints, float(output.summary), zscore)
                lines.append(f"{prefix}{output.name:<22}\tall\t{value}\n")
    return "".join(lines)
