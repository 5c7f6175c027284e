"""Live statistics while a pool is being judged, updated per verdict in constant time.

Per topic: judged and relevant so far, relevant found per 100 judged (overall and over the last `window` verdicts:
the saturation curve's slope), and the estimated number of relevant docs in the pool with a confidence interval
(`budget.relevant_estimate` over the per-stratum counts; a stratified pool's strata, else one stratum, the pool).
The estimate is unbiased only while the judging order is random (the seeded shuffle); for move-to-front and
bandit orders it is marked biased (`random = False`) and stopping advice comes from saturation instead.

Stop or continue, per topic and for the pool, is `budget.judging_advice`, the one rule the budget advisor applies
too: a topic with a sampled stratum judged fewer than twice has no estimate and continues, as does one whose R_hat
interval is wider than `relative_width` of R_hat (random orders) or whose last window still finds relevant docs
(non-random orders); `snapshot(advice)` takes the advice the service computed with the ranking's expected tau
(`live_view`), so the live view and the budget endpoint give one answer.

Over the qrels judged so far: the leave-one-team-out analysis (`leave_out`: a team's unique contributions are the
pooled lines only its pooled runs rank within the pool depth; owners are found once, `pooled_lines.PooledLines.owner`),
tau_b of each team's reduced ranking against the current one, the run-level tau_b and the largest drop in MAP.
AP under the qrels so far is one `lines.APKernel` pass over the pool's lines with "relevant so far" as the kept
subset, so a refresh costs (teams + 1) passes over the relevant retrieved entries, never a full evaluation; it is
computed on request and cached until the next verdict.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from app.evaluation.analyses.budget import TopicSample, entry_samples, judging_advice, relevant_estimate
from app.evaluation.analyses.kendall import tau_b
from app.evaluation.analyses.lines import APKernel, run_mask
from app.evaluation.analyses.pooled_lines import RunBlocks, as_blocks, pooled_lines
from app.evaluation.grading.grade_matrix import summarise_qrels
from app.evaluation.grading.prepared_runs import PreparedRuns
from app.evaluation.records import Qrels


class LiveBoard:
    """Incremental judging statistics over one pool (module docstring)."""

    def __init__(
        self,
        runs: PreparedRuns | RunBlocks,
        pool_topics: Sequence[str] | np.ndarray,
        pool_docs: Sequence[str] | np.ndarray,
        *,
        strata: Sequence[int] | np.ndarray | None = None,
        sampled: Sequence[bool] | np.ndarray | None = None,
        teams: Sequence[str] | None = None,
        pooled: Sequence[str] | None = None,
        depth: int | np.ndarray | Mapping[str, int],  # one for all, one per prepared topic, or per topic name
        random: bool = True,
        window: int = 100,
        min_rate: float = 2.0,
        relative_width: float = 0.2,
    ) -> None:
        topics = np.asarray(pool_topics, dtype=str)
        docs = np.asarray(pool_docs, dtype=str)
        self.random = random
        self.window = window
        self.min_rate = min_rate
        self.relative_width = relative_width
        source = as_blocks(runs, 1000)  # prepared runs or blocks of them (a block held at a time)
        self.runs = list(source.names)
        # every pooled line counts as "relevant" for the kernel: the kept subset is what is relevant so far
        placeholder = Qrels(topics=topics, docs=docs, grades=np.ones(len(docs), dtype=np.int64))
        self.lines = placeholder  # the pool's lines: (topic, doc) of each
        judged_topics, line_topic, _ = summarise_qrels(placeholder)
        self.topics = list(judged_topics.topics)
        self.line_topic = np.asarray(line_topic, dtype=np.int64)
        self.kernel = APKernel.of_blocks(source, placeholder)  # the runs' entries at pooled lines, not the runs
        self.line_of = {(t, d): i for i, (t, d) in enumerate(zip(topics.tolist(), docs.tolist(), strict=True))}
        labels, codes = np.unique(
            np.zeros(len(docs), np.int64) if strata is None else np.asarray(strata), return_inverse=True
        )
        self.strata = labels.tolist()
        self.line_stratum = codes.reshape(-1)
        shape = (len(self.topics), len(labels))
        cell = self.line_topic * len(labels) + self.line_stratum
        self.pooled = np.bincount(cell, minlength=shape[0] * shape[1]).reshape(shape).astype(np.float64)
        in_sample = np.ones(len(docs), dtype=bool) if sampled is None else np.asarray(sampled, dtype=bool)
        self.sampled = np.bincount(cell[in_sample], minlength=shape[0] * shape[1]).reshape(shape).astype(np.float64)
        self.judged = np.zeros(shape)
        self.judged_sampled = np.zeros(shape)  # judged docs of the sample (a verdict outside it counts in judged)
        self.in_sample = in_sample
        self.relevant = np.zeros(shape)
        self.topic_version = np.zeros(len(self.topics), dtype=np.int64)  # verdicts fed per topic (cache keys)
        self.verdict = np.full(len(docs), -1, dtype=np.int64)
        self.recent: list[deque[bool]] = [deque(maxlen=window) for _ in self.topics]
        team_of_run = list(self.runs) if teams is None else [str(t) for t in teams]
        self.teams = list(dict.fromkeys(team_of_run))
        self.team_code = np.array([self.teams.index(t) for t in team_of_run], dtype=np.int64)
        caps = _caps(runs, self.topics, depth)
        self.owner = pooled_lines(source, placeholder, run_mask(self.runs, pooled), self.team_code).owner(caps)
        self.version = 0
        self._cached: tuple[int, dict[str, Any]] | None = None

    def record(self, topic: str, doc: str, grade: int) -> None:
        """Take one verdict (a regrade replaces the earlier one); O(1)."""
        line = self.line_of.get((str(topic), str(doc)))
        if line is None:
            raise KeyError(f"({topic}, {doc}) is not in the pool")
        t, c = self.line_topic[line], self.line_stratum[line]
        old = self.verdict[line]
        if old >= 0:
            self.judged[t, c] -= 1
            self.judged_sampled[t, c] -= self.in_sample[line]
            self.relevant[t, c] -= old >= 1
        self.verdict[line] = int(grade)
        self.judged[t, c] += 1
        self.judged_sampled[t, c] += self.in_sample[line]
        self.relevant[t, c] += grade >= 1
        if old < 0:
            self.recent[t].append(grade >= 1)
        self.version += 1
        self.topic_version[t] += 1

    def saturated(self) -> np.ndarray:
        """bool [topic]: the last `window` verdicts (a full window) found fewer than `min_rate` relevant per 100."""
        return np.array(
            [len(r) == self.window and 100.0 * sum(r) / len(r) < self.min_rate for r in self.recent], dtype=bool
        )

    def queued(self) -> np.ndarray:
        """[topic, stratum] docs of the sample not judged yet (what the judging queue still holds)."""
        queued: np.ndarray = np.maximum(self.sampled - self.judged_sampled, 0.0)
        return queued

    def advice(
        self,
        tau: dict[str, Any] | None = None,
        *,
        target_width: float | None = None,
        relative_width: float | None = None,
        z: float = 1.96,
    ) -> dict[str, Any]:
        """Stop or continue and what to judge next (`budget.judging_advice`; `tau` from `budget.tau_advice`; the
        board's relative width unless given)."""
        return judging_advice(
            list(self.topics),
            [int(s) for s in self.strata],
            self.pooled,
            self.judged,
            self.relevant,
            random=self.random,
            saturated=self.saturated(),
            tau=tau,
            queued=self.queued(),
            target_width=target_width,
            relative_width=self.relative_width if relative_width is None else relative_width,
            z=z,
        )

    def topic_stats(self, advice: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Per topic: judged, relevant, relevant per 100 judged (overall, recent), R_hat with its interval, advice
        (from `advice`, else `self.advice()` without the ranking's tau)."""
        est = relevant_estimate(self.pooled, self.judged, self.relevant)
        rows = (advice if advice is not None else self.advice())["topics"]
        out = []
        for t, topic in enumerate(self.topics):
            judged, relevant = int(self.judged[t].sum()), int(self.relevant[t].sum())
            recent = self.recent[t]
            recent_rate = 100.0 * sum(recent) / len(recent) if recent else None
            out.append(
                {
                    "topic": topic,
                    "pooled": int(self.pooled[t].sum()),
                    "judged": judged,
                    "relevant": relevant,
                    "relevant_per_100": 100.0 * relevant / judged if judged else None,
                    "recent_relevant_per_100": recent_rate,
                    "estimated_relevant": None if np.isnan(est.estimate[t]) else float(est.estimate[t]),
                    "low": float(est.low[t]),
                    "high": float(est.high[t]),
                    "estimate_biased": not self.random,
                    "advice": rows[t]["advice"],
                    "reasons": rows[t]["reasons"],
                    "more_per_stratum": [rows[t]["more_per_stratum"][str(s)] for s in self.strata],
                    "queued_per_stratum": [int(q) for q in self.queued()[t]],
                }
            )
        return out

    def samples(self, grades: np.ndarray, strata: np.ndarray) -> tuple[list[str], list[TopicSample]]:
        """Each topic's `budget.TopicSample` with the pool's lines graded `grades` (-1 unjudged) in `strata`, from
        the runs' entries at the pool's lines the board keeps (not the runs)."""
        kernel = self.kernel
        qrels = Qrels(topics=self.lines.topics, docs=self.lines.docs, grades=grades, strata=strata)
        rank = kernel.rank.astype(np.int64)
        depth = int(rank.max(initial=0))
        return entry_samples(qrels, len(self.runs), depth, kernel.group // max(kernel.n_topic, 1), rank, kernel.line)

    def relevant_so_far(self) -> np.ndarray:
        """bool [line]: judged relevant so far."""
        return self.verdict >= 1

    def reusability(self) -> dict[str, Any]:
        """Leave-one-team-out over the qrels judged so far (cached until the next verdict)."""
        if self._cached is not None and self._cached[0] == self.version:
            return self._cached[1]
        keep = self.relevant_so_far()
        full = self.kernel.mean(keep)
        reduced = full.copy()
        teams = []
        for u, team in enumerate(self.teams):
            removed = keep & (self.owner == u)
            scores = full if not removed.any() else self.kernel.mean(keep & ~removed)
            mine = self.team_code == u
            reduced[mine] = scores[mine]
            teams.append({"team": team, "removed_relevant": int(removed.sum()), "tau_b": _tau(full, scores)})
        drop = float(max(0.0, np.max(full - reduced, initial=0.0)))
        result = {
            "judged": int(np.sum(self.verdict >= 0)),
            "tau_b": _tau(full, reduced),
            "max_drop": drop,
            "teams": teams,
            "runs": [{"run": r, "map": float(full[i]), "reduced": float(reduced[i])} for i, r in enumerate(self.runs)],
            "biased_order": not self.random,
        }
        self._cached = (self.version, result)
        return result

    def snapshot(self, advice: dict[str, Any] | None = None) -> dict[str, Any]:
        """Everything the live view shows; `advice` as `topic_stats` takes it."""
        advice = advice if advice is not None else self.advice()
        return {
            "topics": self.topic_stats(advice),
            "reusability": self.reusability(),
            "random_order": self.random,
            "advice": {k: v for k, v in advice.items() if k != "topics"},
        }


def _caps(
    runs: PreparedRuns | RunBlocks, topics: Sequence[str], depth: int | np.ndarray | Mapping[str, int]
) -> np.ndarray:
    """The pool depth of each of the board's topics (int64): `depth` for all, one per prepared topic (prepared runs
    only), or by topic name (0 for a topic it does not name)."""
    if isinstance(depth, Mapping):
        return np.array([int(depth.get(t, 0)) for t in topics], dtype=np.int64)
    if np.ndim(depth) == 0:
        return np.full(len(topics), int(depth), dtype=np.int64)
    per_topic = np.asarray(depth, dtype=np.int64)
    if not isinstance(runs, PreparedRuns) or per_topic.shape != (len(runs.topics),):
        raise ValueError("give one depth per prepared topic")
    depth_of = dict(zip(runs.topics, per_topic.tolist(), strict=True))
    return np.array([depth_of.get(t, 0) for t in topics], dtype=np.int64)


def _tau(x: np.ndarray, y: np.ndarray) -> float | None:
    """tau_b, None when undefined (a constant side)."""
    value = tau_b(x, y)
    return None if np.isnan(value) else value
