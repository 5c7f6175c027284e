"""Model-assisted judging: scores estimated from a model's labels of every pooled item, corrected by a random sample
of human judgements (prediction-powered inference with Horvitz-Thompson weights).

References: Angelopoulos, Bates, Fannjiang, Jordan and Zrnic, "Prediction-powered inference", Science 382, 2023
(the rectifier: the model's label plus the inverse-probability-weighted human correction); Zrnic and Candes,
"Active Statistical Inference", ICML 2024 (sampling the items a model is unsure of more often, with inverse
probability weights keeping the estimate unbiased).

The contract. Every pooled item (the qrels' (topic, docno) pairs) carries a model label; a Poisson sample of them,
item i drawn with its own known probability pi_i (`inclusion_probabilities`, `verification_draw`), is judged by a
person. The target is the score the FULL human judgement of the pool would give, per run, topic and measure, on
these topics. Each item gets a rectified label

    y_i = m_i + xi_i (h_i - m_i) / pi_i        (xi_i: drawn, h_i: human label, m_i: model label)

whose expectation over the draw is h_i whatever the model says. Unpooled docs count 0, as trec_eval. P@k is linear
in the y (unbiased); AP and nDCG@k are ratio estimators (unbiased numerator and denominator, consistent ratio); with
pi_i = 1 everywhere the estimates are trec_eval's values of the human qrels (relevance level 1, gains = grades).
Intervals are for each run's mean over these topics and hold only the labelling variance (the human sample's), not
the topic sampling variance: they say where the full-human mean on these topics lies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.evaluation.records import RunTable


@dataclass(frozen=True)
class VerifiedItems:
    """Every pooled item once, as parallel arrays: the model's label, the verification design and the human label.

    `model_grade` is the model's grade (-1: no model label, then the model label is 0); `model_probability` its
    probability of relevance (NaN when the model gave none); `human_grade` the person's grade (-1: not judged by a
    person); `inclusion` the probability pi_i with which the item was to be drawn for verification (1.0 where people
    judge everything); `sampled` whether it was drawn (a drawn item must carry a human grade; a human grade on an item
    not drawn is ignored, as it is not part of the random design).
    """

    topic: np.ndarray  # str [n]
    docno: np.ndarray  # str [n]
    model_grade: np.ndarray  # int64 [n], -1 = no model label
    model_probability: np.ndarray  # float64 [n], NaN = none
    human_grade: np.ndarray  # int64 [n], -1 = not judged by a person
    inclusion: np.ndarray  # float64 [n], pi_i in (0, 1]
    sampled: np.ndarray  # bool [n], xi_i

    def __len__(self) -> int:
        """Number of pooled items."""
        return len(self.docno)


@dataclass(frozen=True)
class Estimates:
    """Prediction-powered scores: per run x measure x topic values (as `Results.values`), per run x measure means
    over the topics, and each mean's labelling standard error and interval at `level`.

    `n_human`: items judged by a person and used (drawn); `n_model`: items with a model label; `n_items`: pooled items.
    """

    runs: list[str]
    topics: list[str]  # the pooled items' topics, sorted (every one averaged over, as trec_eval -c)
    measures: list[str]  # canonical names (registry.resolve)
    values: np.ndarray  # float64 [run, measure, topic]
    mean: np.ndarray  # float64 [run, measure]
    se: np.ndarray  # float64 [run, measure], the labelling standard error of the mean
    ci_low: np.ndarray  # float64 [run, measure]
    ci_high: np.ndarray  # float64 [run, measure]
    level: float
    n_human: int
    n_model: int
    n_items: int

    def to_dict(self) -> dict[str, Any]:
        """JSON form: counts, level, and per run {measure: {mean, se, ci_low, ci_high, topics: {topic: value}}}."""
        runs: dict[str, Any] = {}
        for r, run in enumerate(self.runs):
            runs[run] = {
                measure: {
                    "mean": float(self.mean[r, m]),
                    "se": float(self.se[r, m]),
                    "ci_low": float(self.ci_low[r, m]),
                    "ci_high": float(self.ci_high[r, m]),
                    "topics": dict(zip(self.topics, self.values[r, m].tolist(), strict=True)),
                }
                for m, measure in enumerate(self.measures)
            }
        return {
            "level": self.level,
            "n_human": self.n_human,
            "n_model": self.n_model,
            "n_items": self.n_items,
            "measures": list(self.measures),
            "topics": list(self.topics),
            "runs": runs,
        }


def inclusion_probabilities(
    probability: np.ndarray, share: float, *, stratify: bool, floor: float = 0.05
) -> np.ndarray:
    """Each item's probability of entering the human verification sample of ONE topic (mean exactly `share`)."""
    raise NotImplementedError


def verification_draw(seed: int, topic: str, docnos: Sequence[str], probabilities: np.ndarray) -> np.ndarray:
    """Poisson sampling of one topic's items: item i drawn iff u_i < pi_i, u seeded per topic in docno order."""
    raise NotImplementedError


def prediction_powered(
    runs: Sequence[RunTable],
    items: VerifiedItems,
    measures: Sequence[str],
    *,
    level: float = 0.95,
    max_results: int = 1000,
    names: Sequence[str] | None = None,
) -> Estimates:
    """Prediction-powered estimates of every run x topic x measure and each run's mean with its labelling interval.

    Measures: P@k, nDCG@k (and nDCG) and AP in any registry spelling (`P_10`, `ndcg_cut_10`, `map`); others raise
    MeasureError. Topics: those of `items`. Runs named by `names`, else their tags.
    """
    raise NotImplementedError
