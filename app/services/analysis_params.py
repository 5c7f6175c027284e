"""The parameters each analysis kind takes: typed, bounded, and nothing else (a misspelt name is refused)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.services.inputs import Text

SEED_MAX = 2**32 - 1  # numpy's legacy seed range, and plenty for reproducibility
Measure = Annotated[Text, Field(min_length=1, max_length=100)]
Measures = Annotated[list[Measure], Field(min_length=1, max_length=50)]
Seed = Annotated[int, Field(ge=0, le=SEED_MAX)]
Sigma = Annotated[float, Field(ge=0, le=1e6, allow_inf_nan=False)]


class AnalysisParams(BaseModel):
    """Base of the per-kind parameters: unknown names are errors."""

    model_config = ConfigDict(extra="forbid")


class PoolDepthParams(AnalysisParams):
    """Pool depth: rank correlation with the full pool for pools cut at 1..max_depth."""

    measure: Measure | None = None
    max_depth: int | None = Field(default=None, ge=1, le=1000, description="min(100, pool depth) when omitted")


class LeaveOutParams(AnalysisParams):
    """Leave-out: each unit's runs re-scored without the documents only that unit pooled."""

    measure: Measure | None = None
    by: Literal["run", "team", "type"] = "run"
    depth: int | None = Field(default=None, ge=1, le=100_000, description="The pool depth when omitted")


class AgreementParams(AnalysisParams):
    """Agreement: Kendall's tau-b between the run orders of pairs of measures."""

    measures: Measures | None = None


class StabilityParams(AnalysisParams):
    """Stability: how run orders on random topic subsets agree with the full order."""

    measure: Measure | None = None
    measures: Measures | None = None
    trials: int = Field(default=200, ge=1, le=10_000)
    seed: Seed = 0


class TiesParams(AnalysisParams):
    """Ties: the share of topics on which every run scores the same (no parameters)."""


class PowerParams(AnalysisParams):
    """Discriminative power: the share of run pairs a randomisation test separates at `alpha`."""

    measure: Measure | None = None
    alpha: float = Field(default=0.05, gt=0, lt=1, allow_inf_nan=False)
    n_resamples: int = Field(default=10_000, ge=100, le=1_000_000)
    seed: Seed = 0


class LabelNoiseParams(AnalysisParams):
    """Label noise (moments): how far run means move when the ground truth boundaries are perturbed."""

    measures: Measures | None = None
    sigmas: list[Sigma] | None = Field(default=None, min_length=1, max_length=20)
    trials: int = Field(default=100, ge=1, le=1000)
    raters: int = Field(default=5, ge=1, le=100)
    seed: Seed = 0
    length: Literal["exponential", "shifted"] = "exponential"


PARAMS_OF: dict[str, type[AnalysisParams]] = {
    "pool-depth": PoolDepthParams,
    "leave-out": LeaveOutParams,
    "agreement": AgreementParams,
    "stability": StabilityParams,
    "ties": TiesParams,
    "power": PowerParams,
    "label-noise": LabelNoiseParams,
}


def checked_params(kind: str, params: object) -> dict[str, object]:
    """The parameters of an analysis of `kind`, validated; only those given (and not null) are kept."""
    return PARAMS_OF[kind].model_validate(params).model_dump(exclude_unset=True, exclude_none=True)
