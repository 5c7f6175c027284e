"""Model selection (AxIoU paper, section 6.6, Fig. 8) against a brute-force re-computation in plain Python, and a case
worked by hand."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from app.evaluation.analyses.model_selection import model_selection, split_topics


def _brute(values, runs, measures, topics, validation, test, val_topics):
    """Plain loops: per validation measure the first run with the best validation mean, its test means, z-scores."""
    vt = [topics.index(t) for t in val_topics]
    tt = [i for i in range(len(topics)) if topics[i] not in val_topics]

    def mean(run, measure, idx):
        row = [values[run][measures.index(measure)][i] for i in idx]
        return sum(0.0 if math.isnan(v) else v for v in row) / len(row)

    chosen = []
    for m in validation:
        best, best_run = -math.inf, -1
        for r in range(len(runs)):
            score = mean(r, m, vt)
            if score > best:
                best, best_run = score, r
        chosen.append(best_run)
    z = {}
    for t in test:
        xs = [mean(r, t, tt) for r in chosen]
        mu = sum(xs) / len(xs)
        sd = math.sqrt(sum((x - mu) ** 2 for x in xs) / len(xs))
        z[t] = [0.0 if sd == 0 else (x - mu) / sd for x in xs]
    return [runs[r] for r in chosen], z


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_selection_and_z_scores_are_those_of_plain_loops(seed: int) -> None:
    rng = random.Random(seed)
    runs = [f"variant{i}" for i in range(9)]
    measures = ["AxIoU@1", "AxIoU@5", "R@1,0.5", "R@1,0.7", "R@5,0.5"]
    topics = [f"q{i}" for i in range(14)]
    # variants share a latent quality, so that the measures mostly but not always agree; a few scores are missing
    quality = [rng.random() for _ in runs]
    values = [
        [[min(1.0, max(0.0, quality[r] + rng.gauss(0, 0.3))) for _ in topics] for _ in measures] for r in range(9)
    ]
    values[2][1][3] = math.nan
    val_topics = rng.sample(topics, 6)
    validation, test = measures, ["R@1,0.5", "R@1,0.7", "R@5,0.5"]
    result = model_selection(
        runs,
        measures,
        topics,
        np.array(values),
        validation_measures=validation,
        test_measures=test,
        validation_topics=val_topics,
    )
    selected, z = _brute(values, runs, measures, topics, validation, test, val_topics)
    data = result.to_dict()
    assert [row["run"] for row in data["selections"]] == selected
    assert len(set(selected)) > 1  # the case separates the measures
    for t in test:
        assert [row["z"][t] for row in data["selections"]] == pytest.approx(z[t], abs=1e-12)
    assert sorted(data["validation_topics"]) == sorted(val_topics) and data["seed"] is None
    assert data["above_average"] == [m for i, m in enumerate(validation) if all(z[t][i] >= 0 for t in test)]


def test_a_case_worked_by_hand() -> None:
    # 3 variants, 1 measure pair: A scores on topics (v1, v2 | t1, t2)
    values = np.array(
        [
            [[0.9, 0.9, 0.1, 0.1], [0.2, 0.2, 0.2, 0.2]],  # a: best on m1 in validation, poor in test
            [[0.5, 0.5, 0.6, 0.6], [0.8, 0.8, 0.9, 0.7]],  # b: best on m2 in validation
            [[0.1, 0.1, 0.9, 0.9], [0.1, 0.1, 0.1, 0.1]],
        ]
    )
    result = model_selection(
        ["a", "b", "c"], ["m1", "m2"], ["v1", "v2", "t1", "t2"], values, validation_topics=["v1", "v2"]
    )
    # m1 selects a (0.9), m2 selects b (0.8); on the test topics a scores m1 0.1, m2 0.2; b scores 0.6, 0.8
    assert [result.runs[i] for i in result.selected] == ["a", "b"]
    np.testing.assert_allclose(result.test_score, [[0.1, 0.2], [0.6, 0.8]], atol=1e-12)
    np.testing.assert_allclose(result.z, [[-1.0, -1.0], [1.0, 1.0]], atol=1e-12)  # two models: +-1 population s.d.
    assert result.above_average == ["m2"]


def test_ties_go_to_the_first_variant_and_are_counted_and_equal_models_score_zero() -> None:
    values = np.ones((3, 1, 4))
    result = model_selection(["a", "b", "c"], ["m"], list("wxyz"), values, validation_topics=["w"])
    assert result.selected == [0] and result.tied == [3]
    assert result.z.tolist() == [[0.0]]


def test_the_random_split_is_seeded_and_leaves_both_sides_topics() -> None:
    topics = [f"q{i}" for i in range(10)]
    a, b = split_topics(topics, share=0.3, seed=4), split_topics(topics, share=0.3, seed=4)
    assert a[0].tolist() == b[0].tolist() and len(a[0]) == 3 and len(a[1]) == 7
    assert sorted(a[0].tolist() + a[1].tolist()) == list(range(10))
    assert split_topics(topics, share=0.3, seed=5)[0].tolist() != a[0].tolist()
    assert len(split_topics(["x", "y"], share=0.01)[0]) == 1  # at least one each side


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"validation_topics": ["nope"]}, "validation_topics: no topic 'nope'"),
        ({"validation_topics": ["x", "y"]}, "leave at least one topic"),
        ({"test_measures": ["AP"]}, "test_measures: 'AP' is not among"),
        ({"validation_measures": ["AP"]}, "validation_measures: 'AP' is not among"),
    ],
)
def test_bad_input_names_the_field(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        model_selection(["a"], ["m"], ["x", "y"], np.zeros((1, 1, 2)), **kwargs)
