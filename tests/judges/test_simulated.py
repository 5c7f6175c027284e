"""The simulated model judge: its error rate, informative probabilities, determinism per item, and the judge call."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from app.judges.simulated import judge, simulate


def pool(n: int) -> tuple[np.ndarray, list[tuple[str, str]]]:
    """n items over 5 topics, a third relevant (graded 1 or 2)."""
    rng = np.random.default_rng(0)
    grades = np.where(rng.random(n) < 1 / 3, rng.choice([1, 2], n), 0)
    return grades, [(str(i % 5), f"doc{i}") for i in range(n)]


@pytest.mark.parametrize("error_rate", [0.0, 0.2, 0.4])
def test_errors_at_the_set_rate_and_grades_kept(error_rate: float) -> None:
    """The model's relevance differs from the truth on error_rate of the items (within 4 SE); a relevant item that
    stays relevant keeps its grade; the probability agrees with the grade (>= 0.5 iff relevant)."""
    grades, keys = pool(20000)
    grade, probability = simulate(grades, keys, error_rate=error_rate, noise=0.5, seed=3, max_grade=2)
    wrong = (grade >= 1) != (grades >= 1)
    assert abs(wrong.mean() - error_rate) <= 4 * np.sqrt(error_rate * (1 - error_rate) / 20000) + 1e-12
    kept = (grades >= 1) & (grade >= 1)
    assert np.array_equal(grade[kept], grades[kept])
    assert np.all(grade[(grades == 0) & (grade >= 1)] == 1)
    assert np.array_equal(probability >= 0.5, grade >= 1)


def test_probability_carries_information_set_by_noise() -> None:
    """Wrong labels are less confident than right ones; noise 0 separates them fully, noise 1 not at all."""
    grades, keys = pool(20000)
    gaps = {}
    for noise in (0.0, 0.5, 1.0):
        grade, probability = simulate(grades, keys, error_rate=0.3, noise=noise, seed=1, max_grade=2)
        confidence = np.maximum(probability, 1 - probability)
        wrong = (grade >= 1) != (grades >= 1)
        gaps[noise] = confidence[~wrong].mean() - confidence[wrong].mean()
        if noise == 0.0:
            assert confidence[wrong].max() < confidence[~wrong].min()
    assert gaps[0.0] > gaps[0.5] > 0.05
    assert abs(gaps[1.0]) < 0.01


def test_verdicts_depend_only_on_seed_topic_and_docno() -> None:
    """A verdict is the same whatever batch or order it comes in; another seed changes it."""
    grades, keys = pool(3000)
    grade, probability = simulate(grades, keys, error_rate=0.3, noise=0.5, seed=9, max_grade=2)
    order = np.random.default_rng(1).permutation(3000)[:700]
    part = simulate(grades[order], [keys[i] for i in order], error_rate=0.3, noise=0.5, seed=9, max_grade=2)
    assert np.array_equal(part[0], grade[order]) and np.array_equal(part[1], probability[order])
    other = simulate(grades, keys, error_rate=0.3, noise=0.5, seed=10, max_grade=2)
    assert not np.array_equal(other[1], probability)
    with pytest.raises(ValueError, match="error_rate"):
        simulate(grades, keys, error_rate=1.5, noise=0.5, seed=0)


def test_judge_reads_the_truth_from_qrels(tmp_path: Path) -> None:
    """judge() takes the batch API's items and string options; truth qrels[topic][shot_id], missing = 0."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 s1 2\n1 0 s2 0\n2 0 s1 1\n")
    items = [
        {"item_id": i, "topic": topic, "shot_id": shot, "title": "", "description": "", "video_id": "v",
         "start": 0.0, "end": 1.0, "media_url": "", "keyframe_urls": []}
        for i, (topic, shot) in enumerate([("1", "s1"), ("1", "s2"), ("2", "s1"), ("2", "s9")])
    ]  # fmt: skip
    verdicts = judge(items, qrels=str(qrels), error_rate="0", noise="0.5", seed="4")
    assert [v["grade"] for v in verdicts] == [2, 0, 1, 0]
    assert all((v["probability"] >= 0.5) == (v["grade"] >= 1) for v in verdicts)
    flipped = judge(items, qrels=str(qrels), error_rate="1", noise="0", seed="4")
    assert [v["grade"] for v in flipped] == [0, 1, 0, 1]
    assert judge(items[::-1], qrels=str(qrels), error_rate="0.3", seed=4)[::-1] == judge(
        items, qrels=str(qrels), error_rate=0.3, seed="4"
    )


def test_bias_makes_favoured_false_positives_at_the_set_rate_and_leaves_the_rest() -> None:
    """A favoured non-relevant item is called relevant with probability e + (1 - e) bias (within 4 binomial SE),
    confidently; every unfavoured item and every relevant item keeps the unbiased judge's verdict (same seed)."""
    grades, keys = pool(20000)
    favour = np.random.default_rng(5).random(20000) < 0.5
    plain = simulate(grades, keys, error_rate=0.2, noise=0.5, seed=3, max_grade=2)
    grade, probability = simulate(grades, keys, error_rate=0.2, noise=0.5, seed=3, max_grade=2, favour=favour, bias=0.4)
    same = ~favour | (grades >= 1)
    assert np.array_equal(grade[same], plain[0][same]) and np.array_equal(probability[same], plain[1][same])
    target = favour & (grades == 0)
    rate, expected = (grade[target] >= 1).mean(), 0.2 + 0.8 * 0.4
    assert abs(rate - expected) <= 4 * np.sqrt(expected * (1 - expected) / target.sum())
    assert np.all(grade[target & (grade >= 1)] == 1)
    biased = target & (grade >= 1) & (plain[0] == 0)
    symmetric = (grades == 0) & (plain[0] >= 1)
    assert probability[biased].mean() > plain[1][symmetric].mean() + 0.1  # as sure as a right label, not unsure
    as_set = {key for key, flag in zip(keys, favour.tolist(), strict=True) if flag}
    again = simulate(grades, keys, error_rate=0.2, noise=0.5, seed=3, max_grade=2, favour=as_set, bias=0.4)
    assert np.array_equal(again[0], grade) and np.array_equal(again[1], probability)
    with pytest.raises(ValueError, match="favour has 3 flags"):
        simulate(grades, keys, error_rate=0.2, noise=0.5, seed=3, favour=np.ones(3, bool), bias=0.4)
    with pytest.raises(ValueError, match="bias"):
        simulate(grades, keys, error_rate=0.2, noise=0.5, seed=3, bias=1.2)


def test_overrate_adds_false_positives_everywhere_and_combines_with_bias() -> None:
    """Overrate o: an unfavoured non-relevant item is relevant w.p. e + (1 - e) o, a favoured one w.p.
    e + (1 - e)(1 - (1 - o)(1 - b)); relevant items keep the unbiased verdicts."""
    grades, keys = pool(30000)
    favour = np.arange(30000) % 3 == 0
    plain = simulate(grades, keys, error_rate=0.3, noise=0.5, seed=8, max_grade=2)
    grade, _ = simulate(
        grades, keys, error_rate=0.3, noise=0.5, seed=8, max_grade=2, favour=favour, bias=0.5, overrate=0.1
    )
    for flag, expected in ((False, 0.3 + 0.7 * 0.1), (True, 0.3 + 0.7 * (1 - 0.9 * 0.5))):
        rows = (grades == 0) & (favour == flag)
        assert abs((grade[rows] >= 1).mean() - expected) <= 4 * np.sqrt(expected * (1 - expected) / rows.sum())
    assert np.array_equal(grade[grades >= 1], plain[0][grades >= 1])


def test_judge_favours_the_top_k_of_the_given_runs(tmp_path: Path) -> None:
    """favour_runs (a file or a directory) and favour_depth: with error 0 and bias 1 exactly the non-relevant items
    those runs rank in their top K turn relevant; a missing path is a ValueError naming favour_runs."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 a 0\n1 0 b 0\n1 0 c 1\n2 0 a 0\n2 0 b 0\n")
    runs = tmp_path / "family"
    runs.mkdir()
    (runs / "r1").write_text("1 Q0 b 1 9.0 r1\n1 Q0 a 2 8.0 r1\n2 Q0 a 1 5.0 r1\n")
    (runs / "r2").write_text("1 Q0 c 1 3.0 r2\n2 Q0 b 1 2.0 r2\n2 Q0 a 2 2.0 r2\n")
    items = [{"topic": t, "shot_id": s} for t, s in [("1", "a"), ("1", "b"), ("1", "c"), ("2", "a"), ("2", "b")]]
    grades = [v["grade"] for v in judge(items, qrels=str(qrels), error_rate="0", favour_runs=str(runs),
                                        favour_depth="1", bias="1")]  # fmt: skip
    assert grades == [0, 1, 1, 1, 1]  # top 1: r1 -> 1/b, 2/a; r2 -> 1/c (relevant already), 2/b (ties: docno desc)
    one = [v["grade"] for v in judge(items, qrels=str(qrels), error_rate=0, favour_runs=str(runs / "r1"),
                                     favour_depth=2, bias=1)]  # fmt: skip
    assert one == [1, 1, 1, 1, 0]
    unbiased = judge(items, qrels=str(qrels), error_rate="0.3", seed=2)
    assert judge(items, qrels=str(qrels), error_rate="0.3", seed=2, favour_runs=str(runs), bias="0") == unbiased
    with pytest.raises(ValueError, match="favour_runs"):
        judge(items, qrels=str(qrels), favour_runs=str(tmp_path / "nowhere"), bias="0.5")
