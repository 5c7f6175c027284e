"""A toy analysis written as a registry record alone (the `toy` fixture in tests/conftest.py registers it for one
test): the services' and the REST API's registry tests show such a record is a command, a schema and a job."""

from __future__ import annotations

import numpy as np
from pydantic import Field

from app.services.analysis_registry import Analysis, AnalysisData, AnalysisParams, Computed


class SpreadParams(AnalysisParams):
    """Parameters of the toy analysis."""

    scale: float = Field(default=1.0, gt=0, le=100, description="what the spread is multiplied by")


def _spread(data: AnalysisData, params: SpreadParams, progress: object) -> Computed:
    """The spread of the run means of the one measure, scaled."""
    scores = data.score_table()
    spread = params.scale * float(np.ptp(scores.means[:, 0]))
    return Computed({"measure": scores.measures[0], "spread": spread, "ratios": {scores.measures[0]: spread}})


TOY = Analysis(
    "toy-spread",
    "The spread of the run means, scaled.",
    "no paper: a test's toy",
    SpreadParams,
    _spread,
    "numpy.ptp",
    "ties",
    reads="scores",
)
