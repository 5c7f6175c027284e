"""Judging orders over one topic's pool as online policies: ask `next()` for a doc, feed the verdict back.

Seven orders, each over the pooled runs' ranked lists of one topic (each list already restricted to the pool, in
the ranking rule's order, `ordering.ranked_order`):

- `shuffled`: the pool in a seeded random order (today's judging order). Every prefix is a simple random sample of
  the pool, so estimates from a prefix are unbiased (`random = True`).
- `move_to_front` (Cormack, Palmer & Clarke, SIGIR 1998): judge down one run's list while it keeps yielding
  relevant docs; at its first non-relevant doc, leave it and go to the run with the fewest non-relevant docs found
  so far, ties to the run left longest ago (never-left runs first, in a seeded order). Docs already judged are
  skipped in every list; a run whose list is used up is never chosen again.
- `mm_ns` (Losada, Parapar & Barreiro, SAC 2016 / IPM 2017: "MM-NS", maximum mean, non-stationary): each run is
  an arm; pulling it judges its highest-ranked unjudged doc, the reward is 1 if relevant. The arm's belief is
  Beta(1 + a, 1 + b) with a, b its rewards and failures discounted by `discount` per later pull of the same arm
  (the most recent counts 1, the one before `discount`, ...: a run gets worse down its list, so old evidence
  fades). The arm with the largest posterior mean (1 + a) / (2 + a + b) is pulled, ties to the first arm in a
  seeded order; used-up arms drop out. Only the pulled arm is credited.

- `hedge` (Aslam, Pavlu & Savell, CIKM 2003, "a unified model for metasearch, pooling, and system evaluation";
  the adjudication method of Losada, Parapar & Barreiro, JASIST 2019): Freund & Schapire's Hedge over the runs.
  A run's loss on a doc at rank r of its N-long list is (H_N - H_{r-1}) / H_N (H the harmonic numbers: the
  AP-like rank weight, 1 at the top, 1 / (N H_N) at the bottom; 0 for a doc it does not rank). The next doc is the
  unjudged one with the largest weighted loss sum_run w_run loss_run(doc), ties to the first in pool order; its
  verdict multiplies every run's weight by beta^-loss if relevant, beta^loss if not (then normalised), so runs
  that rank relevant docs high gain weight. Every run is updated, not only one arm; outside verdicts update none.
  Our reading of the published method (the loss's exact scaling and beta = 0.1 are not checked against the authors'
  code).

- `mtc` (Carterette, Allan & Sitaraman, SIGIR 2006, "minimal test collections"): AP written over pairs of docs,
  R * AP = sum_{i <= j by rank} x_i x_j / max(r(i), r(j)) (x relevance, r the run's rank), so judging doc i
  relevant adds to the run's R * AP its gain u_run(i) = 1 / r(i) + sum_{j judged relevant} 1 / max(r(i), r(j)) (0 if
  the run does not rank i): the precision at i plus 1 / r(j) for each relevant j below it. For a pair of runs
  (a, b) the doc's weight is u_a(i) - u_b(i), its effect on the sign of R * (AP_a - AP_b) (R is the same for both);
  the next doc is the unjudged one with the largest sum over all run pairs of |u_a(i) - u_b(i)|, ties (to 1e-12)
  in a seeded doc order. A relevant verdict adds 1 / max(r(i), r(j)) to every gain of each run ranking j; a
  non-relevant one changes no gain (the paper's weights move only on relevant docs). Unlike the run-crediting
  orders, every relevant verdict counts, also one on a doc the policy did not propose: it moves every run's AP.
  Our reading of the paper's greedy selection for many runs (sum of absolute pair weights); the bounds on
  Delta AP that drop pairs whose order is already proven are not kept (see `MinimalTestCollection`).

- `mtc_hedge` (ours: MTC's weight, Hedge's vote): a non-relevant verdict moves no AP difference, so what judging a
  doc is expected to move is P(relevant) times its MTC weight; the runs' Hedge vote sum_run w_run loss_run(doc) (in
  [0, 1], the loss and the weight update of `hedge` with `beta`) stands in for P(relevant). The next doc is the
  unjudged one with the largest MTC weight x Hedge vote, ties (to 1e-12) in the seeded doc order. Every verdict,
  proposed or not, moves both: the MTC gains on a relevant one, the run weights on any. With beta = 1 the vote is a
  fixed rank prior. beta = 0.8 by default: the value chosen on either half of the topics of TREC-COVID round 1's 30
  pooled runs (`scripts/bench/judging_cost.py`); over all 143 runs 0.3 is chosen on either half, and 0.8 needs
  0.39-0.41x the depth pool's judgements there instead of 0.33-0.36x (README).

- `lara` (after Takehi, Voorhees, Sakai & Soboroff, SIGIR 2025, "LLM-Assisted Relevance Assessments: When Should
  We Ask LLMs for Help?"): the model's probability of relevance p of each doc, calibrated against the human verdicts
  seen so far, chooses what people judge next. The calibration is Platt scaling on the model's log-odds,
  P(relevant) = sigmoid(a + b logit(p)), fitted by Newton's method as the maximum a posteriori under a Gaussian
  prior centred on the identity (a = 0, b = 1, precision `strength`), refitted every `refit_every` verdicts over
  every verdict so far (proposed or not). The next doc is the unjudged one whose calibrated probability is closest
  to 0.5 (most uncertain; ties, to 1e-12, in a seeded doc order); docs the model has no probability for come first,
  in that order, as no model label can stand in for them. Without probabilities (`make_order(..., probabilities=
  None)`) the order is the seeded doc order. How it differs from the paper (and its code): the paper calibrates one
  model over all topics with one gradient step per annotation on the raw probability, blended with it by a weight
  that grows with the annotations, and fills the unjudged docs with the calibrated labels; here each topic's policy
  calibrates on its own verdicts (the service keeps a policy per topic), fully refitted on the log-odds with the
  prior doing the blending, and only the order is chosen (what fills the rest is the qrels' business).

Move-to-front, MM-NS, Hedge, MTC, MTC x Hedge and LARA are *not* random samples: estimates from their judgements are
biased (`random = False`), which callers must mark on every score computed from them.

Verdicts may also arrive for docs the policy did not propose (another assessor, an import): `record` marks them
judged (skipped by every list) without crediting any run. Feeding the same verdicts in the same order to a policy
built with the same seed reproduces it, which is how a service restores one (`replay`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from app.evaluation.pools.seeding import topic_rng

ORDERS = ("shuffled", "move_to_front", "mm_ns", "hedge", "mtc", "mtc_hedge", "lara")


def tie_order(seed: int, topic: str, n: int) -> np.ndarray:
    """Each of `n` items' place in the topic's seeded order: of tied items, the lowest place goes first."""
    place = np.empty(n, dtype=np.int64)
    place[topic_rng(seed, topic).permutation(n)] = np.arange(n)
    return place


class _Lists:
    """Runs' ranked lists over one topic's pool as integer doc ids, with a cursor per run past judged docs."""

    def __init__(self, lists: Sequence[Sequence[str]], pool: Sequence[str] | None = None) -> None:
        docs: dict[str, int] = {}
        for name in pool or ():
            docs.setdefault(str(name), len(docs))
        coded = []
        for ranked in lists:
            seen: set[int] = set()
            ids = []
            for name in ranked:
                i = docs.setdefault(str(name), len(docs))
                if i not in seen:
                    seen.add(i)
                    ids.append(i)
            coded.append(np.array(ids, dtype=np.int64))
        self.names = list(docs)
        self.index = docs
        self.lists = coded
        self.cursor = np.zeros(len(coded), dtype=np.int64)
        self.judged = np.zeros(len(docs), dtype=bool)
        self.n_judged = 0

    def head(self, run: int) -> int:
        """The run's highest-ranked unjudged doc id (advancing its cursor), -1 if its list is used up."""
        ranked, k = self.lists[run], int(self.cursor[run])
        while k < len(ranked) and self.judged[ranked[k]]:
            k += 1
        self.cursor[run] = k
        return int(ranked[k]) if k < len(ranked) else -1

    def mark(self, doc: str) -> int | None:
        """Mark `doc` judged; its id, or None if it is outside the pool or was judged already."""
        i = self.index.get(str(doc))
        if i is None or self.judged[i]:
            return None
        self.judged[i] = True
        self.n_judged += 1
        return i


class JudgingOrder:
    """An online judging order over one topic's pool: `next()` proposes a doc, `record()` takes its verdict."""

    name = "order"
    random = False

    def __init__(self, lists: Sequence[Sequence[str]], *, pool: Sequence[str] | None = None) -> None:
        self._lists = _Lists(lists, pool)
        self._proposed: int = -1  # doc id proposed by the last next() and not yet recorded
        self._proposed_by: int = -1  # the run it came from (-1: none)

    @property
    def pool_size(self) -> int:
        """Docs in the pool (the union of the lists and the given pool)."""
        return len(self._lists.names)

    @property
    def judged(self) -> int:
        """Docs judged so far."""
        return self._lists.n_judged

    def next(self, judged: Mapping[str, bool | int] | None = None) -> str | None:
        """The next doc to judge (None when the pool is exhausted). Verdicts in `judged` (doc -> relevant or grade,
        in the order given) the policy has not seen are first replayed as if it had proposed them (`replay`)."""
        if judged:
            for name, verdict in judged.items():
                i = self._lists.index.get(str(name))
                if i is not None and not self._lists.judged[i]:
                    self.next()
                    self.record(name, int(verdict) > 0)
        if self._proposed >= 0 and not self._lists.judged[self._proposed]:
            return self._lists.names[self._proposed]
        doc, run = self._choose()
        self._proposed, self._proposed_by = doc, run
        return None if doc < 0 else self._lists.names[doc]

    def record(self, doc: str, relevant: bool) -> None:
        """Take the verdict on `doc`: credits the run it was proposed from, if it was the proposed doc."""
        i = self._lists.mark(doc)
        if i is None:
            return
        if i == self._proposed:
            run = self._proposed_by
            self._proposed, self._proposed_by = -1, -1
            if run >= 0:
                self._credit(run, bool(relevant))
        elif self._proposed >= 0 and self._lists.judged[self._proposed]:
            self._proposed, self._proposed_by = -1, -1

    def plan(self, k: int) -> list[str]:
        """Up to `k` docs to queue: the proposed doc first, then those the policy would propose next if each turned
        out relevant (the proposing run's following unjudged docs): what a judging queue leases ahead."""
        first = self.next()
        if first is None or k < 1:
            return []
        return [first] + [self._lists.names[i] for i in self._following(k - 1)]

    def _following(self, k: int) -> list[int]:
        """Up to `k` unjudged doc ids after the proposed one, as the policy would go on if it were relevant."""
        run = self._proposed_by
        if run < 0:
            return []
        ranked, judged = self._lists.lists[run], self._lists.judged
        out: list[int] = []
        for i in ranked[int(self._lists.cursor[run]) + 1 :]:
            if len(out) >= k:
                break
            if not judged[i]:
                out.append(int(i))
        return out

    def _choose(self) -> tuple[int, int]:
        """(doc id, run) to propose next; (-1, -1) when nothing is left."""
        raise NotImplementedError

    def _credit(self, run: int, relevant: bool) -> None:
        """Update the policy with the verdict on a doc proposed from `run`."""


class Shuffled(JudgingOrder):
    """The pool in a seeded random order: every prefix is a simple random sample."""

    name = "shuffled"
    random = True

    def __init__(
        self, lists: Sequence[Sequence[str]], *, seed: int = 0, topic: str = "", pool: Sequence[str] | None = None
    ) -> None:
        super().__init__(lists, pool=pool)
        self._order = topic_rng(seed, topic).permutation(self.pool_size)
        self._at = 0

    def _choose(self) -> tuple[int, int]:
        """The next unjudged doc of the shuffled pool."""
        judged = self._lists.judged
        while self._at < len(self._order) and judged[self._order[self._at]]:
            self._at += 1
        return (int(self._order[self._at]), -1) if self._at < len(self._order) else (-1, -1)

    def _following(self, k: int) -> list[int]:
        """The next `k` unjudged docs of the shuffle after the proposed one."""
        judged = self._lists.judged
        out: list[int] = []
        for i in self._order[self._at + 1 :]:
            if len(out) >= k:
                break
            if not judged[i]:
                out.append(int(i))
        return out


class MoveToFront(JudgingOrder):
    """Cormack et al.'s move-to-front: stay with a run while it yields relevant docs (module docstring)."""

    name = "move_to_front"

    def __init__(
        self, lists: Sequence[Sequence[str]], *, seed: int = 0, topic: str = "", pool: Sequence[str] | None = None
    ) -> None:
        super().__init__(lists, pool=pool)
        n = len(self._lists.lists)
        self._tie = tie_order(seed, topic, n)
        self._failures = np.zeros(n, dtype=np.int64)
        self._left_at = np.full(n, -1, dtype=np.int64)  # judgement count when the run was last left; -1 never
        self._current = -1

    def _choose(self) -> tuple[int, int]:
        """The current run's next doc, or the next doc of the run with fewest failures, left longest ago."""
        if self._current >= 0:
            doc = self._lists.head(self._current)
            if doc >= 0:
                return doc, self._current
            self._current = -1
        n = len(self._lists.lists)
        alive = [r for r in range(n) if self._lists.head(r) >= 0]
        if not alive:
            return -1, -1
        run = min(alive, key=lambda r: (self._failures[r], self._left_at[r], self._tie[r]))
        self._current = run
        return self._lists.head(run), run

    def _credit(self, run: int, relevant: bool) -> None:
        """A non-relevant doc sends the run to the back (one more failure); a relevant one keeps it."""
        if not relevant:
            self._failures[run] += 1
            self._left_at[run] = self._lists.n_judged
            if self._current == run:
                self._current = -1


class MaxMeanNonStationary(JudgingOrder):
    """Losada et al.'s MM-NS bandit: pull the run with the largest discounted Beta posterior mean."""

    name = "mm_ns"

    def __init__(
        self,
        lists: Sequence[Sequence[str]],
        *,
        seed: int = 0,
        topic: str = "",
        pool: Sequence[str] | None = None,
        discount: float = 0.9,
    ) -> None:
        super().__init__(lists, pool=pool)
        if not 0.0 < discount <= 1.0:
            raise ValueError(f"discount must be in (0, 1], got {discount}")
        n = len(self._lists.lists)
        self.discount = discount
        self._tie = tie_order(seed, topic, n)
        self.rewards = np.zeros(n)
        self.failures = np.zeros(n)
        self._alive = np.ones(n, dtype=bool)

    def posterior_mean(self) -> np.ndarray:
        """Each arm's Beta posterior mean (1 + a) / (2 + a + b)."""
        return (1.0 + self.rewards) / (2.0 + self.rewards + self.failures)

    def _choose(self) -> tuple[int, int]:
        """The highest unjudged doc of the arm with the largest posterior mean (ties: seeded arm order)."""
        mean = self.posterior_mean()
        while self._alive.any():
            candidates = np.flatnonzero(self._alive)
            best = candidates[mean[candidates] == mean[candidates].max()]
            run = int(best[np.argmin(self._tie[best])])
            doc = self._lists.head(run)
            if doc >= 0:
                return doc, run
            self._alive[run] = False
        return -1, -1

    def _credit(self, run: int, relevant: bool) -> None:
        """Discount the arm's past rewards and failures, then add this one."""
        self.rewards[run] = self.discount * self.rewards[run] + float(relevant)
        self.failures[run] = self.discount * self.failures[run] + float(not relevant)


def checked_beta(beta: float) -> float:
    """Hedge's beta, in (0, 1]."""
    if not 0.0 < beta <= 1.0:
        raise ValueError(f"beta must be in (0, 1], got {beta}")
    return beta


def hedge_update(weights: np.ndarray, loss: np.ndarray, beta: float, relevant: bool) -> np.ndarray:
    """Run weights after a verdict on a doc with losses `loss` [run]: times beta^-loss (relevant) or beta^loss
    (not), normalised."""
    moved: np.ndarray = weights * beta ** (-loss if relevant else loss)
    normalised: np.ndarray = moved / moved.sum()
    return normalised


def rank_loss(lists: Sequence[np.ndarray], n_docs: int) -> np.ndarray:
    """[doc, run] Hedge's loss (H_N - H_{r-1}) / H_N of each doc at rank r of a run's N-long list (0 if unranked)."""
    loss = np.zeros((n_docs, len(lists)))
    for run, ranked in enumerate(lists):
        if len(ranked):
            tail = np.cumsum(1.0 / np.arange(len(ranked), 0, -1))[::-1]  # H_N - H_{r-1} at r = 1..N
            loss[ranked, run] = tail / tail[0]
    return loss


class Hedge(JudgingOrder):
    """Aslam et al.'s Hedge: the doc with the largest weighted rank loss, run weights updated by every verdict."""

    name = "hedge"

    def __init__(
        self,
        lists: Sequence[Sequence[str]],
        *,
        seed: int = 0,
        topic: str = "",
        pool: Sequence[str] | None = None,
        beta: float = 0.1,
    ) -> None:
        super().__init__(lists, pool=pool)
        self.beta = checked_beta(beta)
        n_docs, n_runs = len(self._lists.names), len(self._lists.lists)
        self.loss = rank_loss(self._lists.lists, n_docs)
        self.weights = np.full(n_runs, 1.0 / max(n_runs, 1))
        self._scored = -1  # the doc the last _choose proposed

    def scores(self) -> np.ndarray:
        """Each doc's weighted loss sum_run w_run loss_run(doc) (judged docs included)."""
        scores: np.ndarray = self.loss @ self.weights
        return scores

    def _ranking(self) -> np.ndarray:
        """Unjudged doc ids by decreasing score, ties in pool order."""
        unjudged = np.flatnonzero(~self._lists.judged)
        return unjudged[np.argsort(-self.scores()[unjudged], kind="stable")]

    def _choose(self) -> tuple[int, int]:
        """The unjudged doc with the largest weighted loss, proposed by the run that weighs most on it."""
        ranking = self._ranking()
        if not len(ranking):
            return -1, -1
        doc = int(ranking[0])
        contribution = self.loss[doc] * self.weights
        run = int(np.argmax(contribution)) if len(contribution) else -1
        self._scored = doc
        return doc, run

    def _following(self, k: int) -> list[int]:
        """The next `k` unjudged docs by the current scores (the weights do not move until a verdict)."""
        return [int(i) for i in self._ranking() if i != self._scored][:k]

    def _credit(self, run: int, relevant: bool) -> None:
        """Multiply every run's weight by beta^-loss (relevant) or beta^loss (not), then normalise."""
        self.weights = hedge_update(self.weights, self.loss[self._scored], self.beta, relevant)


class MinimalTestCollection(JudgingOrder):
    """Carterette et al.'s MTC: the doc whose relevance moves the runs' pairwise AP differences most (module doc)."""

    name = "mtc"

    def __init__(
        self, lists: Sequence[Sequence[str]], *, seed: int = 0, topic: str = "", pool: Sequence[str] | None = None
    ) -> None:
        super().__init__(lists, pool=pool)
        n_docs, n_runs = len(self._lists.names), len(self._lists.lists)
        self._tie = tie_order(seed, topic, n_docs)
        self.rank = np.zeros((n_runs, n_docs), dtype=np.int64)  # 1-based rank of doc in run, 0 if not ranked
        self.gain = np.zeros((n_runs, n_docs))  # u_run(doc): what judging doc relevant adds to the run's R * AP
        for run, ranked in enumerate(self._lists.lists):
            self.rank[run, ranked] = np.arange(1, len(ranked) + 1)
            self.gain[run, ranked] = 1.0 / np.arange(1, len(ranked) + 1)
        self._coef = 2.0 * np.arange(1, n_runs + 1) - n_runs - 1  # sum_{a<b} |x_a - x_b| = coef . sorted(x)
        self._weights: np.ndarray | None = None

    def weights(self) -> np.ndarray:
        """Each doc's weight sum over run pairs (a, b) of |u_a(doc) - u_b(doc)| (judged docs included)."""
        if self._weights is None:
            self._weights = np.round(self._coef @ np.sort(self.gain, axis=0), 12)
        return self._weights

    def _ranking(self) -> np.ndarray:
        """Unjudged doc ids by decreasing weight, ties in the seeded doc order."""
        unjudged = np.flatnonzero(~self._lists.judged)
        return unjudged[np.lexsort((self._tie[unjudged], -self.priority()[unjudged]))]

    def priority(self) -> np.ndarray:
        """What the next doc maximises: here its weight."""
        return self.weights()

    def _choose(self) -> tuple[int, int]:
        """The unjudged doc with the largest priority (ties: seeded doc order); no run is credited."""
        unjudged = np.flatnonzero(~self._lists.judged)
        if not len(unjudged):
            return -1, -1
        weight = self.priority()[unjudged]
        best = unjudged[weight == weight.max()]
        return int(best[np.argmin(self._tie[best])]), -1

    def _following(self, k: int) -> list[int]:
        """The next `k` unjudged docs by priority (for MTC exact if the proposal is not relevant: its verdict moves
        nothing)."""
        return [int(i) for i in self._ranking() if i != self._proposed][:k]

    def record(self, doc: str, relevant: bool) -> None:
        """Take the verdict on `doc`; a relevant one, proposed or not, adds to every gain of the runs ranking it."""
        i = self._lists.index.get(str(doc))
        fresh = i is not None and not self._lists.judged[i]
        super().record(doc, relevant)
        if fresh and relevant:
            for run, ranked in enumerate(self._lists.lists):
                r = self.rank[run, i]
                if r > 0:
                    self.gain[run, ranked] += 1.0 / np.maximum(np.arange(1, len(ranked) + 1), r)
            self._weights = None


class ExpectedMTC(MinimalTestCollection):
    """MTC's weight times the runs' Hedge vote that the doc is relevant: the expected move of the AP differences
    (module docstring)."""

    name = "mtc_hedge"

    def __init__(
        self,
        lists: Sequence[Sequence[str]],
        *,
        seed: int = 0,
        topic: str = "",
        pool: Sequence[str] | None = None,
        beta: float = 0.8,
    ) -> None:
        super().__init__(lists, seed=seed, topic=topic, pool=pool)
        self.beta = checked_beta(beta)
        self.loss = rank_loss(self._lists.lists, len(self._lists.names))
        self.run_weights = np.full(len(self._lists.lists), 1.0 / max(len(self._lists.lists), 1))

    def relevance(self) -> np.ndarray:
        """Each doc's Hedge score sum_run w_run loss_run(doc), in [0, 1]: the runs' weighted vote for it."""
        vote: np.ndarray = self.loss @ self.run_weights
        return vote

    def priority(self) -> np.ndarray:
        """MTC weight x Hedge score (rounded to 1e-12 so that ties go to the seeded doc order)."""
        product: np.ndarray = np.round(self.weights() * self.relevance(), 12)
        return product

    def record(self, doc: str, relevant: bool) -> None:
        """Take the verdict, proposed or not: MTC's gains move on a relevant one, every run's Hedge weight is
        multiplied by beta^-loss (relevant) or beta^loss (not), then normalised."""
        i = self._lists.index.get(str(doc))
        fresh = i is not None and not self._lists.judged[i]
        super().record(doc, relevant)
        if fresh and len(self.run_weights):
            self.run_weights = hedge_update(self.run_weights, self.loss[i], self.beta, relevant)


def platt_fit(
    log_odds: np.ndarray, relevant: np.ndarray, strength: float = 1.0, iterations: int = 50
) -> tuple[float, float]:
    """(a, b) maximising sum log P(y | sigmoid(a + b x)) - strength / 2 ((a - 0)^2 + (b - 1)^2): Platt scaling of
    the log-odds `x` on the verdicts `y`, shrunk towards the identity (Newton's method; the objective is concave)."""
    x = np.asarray(log_odds, dtype=np.float64)
    y = np.asarray(relevant, dtype=np.float64)
    design = np.column_stack([np.ones_like(x), x])
    prior = np.array([0.0, 1.0])
    theta = prior.copy()
    for _ in range(iterations):
        fitted = 1.0 / (1.0 + np.exp(-(design @ theta)))
        gradient = design.T @ (y - fitted) - strength * (theta - prior)
        hessian = (design.T * (fitted * (1.0 - fitted))) @ design + strength * np.eye(2)
        step = np.linalg.solve(hessian, gradient)
        theta = theta + step
        if float(np.abs(step).max()) < 1e-12:
            break
    return float(theta[0]), float(theta[1])


class LlmAssisted(JudgingOrder):
    """LARA-style: the unjudged doc whose model probability, calibrated on the verdicts so far, is nearest 0.5
    (module docstring)."""

    name = "lara"
    EPSILON = 1e-4  # probabilities are clipped to [EPSILON, 1 - EPSILON] before their log-odds are taken

    def __init__(
        self,
        lists: Sequence[Sequence[str]],
        *,
        seed: int = 0,
        topic: str = "",
        pool: Sequence[str] | None = None,
        probabilities: Mapping[str, float] | None = None,
        strength: float = 1.0,
        refit_every: int = 1,
    ) -> None:
        super().__init__(lists, pool=pool)
        if strength <= 0.0:
            raise ValueError(f"strength must be positive, got {strength}")
        if refit_every < 1:
            raise ValueError(f"refit_every must be at least 1, got {refit_every}")
        self.strength = strength
        self.refit_every = refit_every
        self._tie = tie_order(seed, topic, self.pool_size)
        self._verdicts: list[tuple[int, bool]] = []  # (doc id, relevant) in the order given
        self.calibration = (0.0, 1.0)
        self._fitted_on = 0
        self.set_probabilities(probabilities)

    def set_probabilities(self, probabilities: Mapping[str, float] | None) -> None:
        """Take the model's probabilities (doc -> P(relevant); docs outside the pool ignored) and recalibrate: the
        policy is then the one built with them and fed the same verdicts."""
        self.has_probability = np.zeros(self.pool_size, dtype=bool)
        probability = np.full(self.pool_size, 0.5)
        for name, value in (probabilities or {}).items():
            i = self._lists.index.get(str(name))
            if i is not None and np.isfinite(value):
                self.has_probability[i] = True
                probability[i] = min(max(float(value), self.EPSILON), 1.0 - self.EPSILON)
        self.log_odds = np.log(probability / (1.0 - probability))
        self._fitted_on = -1
        self._refit()
        self._proposed, self._proposed_by = -1, -1  # a proposal made under the old probabilities is dropped

    def _refit(self) -> None:
        """Refit the calibration on the first multiple of `refit_every` verdicts (those with a model probability)."""
        upto = len(self._verdicts) - len(self._verdicts) % self.refit_every
        if upto == self._fitted_on:
            return
        used = [(i, y) for i, y in self._verdicts[:upto] if self.has_probability[i]]
        if used:
            ids = np.array([i for i, _ in used], dtype=np.int64)
            labels = np.array([y for _, y in used], dtype=np.float64)
            self.calibration = platt_fit(self.log_odds[ids], labels, self.strength)
        else:
            self.calibration = (0.0, 1.0)
        self._fitted_on = upto

    def calibrated(self) -> np.ndarray:
        """Each doc's calibrated probability of relevance (0.5 where the model gave none)."""
        a, b = self.calibration
        calibrated: np.ndarray = 1.0 / (1.0 + np.exp(-(a + b * self.log_odds)))
        return np.where(self.has_probability, calibrated, 0.5)

    def _ranking(self) -> np.ndarray:
        """Unjudged doc ids, those without a probability first, then by |calibrated - 0.5|; ties in seeded order."""
        unjudged = np.flatnonzero(~self._lists.judged)
        distance = np.round(np.abs(self.calibrated() - 0.5), 12)
        distance = np.where(self.has_probability, distance, -1.0)
        return unjudged[np.lexsort((self._tie[unjudged], distance[unjudged]))]

    def _choose(self) -> tuple[int, int]:
        """The most uncertain unjudged doc; no run is credited."""
        ranking = self._ranking()
        return (int(ranking[0]), -1) if len(ranking) else (-1, -1)

    def _following(self, k: int) -> list[int]:
        """The next `k` unjudged docs by the current calibration (it moves only with a verdict)."""
        return [int(i) for i in self._ranking() if i != self._proposed][:k]

    def record(self, doc: str, relevant: bool) -> None:
        """Take the verdict, proposed or not: every verdict is a calibration point, after which the proposal is
        made afresh (a proposal credits nothing here)."""
        i = self._lists.index.get(str(doc))
        fresh = i is not None and not self._lists.judged[i]
        super().record(doc, relevant)
        if fresh and i is not None:
            self._verdicts.append((i, bool(relevant)))
            self._refit()
            self._proposed, self._proposed_by = -1, -1


def make_order(
    name: str,
    lists: Sequence[Sequence[str]],
    *,
    seed: int = 0,
    topic: str = "",
    pool: Sequence[str] | None = None,
    probabilities: Mapping[str, float] | None = None,
) -> JudgingOrder:
    """The judging order called `name` (one of ORDERS) over one topic's ranked lists; `probabilities` (doc -> the
    model's P(relevant)) are for `lara` only, which without them is the seeded doc order."""
    if name == "lara":
        return LlmAssisted(lists, seed=seed, topic=topic, pool=pool, probabilities=probabilities)
    kinds = {
        "shuffled": Shuffled,
        "move_to_front": MoveToFront,
        "mm_ns": MaxMeanNonStationary,
        "hedge": Hedge,
        "mtc": MinimalTestCollection,
        "mtc_hedge": ExpectedMTC,
    }
    if name not in kinds:
        raise ValueError(f"unknown judging order {name!r}; known: {', '.join(ORDERS)}")
    return kinds[name](lists, seed=seed, topic=topic, pool=pool)


def replay(order: JudgingOrder, verdicts: Iterable[tuple[str, bool]]) -> JudgingOrder:
    """Feed past verdicts (doc, relevant) in the order they were given, asking `next()` before each as live."""
    for doc, relevant in verdicts:
        order.next()
        order.record(doc, relevant)
    return order


def judge_all(order: JudgingOrder, oracle: Mapping[str, bool], limit: int | None = None) -> list[str]:
    """Run the order against an oracle assessor (doc -> relevant; missing = not relevant); the docs judged, in order."""
    out: list[str] = []
    while limit is None or len(out) < limit:
        doc = order.next()
        if doc is None:
            break
        order.record(doc, bool(oracle.get(doc, False)))
        out.append(doc)
    return out
