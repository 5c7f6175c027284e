"""What `trecpool analyse KIND` prints for each kind: its tables (rich) and its notes (the pool depths it used, the
qrels lines it dropped...). A kind without an entry in `PRINTERS` gets `generic_table`: its result's top-level
numbers and words, the rest with `--format json`. Each function reads a `Shown`: the record, the parameters, the
`AnalysisData` read from the files and the `Computed` result (the core's result object and its JSON form).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from rich.console import Console
from rich.table import Table

from app.services.analysis_registry import Analysis, AnalysisData, Computed

if TYPE_CHECKING:
    from app.evaluation.analyses.depth_inference import PoolDepths


@dataclass
class Shown:
    """What a kind's tables and notes read: its record, parameters, data and result."""

    record: Analysis
    params: Any
    data: AnalysisData
    computed: Computed


Tables = Callable[[Console, Shown], None]
Notes = Callable[[Shown], list[str]]


def _fmt(value: float) -> str:
    """A number as the tables print it (nan for NaN)."""
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


def pool_depth_notes(shown: Shown) -> list[str]:
    """The pool depths used and the qrels lines outside every pooled run's top."""
    result = shown.computed.result
    notes = [] if result.pool is None else describe_pool_depths(result.pool, shown.data.depth)
    fate = "dropped at every depth" if result.outside == "drop" else "kept at every depth"
    residual = (result.residual_lines, result.residual_relevant, result.total_lines)
    return [*notes, describe_residual(*residual, fate, depth_known=result.pool is not None)]


def pool_depth_tables(console: Console, shown: Shown) -> None:
    """The lines and correlations at each depth; each run's score with the full qrels and at a few depths."""
    result = shown.computed.result
    shown_depths = _show_depths(result.depths)
    table = Table(title=f"Pool depth: {result.measure}, {len(result.pooled)} of {len(shown.data.runs)} runs pooled")
    for column in ("depth", "lines", "relevant", "tau_b", "tau_AP"):
        table.add_column(column, justify="right")
    for i in shown_depths:
        cells = (result.lines[i], result.relevant[i], _fmt(result.tau_b[i]), _fmt(result.tau_ap[i]))
        table.add_row(str(result.depths[i]), *map(str, cells))
    table.add_row("full", str(result.total_lines), str(result.total_relevant), "1.0000", "1.0000")
    console.print(table)
    runs_table = Table(title=f"{result.measure} per run (full qrels and selected depths)")
    runs_table.add_column("run")
    runs_table.add_column("full", justify="right")
    few = [i for i in shown_depths if result.depths[i] in (1, 5, 10, 20, 50, 100)] or shown_depths[:3]
    few = sorted(set(few) | {len(result.depths) - 1})
    for i in few:
        runs_table.add_column(f"d={result.depths[i]}", justify="right")
    for r in np.argsort(-result.full, kind="stable").tolist():
        runs_table.add_row(result.runs[r], _fmt(result.full[r]), *[_fmt(result.scores[i, r]) for i in few])
    console.print(runs_table)


def leave_out_notes(shown: Shown) -> list[str]:
    """The pool depths used and the qrels lines no unit could remove."""
    result = shown.computed.result
    total = 0 if shown.data.qrels is None else int(len(shown.data.qrels))
    residual = describe_residual(result.residual_lines, result.residual_relevant, total, "never removed")
    return [*describe_pool_depths(result.pool, shown.data.depth), residual]


def leave_out_tables(console: Console, shown: Shown) -> None:
    """Each unit's removed lines and tau_b; each run's score with its own unit left out."""
    result = shown.computed.result
    by_name = result.by
    title = f"Leave one {by_name} out: {result.measure}, pool depth {result.pool.describe()} ({result.depth_source})"
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


def _n_runs(shown: Shown) -> int:
    """The number of runs the analysis read."""
    return len(shown.data.runs)


def agreement_tables(console: Console, shown: Shown) -> None:
    """The tau_b and tau_AP matrices between measures."""
    data = shown.computed.data
    names = list(data["measures"])
    for key, title in (
        ("tau_b", f"Measure agreement (Kendall tau_b over {_n_runs(shown)} runs)"),
        ("tau_ap", "tau_AP (row = the reference measure's ranking, column = the ranking compared with it)"),
    ):
        table = Table(title=title)
        table.add_column("measure")
        for name in names:
            table.add_column(name, justify="right")
        for name, row in zip(names, data[key], strict=True):
            table.add_row(name, *[_fmt(v) for v in row])
        console.print(table)


def stability_tables(console: Console, shown: Shown) -> None:
    """Mean (variance) of tau_b per subset size, against the full set and between halves."""
    result, params = shown.computed.result, shown.params
    title = f"Stability: mean (variance) of tau_b, {params.trials} trials per size, seed {params.seed}"
    table = Table(title=f"{title}, {result.n_topics} topics, {_n_runs(shown)} runs")
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


def label_noise_tables(console: Console, shown: Shown) -> None:
    """Mean |change| per noise level (Fig. 7's numbers), then per run and measure."""
    result = shown.computed.result
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


def ties_tables(console: Console, shown: Shown) -> None:
    """The all-tied ratio per measure."""
    data = shown.computed.data
    n_topics = len(shown.data.scores.topics) if shown.data.scores is not None else 0
    table = Table(title=f"All-tied topics ({n_topics} topics, {_n_runs(shown)} runs)")
    table.add_column("measure")
    table.add_column("all-tied ratio", justify="right")
    table.add_column("topics", justify="right")
    for m, ratio in data["ratios"].items():
        table.add_row(m, _fmt(ratio), str(round(ratio * n_topics)))
    console.print(table)


def power_tables(console: Console, shown: Shown) -> None:
    """Discriminative power per measure."""
    data, params = shown.computed.data, shown.params
    table = Table(
        title=f"Discriminative power at alpha = {params.alpha:g} ({_n_runs(shown)} runs, B = {params.n_resamples})"
    )
    table.add_column("measure")
    table.add_column("power", justify="right")
    for m, value in data["power"].items():
        table.add_row(m, _fmt(value))
    console.print(table)


def judged_fraction_tables(console: Console, shown: Shown) -> None:
    """The judged share of the top d per depth."""
    result = shown.computed.result
    table = Table(title=f"Judged fraction of the top d ({len(result.runs)} runs)")
    for column in ("depth", "all runs", "lowest list", "highest list", "mean list"):
        table.add_column(column, justify="right")
    for i, depth in enumerate(result.depths.tolist()):
        cells = (result.overall[i], result.list_min[i], result.list_max[i], result.list_mean[i])
        table.add_row(str(depth), *[_fmt(v) for v in cells])
    console.print(table)


def qrels_versions_tables(console: Console, shown: Shown) -> None:
    """tau_b / tau_AP between the rankings under each version; overlap and kappa between the judgements."""
    result, data = shown.computed.result, shown.computed.data
    labels = [label for label, _ in shown.data.versions]
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


def swap_rate_tables(console: Console, shown: Shown) -> None:
    """Comparisons, swaps and the minimum detectable difference per topic-set size."""
    result, data, params = shown.computed.result, shown.computed.data, shown.params
    table = Table(
        title=f"Swap rate of {result.measure}: {params.trials} trials per size, seed {params.seed}, "
        f"{_n_runs(shown)} runs, {result.n_topics} topics"
    )
    for column in ("topics", "comparisons", "swaps", "minimum detectable difference"):
        table.add_column(column, justify="right")
    for entry in data["sizes"]:
        mdd = "none" if entry["mdd"] is None else f"{entry['mdd']:.4g}"
        table.add_row(str(entry["size"]), str(entry["comparisons"]), str(entry["swaps"]), mdd)
    console.print(table)


def topic_set_design_tables(console: Console, shown: Shown) -> None:
    """Topics needed per minimum detectable difference (t-test, ANOVA) and per CI width; what this campaign detects."""
    data = shown.computed.data

    def size(n: int | None) -> str:
        """A topic-set size (None: above the largest searched)."""
        return "> 10,000,000" if n is None else str(n)

    console.print(
        f"sigma^2 of {data['measure']} from {data['n_runs']} runs x {data['n_topics']} topics: "
        f"{data['sigma2_two_way']:.4g} (two-way ANOVA residual), {data['sigma2_one_way']:.4g} (pooled within-run); "
        f"the {data['variance']} one is used."
    )
    table = Table(title=f"Topics needed: alpha {data['alpha']:g}, power {1 - data['beta']:g}")
    for column in ("minD", "paired t-test", f"one-way ANOVA, m = {data['systems']}"):
        table.add_column(column, justify="right")
    for row in data["designs"]:
        table.add_row(f"{row['min_difference']:g}", size(row["t_test"]), size(row["anova"]))
    console.print(table)
    widths = Table(title=f"Topics for an expected {100 * (1 - data['alpha']):g} % CI width of a paired difference")
    for column in ("CI width delta", "topics"):
        widths.add_column(column, justify="right")
    for row in data["ci"]:
        widths.add_row(f"{row['ci_width']:g}", size(row["n"]))
    console.print(widths)
    now = data["current"]
    console.print(
        f"With this campaign's {now['n_topics']} topics: minD {_fmt_num(now['t_test_min_difference'])} (t-test), "
        f"{_fmt_num(now['anova_min_difference'])} (ANOVA) found with power {1 - data['beta']:g}; expected CI width "
        f"{_fmt_num(now['ci_width'])}."
    )


def type_significance_tables(console: Console, shown: Shown) -> None:
    """Per run type: the tested runs, their means and the runs each is significantly better than."""
    result, params = shown.computed.result, shown.params
    measure = shown.computed.data["measure"]
    for group in result.types:
        table = Table(title=f"Run type {group.label}: {params.method}, alpha {params.alpha:g}")
        for column in ("run", measure, "significantly better than"):
            table.add_column(column, justify="right" if column == measure else "left")
        for run, mean in zip(group.runs, group.means.tolist(), strict=True):
            worse = [b for a, b in group.better if a == run]
            table.add_row(run, _fmt(mean), ", ".join(worse))
        console.print(table)


def novelty_tables(console: Console, shown: Shown) -> None:
    """Unique and all relevant found per team."""
    data = shown.computed.data
    table = Table(title=f"Unique relevant: {data['unique']} of {data['found']} relevant found by one team only")
    for column in ("team", "unique", "relevant found"):
        table.add_column(column, justify="left" if column == "team" else "right")
    for row in data["teams"]:
        table.add_row(row["team"], str(row["unique"]), str(row["hits"]))
    console.print(table)


def run_vs_median_tables(console: Console, shown: Shown) -> None:
    """Topics above the median and at the best, per run."""
    result = shown.computed.result
    table = Table(title=f"{result.measure}: topics above the median and at the best, per run")
    for column in ("run", "above median", "at best", "topics"):
        table.add_column(column, justify="left" if column == "run" else "right")
    for name in result.runs:
        chart = result.run(name)
        table.add_row(name, str(chart["above_median"]), str(chart["at_best"]), str(len(result.topics)))
    console.print(table)


def efficiency_tables(console: Console, shown: Shown) -> None:
    """Each run's score and seconds, the runs no other beats on both, Spearman's rho."""
    result, data = shown.computed.result, shown.computed.data
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


def strata_tables(console: Console, shown: Shown) -> None:
    """Pooled, judged and relevant per stratum."""
    data = shown.computed.data
    title = f"Strata ({len(data['topics'])} topics, {data['inferred_relevant']:.1f} inferred relevant)"
    table = Table(title=title)
    for column in ("stratum", "pooled", "judged", "relevant", "judged share", "relevant share"):
        table.add_column(column, justify="right")
    for s in data["strata"]:
        shares = [_fmt_num(s["judged_share"]), _fmt_num(s["relevant_share"])]
        table.add_row(str(s["stratum"]), str(s["pooled"]), str(s["judged"]), str(s["relevant"]), *shares)
    console.print(table)


def moment_effectiveness_tables(console: Console, shown: Shown) -> None:
    """Each system's mean under every measure, sorted."""
    result = shown.computed.result
    table = Table(title=f"Systems by measure, sorted by {result.sort_by}")
    table.add_column("run")
    for m in result.measures:
        table.add_column(m, justify="right")
    for r, run in enumerate(result.runs):
        table.add_row(run, *[_fmt(v) for v in result.scores[r]])
    console.print(table)


def budget_tables(console: Console, shown: Shown) -> None:
    """Each run's estimated mean xinfAP with its interval, then the advice and what to judge next."""
    data = shown.computed.data
    strata = ", ".join(f"{s['first']}-{s['last']}:{s['share']:g}" for s in data["strata"])
    table = Table(title=f"Runs ({strata}, seed {data['seed']}: {data['judged']} of {data['pooled']} pooled judged)")
    for column in ("run", "xinfAP", "mean", "ci_low", "ci_high"):
        table.add_column(column, justify="left" if column == "run" else "right")
    for r in sorted(data["runs"], key=lambda r: -(r["mean"] if r["mean"] is not None else -1.0)):
        table.add_row(r["run"], *[_fmt_num(r[k]) for k in ("xinfap", "mean", "ci_low", "ci_high")])
    console.print(table)
    advice = data["advice"]
    console.print(f"expected tau_b {_fmt_num(data['expected_tau'])} (target {_fmt_num(data['target_tau'])}); "
                  f"advice: {advice['advice']}", highlight=False)  # fmt: skip
    for reason in advice["reasons"]:
        console.print(f"  {reason}", highlight=False, soft_wrap=True)
    if advice["next"]:
        upcoming = Table(title=f"Judge next ({advice['more_total']} in all; the first 20)")
        for column in ("topic", "stratum", "more"):
            upcoming.add_column(column, justify="right")
        for item in advice["next"][:20]:
            upcoming.add_row(str(item["topic"]), str(item["stratum"]), str(item["more"]))
        console.print(upcoming)


def machine_agreement_tables(console: Console, shown: Shown) -> None:
    """The model judge against people: kappa and base rates, the confusion matrix, the taus, each run's shift."""
    data = shown.computed.data
    judgements, rankings, labels = data["judgements"], data["rankings"], data["labels"]
    summary = Table(title=f"{labels['model']} (model) against {labels['human']} (human), {data['measure']}")
    summary.add_column("")
    summary.add_column("value", justify="right")
    kappa, base = judgements["kappa"], judgements["base_rate"]
    rows = [
        ("items judged by both", str(judgements["common"])),
        ("kappa (unweighted)", _fmt_num(kappa["none"])),
        ("kappa, linear weights", _fmt_num(kappa["linear"])),
        ("kappa, quadratic weights", _fmt_num(kappa["quadratic"])),
        ("relevant share, human", _fmt_num(base["human"])),
        ("relevant share, model", _fmt_num(base["model"])),
        ("tau_b", _fmt_num(rankings["tau_b"])),
        ("tau_AP (human = truth)", _fmt_num(rankings["tau_ap"])),
        (f"tau_b among the human top {rankings['top_k']}", _fmt_num(rankings["tau_b_top"])),
    ]
    for row in rows:
        summary.add_row(*row)
    console.print(summary)
    confusion = Table(title="Confusion matrix: human grade (rows) x model grade (columns)")
    confusion.add_column("human \\ model")
    for grade in judgements["grades"]:
        confusion.add_column(str(grade), justify="right")
    for grade, counts in zip(judgements["grades"], judgements["confusion"], strict=True):
        confusion.add_row(str(grade), *(str(c) for c in counts))
    console.print(confusion)
    level = data["shifts"]["interval"]["level"]
    shifts = Table(
        title=f"{data['measure']} per run: human, model, shift (model - human) with its {level:.0%} interval"
    )
    for column in ("run", "human", "model", "shift", "interval"):
        shifts.add_column(column, justify="left" if column == "run" else "right")
    for row in data["shifts"]["runs"]:
        interval = f"{_fmt_num(row['ci_low'])}..{_fmt_num(row['ci_high'])}"
        shifts.add_row(row["run"], _fmt_num(row["human"]), _fmt_num(row["model"]), _fmt_num(row["shift"]), interval)
    console.print(shifts)


def _plain(value: Any) -> bool:
    """Whether a result entry is one number or word (printed by the generic table)."""
    return value is None or isinstance(value, str | int | float | bool)


def generic_table(console: Console, shown: Shown) -> None:
    """A kind without tables of its own: its result's top-level numbers and words (the rest: --format json)."""
    data = shown.computed.data
    table = Table(title=f"{shown.record.name}: {shown.record.description}")
    table.add_column("")
    table.add_column("value", justify="right")
    for key, value in data.items():
        if _plain(value):
            table.add_row(str(key), _fmt(value) if isinstance(value, float) else str(value))
    console.print(table)
    rest = [str(key) for key, value in data.items() if not _plain(value)]
    if rest:
        console.print(f"and {', '.join(rest)}: see --format json or --output FILE")


@dataclass(frozen=True)
class Printer:
    """A kind's tables and, if it has any, its notes."""

    tables: Tables
    notes: Notes | None = None


PRINTERS: dict[str, Printer] = {
    "pool-depth": Printer(pool_depth_tables, pool_depth_notes),
    "leave-out": Printer(leave_out_tables, leave_out_notes),
    "agreement": Printer(agreement_tables),
    "stability": Printer(stability_tables),
    "label-noise": Printer(label_noise_tables),
    "ties": Printer(ties_tables),
    "power": Printer(power_tables),
    "judged-fraction": Printer(judged_fraction_tables),
    "qrels-versions": Printer(qrels_versions_tables),
    "swap-rate": Printer(swap_rate_tables),
    "topic-set-design": Printer(topic_set_design_tables),
    "type-significance": Printer(type_significance_tables),
    "novelty": Printer(novelty_tables),
    "run-vs-median": Printer(run_vs_median_tables),
    "efficiency": Printer(efficiency_tables),
    "strata": Printer(strata_tables),
    "moment-effectiveness": Printer(moment_effectiveness_tables),
    "budget": Printer(budget_tables),
    "machine-agreement": Printer(machine_agreement_tables),
}


def printer(kind: str) -> tuple[Tables, Notes | None]:
    """The kind's tables and notes (the generic table, no notes, for a kind without its own)."""
    chosen = PRINTERS.get(kind, Printer(generic_table))
    return chosen.tables, chosen.notes
