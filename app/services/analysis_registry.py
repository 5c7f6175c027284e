"""The analysis registry: every analysis kind as one record, from which the CLI, the REST API and the docs are made.

In the style of the measure registry (`app/evaluation/measures/registry.py`): an `Analysis` says what the kind
computes and where it comes from (one-line description, the paper and figure it reproduces), takes a typed parameter
model (names, types, bounds, defaults and a description per field, as ir_measures' ParamInfo), names its core
function and its figure, and says what it reads (`reads`, `needs`) and for which campaigns (`task_kinds`). Its
`compute` maps the parameters onto the core once, for both the places that run it:

- `trecpool analyse KIND` (app/cli/analyse.py) builds each command from the record: its options from the model's
  fields (a field's `Option` says where it differs from `--the-name`), its arguments from `reads` and `needs`; it
  reads files into an `AnalysisData` and prints the result (tables in app/cli/analysis_tables.py, a generic table
  for a kind without one). `trecpool analyses` lists the records.
- `POST /api/campaigns/{id}/analyses` (app/api/analyses.py) validates `params` with the kind's model and documents
  the request body as one schema per kind; the job (app/services/analyses.py) reads the campaign's stored data into
  an `AnalysisData`.
- The README's analysis table is `markdown_table()` (tests/services/test_analysis_registry.py compares them).

To add an analysis: write its computation in `app/evaluation/analyses/`, its figure in `app/figures/` (listed in
`app.figures.analyses.LOOKUP`), and here its parameter model, its `compute` and one `Analysis` in `ANALYSES`.

This module stays light (pydantic and numpy): `trecpool analyse --help` imports it, so the core analyses (scipy) and
the figures (matplotlib) are imported only when an analysis runs or draws.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic.fields import FieldInfo

from app.services.inputs import Text

if TYPE_CHECKING:
    from app.evaluation.analyses.pooled_lines import RunBlocks
    from app.evaluation.grading.prepared_runs import PreparedRuns
    from app.evaluation.moments import MomentGroundTruth, MomentRunTable
    from app.evaluation.records import Qrels

Progress = Callable[[float], None]
Reads = Literal["scores", "runs", "qrels", "qrels-versions", "moment-runs"]
Need = Literal["units", "pool", "times"]
TASK_KINDS = ("shots", "moments")

# What each `reads` means, for the listing and the docs.
READS: dict[str, str] = {
    "scores": "per-topic scores: the evaluation's (REST), or QRELS RUN... evaluated (CLI; with --moments GROUND_TRUTH "
    "moment RUN...)",
    "runs": "the qrels and the runs, re-scored (REST: the evaluation's; CLI: QRELS RUN...)",
    "qrels": "the qrels alone (REST: the evaluation's; CLI: QRELS)",
    "qrels-versions": "several qrels versions and the runs (REST: qrels_version_ids; CLI: --qrels FILE ... RUN...)",
    "moment-runs": "moment runs and their ground truth (REST: the evaluation's; CLI: RUN... --moments GROUND_TRUTH)",
}
NEEDS: dict[str, str] = {
    "units": "each run's team or type (REST: the campaign's; CLI: --groups run_groups.tsv)",
    "pool": "which runs were pooled and to what depth (REST: the pool's, or pooled_runs/depth; CLI: --groups' "
    "contributed column and --pool-depth N|FILE)",
    "times": "each run's processing time (REST: the runs' XML metadata; CLI: --times run<TAB>seconds)",
}

READS_SHORT = {
    "scores": "scores",
    "runs": "qrels and runs",
    "qrels": "qrels",
    "qrels-versions": "qrels versions (CLI `--qrels`) and runs",
    "moment-runs": "moment runs and ground truth",
}
NEEDS_SHORT = {
    "units": "teams or run types (CLI `--groups`)",
    "pool": "the pooled runs and depth (CLI `--groups`, `--pool-depth`)",
    "times": "processing times (REST: the XML runs'; CLI `--times`)",
}


# ---------------------------------------------------------------------------------------------------------------------
# Parameters: typed fields, with how the CLI spells them where it differs and the default in words where it depends
# on the data


@dataclass(frozen=True)
class Option:
    """How a parameter appears on `trecpool analyse`, where it differs from `--the-name` taking one value.

    `names` replaces the option's names; `parse` reads its text (e.g. ranges of sizes), with `syntax` saying how to
    write it; `rest_only` leaves it out of the command, which reads the same thing from its files instead."""

    names: tuple[str, ...] = ()
    parse: Callable[[str], object] | None = None
    syntax: str = ""
    rest_only: bool = False


REST_ONLY = Option(rest_only=True)


@dataclass(frozen=True)
class Default:
    """A default that depends on the data (the field's value is then None), in words."""

    words: str


def parse_sizes(text: str) -> list[int]:
    """Sizes from '10,20,50,100-1800:100' (lists, ranges a-b, ranges with a step a-b:s)."""
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
            raise ValueError(f"{part!r} is not a size, a range a-b or a range with a step a-b:s") from None
    return sorted(sizes)


SEED_MAX = 2**32 - 1  # numpy's legacy seed range, and plenty for reproducibility
MeasureName = Annotated[Text, Field(min_length=1, max_length=100)]
Measures = Annotated[list[MeasureName], Field(min_length=1, max_length=50)]
RunName = Annotated[Text, Field(min_length=1, max_length=200)]
Size = Annotated[int, Field(ge=1, le=10_000_000)]
Sizes = Annotated[list[Size], Option(parse=parse_sizes, syntax="a list and ranges, e.g. 10,20,100-1800:100")]
Sigma = Annotated[float, Field(ge=0, le=1e6, allow_inf_nan=False)]
Seed = Annotated[int, Field(ge=0, le=SEED_MAX, description="random seed")]
Resamples = Annotated[
    int, Option(("--resamples",)), Field(ge=100, le=1_000_000, description="resamples B of the randomization test")
]
Alpha = Annotated[float, Field(gt=0, lt=1, allow_inf_nan=False, description="significance level")]

PoolDepthGiven = (
    Annotated[int, Field(ge=1, le=100_000)]
    | Annotated[
        dict[Annotated[Text, Field(min_length=1, max_length=64)], Annotated[int, Field(ge=1, le=100_000)]],
        Field(min_length=1, max_length=100_000),
    ]
)
POOL_DEPTH = (
    "the pool depth k: one for every topic, or per topic {topic: k} (the topics it does not name keep the pool's, "
    "else are inferred); the CLI's --pool-depth N|FILE takes either"
)
WESTERVELD = "Westerveld, TRECVID reusability study"
AXIOU = "AxIoU paper (Togashi et al., CVPR 2022)"

LEADERBOARD_MEASURE = Default("the leaderboard's: AP (xinfAP for stratified qrels; AxIoU@10 for moments)")
RESCORED_MEASURE = Default("AP (xinfAP for stratified qrels)")
ALL_BUT_COUNTS = Default(
    "every measure of the evaluation (of `trecpool eval`) but the counts (num_ret, num_rel, num_rel_ret, inum_rel, "
    "...), which rank no systems"
)
POOLED_RUNS = (
    "the runs that contributed to the pool, for imported qrels (a pool records its own); the CLI reads them from "
    "--groups' contributed column"
)


def _with_default_words(schema: dict[str, Any], model: type) -> None:
    """Each property's description ends with its default in words when that depends on the data (JSON schema)."""
    fields: dict[str, FieldInfo] = getattr(model, "model_fields", {})
    for name, prop in schema.get("properties", {}).items():
        words = default_words(fields[name]) if name in fields else ""
        if words and fields[name].default is None:
            prop["description"] = f"{prop.get('description', '')} (default: {words})".lstrip()


class AnalysisParams(BaseModel):
    """Base of the per-kind parameters: unknown names are errors."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_with_default_words)


class OneOrManyMeasures(AnalysisParams):
    """`measure` or `measures`, not both (one would be ignored)."""

    @model_validator(mode="after")
    def _not_both(self) -> OneOrManyMeasures:
        """Refuse `measure` together with `measures`."""
        if getattr(self, "measure", None) is not None and getattr(self, "measures", None) is not None:
            raise ValueError("give measure or measures, not both")
        return self


# ---------------------------------------------------------------------------------------------------------------------
# What an analysis reads and gives back, whoever runs it


@dataclass(frozen=True)
class Scores:
    """Per-topic scores: values[run, measure, topic] (NaN where the evaluation has none) and means[run, measure]."""

    runs: list[str]
    measures: list[str]
    topics: list[str]
    values: np.ndarray
    means: np.ndarray


Units = Callable[[str], tuple[str, list[str]]]  # "team", "type", "run", "system_type"... -> (its label, per run)


@dataclass
class AnalysisData:
    """What an analysis reads, gathered by the CLI from files or by a job from the campaign's stored data: the fields
    its record's `reads` and `needs` name are set."""

    runs: list[str]  # the run names, in the order of every per-run array
    max_results: int = 1000
    scores: Scores | None = None  # reads "scores"
    qrels: Qrels | None = None  # reads "runs" and "qrels"
    qrels_label: str | None = None  # the qrels version's label (jobs)
    prepared: PreparedRuns | None = None  # reads "runs" and "qrels-versions": the runs ranked and cut
    blocks: RunBlocks | None = None  # reads "runs" (jobs): the runs a block at a time
    versions: list[tuple[str, Qrels]] = field(default_factory=list)  # reads "qrels-versions": (label, qrels)
    truth: MomentGroundTruth | None = None  # reads "moment-runs"
    moment_runs: list[MomentRunTable] = field(default_factory=list)
    units: Units | None = None  # needs "units"
    pooled: list[str] | None = None  # needs "pool": the pooled runs (None: all)
    depth: int | dict[str, int] | None = None  # needs "pool": the depth given (one, or per topic), None: inferred
    depth_source: str = "given"  # where a depth given came from: "given" or "pool"
    seconds: dict[str, float] = field(default_factory=dict)  # needs "times": mean seconds per topic, by run

    def score_table(self) -> Scores:
        """The scores (an analysis that reads "scores" has them)."""
        if self.scores is None:
            raise ValueError("this analysis needs scores")
        return self.scores

    def run_blocks(self) -> RunBlocks:
        """The runs as blocks: the job's blocks, or the prepared runs as one block (CLI)."""
        from app.evaluation.analyses.pooled_lines import OneBlock

        if self.blocks is not None:
            return self.blocks
        if self.prepared is None:
            raise ValueError("this analysis needs the runs")
        return OneBlock(self.prepared)

    def judged_blocks(self) -> tuple[Qrels, RunBlocks]:
        """The qrels and the runs as blocks (an analysis that reads "runs" has them)."""
        if self.qrels is None:
            raise ValueError("this analysis needs qrels and runs")
        return self.qrels, self.run_blocks()

    def unit_of_runs(self, which: str) -> tuple[str, list[str]]:
        """Each run's `which` (team, type, ...) and the name to report it under."""
        if which == "run":
            return "run", list(self.runs)
        if self.units is None:
            raise ValueError("this analysis needs each run's team or type")
        return self.units(which)


@dataclass
class Computed:
    """An analysis's result: its JSON form (what a job stores, `--format json` prints and the figure draws), the
    core's result object (the CLI's tables read it) and what it has to say (the CLI prints it)."""

    data: dict[str, Any]
    result: Any = None
    notes: list[str] = field(default_factory=list)


Compute = Callable[[AnalysisData, Any, Progress], Computed]


@dataclass(frozen=True)
class Analysis:
    """One analysis kind: what it computes and reproduces, its parameters, what it reads, its core and its figure."""

    name: str  # the kind, e.g. "swap-rate": the CLI command and the REST `kind`
    description: str  # one line
    reproduces: str  # the paper and figure (or table) it reproduces
    params: type[AnalysisParams]
    compute: Compute  # parameters and data onto the core function
    core: str  # the core function, as module.function (listed; tests import it)
    figure: str  # its figure's name in app.figures.analyses.LOOKUP
    reads: Reads
    task_kinds: tuple[str, ...] = TASK_KINDS  # the campaigns it applies to: "shots", "moments"
    measures: Literal["one", "readable", "every"] = "one"  # reads "scores": the measures read when none is named
    needs: tuple[Need, ...] = ()  # "units" (team or type of each run), "pool" (pooled runs, depth), "times"
    # scores the runs only under subsets of the evaluation's qrels: the runs kept from the first pass of its blocks
    # hold only the pairs those qrels judge (`lines.judged_only`)
    cuts_qrels: bool = False
    figure_per_run: bool = False  # the figure draws one run (REST `?run=`, CLI `--run`)
    step: str = ""  # what the CLI's progress bar says while it computes (default: the kind)


ANALYSES: dict[str, Analysis] = {}  # every analysis, by kind, in the order registered


def register(record: Analysis) -> Analysis:
    """Add an analysis to the registry (ValueError if its kind is taken)."""
    if record.name in ANALYSES:
        raise ValueError(f"analysis {record.name!r} is registered already")
    ANALYSES[record.name] = record
    return record


def _measure_of(scores: Scores) -> str:
    """The one measure of a one-measure analysis."""
    return scores.measures[0]


# ---------------------------------------------------------------------------------------------------------------------
# The analyses


class PoolDepthParams(AnalysisParams):
    """Parameters of the pool-depth analysis."""

    measure: Annotated[MeasureName | None, RESCORED_MEASURE] = Field(
        default=None, description="the measure re-scored at each depth"
    )
    max_depth: Annotated[int | None, Default("min(100, the pool's deepest topic)")] = Field(
        default=None, ge=1, le=1000, description="the pool is cut at depths 1..max_depth"
    )
    outside: Literal["drop", "keep"] = Field(
        default="drop",
        description="the qrels lines outside every pooled run's top (its topic's pool depth: a residual collection): "
        "dropped at every depth, or kept",
    )
    depth: Annotated[
        PoolDepthGiven | None,
        REST_ONLY,
        Default("the pool's own (per topic when it has per-topic depths); for imported qrels each topic's, inferred"),
    ] = Field(default=None, description=POOL_DEPTH)
    pooled_runs: Annotated[list[RunName] | None, REST_ONLY, Default("the priority-1 runs")] = Field(
        default=None, min_length=1, max_length=10_000, description=POOLED_RUNS
    )


def _pool_depth(data: AnalysisData, params: PoolDepthParams, progress: Progress) -> Computed:
    """Cut the pool at each depth, per topic within its own pool depth (given, the pool's, or inferred)."""
    from app.evaluation.analyses import pool_depth
    from app.evaluation.analyses.lines import fast_ap, run_mask
    from app.evaluation.analyses.pooled_lines import pooled_lines

    qrels, blocks = data.judged_blocks()
    notes = []
    mask = run_mask(blocks.names, data.pooled)
    measure = params.measure or ("xinfAP" if qrels.stratified else "AP")
    # none pooled: pool_depth says so; AP with every run pooled: the runs' relevant entries kept, read once
    lines = pooled_lines(blocks, qrels, mask, kernel=fast_ap(measure)) if mask.any() else None
    pool = None
    if lines is not None:
        try:
            pool = lines.pool_depths(data.depth, given_source=data.depth_source)
        except ValueError as exc:
            if data.depth is not None:
                raise
            notes.append(f"{exc}. Depths 1..100 are cut from the pooled runs' whole lists.")
    deepest = None if pool is None else int(pool.depths.max(initial=0))
    result = pool_depth(
        qrels,
        blocks,
        measure=measure,
        pooled=data.pooled,
        max_depth=params.max_depth or min(100, max(100 if deepest is None else deepest, 1)),
        max_results=data.max_results,
        outside=params.outside,
        pool=pool,
        lines=lines,
        progress=progress,
    )
    return Computed({**result.to_dict(), "pool_depth": deepest}, result, notes)


register(
    Analysis(
        name="pool-depth",
        description="Rank correlation with the full qrels of pools cut at depths 1..D, each topic within its depth.",
        reproduces=f"{WESTERVELD}, Fig. 2 (scores per run, full pool vs each depth) and Fig. 3 (Kendall tau vs depth)",
        params=PoolDepthParams,
        compute=_pool_depth,
        core="app.evaluation.analyses.pool_depth.pool_depth",
        figure="pool-depth",
        reads="runs",
        task_kinds=("shots",),
        needs=("pool",),
        cuts_qrels=True,
        step="cutting the pool at each depth",
    )
)


class LeaveOutParams(AnalysisParams):
    """Parameters of the leave-out analysis."""

    measure: Annotated[MeasureName | None, RESCORED_MEASURE] = Field(default=None, description="the measure re-scored")
    by: Literal["run", "team", "type"] = Field(
        default="team", description="the unit left out: run, team ('group' names it too) or run type"
    )
    depth: Annotated[
        PoolDepthGiven | None,
        REST_ONLY,
        Default("the pool's own; for imported qrels each topic's, inferred from the qrels (and reported)"),
    ] = Field(default=None, description=POOL_DEPTH)
    pooled_runs: Annotated[list[RunName] | None, REST_ONLY, Default("the priority-1 runs")] = Field(
        default=None, min_length=1, max_length=10_000, description=POOLED_RUNS
    )

    @field_validator("by", mode="before")
    @classmethod
    def _group_is_team(cls, value: object) -> object:
        """'group' (Westerveld's word, the groups file's) names the same unit as 'team'."""
        return "team" if value == "group" else value


def _leave_out(data: AnalysisData, params: LeaveOutParams, progress: Progress) -> Computed:
    """Leave each unit out: remove the qrels lines only it contributed within each topic's pool depth, re-score."""
    from app.evaluation.analyses import leave_out

    qrels, blocks = data.judged_blocks()
    _, units = data.unit_of_runs(params.by)
    result = leave_out(
        qrels,
        blocks,
        units=units,
        by=params.by,
        measure=params.measure or ("xinfAP" if qrels.stratified else "AP"),
        pooled=data.pooled,
        depth=data.depth,
        depth_source=data.depth_source,
        max_results=data.max_results,
        progress=progress,
    )
    return Computed(result.to_dict(), result)


register(
    Analysis(
        name="leave-out",
        description="Each run, team or run type left out: its runs re-scored without the qrels lines only it gave.",
        reproduces=f"{WESTERVELD}, Fig. 4 (leave one group out); Zobel's leave-one-run-out",
        params=LeaveOutParams,
        compute=_leave_out,
        core="app.evaluation.analyses.leave_out.leave_out",
        figure="leave-out",
        reads="runs",
        task_kinds=("shots",),
        needs=("units", "pool"),
        cuts_qrels=True,
        step="leaving each unit out",
    )
)


class AgreementParams(AnalysisParams):
    """Parameters of the agreement analysis."""

    measures: Annotated[list[MeasureName] | None, ALL_BUT_COUNTS] = Field(
        default=None, min_length=2, max_length=50, description="the measures compared (at least 2)"
    )


def _agreement(data: AnalysisData, params: AgreementParams, progress: Progress) -> Computed:
    """Kendall's tau_b and tau_AP between the run orders of every pair of measures."""
    from app.evaluation.analyses import agreement_result

    scores = data.score_table()
    result = agreement_result(scores.measures, scores.means)
    return Computed(result, result)


register(
    Analysis(
        name="agreement",
        description="Kendall's tau_b (and tau_AP) between the run orders of every pair of measures.",
        reproduces=f"{AXIOU}, Fig. 4 (tau_b between measures), with tau_AP beside it (row = the reference measure)",
        params=AgreementParams,
        compute=_agreement,
        core="app.evaluation.analyses.measure_agreement.agreement_result",
        figure="agreement",
        reads="scores",
        measures="readable",
        step="comparing the rankings",
    )
)


class StabilityParams(OneOrManyMeasures):
    """Parameters of the stability analysis."""

    measure: Annotated[MeasureName | None, REST_ONLY, LEADERBOARD_MEASURE] = Field(
        default=None, description="one measure (or give measures)"
    )
    measures: Annotated[Measures | None, Default("[measure], else the leaderboard's")] = Field(
        default=None, description="the measures"
    )
    trials: int = Field(default=5000, ge=1, le=10_000, description="random topic subsets per size (the AxIoU paper's)")
    seed: Seed = 0
    sizes: Annotated[Sizes | None, Default("1..n, or 100 evenly spaced sizes above 100 topics")] = Field(
        default=None,
        min_length=1,
        max_length=1000,
        description="the subset sizes; each trial draws one random order of the topics, its subset of size s is the "
        "first s topics and the other half the next s",
    )


def _stability(data: AnalysisData, params: StabilityParams, progress: Progress) -> Computed:
    """Run orders on random topic subsets against the full order and against the disjoint other half."""
    from app.evaluation.analyses import stability

    scores = data.score_table()
    values = np.nan_to_num(scores.values)  # a topic a run lacks scores 0, as in the means
    result = stability(
        values, scores.measures, trials=params.trials, seed=params.seed, sizes=params.sizes, progress=progress
    )
    return Computed(result.to_dict(), result)


register(
    Analysis(
        name="stability",
        description="Run orders on random topic subsets against the full order and against the disjoint other half.",
        reproduces=f"{AXIOU}, Fig. 6 (mean and variance of tau_b vs topic subset size; split halves as Voorhees "
        "& Buckley), and of tau_AP",
        params=StabilityParams,
        compute=_stability,
        core="app.evaluation.analyses.stability.stability",
        figure="stability",
        reads="scores",
        step="random topic subsets",
    )
)


class TiesParams(AnalysisParams):
    """Parameters of the ties analysis."""

    measures: Annotated[Measures | None, ALL_BUT_COUNTS] = Field(default=None, description="the measures")


def _ties(data: AnalysisData, params: TiesParams, progress: Progress) -> Computed:
    """The share of topics on which every run scores the same, per measure."""
    from app.evaluation.analyses import ties_result

    scores = data.score_table()
    result = ties_result(scores.measures, scores.values)
    return Computed(result, result)


register(
    Analysis(
        name="ties",
        description="The share of topics on which every run scores the same, per measure.",
        reproduces="AxIoU supplement, Fig. 1 (all-tied query ratio)",
        params=TiesParams,
        compute=_ties,
        core="app.evaluation.analyses.ties.ties_result",
        figure="ties",
        reads="scores",
        measures="readable",
    )
)


class PowerParams(OneOrManyMeasures):
    """Parameters of the discriminative power analysis."""

    measure: Annotated[MeasureName | None, REST_ONLY, LEADERBOARD_MEASURE] = Field(
        default=None, description="one measure (or give measures)"
    )
    measures: Annotated[Measures | None, Default("[measure], else the leaderboard's")] = Field(
        default=None, description="the measures"
    )
    alpha: Alpha = 0.05
    n_resamples: Resamples = 10_000
    seed: Seed = 0


def _power(data: AnalysisData, params: PowerParams, progress: Progress) -> Computed:
    """The share of run pairs a paired randomization test separates, per measure."""
    from app.evaluation.analyses import power_result

    scores = data.score_table()
    result = power_result(
        scores.runs,
        scores.measures,
        np.nan_to_num(scores.values),
        alpha=params.alpha,
        n_resamples=params.n_resamples,
        seed=params.seed,
        progress=progress,
    )
    return Computed(result, result)


register(
    Analysis(
        name="power",
        description="Discriminative power: the share of run pairs a paired randomization test separates at alpha.",
        reproduces="no figure of the papers: SPEC section 6's discriminative power",
        params=PowerParams,
        compute=_power,
        core="app.evaluation.analyses.power.power_result",
        figure="power",
        reads="scores",
        step="randomization tests",
    )
)


class LabelNoiseParams(AnalysisParams):
    """Parameters of the label-noise analysis."""

    measures: Measures = Field(
        default_factory=lambda: ["AxIoU@1", "AxIoU@5", "AxIoU@10", "R@1,0.5", "R@1,0.7", "R@5,0.5", "R@5,0.7"],
        description="the moment measures",
    )
    sigmas: Annotated[list[Sigma], Option(("--sigma",))] = Field(
        default_factory=lambda: [1.0, 2.0, 3.0, 4.0],
        min_length=1,
        max_length=20,
        description="noise levels in seconds: a noisy start is drawn from N(start, sigma) (the authors' notebook, "
        "riktor/vmr-axiou: 1, 2, 3, 4)",
    )
    trials: int = Field(default=100, ge=1, le=1000, description="noisy ground truths per level (the paper's)")
    raters: int = Field(default=5, ge=1, le=100, description="raters whose median boundaries make one noisy truth")
    seed: Seed = 0
    length: Literal["shifted", "exponential"] = Field(
        default="shifted",
        description="a noisy length: shifted, (e - s) + Exp(1) (SPEC 6 and the authors' notebook), or exponential",
    )


def _label_noise(data: AnalysisData, params: LabelNoiseParams, progress: Progress) -> Computed:
    """How far run means move when the ground-truth boundaries are perturbed."""
    from app.evaluation.analyses import label_noise
    from app.evaluation.moments import ground_truth_segments, parse_moment_measure, rank_moments

    if data.truth is None:
        raise ValueError("this analysis needs moment ground truth")
    specs = [parse_moment_measure(m) for m in params.measures]
    segments = ground_truth_segments(data.truth)
    ranked = rank_moments(segments, data.moment_runs, max(s.k for s in specs))
    result = label_noise(
        segments,
        ranked,
        params.measures,
        runs=data.runs,
        sigmas=params.sigmas,
        trials=params.trials,
        raters=params.raters,
        seed=params.seed,
        length=params.length,
        progress=progress,
    )
    return Computed(result.to_dict(), result)


register(
    Analysis(
        name="label-noise",
        description="How far run means move when the ground-truth moment boundaries are perturbed (|change|, RMSE).",
        reproduces=f"{AXIOU}, Fig. 7 (mean absolute change of a system's score vs noise level)",
        params=LabelNoiseParams,
        compute=_label_noise,
        core="app.evaluation.analyses.label_noise.label_noise",
        figure="label-noise",
        reads="moment-runs",
        task_kinds=("moments",),
        step="noisy ground truths",
    )
)


class JudgedFractionParams(AnalysisParams):
    """Parameters of the judged-fraction analysis."""

    depths: Annotated[
        list[Size] | None, Option(("--depth",)), Default("1, 2, 3, 5, 10, 20, 30, 50, 100, ... up to max_results")
    ] = Field(default=None, min_length=1, max_length=1000, description="the depths d")


def _judged_fraction(data: AnalysisData, params: JudgedFractionParams, progress: Progress) -> Computed:
    """The judged share of every run's top d, for each depth d."""
    from app.evaluation.analyses.judged_depth import judged_fraction

    qrels, blocks = data.judged_blocks()
    result = judged_fraction(qrels, blocks, depths=params.depths, max_results=data.max_results)
    return Computed(result.to_dict(), result)


register(
    Analysis(
        name="judged-fraction",
        description="The judged share of every run's top d, for each depth d.",
        reproduces="Westerveld, section 4.1 (judged share of each run's top d vs d)",
        params=JudgedFractionParams,
        compute=_judged_fraction,
        core="app.evaluation.analyses.judged_depth.judged_fraction",
        figure="judged-fraction",
        reads="runs",
        task_kinds=("shots",),
        step="judged share per depth",
    )
)


class QrelsVersionsParams(AnalysisParams):
    """Parameters of the qrels-versions analysis."""

    qrels_version_ids: Annotated[
        list[Annotated[int, Field(ge=1, le=2**31 - 1)]] | None, REST_ONLY, Default("every version of the campaign")
    ] = Field(
        default=None,
        min_length=2,
        max_length=20,
        description="the qrels versions compared, at least 2 (the CLI: --qrels FILE, repeated)",
    )
    measure: Annotated[MeasureName | None, Default("AP (xinfAP when every version is stratified)")] = Field(
        default=None, description="the measure re-scored under each version"
    )


def _qrels_versions(data: AnalysisData, params: QrelsVersionsParams, progress: Progress) -> Computed:
    """Run rankings (tau_b, tau_AP) and judgements (overlap, kappa) under each qrels version."""
    from app.evaluation.analyses.qrels_comparison import compare_qrels

    if len(data.versions) < 2:
        raise ValueError("this analysis needs at least two qrels versions and the runs")
    blocks = data.run_blocks()
    labels, versions = [label for label, _ in data.versions], [qrels for _, qrels in data.versions]
    measure = params.measure or ("xinfAP" if all(q.stratified for q in versions) else "AP")
    result = compare_qrels(labels, versions, blocks, measure=measure, progress=progress)
    ids = {"qrels_version_ids": list(params.qrels_version_ids)} if params.qrels_version_ids else {}
    return Computed({**result.to_dict(), **ids}, result)


register(
    Analysis(
        name="qrels-versions",
        description="Qrels versions compared: run rankings (tau_b, tau_AP) and judgements (overlap, Cohen's kappa).",
        reproduces="Voorhees 1998 (rankings under different assessors' qrels)",
        params=QrelsVersionsParams,
        compute=_qrels_versions,
        core="app.evaluation.analyses.qrels_comparison.compare_qrels",
        figure="qrels-versions",
        reads="qrels-versions",
        task_kinds=("shots",),
        step="evaluating each version",
    )
)


class SwapRateParams(AnalysisParams):
    """Parameters of the swap-rate analysis."""

    measure: Annotated[MeasureName | None, LEADERBOARD_MEASURE] = Field(default=None, description="the measure")
    trials: int = Field(default=1000, ge=1, le=10_000, description="pairs of disjoint topic sets per size")
    seed: Seed = 0
    sizes: Annotated[Sizes | None, Default("1..n/2")] = Field(
        default=None, min_length=1, max_length=1000, description="the topic-set sizes"
    )
    bin_width: float = Field(default=0.01, gt=0, le=1, allow_inf_nan=False, description="width of a difference bin")
    relative: bool = Field(default=False, description="bin the relative difference (over the larger mean)")
    threshold: float = Field(default=0.05, gt=0, lt=1, allow_inf_nan=False, description="largest acceptable swap rate")
    min_comparisons: int = Field(
        default=10,
        ge=1,
        le=1_000_000,
        description="comparisons a bin needs to be trusted (one swap in 9 is already 11 %)",
    )


def _swap_rate(data: AnalysisData, params: SwapRateParams, progress: Progress) -> Computed:
    """Swap rates by score difference and the minimum detectable difference per topic-set size."""
    from app.evaluation.analyses.swap_rate import swap_rates
    from app.evaluation.measures.registry import aggregate_of

    scores = data.score_table()
    measure = _measure_of(scores)
    result = swap_rates(
        scores.values[:, 0, :],
        scores.runs,
        measure=measure,
        sizes=params.sizes,
        trials=params.trials,
        seed=params.seed,
        bin_width=params.bin_width,
        relative=params.relative,
        threshold=params.threshold,
        min_comparisons=params.min_comparisons,
        aggregate=aggregate_of(measure),
        progress=progress,
    )
    return Computed(result.to_dict(), result)


register(
    Analysis(
        name="swap-rate",
        description="Swap rate and minimum detectable difference on disjoint random topic sets.",
        reproduces="Voorhees & Buckley 2002 (swap rate vs score difference; minimum detectable difference vs topic-set "
        "size)",
        params=SwapRateParams,
        compute=_swap_rate,
        core="app.evaluation.analyses.swap_rate.swap_rates",
        figure="swap-rate",
        reads="scores",
        step="disjoint topic sets",
    )
)


Difference = Annotated[float, Field(gt=0, le=1e6, allow_inf_nan=False)]


class TopicSetDesignParams(AnalysisParams):
    """Parameters of the topic-set-design analysis."""

    measure: Annotated[MeasureName | None, LEADERBOARD_MEASURE] = Field(default=None, description="the measure")
    alpha: Alpha = 0.05
    beta: float = Field(
        default=0.2, gt=0, lt=1, allow_inf_nan=False, description="type II error rate: the power sought is 1 - beta"
    )
    min_differences: Annotated[list[Difference], Option(("--min-difference",))] = Field(
        default_factory=lambda: [0.05],
        min_length=1,
        max_length=100,
        description="minimum detectable differences minD: between two systems (t-test), between the best and the "
        "worst of m (ANOVA)",
    )
    systems: Annotated[int | None, Default("the campaign's number of runs")] = Field(
        default=None, ge=2, le=100_000, description="m, the systems the ANOVA design compares"
    )
    ci_widths: Annotated[list[Difference] | None, Option(("--ci-width",)), Default("the min differences")] = Field(
        default=None,
        min_length=1,
        max_length=100,
        description="caps delta on the expected width of the CI of a paired difference",
    )
    variance: Literal["two-way", "one-way"] = Field(
        default="two-way",
        description="sigma^2: the residual of a two-way ANOVA (run x topic) without replication, or the pooled "
        "within-run variance",
    )


def _topic_set_design(data: AnalysisData, params: TopicSetDesignParams, progress: Progress) -> Computed:
    """Topic-set sizes for next year from this campaign's variance (t-test, ANOVA, CI width)."""
    from app.evaluation.analyses.topic_set_design import topic_set_design

    scores = data.score_table()
    values = scores.values[:, 0, :]
    missing = int(np.isnan(values).sum())
    result = topic_set_design(
        np.nan_to_num(values),  # a topic a run lacks scores 0, as in the means
        scores.runs,
        measure=_measure_of(scores),
        alpha=params.alpha,
        beta=params.beta,
        min_differences=params.min_differences,
        systems=params.systems,
        ci_widths=params.ci_widths,
        variance=params.variance,
        progress=progress,
    )
    notes = [f"{missing} (run, topic) scores missing: counted 0, as in the means."] if missing else []
    return Computed(result.to_dict(), result, notes)


register(
    Analysis(
        name="topic-set-design",
        description="Topics needed next year for a minimum detectable difference, from this campaign's variance.",
        reproduces="Sakai, Topic set size design (IRJ 2016): n for the paired t-test, one-way ANOVA and CI width vs "
        "minD (his samplesizeTTEST2, samplesizeANOVA2, samplesizeCI2)",
        params=TopicSetDesignParams,
        compute=_topic_set_design,
        core="app.evaluation.analyses.topic_set_design.topic_set_design",
        figure="topic-set-design",
        reads="scores",
        step="topic-set sizes",
    )
)


class TypeSignificanceParams(AnalysisParams):
    """Parameters of the type-significance analysis."""

    measure: Annotated[MeasureName | None, LEADERBOARD_MEASURE] = Field(default=None, description="the measure")
    by: Annotated[Literal["system_type", "training_type"], REST_ONLY] = Field(
        default="system_type", description="the run type (the CLI reads the groups file's runtype column)"
    )
    method: Literal["pairwise", "holm", "bonferroni", "tukey"] = Field(
        default="pairwise", description="paired randomization p-values, Holm or Bonferroni adjusted, or Tukey HSD"
    )
    top: int = Field(default=10, ge=2, le=10_000, description="runs of each type tested (the best by mean)")
    alpha: Alpha = 0.05
    n_resamples: Resamples = 10_000
    seed: Seed = 0


def _type_significance(data: AnalysisData, params: TypeSignificanceParams, progress: Progress) -> Computed:
    """The top runs of each run type tested pairwise."""
    from app.evaluation.analyses.type_significance import significance_by_type
    from app.evaluation.measures.registry import aggregate_of

    scores = data.score_table()
    measure = _measure_of(scores)
    label, types_of_runs = data.unit_of_runs(params.by)
    result = significance_by_type(
        scores.runs,
        types_of_runs,
        scores.values[:, 0, :],
        method=params.method,
        top=params.top,
        alpha=params.alpha,
        n_resamples=params.n_resamples,
        seed=params.seed,
        aggregate=aggregate_of(measure),
        progress=progress,
    )
    return Computed({"measure": measure, "by": label, **result.to_dict()}, result)


register(
    Analysis(
        name="type-significance",
        description="Significance within each run type: the top runs of a type tested pairwise.",
        reproduces="TRECVID overview tables: significance among the top runs of each run type",
        params=TypeSignificanceParams,
        compute=_type_significance,
        core="app.evaluation.analyses.type_significance.significance_by_type",
        figure="type-significance",
        reads="scores",
        needs=("units",),
        step="testing each run type",
    )
)


class NoveltyParams(AnalysisParams):
    """Parameters of the novelty analysis (none)."""


def _novelty(data: AnalysisData, params: NoveltyParams, progress: Progress) -> Computed:
    """Relevant shots each run and team found, and those no other team found."""
    from app.evaluation.analyses.novelty import unique_relevant

    qrels, blocks = data.judged_blocks()
    _, teams = data.unit_of_runs("team")
    result = unique_relevant(qrels, blocks, teams, max_results=data.max_results)
    return Computed(result.to_dict(), result)


register(
    Analysis(
        name="novelty",
        description="Relevant shots each run and team found, and those no other team found.",
        reproduces="TRECVID overview: unique relevant shots per team (sorted bar chart)",
        params=NoveltyParams,
        compute=_novelty,
        core="app.evaluation.analyses.novelty.unique_relevant",
        figure="unique-hits",
        reads="runs",
        task_kinds=("shots",),
        needs=("units",),
        step="relevant found per team",
    )
)


class RunVsMedianParams(AnalysisParams):
    """Parameters of the run-vs-median analysis."""

    measure: Annotated[MeasureName | None, LEADERBOARD_MEASURE] = Field(default=None, description="the measure")


def _run_vs_median(data: AnalysisData, params: RunVsMedianParams, progress: Progress) -> Computed:
    """Each run per topic against the median and the best of all runs."""
    from app.evaluation.analyses.topic_comparison import topic_comparison

    scores = data.score_table()
    result = topic_comparison(scores.runs, scores.topics, scores.values[:, 0, :], measure=_measure_of(scores))
    return Computed(result.to_dict(), result)


register(
    Analysis(
        name="run-vs-median",
        description="Each run per topic against the median and best of all runs, topics in natural order.",
        reproduces="the per-run chart NIST sends each team: score per topic against the median and best of all runs",
        params=RunVsMedianParams,
        compute=_run_vs_median,
        core="app.evaluation.analyses.topic_comparison.topic_comparison",
        figure="run-vs-median-best",
        reads="scores",
        figure_per_run=True,
    )
)


class EfficiencyParams(AnalysisParams):
    """Parameters of the efficiency analysis."""

    measure: Annotated[MeasureName | None, LEADERBOARD_MEASURE] = Field(default=None, description="the measure")


def _efficiency(data: AnalysisData, params: EfficiencyParams, progress: Progress) -> Computed:
    """Mean score against mean seconds per topic: correlations and the runs no other beats on both."""
    from app.evaluation.analyses.efficiency import score_vs_time

    scores = data.score_table()
    seconds = np.array([data.seconds.get(run, np.nan) for run in scores.runs], dtype=np.float64)
    result = score_vs_time(scores.runs, scores.means[:, 0], seconds, measure=_measure_of(scores))
    return Computed(result.to_dict(), result)


register(
    Analysis(
        name="efficiency",
        description="Score against processing time: correlations and the runs no other run beats on both.",
        reproduces="TRECVID overview: score vs processing time, Pearson and Spearman",
        params=EfficiencyParams,
        compute=_efficiency,
        core="app.evaluation.analyses.efficiency.score_vs_time",
        figure="efficiency",
        reads="scores",
        needs=("times",),
    )
)


class StrataParams(AnalysisParams):
    """Parameters of the strata analysis (none)."""


def _strata(data: AnalysisData, params: StrataParams, progress: Progress) -> Computed:
    """Pooled, judged and relevant shots per stratum; inferred relevant per topic."""
    from app.evaluation.analyses.strata import stratum_summary

    if data.qrels is None:
        raise ValueError("this analysis needs qrels")
    result = stratum_summary(data.qrels)
    label = {"qrels_label": data.qrels_label} if data.qrels_label is not None else {}
    return Computed({**label, **result.to_dict()}, result)


register(
    Analysis(
        name="strata",
        description="Pooled, judged and relevant shots per stratum; inferred relevant per topic.",
        reproduces="sample_eval's strata (stratified qrels)",
        params=StrataParams,
        compute=_strata,
        core="app.evaluation.analyses.strata.stratum_summary",
        figure="strata",
        reads="qrels",
        task_kinds=("shots",),
        step="counting each stratum",
    )
)


class MomentEffectivenessParams(AnalysisParams):
    """Parameters of the moment-effectiveness analysis."""

    measures: Annotated[Measures | None, Default("every measure of the evaluation (of `trecpool eval`)")] = Field(
        default=None, description="the moment measures"
    )
    sort_by: Annotated[MeasureName | None, Default("the mean R@K,theta")] = Field(
        default=None, description="the measure the systems are sorted by"
    )


def _moment_effectiveness(data: AnalysisData, params: MomentEffectivenessParams, progress: Progress) -> Computed:
    """Each system's mean under every moment measure."""
    from app.evaluation.analyses.moment_effectiveness import moment_effectiveness

    scores = data.score_table()
    result = moment_effectiveness(scores.runs, scores.measures, scores.means, sort_by=params.sort_by)
    return Computed(result.to_dict(), result)


register(
    Analysis(
        name="moment-effectiveness",
        description="Each system's score under every moment measure, the systems sorted.",
        reproduces=f"{AXIOU}, Fig. 5 (every system under every measure; colour = K, marker = theta)",
        params=MomentEffectivenessParams,
        compute=_moment_effectiveness,
        core="app.evaluation.analyses.moment_effectiveness.moment_effectiveness",
        figure="moment-effectiveness",
        reads="scores",
        task_kinds=("moments",),
        measures="every",
    )
)


SAMPLED_STRATUM = re.compile(r"^\s*\d+\s*-\s*\d+\s*:\s*[0-9.]+%?\s*$")


class BudgetParams(AnalysisParams):
    """Parameters of the budget analysis."""

    sampled: Annotated[
        list[Annotated[Text, Field(min_length=1, max_length=200)]],
        Option(("--sampled",)),
        Default("required"),
    ] = Field(
        min_length=1,
        max_length=20,
        description="a sampled stratum of best ranks A-B and the share of it drawn, A-B:share (e.g. 11-100:0.25); "
        "the ranks above the deepest one that are not named are judged in full",
    )
    seed: Seed = 0
    target_tau: float = Field(default=0.9, gt=-1, le=1, description="the target expected tau_b of the run ranking")
    relative_width: float = Field(
        default=0.2, ge=1e-4, le=10, description="a topic continues while its R_hat interval is wider than this x R_hat"
    )
    level: float = Field(default=0.95, ge=0.5, le=0.999, description="the confidence level of the intervals")
    replicates: int = Field(default=200, ge=2, le=2000, description="replicates of the run ranking for the tau")

    @field_validator("sampled")
    @classmethod
    def _strata_text(cls, value: list[str]) -> list[str]:
        """Each part reads A-B:share (the ranges themselves are checked by the core)."""
        for part in (p for text in value for p in text.split(",") if p.strip()):
            if not SAMPLED_STRATUM.match(part):
                raise ValueError(f"{part.strip()!r} is not A-B:share (e.g. 11-100:0.25)")
        return value


def _budget(data: AnalysisData, params: BudgetParams, progress: Progress) -> Computed:
    """The budget advisor on the seeded stratified sample of the qrels (the lines not drawn unjudged)."""
    from app.evaluation.analyses.budget import sampled_budget

    qrels, blocks = data.judged_blocks()
    result = sampled_budget(qrels, blocks, params.sampled, seed=params.seed, target_tau=params.target_tau,
                            relative_width=params.relative_width, level=params.level,
                            replicates=params.replicates, max_results=data.max_results)  # fmt: skip
    return Computed(result.to_dict(), result)


register(
    Analysis(
        name="budget",
        description="The judging budget advisor on a seeded stratified sample of the qrels: intervals, tau, advice.",
        reproduces="Yilmaz, Kanoulas & Aslam (SIGIR 2008) xinfAP with a stratified jackknife (Wolter ch. 4), checked "
        "by coverage against full judgements (scripts/bench/budget_coverage.py)",
        params=BudgetParams,
        compute=_budget,
        core="app.evaluation.analyses.budget.sampled_budget",
        figure="budget",
        reads="runs",
        task_kinds=("shots",),
        step="the budget advisor",
    )
)


VersionId = Annotated[int, Field(ge=1, le=2**31 - 1)]


class MachineAgreementParams(AnalysisParams):
    """Parameters of the machine-agreement analysis."""

    human_version_id: Annotated[VersionId | None, REST_ONLY, Default("the first of qrels_version_ids")] = Field(
        default=None, description="the human qrels version (the CLI: the first --qrels)"
    )
    model_version_id: Annotated[VersionId | None, REST_ONLY, Default("the second of qrels_version_ids")] = Field(
        default=None, description="the model qrels version (the CLI: the second --qrels)"
    )
    qrels_version_ids: Annotated[
        list[VersionId] | None, REST_ONLY, Default("[human_version_id, model_version_id], else the campaign's two")
    ] = Field(default=None, min_length=2, max_length=2, description="the human version, then the model version")
    measure: Annotated[MeasureName | None, Default("AP (xinfAP when both versions are stratified)")] = Field(
        default=None, description="the measure re-scored under each version"
    )
    max_grade: Annotated[int | None, Default("the largest grade either version gives, at least 1")] = Field(
        default=None, ge=1, le=100, description="the top of the grade scale 0..k the kappa weighs"
    )
    top_k: Annotated[int | None, Default("a third of the runs, at least 3 and at most 10")] = Field(
        default=None, ge=2, le=10_000, description="tau_b among the top k runs of the human ranking"
    )
    top_threshold: float = Field(
        default=0.7,
        ge=-1,
        le=1,
        allow_inf_nan=False,
        description="low_top_agreement below this top-k tau_b: a convention, below Voorhees' 0.9 for whole rankings "
        "as the top runs are fewer and closer; set it from a human-vs-human comparison when you have one",
    )
    judge_family: Annotated[list[Annotated[Text, Field(min_length=1, max_length=100)]] | None, Default("none")] = Field(
        default=None,
        max_length=20,
        description="the judge's model family (e.g. gpt, llama) for the self-preference check: runs whose name or "
        "team names it are listed (the page reads it from the model assessors' provenance)",
    )
    level: float = Field(default=0.95, gt=0, lt=1, allow_inf_nan=False, description="the intervals' confidence level")
    resamples: Annotated[int, Option(("--resamples",))] = Field(
        default=10_000, ge=100, le=1_000_000, description="bootstrap resamples of the shift intervals"
    )
    seed: Seed = 0

    @model_validator(mode="after")
    def _human_and_model(self) -> MachineAgreementParams:
        """human_version_id and model_version_id together, as qrels_version_ids (which must agree if given)."""
        human, model = self.human_version_id, self.model_version_id
        if human is None and model is None:
            return self
        if human is None or model is None:
            raise ValueError("give human_version_id and model_version_id together")
        if human == model:
            raise ValueError("human_version_id and model_version_id name the same version")
        if self.qrels_version_ids is not None and list(self.qrels_version_ids) != [human, model]:
            raise ValueError("qrels_version_ids differs from [human_version_id, model_version_id]: give one")
        self.qrels_version_ids = [human, model]
        return self


def _machine_agreement(data: AnalysisData, params: MachineAgreementParams, progress: Progress) -> Computed:
    """The model version (second) against the human one (first): kappa, rankings, shifts, warnings."""
    from app.evaluation.analyses.machine_agreement import machine_agreement

    if len(data.versions) != 2:
        raise ValueError("this analysis compares two qrels versions, the human one first, and needs the runs")
    blocks = data.run_blocks()
    (human_label, human), (model_label, model) = data.versions
    groupings: dict[str, list[str]] = {}
    for which in ("system_type", "training_type"):
        try:
            label, types = data.unit_of_runs(which)
        except ValueError:  # the CLI's groups file has no training type
            continue
        groupings[label] = types
    try:
        teams = data.unit_of_runs("team")[1]
    except ValueError:
        teams = [""] * len(data.runs)
    result = machine_agreement(
        human,
        model,
        blocks,
        labels=(human_label, model_label),
        measure=params.measure,
        max_grade=params.max_grade,
        top_k=params.top_k,
        top_threshold=params.top_threshold,
        judge_families=params.judge_family or (),
        run_metadata=[f"{run} {team}" for run, team in zip(blocks.names, teams, strict=True)],
        run_types=groupings,
        level=params.level,
        n_resamples=params.resamples,
        seed=params.seed,
        progress=progress,
    )
    ids = {"qrels_version_ids": list(params.qrels_version_ids)} if params.qrels_version_ids else {}
    return Computed({**result.to_dict(), **ids}, result, [w.message for w in result.warnings])


register(
    Analysis(
        name="machine-agreement",
        description="A model judge against people: weighted kappa, confusion, top-k tau, score shifts, warnings.",
        reproduces="Cohen 1968 (weighted kappa); Voorhees 1998 (rankings under other assessors); TREC RAG 2024 and "
        "Clarke & Dietz (model judges agree least among the top runs); Balog et al., SIGIR 2025 (self-preference)",
        params=MachineAgreementParams,
        compute=_machine_agreement,
        core="app.evaluation.analyses.machine_agreement.machine_agreement",
        figure="machine-agreement",
        reads="qrels-versions",
        task_kinds=("shots",),
        needs=("units",),
        step="comparing the model's judgements with the people's",
    )
)


class ModelSelectionParams(AnalysisParams):
    """Parameters of the model-selection analysis."""

    validation_measures: Annotated[
        Measures | None, Option(("--validation-measure",)), Default("every measure read but the counts")
    ] = Field(default=None, description="the measures a variant is selected by, on the validation topics")
    test_measures: Annotated[
        Measures | None, Option(("--test-measure",)), Default("every measure read but the counts")
    ] = Field(default=None, description="the measures the selected variants are scored by, on the test topics")
    validation_topics: Annotated[
        list[Annotated[Text, Field(min_length=1, max_length=64)]] | None,
        Option(("--validation-topic",)),
        Default("a seeded random share of the topics (validation_share, seed)"),
    ] = Field(default=None, min_length=1, max_length=100_000, description="the validation split; the rest is test")
    validation_share: float = Field(
        default=0.5, gt=0, lt=1, allow_inf_nan=False, description="the random validation split's share of the topics"
    )
    seed: Seed = 0


def _model_selection(data: AnalysisData, params: ModelSelectionParams, progress: Progress) -> Computed:
    """The variant each validation measure selects, scored by every test measure as z-scores."""
    from app.evaluation.analyses.model_selection import model_selection

    scores = data.score_table()
    result = model_selection(
        scores.runs,
        scores.measures,
        scores.topics,
        scores.values,
        validation_measures=params.validation_measures,
        test_measures=params.test_measures,
        validation_topics=params.validation_topics,
        validation_share=params.validation_share,
        seed=params.seed,
    )
    notes = [f"Only {', '.join(result.above_average)} selected a model at or above the mean on every test measure."]
    return Computed(result.to_dict(), result, notes if result.above_average else [])


register(
    Analysis(
        name="model-selection",
        description="Per validation measure the variant it selects, scored by every test measure as z-scores.",
        reproduces=f"{AXIOU}, section 6.6, Fig. 8 (variants of one system: validation and test splits of the topics)",
        params=ModelSelectionParams,
        compute=_model_selection,
        core="app.evaluation.analyses.model_selection.model_selection",
        figure="model-selection",
        reads="scores",
        measures="readable",
        step="selecting a variant per measure",
    )
)


Gamma = Annotated[float, Field(gt=0, le=10, allow_inf_nan=False)]
Theta = Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]


class IoUNoiseParams(AnalysisParams):
    """Parameters of the iou-noise analysis."""

    iou: float = Field(default=0.5, ge=0, le=1, allow_inf_nan=False, description="the true top-1 IoU r of the curves")
    gammas: Annotated[list[Gamma], Option(("--gamma",))] = Field(
        default_factory=lambda: [0.05, 0.1, 0.2, 0.3],
        min_length=1,
        max_length=20,
        description="noise levels: the observed IoU is r + N(0, gamma^2)",
    )
    thetas: Annotated[list[Theta], Option(("--theta",)), Default("0.02, 0.04, ..., 1 (50 thresholds)")] = Field(
        default_factory=lambda: [round(0.02 * i, 2) for i in range(1, 51)],
        min_length=1,
        max_length=200,
        description="the thresholds theta of R@1,theta",
    )
    simulations: int = Field(default=20_000, ge=2, le=1_000_000, description="simulated draws per noise level")
    seed: Seed = 0


def _iou_noise(data: AnalysisData, params: IoUNoiseParams, progress: Progress) -> Computed:
    """The closed forms at r with their simulation check, and per run at its topics' own top-1 IoUs."""
    from app.evaluation.analyses.label_noise import iou_noise
    from app.evaluation.moments import ground_truth_segments, moment_relevance, rank_moments

    top = None
    if data.truth is not None:
        segments = ground_truth_segments(data.truth)
        top = moment_relevance(rank_moments(segments, data.moment_runs, 1), segments).relevance[..., 0]
    result = iou_noise(
        params.iou,
        gammas=params.gammas,
        thetas=params.thetas,
        simulations=params.simulations,
        seed=params.seed,
        top_iou=top,
        runs=data.runs if top is not None else None,
    )
    return Computed(result.to_dict(), result, [f"The simulation is within {result.largest_z:.1f} standard errors."])


register(
    Analysis(
        name="iou-noise",
        description="Bias, variance and MSE of AxIoU@1 and R@1,theta under Gaussian IoU noise, checked by simulation.",
        reproduces=f"{AXIOU}, Fig. 10 (supplement section C, Fig. 2: closed forms at r = 0.5); per run at its own "
        "top-1 IoUs",
        params=IoUNoiseParams,
        compute=_iou_noise,
        core="app.evaluation.analyses.label_noise.iou_noise",
        figure="iou-noise",
        reads="moment-runs",
        task_kinds=("moments",),
        step="simulating noisy IoUs",
    )
)


# ---------------------------------------------------------------------------------------------------------------------
# Looking analyses up, checking their parameters


def analysis(kind: str) -> Analysis:
    """The analysis of `kind` (KeyError naming the kinds if there is none)."""
    try:
        return ANALYSES[kind]
    except KeyError:
        raise KeyError(f"no analysis {kind!r}: one of {', '.join(ANALYSES)}") from None


def kinds() -> list[str]:
    """Every analysis kind, in the registry's order."""
    return list(ANALYSES)


def parse_params(kind: str, params: object) -> Any:
    """The validated parameter model of an analysis of `kind` (pydantic ValidationError if they do not fit)."""
    return analysis(kind).params.model_validate(params)


def checked_params(kind: str, params: object) -> dict[str, object]:
    """The parameters of an analysis of `kind`, validated, with every default filled in (None left out)."""
    dumped: dict[str, object] = parse_params(kind, params).model_dump(exclude_none=True)
    return dumped


def describe_error(error: ValidationError, names: Mapping[str, str] | None = None) -> str:
    """One line per invalid parameter, named as the caller knows it (`names` maps a field to e.g. a CLI option)."""
    names = names or {}
    lines = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"])
        head = str(item["loc"][0]) if item["loc"] else ""
        lines.append(f"{names.get(head, where)}: {item['msg']}")
    return "; ".join(lines)


def figure_data(kind: str, data: Mapping[str, Any], run: str | None = None) -> Mapping[str, Any]:
    """What the kind's figure draws from a result: the result, or one run's part of it for a per-run figure
    (ValueError when `run` is missing or unknown)."""
    if not analysis(kind).figure_per_run:
        return data
    if run is None:
        raise ValueError("name the run whose chart to draw")
    rows = [row for row in data.get("runs", []) if row.get("run") == run]
    if not rows:
        raise ValueError(f"no run {run!r} in this analysis")
    chosen: Mapping[str, Any] = rows[0]
    return chosen


def json_safe(value: object) -> object:
    """The value with NaN and infinities replaced by None (JSON and JSONB have no NaN)."""
    if isinstance(value, float):
        return value if np.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


# ---------------------------------------------------------------------------------------------------------------------
# Describing the parameters: the CLI's options, the listing, the README


@dataclass(frozen=True)
class Parameter:
    """One parameter of an analysis as the CLI, `trecpool analyses` and the README describe it."""

    name: str
    type: type  # int, float, str or bool: one value's (a list holds several)
    multiple: bool  # a list (the CLI repeats the option, unless `parse` reads the list from one value)
    choices: tuple[str, ...]  # a Literal's values
    default: object  # None when it depends on the data (`default_words` then says it)
    default_words: str
    description: str
    options: tuple[str, ...]  # the CLI's names, () when the command reads it from its files
    parse: Callable[[str], object] | None
    syntax: str

    def type_name(self) -> str:
        """The parameter's type in words: integer, number, string, boolean, one of ..., list of ..."""
        one = " | ".join(self.choices) if self.choices else _TYPE_NAMES[self.type]
        return f"list of {one}" if self.multiple else one


_TYPE_NAMES = {int: "integer", float: "number", str: "string", bool: "boolean"}


def _metadata(info: FieldInfo, kind: type) -> list[Any]:
    """The field's metadata objects of one class, from the field and from the Annotated types inside it."""
    found = [m for m in info.metadata if isinstance(m, kind)]
    stack: list[Any] = [info.annotation]
    while stack:
        annotation = stack.pop()
        if typing.get_origin(annotation) is Annotated:
            found += [m for m in annotation.__metadata__ if isinstance(m, kind)]
            stack.append(annotation.__origin__)
        else:
            stack += list(typing.get_args(annotation))
    return found


def _shape(annotation: object) -> tuple[type, bool, tuple[str, ...]]:
    """One value's type, whether it is a list, and a Literal's choices, from a field's annotation."""
    if typing.get_origin(annotation) is Annotated:
        return _shape(typing.get_args(annotation)[0])
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _shape(inner[0])
    if origin is list:
        one, _, choices = _shape(typing.get_args(annotation)[0])
        return one, True, choices
    if origin is Literal:
        return str, False, tuple(str(a) for a in typing.get_args(annotation))
    if annotation in _TYPE_NAMES:
        return annotation, False, ()
    raise TypeError(f"an analysis parameter must be int, float, str, bool, a Literal or a list: {annotation}")


def default_words(info: FieldInfo) -> str:
    """A field's default as the docs say it: its value, or in words when it depends on the data."""
    words = _metadata(info, Default)
    if words:
        return str(words[0].words)
    value = info.get_default(call_default_factory=True)
    if isinstance(value, list):
        return ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in value)
    if isinstance(value, bool):
        return "no" if not value else "yes"
    return f"{value:g}" if isinstance(value, float) else str(value)


def parameters(record: Analysis) -> list[Parameter]:
    """The record's parameters, in the model's order, with their CLI options (see `Option`): `--` and the name in
    kebab case; `measures` is `-m/--measure` (repeated); `measure` too, unless the model has `measures`."""
    fields = record.params.model_fields
    out = []
    for name, info in fields.items():
        one, multiple, choices = _shape(info.annotation)
        option = (_metadata(info, Option) or [Option()])[0]
        if option.rest_only or (name == "measure" and "measures" in fields):
            names: tuple[str, ...] = ()
        elif option.names:
            names = option.names
        elif name in ("measure", "measures"):
            names = ("-m", "--measure")
        else:
            names = ("--" + name.replace("_", "-"),)
        default = None if info.is_required() else info.get_default(call_default_factory=True)
        out.append(
            Parameter(
                name=name,
                type=one,
                multiple=multiple,
                choices=choices,
                default=default,
                default_words=default_words(info),
                description=info.description or "",
                options=names,
                parse=option.parse,
                syntax=option.syntax,
            )
        )
    return out


def listing(record: Analysis) -> dict[str, object]:
    """The record as `trecpool analyses --format json` lists it."""
    return {
        "name": record.name,
        "description": record.description,
        "reproduces": record.reproduces,
        "task_kinds": list(record.task_kinds),
        "reads": record.reads,
        "needs": list(record.needs),
        "parameters": [
            {
                "name": p.name,
                "type": p.type_name(),
                "default": json_safe(p.default),
                "default_words": p.default_words,
                "description": p.description,
                "cli": "/".join(p.options) or None,
            }
            for p in parameters(record)
        ],
        "core": record.core,
        "figure": record.figure,
    }


def kind_label(record: Analysis) -> str:
    """The kind with the campaigns it is for when that is not all of them: `label-noise` (moments)."""
    only = "" if set(record.task_kinds) == set(TASK_KINDS) else f" ({', '.join(record.task_kinds)})"
    return f"`{record.name}`{only}"


def _cli_spelling(parameter: Parameter) -> str:
    """How the CLI spells a parameter when not `--the-name`: ` (--resamples)`, ` (REST only)`."""
    if not parameter.options:
        return " (REST only)"
    if parameter.options[-1] == "--" + parameter.name.replace("_", "-"):
        return ""
    return f" (`{'/'.join(parameter.options)}`)"


def markdown_table(records: Sequence[Analysis] | None = None) -> str:
    """The README's table of analyses: kind, what it reproduces, its parameters and their defaults."""
    rows = [
        "| kind | reproduces | reads | parameters (CLI option where it differs) and defaults |",
        "|---|---|---|---|",
    ]
    for record in ANALYSES.values() if records is None else records:
        params = "; ".join(f"`{p.name}`{_cli_spelling(p)} {p.default_words}" for p in parameters(record)) or "none"
        reads = ", ".join([READS_SHORT[record.reads], *(NEEDS_SHORT[n] for n in record.needs)])
        cells = (kind_label(record), record.reproduces, reads, params)
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(rows) + "\n"
