"""The built-in simulated judge: a model assessor made from known qrels, wrong at a set rate, for benches and demos.

Generative rule, per item with true grade g (relevant: g >= 1), from two uniforms u1, u2 hashed from
(seed, topic, docno) alone (so a verdict never depends on the batch it came in):

- the model errs iff u1 < error_rate: relevant <-> not relevant. A relevant item that stays relevant keeps its
  grade (capped at `max_grade`); a non-relevant item taken for relevant gets grade 1; an error on a relevant item
  gives grade 0.
- its confidence in its own label is c = 0.5 + 0.5 * sigmoid(x), x = (1 - noise) * (+2 if right, -2 if wrong) +
  noise * z, z = Phi^-1(u2) standard normal; the probability of relevance is c when it calls the item relevant,
  1 - c otherwise. With noise 0 the right labels are confident (c = 0.94) and the wrong ones unsure (c = 0.56);
  with noise 1 the confidence says nothing about which labels are wrong.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import special

from app.evaluation.formats.trec_files import read_qrels

_SCALE = float(2**53)


def _uniforms(keys: Sequence[tuple[str, str]], seed: int) -> np.ndarray:
    """float [n, 2]: uniforms in (0, 1) from a hash of (seed, topic, docno), the same whatever the batch."""
    raw = b"".join(
        hashlib.blake2b(f"{seed}\x1f{topic}\x1f{docno}".encode(), digest_size=16).digest() for topic, docno in keys
    )
    words = np.frombuffer(raw, dtype="<u8").reshape(len(keys), 2)
    uniform: np.ndarray = ((words >> np.uint64(11)).astype(np.float64) + 0.5) / _SCALE
    return uniform


def simulate(
    grades: np.ndarray,
    keys: Sequence[tuple[str, str]],
    *,
    error_rate: float,
    noise: float,
    seed: int,
    max_grade: int = 1,
) -> tuple[np.ndarray, np.ndarray]:
    """The simulated model's grade and probability of relevance of each item (true `grades`, keys (topic, docno))."""
    if not 0.0 <= error_rate <= 1.0:
        raise ValueError(f"error_rate must be in [0, 1], got {error_rate!r}")
    if not 0.0 <= noise <= 1.0:
        raise ValueError(f"noise must be in [0, 1], got {noise!r}")
    if max_grade < 1:
        raise ValueError(f"max_grade must be at least 1, got {max_grade!r}")
    truth = np.asarray(grades, dtype=np.int64)
    if len(truth) != len(keys):
        raise ValueError(f"{len(truth)} grades but {len(keys)} keys")
    if len(truth) == 0:
        return np.zeros(0, np.int64), np.zeros(0)
    u = _uniforms(keys, seed)
    wrong = u[:, 0] < error_rate
    relevant = truth >= 1
    called = relevant ^ wrong
    grade = np.where(called, np.where(relevant, np.clip(truth, 1, max_grade), 1), 0).astype(np.int64)
    x = (1.0 - noise) * np.where(wrong, -2.0, 2.0) + noise * special.ndtri(u[:, 1])
    confidence = 0.5 + 0.5 * special.expit(x)
    probability = np.where(called, confidence, 1.0 - confidence)
    return grade, probability


@functools.lru_cache(maxsize=8)
def _truth(path: str) -> tuple[dict[tuple[str, str], int], int]:
    """The qrels at `path` as {(topic, docno): grade} and their highest grade (read once per path)."""
    qrels = read_qrels(path)
    table = {
        (str(t), str(d)): int(g)
        for t, d, g in zip(qrels.topics.tolist(), qrels.docs.tolist(), qrels.grades.tolist(), strict=True)
    }
    return table, max(1, int(np.max(qrels.grades, initial=1)))


def judge(
    items: list[dict[str, Any]],
    *,
    qrels: str,
    error_rate: str | float = 0.2,
    noise: str | float = 0.5,
    seed: str | int = 0,
    max_grade: str | int | None = None,
) -> list[dict[str, Any]]:
    """Verdicts `[{"grade", "probability"}]` in item order, the truth being qrels[topic][shot_id] (missing: 0).

    Options arrive as strings from the command line; `max_grade` defaults to the qrels' highest grade.
    """
    table, top = _truth(str(qrels))
    keys = [(str(item["topic"]), str(item["shot_id"])) for item in items]
    truth = np.array([table.get(key, 0) for key in keys], dtype=np.int64)
    grade, probability = simulate(
        truth,
        keys,
        error_rate=float(error_rate),
        noise=float(noise),
        seed=int(seed),
        max_grade=top if max_grade is None else int(max_grade),
    )
    return [
        {"grade": int(g), "probability": float(p)} for g, p in zip(grade.tolist(), probability.tolist(), strict=True)
    ]
