"""The parameters each analysis kind takes: typed, bounded, with their defaults, and nothing else.

One schema per kind, shared by REST (`POST /api/campaigns/{id}/analyses`, where a misspelt or unused name is a 422)
and the CLI (`trecpool analyse ...` validates its options with the same models, importing this module only when a
command runs, so `--help` stays light). The defaults follow SPEC section 6 and the papers; those that depend on the
data (the measure, the pool depth) are None here and resolved by whoever has the data, which says in its result what
it used.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from app.evaluation.analyses.label_noise import DEFAULT_MEASURES as NOISE_MEASURES
from app.evaluation.analyses.label_noise import DEFAULT_RATERS, DEFAULT_SIGMAS
from app.evaluation.analyses.label_noise import DEFAULT_TRIALS as NOISE_TRIALS
from app.evaluation.analyses.stability import DEFAULT_TRIALS as STABILITY_TRIALS
from app.evaluation.analyses.swap_rate import DEFAULT_TRIALS as SWAP_TRIALS
from app.evaluation.analyses.swap_rate import MIN_COMPARISONS
from app.services.inputs import Text

SEED_MAX = 2**32 - 1  # numpy's legacy seed range, and plenty for reproducibility
Measure = Annotated[Text, Field(min_length=1, max_length=100)]
Measures = Annotated[list[Measure], Field(min_length=1, max_length=50)]
RunName = Annotated[Text, Field(min_length=1, max_length=200)]
Seed = Annotated[int, Field(ge=0, le=SEED_MAX)]
Sigma = Annotated[float, Field(ge=0, le=1e6, allow_inf_nan=False)]
Size = Annotated[int, Field(ge=1, le=10_000_000)]
ALL_BUT_COUNTS = "every measure of the evaluation but the counts (num_ret, num_rel, num_rel_ret, inum_rel, ...)"
POOLED_RUNS = (
    "The runs that contributed to the pool, for imported qrels (the pool records them for cut qrels). "
    "Default: the priority-1 runs"
)


class AnalysisParams(BaseModel):
    """Base of the per-kind parameters: unknown names are errors."""

    model_config = ConfigDict(extra="forbid")


class PoolDepthParams(AnalysisParams):
    """Pool depth (Westerveld): rank correlation with the full qrels for pools cut at depths 1..max_depth."""

    measure: Measure | None = Field(default=None, description="AP (xinfAP for stratified qrels) when omitted")
    max_depth: int | None = Field(default=None, ge=1, le=1000, description="min(100, the pool's depth) when omitted")
    outside: Literal["drop", "keep"] = Field(
        default="drop", description="qrels lines no pooled run retrieved: dropped at every depth, or kept"
    )
    pooled_runs: list[RunName] | None = Field(default=None, min_length=1, max_length=10_000, description=POOLED_RUNS)


class LeaveOutParams(AnalysisParams):
    """Leave-out: each unit's runs re-scored without the qrels lines only that unit contributed to the pool."""

    measure: Measure | None = Field(default=None, description="AP (xinfAP for stratified qrels) when omitted")
    by: Literal["run", "team", "type"] = Field(default="team", description="the unit left out ('group' = team)")
    depth: int | None = Field(
        default=None,
        ge=1,
        le=100_000,
        description="the pool depth, for every topic: the pool's own when omitted; for imported qrels each topic's "
        "own, inferred (and reported)",
    )
    pooled_runs: list[RunName] | None = Field(default=None, min_length=1, max_length=10_000, description=POOLED_RUNS)

    @field_validator("by", mode="before")
    @classmethod
    def _group_is_team(cls, value: object) -> object:
        """'group' (Westerveld's word, the groups file's) names the same unit as 'team'."""
        return "team" if value == "group" else value


class AgreementParams(AnalysisParams):
    """Agreement (AxIoU paper, Fig. 4): Kendall's tau_b between the run orders of every pair of measures."""

    measures: list[Measure] | None = Field(
        default=None, min_length=2, max_length=50, description=f"{ALL_BUT_COUNTS} when omitted"
    )


class OneOrManyMeasures(AnalysisParams):
    """`measure` or `measures`, not both (one would be ignored)."""

    @model_validator(mode="after")
    def _not_both(self) -> OneOrManyMeasures:
        """Refuse `measure` together with `measures`."""
        if getattr(self, "measure", None) is not None and getattr(self, "measures", None) is not None:
            raise ValueError("give measure or measures, not both")
        return self


class StabilityParams(OneOrManyMeasures):
    """Stability (AxIoU paper, Fig. 6): run orders on random topic subsets against the full order and each other."""

    measure: Measure | None = None
    measures: Measures | None = Field(default=None, description="[measure] when omitted")
    trials: int = Field(default=STABILITY_TRIALS, ge=1, le=10_000, description="random subsets per size (paper: 5000)")
    seed: Seed = 0
    sizes: list[Size] | None = Field(
        default=None, min_length=1, max_length=1000, description="1..n, or 100 evenly spaced sizes above 100 topics"
    )


class TiesParams(AnalysisParams):
    """Ties (AxIoU supplement, Fig. 1): the share of topics on which every run scores the same."""

    measures: Measures | None = Field(default=None, description=f"{ALL_BUT_COUNTS} when omitted")


class PowerParams(OneOrManyMeasures):
    """Discriminative power: the share of run pairs a paired randomisation test separates at `alpha`."""

    measure: Measure | None = None
    measures: Measures | None = Field(default=None, description="[measure] when omitted")
    alpha: float = Field(default=0.05, gt=0, lt=1, allow_inf_nan=False)
    n_resamples: int = Field(default=10_000, ge=100, le=1_000_000)
    seed: Seed = 0


class LabelNoiseParams(AnalysisParams):
    """Label noise (AxIoU paper, Fig. 7): how far run means move when the ground-truth boundaries are perturbed."""

    measures: Measures = Field(default_factory=lambda: list(NOISE_MEASURES))
    sigmas: list[Sigma] = Field(
        default_factory=lambda: list(DEFAULT_SIGMAS),
        min_length=1,
        max_length=20,
        description="noise levels in seconds (the authors' notebook: 1, 2, 3, 4)",
    )
    trials: int = Field(default=NOISE_TRIALS, ge=1, le=1000, description="noisy ground truths per level (paper: 100)")
    raters: int = Field(default=DEFAULT_RATERS, ge=1, le=100)
    seed: Seed = 0
    length: Literal["shifted", "exponential"] = Field(
        default="shifted", description="shifted: (e - s) + Exp(1), SPEC 6 and the authors' notebook"
    )


class JudgedFractionParams(AnalysisParams):
    """Judged fraction (Westerveld 4.1): the judged share of every run's top d, for each depth d."""

    depths: list[Size] | None = Field(
        default=None, min_length=1, max_length=1000, description="1, 2, 3, 5, 10, 20, ... up to max_results"
    )


class QrelsVersionsParams(AnalysisParams):
    """Qrels versions (Voorhees 1998): run rankings (tau_b, tau_AP) and judgements (overlap, kappa) compared."""

    qrels_version_ids: list[Annotated[int, Field(ge=1, le=2**31 - 1)]] | None = Field(
        default=None, min_length=2, max_length=20, description="every qrels version of the campaign when omitted"
    )
    measure: Measure | None = Field(default=None, description="AP (xinfAP for stratified qrels) when omitted")


class SwapRateParams(AnalysisParams):
    """Swap rate and minimum detectable difference (Voorhees & Buckley 2002) on disjoint random topic sets."""

    measure: Measure | None = None
    trials: int = Field(default=SWAP_TRIALS, ge=1, le=10_000, description="pairs of disjoint topic sets per size")
    seed: Seed = 0
    sizes: list[Size] | None = Field(default=None, min_length=1, max_length=1000, description="1..n // 2 when omitted")
    bin_width: float = Field(default=0.01, gt=0, le=1, allow_inf_nan=False, description="width of a difference bin")
    relative: bool = Field(default=False, description="bin the relative difference (over the larger mean)")
    threshold: float = Field(default=0.05, gt=0, lt=1, allow_inf_nan=False, description="largest acceptable swap rate")
    min_comparisons: int = Field(
        default=MIN_COMPARISONS, ge=1, le=1_000_000, description="comparisons a bin needs to be trusted"
    )


class TypeSignificanceParams(AnalysisParams):
    """Significance within each run type (the overview's tables): the top runs of a type tested pairwise."""

    measure: Measure | None = None
    by: Literal["system_type", "training_type"] = Field(default="system_type", description="the run type grouping")
    method: Literal["pairwise", "holm", "bonferroni", "tukey"] = Field(
        default="pairwise", description="paired randomization p-values, Holm or Bonferroni adjusted, or Tukey HSD"
    )
    top: int = Field(default=10, ge=2, le=10_000, description="runs of each type tested (best by mean)")
    alpha: float = Field(default=0.05, gt=0, lt=1, allow_inf_nan=False)
    n_resamples: int = Field(default=10_000, ge=100, le=1_000_000)
    seed: Seed = 0


class NoveltyParams(AnalysisParams):
    """Novelty: relevant shots each run and team found, and those no other team found."""


class RunVsMedianParams(AnalysisParams):
    """Run vs median vs best per topic (the chart NIST sends each team)."""

    measure: Measure | None = None


class EfficiencyParams(AnalysisParams):
    """Efficiency: mean score against mean elapsed seconds per topic, and the good-and-fast runs."""

    measure: Measure | None = None


class StrataParams(AnalysisParams):
    """Strata: pooled, judged and relevant shots per stratum, inferred relevant per topic (sample_eval qrels)."""


class MomentEffectivenessParams(AnalysisParams):
    """Moment effectiveness (AxIoU paper, Fig. 5): each system's score under every moment measure."""

    measures: Measures | None = Field(default=None, description="every measure of the evaluation when omitted")
    sort_by: Measure | None = Field(default=None, description="the mean R@K,theta when omitted")


PARAMS_OF: dict[str, type[AnalysisParams]] = {
    "pool-depth": PoolDepthParams,
    "leave-out": LeaveOutParams,
    "agreement": AgreementParams,
    "stability": StabilityParams,
    "ties": TiesParams,
    "power": PowerParams,
    "label-noise": LabelNoiseParams,
    "judged-fraction": JudgedFractionParams,
    "qrels-versions": QrelsVersionsParams,
    "swap-rate": SwapRateParams,
    "type-significance": TypeSignificanceParams,
    "novelty": NoveltyParams,
    "run-vs-median": RunVsMedianParams,
    "efficiency": EfficiencyParams,
    "strata": StrataParams,
    "moment-effectiveness": MomentEffectivenessParams,
}


def parse_params(kind: str, params: object) -> Any:
    """The validated parameter model of an analysis of `kind` (pydantic ValidationError if they do not fit)."""
    return PARAMS_OF[kind].model_validate(params)


def checked_params(kind: str, params: object) -> dict[str, object]:
    """The parameters of an analysis of `kind`, validated, with every default filled in (None left out)."""
    return parse_params(kind, params).model_dump(exclude_none=True)


def describe_error(error: ValidationError, names: dict[str, str] | None = None) -> str:
    """One line per invalid parameter, named as the caller knows it (`names` maps a field to e.g. a CLI option)."""
    names = names or {}
    lines = []
    for item in error.errors():
        field = ".".join(str(part) for part in item["loc"])
        head = str(item["loc"][0]) if item["loc"] else ""
        lines.append(f"{names.get(head, field)}: {item['msg']}")
    return "; ".join(lines)
