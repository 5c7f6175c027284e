"""Model selection by each validation measure, judged by every test measure (AxIoU paper, section 6.6, Fig. 8).

The paper trains 640 variants of one system (2D-TAN), selects for each of 12 validation measures the variant with
the best mean on the validation split, scores the 12 selected variants on the test split with every test measure,
and plots per test measure the z-scores of the 12 selected models (mean 0 over them): a validation measure whose line
is high and flat picks a model that is good whatever the test measure.

Here every run is a variant scored on the same topics, and the topics are split in two: the validation topics given,
or a seeded random share of them (the rest are the test topics). Per validation measure the variant with the highest
mean over the validation topics is selected (ties: the first in run order, and the tie is counted); its mean over the
test topics under each test measure is its test score; per test measure the selected models' test scores become
z-scores, (x - mean) / s.d. over the selected models (population s.d., a model selected by several measures counted
once per measure, as the paper's 12 lines; all 0 when they all score the same). A (run, topic) score that is missing
counts 0, as in the means.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

DEFAULT_VALIDATION_SHARE = 0.5


@dataclass(frozen=True)
class ModelSelectionResult:
    """The variant each validation measure selects and its test scores and z-scores under each test measure."""

    runs: list[str]
    validation_measures: list[str]
    test_measures: list[str]
    validation_topics: list[str]
    test_topics: list[str]
    seed: int | None  # None when the validation topics were given
    selected: list[int]  # [n_validation] index of the selected run
    tied: list[int]  # [n_validation] runs sharing the best validation mean
    validation_score: np.ndarray  # [n_validation] the selected run's validation mean
    test_score: np.ndarray  # [n_validation, n_test] the selected run's test mean
    z: np.ndarray  # [n_validation, n_test]

    @property
    def above_average(self) -> list[str]:
        """The validation measures whose model is at or above the selected models' mean on every test measure."""
        return [m for i, m in enumerate(self.validation_measures) if bool(np.all(self.z[i] >= 0))]

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return {
            "runs": len(self.runs),
            "validation_measures": self.validation_measures,
            "test_measures": self.test_measures,
            "validation_topics": self.validation_topics,
            "test_topics": self.test_topics,
            "seed": self.seed,
            "selections": [
                {
                    "validation_measure": m,
                    "run": self.runs[self.selected[i]],
                    "tied": self.tied[i],
                    "validation_score": float(self.validation_score[i]),
                    "test": dict(zip(self.test_measures, self.test_score[i].tolist(), strict=True)),
                    "z": dict(zip(self.test_measures, self.z[i].tolist(), strict=True)),
                }
                for i, m in enumerate(self.validation_measures)
            ],
            "above_average": self.above_average,
        }


def split_topics(
    topics: Sequence[str],
    validation: Sequence[str] | None = None,
    *,
    share: float = DEFAULT_VALIDATION_SHARE,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the validation and the test topics: the validation topics named, else a seeded random `share` of
    them (at least one topic on each side)."""
    n = len(topics)
    if n < 2:
        raise ValueError("model selection needs at least two topics: one to validate on, one to test on")
    if validation is not None:
        where = {t: i for i, t in enumerate(topics)}
        unknown = [t for t in validation if t not in where]
        if unknown:
            raise ValueError(f"validation_topics: no topic {', '.join(map(repr, unknown[:5]))} in the scores")
        chosen = np.zeros(n, dtype=bool)
        chosen[[where[t] for t in validation]] = True
    else:
        if not 0 < share < 1:
            raise ValueError("validation_share must be between 0 and 1")
        k = min(max(int(round(share * n)), 1), n - 1)
        chosen = np.zeros(n, dtype=bool)
        chosen[np.random.default_rng(seed).permutation(n)[:k]] = True
    if chosen.all() or not chosen.any():
        raise ValueError("validation_topics: leave at least one topic for the test split, and name at least one")
    return np.flatnonzero(chosen), np.flatnonzero(~chosen)


def _column(measures: Sequence[str], name: str, field: str) -> int:
    """Index of a measure among those scored, or ValueError naming the field."""
    if name not in measures:
        raise ValueError(f"{field}: {name!r} is not among the measures scored ({', '.join(measures)})")
    return list(measures).index(name)


def model_selection(
    runs: Sequence[str],
    measures: Sequence[str],
    topics: Sequence[str],
    values: np.ndarray,
    *,
    validation_measures: Sequence[str] | None = None,
    test_measures: Sequence[str] | None = None,
    validation_topics: Sequence[str] | None = None,
    validation_share: float = DEFAULT_VALIDATION_SHARE,
    seed: int = 0,
) -> ModelSelectionResult:
    """Select a variant per validation measure on the validation topics, score it on the test topics.

    `values` is [n_run, n_measure, n_topic] (NaN: missing, counted 0); the measure lists default to every measure.
    """
    scores = np.nan_to_num(np.asarray(values, dtype=np.float64))
    if scores.shape != (len(runs), len(measures), len(topics)):
        raise ValueError("values must be [n_run, n_measure, n_topic]")
    if len(runs) < 1:
        raise ValueError("model selection needs at least one variant")
    val_names = list(validation_measures) if validation_measures else list(measures)
    test_names = list(test_measures) if test_measures else list(measures)
    val_cols = [_column(measures, m, "validation_measures") for m in val_names]
    test_cols = [_column(measures, m, "test_measures") for m in test_names]
    val_idx, test_idx = split_topics(topics, validation_topics, share=validation_share, seed=seed)
    val_means = scores[:, val_cols][:, :, val_idx].mean(axis=2)  # [n_run, n_validation]
    test_means = scores[:, test_cols][:, :, test_idx].mean(axis=2)  # [n_run, n_test]
    best = val_means.max(axis=0)
    selected = val_means.argmax(axis=0)  # the first of tied runs
    tied = (val_means == best[None, :]).sum(axis=0)
    chosen = test_means[selected]  # [n_validation, n_test]
    spread = chosen.std(axis=0)
    z = np.divide(chosen - chosen.mean(axis=0), spread, out=np.zeros_like(chosen), where=spread > 1e-12)
    return ModelSelectionResult(
        runs=list(runs),
        validation_measures=val_names,
        test_measures=test_names,
        validation_topics=[topics[i] for i in val_idx],
        test_topics=[topics[i] for i in test_idx],
        seed=None if validation_topics is not None else seed,
        selected=selected.tolist(),
        tied=tied.tolist(),
        validation_score=best,
        test_score=chosen,
        z=z,
    )
