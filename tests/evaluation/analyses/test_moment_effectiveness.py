"""AxIoU paper Fig. 5 data: systems sorted by the mean R@K,theta (by hand), measures carried with their K and theta."""

from __future__ import annotations

import numpy as np
import pytest

from app.evaluation.analyses.moment_effectiveness import moment_effectiveness


def test_sorted_by_the_mean_recall_measures():
    measures = ["R@1,0.5", "R@5,0.7", "AxIoU@5"]
    means = np.array([[0.2, 0.4, 0.9], [0.5, 0.3, 0.1], [0.3, 0.3, 0.5]])
    # mean R@: blind 0.3, 2dtan 0.4, scdm 0.3 -> 2dtan, then the tie blind / scdm by name; AxIoU does not count
    result = moment_effectiveness(["blind", "2dtan", "scdm"], measures, means)
    assert result.runs == ["2dtan", "blind", "scdm"]
    assert result.key.tolist() == pytest.approx([0.4, 0.3, 0.3])
    assert result.scores[:, 2].tolist() == [0.1, 0.9, 0.5]
    assert result.families == ["R", "R", "AxIoU"] and result.cutoffs == [1, 5, 5]
    assert result.thresholds == [0.5, 0.7, None] and result.sort_by == "mean R@K,theta"
    data = result.to_dict()
    assert data["measures"][1] == {"measure": "R@5,0.7", "family": "R", "k": 5, "theta": 0.7, "scores": [0.3, 0.4, 0.3]}


def test_sort_by_a_named_measure_or_all_measures():
    means = np.array([[0.2, 0.9], [0.5, 0.1]])
    assert moment_effectiveness(["a", "b"], ["R@1,0.5", "AxIoU@1"], means, sort_by="AxIoU@1").runs == ["a", "b"]
    only_axiou = moment_effectiveness(["a", "b"], ["AxIoU@1", "AxIoU@5"], means)
    assert only_axiou.sort_by == "mean of all measures" and only_axiou.runs == ["a", "b"]  # 0.55 vs 0.3
    with pytest.raises(ValueError):
        moment_effectiveness(["a", "b"], ["AxIoU@1", "AxIoU@5"], means, sort_by="R@1,0.5")
