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
from app.services.inputs import Text

SEED_MAX = 2**32 - 1  # numpy's legacy seed range, and plenty for reproducibility
Measure = Annotated[Text, Field(min_length=1, max_length=100)]
Measures = Annotated[list[Measure], Field(min_length=1, max_length=50)]
RunName = Annotated[Text, Field(min_length=1, max_length=200)]
Seed = Annotated[int, Field(ge=0, le=SEED_MAX)]
Sigma = Annotated[float, Field(ge=0, le=1e6, allow_inf_nan=False)]
Size = Annotated[int, Field(ge=1, le=10_000_000)]
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
        description="the pool depth: the pool's own when omitted, inferred from imported qrels (and reported)",
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
        default=None, min_length=2, max_length=50, description="every measure of the evaluation when omitted"
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

    measures: Measures | None = Field(default=None, description="every measure of the evaluation when omitted")


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
    sigmas: list[Sigma] = Field(default_factory=lambda: list(DEFAULT_SIGMAS), min_length=1, max_length=20)
    trials: int = Field(default=NOISE_TRIALS, ge=1, le=1000, description="noisy ground truths per level (paper: 100)")
    raters: int = Field(default=DEFAULT_RATERS, ge=1, le=100)
    seed: Seed = 0
    length: Literal["shifted", "exponential"] = Field(
        default="shifted", description="shifted: (e - s) + Exp(1), SPEC 6 and the authors' notebook"
    )


PARAMS_OF: dict[str, type[AnalysisParams]] = {
    "pool-depth": PoolDepthParams,
    "leave-out": LeaveOutParams,
    "agreement": AgreementParams,
    "stability": StabilityParams,
    "ties": TiesParams,
    "power": PowerParams,
    "label-noise": LabelNoiseParams,
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
