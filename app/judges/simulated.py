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

Systematic bias (off by default; with `bias` and `overrate` 0 the verdicts are exactly the above). Real model judges
are not wrong at random: they favour systems built on their own model family (Balog, Metzler and Qin, "Rankers,
Judges, and Assistants", SIGIR 2025) and overrate, often confidently (Clarke and Dietz, "LLM-based relevance
assessment still can't replace human relevance assessment", arXiv 2412.17156; Yu et al., "When LLM judges inflate
scores", arXiv 2602.17170). A third uniform u3, hashed from (seed, topic, docno) under another salt (so u1, u2 and
the unbiased verdicts do not move), turns a non-relevant item that the symmetric rule left non-relevant into a false
positive (grade 1) iff

    u3 < q_i = 1 - (1 - overrate) (1 - bias * favoured_i)

(two independent causes: a general overrating, and a pull towards the items the judge's own family ranks, flagged by
`favour`). Such a false positive is as confident as a right label (x = (1 - noise) * 2 + noise * z): confidence
cannot expose it. A favoured non-relevant item is thus called relevant with probability e + (1 - e) q; relevant
items and unfavoured items (when overrate is 0) are untouched.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

import numpy as np
from scipy import special

from app.evaluation.formats.trec_files import read_qrels, read_run
from app.evaluation.pools.builders import build_pool

_SCALE = float(2**53)


def _uniforms(keys: Sequence[tuple[str, str]], seed: int, salt: str = "") -> np.ndarray:
    """float [n, 2]: uniforms in (0, 1) from a hash of (seed, topic, docno), the same whatever the batch."""
    raw = b"".join(
        hashlib.blake2b(f"{salt}{seed}\x1f{topic}\x1f{docno}".encode(), digest_size=16).digest()
        for topic, docno in keys
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
    favour: np.ndarray | AbstractSet[tuple[str, str]] | None = None,
    bias: float = 0.0,
    overrate: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """The simulated model's grade and probability of relevance of each item (true `grades`, keys (topic, docno)).

    `favour`: the items the judge is biased towards, a bool per item or a set of (topic, docno) keys (None: none).
    """
    for name, rate in (("error_rate", error_rate), ("bias", bias), ("overrate", overrate)):
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"{name} must be in [0, 1], got {rate!r}")
    if not 0.0 <= noise <= 1.0:
        raise ValueError(f"noise must be in [0, 1], got {noise!r}")
    if max_grade < 1:
        raise ValueError(f"max_grade must be at least 1, got {max_grade!r}")
    truth = np.asarray(grades, dtype=np.int64)
    if len(truth) != len(keys):
        raise ValueError(f"{len(truth)} grades but {len(keys)} keys")
    if len(truth) == 0:
        return np.zeros(0, np.int64), np.zeros(0)
    favoured = _favoured(favour, keys)
    u = _uniforms(keys, seed)
    wrong = u[:, 0] < error_rate
    relevant = truth >= 1
    called = relevant ^ wrong
    if bias > 0.0 or overrate > 0.0:
        pull = 1.0 - (1.0 - overrate) * (1.0 - bias * favoured)
        called |= ~relevant & (_uniforms(keys, seed, "bias\x1f")[:, 0] < pull)
    grade = np.where(called, np.where(relevant, np.clip(truth, 1, max_grade), 1), 0).astype(np.int64)
    x = (1.0 - noise) * np.where(wrong, -2.0, 2.0) + noise * special.ndtri(u[:, 1])
    confidence = 0.5 + 0.5 * special.expit(x)
    probability = np.where(called, confidence, 1.0 - confidence)
    return grade, probability


def _favoured(favour: np.ndarray | AbstractSet[tuple[str, str]] | None, keys: Sequence[tuple[str, str]]) -> np.ndarray:
    """float [n]: 1.0 where the item is favoured, from a bool per item or a set of keys."""
    if favour is None:
        return np.zeros(len(keys))
    if isinstance(favour, AbstractSet):
        return np.array([key in favour for key in keys], dtype=np.float64)
    flags = np.asarray(favour, dtype=bool)
    if flags.shape != (len(keys),):
        raise ValueError(f"favour has {flags.size} flags but there are {len(keys)} keys")
    return flags.astype(np.float64)


@functools.lru_cache(maxsize=4)
def favoured_items(paths: str, depth: int) -> frozenset[tuple[str, str]]:
    """The (topic, docno) pairs that the runs at `paths` (comma-separated files or directories) rank in their top
    `depth` (trec_eval's order): the items a judge "of their model family" favours."""
    if depth < 1:
        raise ValueError(f"favour_depth must be at least 1, got {depth!r}")
    files: list[Path] = []
    for part in (p.strip() for p in paths.split(",")):
        if not part:
            continue
        path = Path(part)
        if path.is_dir():
            files.extend(sorted(f for f in path.iterdir() if f.is_file()))
        elif path.is_file():
            files.append(path)
        else:
            raise ValueError(f"favour_runs: {part!r} is neither a run file nor a directory")
    if not files:
        raise ValueError("favour_runs names no run file")
    pool = build_pool([read_run(f) for f in files], depth=depth)
    return frozenset(zip(pool.topics.astype(str).tolist(), pool.docs.astype(str).tolist(), strict=True))


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
    favour_runs: str | None = None,
    favour_depth: str | int = 10,
    bias: str | float = 0.0,
    overrate: str | float = 0.0,
) -> list[dict[str, Any]]:
    """Verdicts `[{"grade", "probability"}]` in item order, the truth being qrels[topic][shot_id] (missing: 0).

    Options arrive as strings from the command line; `max_grade` defaults to the qrels' highest grade. `favour_runs`
    (comma-separated run files or directories) and `favour_depth` K: the judge shares a model family with those runs
    and calls the non-relevant items they rank in their top K relevant at the extra rate `bias` (see the module).
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
        favour=None if not favour_runs else favoured_items(str(favour_runs), int(favour_depth)),
        bias=float(bias),
        overrate=float(overrate),
    )
    return [
        {"grade": int(g), "probability": float(p)} for g, p in zip(grade.tolist(), probability.tolist(), strict=True)
    ]
