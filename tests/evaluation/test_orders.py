"""Judging orders on hand-worked small cases: the seeded shuffle, move-to-front, MM-NS, Hedge, MTC and MTC x Hedge."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from app.evaluation.pools.orders import (
    ExpectedMTC,
    Hedge,
    MaxMeanNonStationary,
    MinimalTestCollection,
    MoveToFront,
    Shuffled,
    judge_all,
    make_order,
    replay,
)
from app.evaluation.pools.seeding import topic_rng

A = ["d1", "d3", "d2", "d8"]
B = ["d4", "d5", "d9"]
C = ["d6", "d7"]
RELEVANT = {"d1": True, "d2": True, "d4": True, "d9": True}


def in_seeded_order(*named: list[str], seed: int = 0, topic: str = "t") -> list[list[str]]:
    """The lists placed so that the seeded tie order visits them in the order given."""
    permutation = topic_rng(seed, topic).permutation(len(named))
    lists: list[list[str]] = [[] for _ in named]
    for position, run in enumerate(permutation.tolist()):
        lists[run] = named[position]
    return lists


def test_move_to_front_hand_worked():
    # A: d1 rel, d3 not -> B: d4 rel, d5 not -> C: d6 not -> A (left first): d2 rel, d8 not -> B: d9 rel -> C: d7
    order = MoveToFront(in_seeded_order(A, B, C), topic="t")
    assert judge_all(order, RELEVANT) == ["d1", "d3", "d4", "d5", "d6", "d2", "d8", "d9", "d7"]
    assert not order.random


def test_mm_ns_hand_worked_without_discount():
    # discount 1 is MM: after d1 rel, d3 not, A's mean is 2/4, tied with B and C at 1/2, and A comes first
    order = MaxMeanNonStationary(in_seeded_order(A, B, C), topic="t", discount=1.0)
    assert judge_all(order, RELEVANT) == ["d1", "d3", "d2", "d8", "d4", "d5", "d9", "d6", "d7"]
    assert order.rewards.tolist() != [] and not order.random


def test_mm_ns_hand_worked_with_discount():
    # discount 0.5: A after (rel, not) is (0.5, 1) -> 1.5/3.5 < 1/2, so B; B the same; C (0, 1) -> 1/3;
    # A and B tie at 1.5/3.5 and A comes first: d2 rel -> (1.25, 0.5), d8 not; B: d9; C: d7
    order = MaxMeanNonStationary(in_seeded_order(A, B, C), topic="t", discount=0.5)
    judged = []
    for _ in range(5):
        doc = order.next()
        order.record(doc, RELEVANT.get(doc, False))
        judged.append(doc)
    runs = in_seeded_order(A, B, C)
    a, b, c = runs.index(A), runs.index(B), runs.index(C)
    assert judged == ["d1", "d3", "d4", "d5", "d6"]
    assert order.posterior_mean()[a] == pytest.approx(1.5 / 3.5)
    assert order.posterior_mean()[b] == pytest.approx(1.5 / 3.5)
    assert order.posterior_mean()[c] == pytest.approx(1 / 3)
    assert judge_all(order, RELEVANT) == ["d2", "d8", "d9", "d7"]
    assert order.rewards[a] == pytest.approx(0.5 * (0.25 + 1))


def test_shuffled_is_a_seeded_permutation_of_the_pool():
    lists = [A, B, C]
    first = judge_all(Shuffled(lists, seed=3, topic="t"), RELEVANT)
    assert sorted(first) == sorted(set(A + B + C))
    assert judge_all(Shuffled(lists, seed=3, topic="t"), RELEVANT) == first
    assert Shuffled(lists).random


def test_outside_verdicts_skip_docs_without_credit_and_replay_restores():
    order = MoveToFront(in_seeded_order(A, B, C), topic="t")
    assert order.next() == "d1"
    order.record("d4", True)  # judged elsewhere: skipped later, credits no run
    order.record("d1", True)
    rest = judge_all(order, RELEVANT)
    assert "d4" not in rest and rest[:2] == ["d3", "d5"]
    fresh = make_order("move_to_front", in_seeded_order(A, B, C), topic="t")
    history = [("d1", True), ("d3", False), ("d4", True)]
    replay(fresh, history)
    again = make_order("move_to_front", in_seeded_order(A, B, C), topic="t")
    assert again.next(dict(history)) == fresh.next()  # a mapping of verdicts is recorded before choosing
    assert fresh.judged == 3


def test_unknown_order_is_refused():
    with pytest.raises(ValueError, match="unknown judging order"):
        make_order("best_first", [A])


def test_plan_is_the_proposal_then_the_proposing_runs_next_unjudged_docs():
    order = MoveToFront(in_seeded_order(A, B, C), topic="t")
    assert order.plan(3) == ["d1", "d3", "d2"]
    order.record("d3", False)  # judged elsewhere: skipped in the plan, the proposal stands
    assert order.plan(3) == ["d1", "d2", "d8"]
    order.record("d1", True)
    assert order.plan(5) == ["d2", "d8"]  # A's list is all that follows the proposal
    assert order.plan(0) == []


def test_plan_of_the_shuffle_is_its_next_unjudged_docs():
    order = Shuffled([A, B, C], seed=3, topic="t")
    everything = judge_all(Shuffled([A, B, C], seed=3, topic="t"), RELEVANT)
    assert order.plan(4) == everything[:4]
    order.record(everything[1], False)
    assert order.plan(3) == [everything[0], everything[2], everything[3]]


def test_planning_does_not_change_what_the_policy_does():
    planned = MaxMeanNonStationary(in_seeded_order(A, B, C), topic="t", discount=0.5)
    plain = MaxMeanNonStationary(in_seeded_order(A, B, C), topic="t", discount=0.5)
    judged = []
    while (doc := planned.next()) is not None:
        planned.plan(3)
        planned.record(doc, RELEVANT.get(doc, False))
        judged.append(doc)
    assert judged == judge_all(plain, RELEVANT)


def test_hedge_hand_worked():
    # two disjoint 3-long lists: losses by rank (H3 - H_{r-1}) / H3 = 1, 5/11, 2/11; weights start 1/2 each.
    # a1, b1 tie at 1/2 -> a1 (pool order); a1 not (beta 1/2): w ~ (1/2, 1) = (1/3, 2/3) -> b1 (2/3 > a2 5/33);
    # b1 relevant: w ~ (1/3, 4/3) = (1/5, 4/5) -> b2 (4/11 > a2 1/11); b2 not: w ~ (1/5, 4/5 * 2^(-5/11))
    # -> b3 (0.745 * 2/11 = 0.135) before a2 (0.255 * 5/11 = 0.116); then a2, a3
    lists = [["a1", "a2", "a3"], ["b1", "b2", "b3"]]
    verdicts = {"b1": True}
    order = Hedge(lists, beta=0.5)
    assert order.loss[:3, 0].tolist() == pytest.approx([1.0, 5 / 11, 2 / 11])
    judged = []
    for _ in range(2):
        doc = order.next()
        order.record(doc, verdicts.get(doc, False))
        judged.append(doc)
    assert judged == ["a1", "b1"]
    assert order.weights.tolist() == pytest.approx([1 / 5, 4 / 5])
    assert order.plan(2) == ["b2", "b3"]  # the next docs by the current scores
    assert judge_all(order, verdicts) == ["b2", "b3", "a2", "a3"]
    # B had 2^1 (b1) 2^(-5/11) 2^(-2/11), A 2^(-1) 2^(-5/11) 2^(-2/11): the ratio is 4
    assert order.weights[1] / order.weights[0] == pytest.approx(4.0)
    assert not order.random
    # without learning (beta 1) the same lists go round-robin by rank
    assert judge_all(Hedge(lists, beta=1.0), verdicts) == ["a1", "b1", "a2", "b2", "a3", "b3"]
    assert judge_all(make_order("hedge", lists), verdicts)[0] == "a1"


def test_mtc_hand_worked():
    # A ranks d1 d2 d3 d4, B ranks d2 d4 d1. A doc's gain for a run, what judging it relevant adds to R * AP, is
    # 1/r + sum over judged relevant j of 1/max(r, r_j); its weight is |gain_A - gain_B| (one pair).
    # No verdicts: A 1, 1/2, 1/3, 1/4; B d1 1/3, d2 1, d4 1/2, d3 0 -> weights d1 2/3, d2 1/2, d3 1/3, d4 1/4: d1.
    # d1 relevant (A rank 1, B rank 3): A adds 1/max(r, 1): d2 1, d3 2/3, d4 1/2; B adds 1/max(r, 3): d2 4/3,
    # d4 5/6 -> weights d2 1/3, d3 2/3, d4 1/3: d3 jumps ahead of d2.
    # d3 relevant (A rank 3, B none): A adds 1/max(r, 3): d2 4/3, d4 3/4 -> weights d2 0, d4 1/12: d4, then d2
    # (with d1 and d3 relevant, d2 adds 1 + 1/3 to A's and B's R * AP alike: it cannot tell them apart).
    lists = [["d1", "d2", "d3", "d4"], ["d2", "d4", "d1"]]
    order = MinimalTestCollection(lists, topic="t")
    assert order.weights().tolist() == pytest.approx([2 / 3, 1 / 2, 1 / 3, 1 / 4])
    assert order.plan(4) == ["d1", "d2", "d3", "d4"]  # the plan assumes no relevant docs
    assert order.next() == "d1"
    order.record("d1", True)
    assert order.weights()[1:].tolist() == pytest.approx([1 / 3, 2 / 3, 1 / 3])
    assert order.next() == "d3"
    order.record("d3", True)
    assert order.weights()[[1, 3]].tolist() == pytest.approx([0.0, 1 / 12])
    assert judge_all(order, {}) == ["d4", "d2"]
    assert not order.random and make_order("mtc", lists).name == "mtc"
    # with no relevant docs nothing moves: the order is the first weights'
    assert judge_all(MinimalTestCollection(lists), {}) == ["d1", "d2", "d3", "d4"]
    # a relevant verdict the policy did not propose moves the weights as well
    outside = MinimalTestCollection(lists)
    outside.record("d1", True)
    assert outside.next() == "d3"


def test_mtc_weights_are_the_pairwise_ap_differences_a_relevant_verdict_would_make():
    # against AP computed from its definition: sum over pairs of |change in R * AP_a - change in R * AP_b|
    rng = np.random.default_rng(7)
    docs = [f"d{i}" for i in range(12)]
    lists = [list(rng.choice(docs, size=int(rng.integers(3, 10)), replace=False)) for _ in range(5)]
    relevant = {"d1", "d4", "d7", "d9"}

    def numerator(ranked: list[str], rel: set[str]) -> float:
        """R * AP: the sum of the precisions at the relevant docs of the list."""
        hits, total = 0, 0.0
        for k, doc in enumerate(ranked, start=1):
            if doc in rel:
                hits += 1
                total += hits / k
        return total

    order = MinimalTestCollection(lists, seed=2, topic="x")
    for doc in sorted(relevant):
        order.record(doc, True)
    order.record("d0", False)
    for doc in docs:
        i = order._lists.index.get(doc)
        if i is None or doc in relevant:
            continue
        change = [numerator(ranked, relevant | {doc}) - numerator(ranked, relevant) for ranked in lists]
        expected = sum(abs(a - b) for a, b in itertools.combinations(change, 2))
        assert order.weights()[i] == pytest.approx(expected, abs=1e-9)
    # deterministic given the verdicts, and replay restores it
    again = replay(
        MinimalTestCollection(lists, seed=2, topic="x"), [(d, True) for d in sorted(relevant)] + [("d0", False)]
    )
    assert judge_all(again, {}) == judge_all(order, {})


def test_mtc_hedge_hand_worked():
    # A ranks d1 d2 d3 d4, B ranks d2 d4 d1 (MTC's case above). Hedge losses (H_N - H_{r-1}) / H_N: A (N 4)
    # 1, 13/25, 7/25, 3/25; B (N 3) 1, 5/11, 2/11; run weights 1/2 each, so the votes are d1 (1 + 2/11) / 2 = 13/22,
    # d2 (13/25 + 1) / 2 = 19/25, d3 7/50, d4 (3/25 + 5/11) / 2 = 79/275. Times MTC's weights 2/3, 1/2, 1/3, 1/4:
    # d1 13/33 > d2 19/50 > d4 79/1100 > d3 7/150, so d1 first.
    lists = [["d1", "d2", "d3", "d4"], ["d2", "d4", "d1"]]
    order = ExpectedMTC(lists, topic="t", beta=0.5)
    assert order.relevance().tolist() == pytest.approx([13 / 22, 19 / 25, 7 / 50, 79 / 275])
    assert order.priority().tolist() == pytest.approx([13 / 33, 19 / 50, 7 / 150, 79 / 1100])
    assert order.next() == "d1"
    # d1 relevant: A's weight x 2^1, B's x 2^(2/11); MTC's weights become d2 1/3, d3 2/3, d4 1/3 (MTC alone would
    # take d3), but d2's vote is now far larger: d2 next
    order.record("d1", True)
    a, b = 0.5 * 2.0, 0.5 * 2.0 ** (2 / 11)
    a, b = a / (a + b), b / (a + b)
    assert order.run_weights.tolist() == pytest.approx([a, b])
    votes = {"d2": a * 13 / 25 + b, "d3": a * 7 / 25, "d4": a * 3 / 25 + b * 5 / 11}
    assert order.priority()[1:].tolist() == pytest.approx([votes["d2"] / 3, votes["d3"] * 2 / 3, votes["d4"] / 3])
    assert order.next() == "d2"
    # d2 not relevant: the weights move (A x 2^(-13/25), B x 2^-1), MTC's do not; d3 (2/3 x A 7/25) beats d4
    order.record("d2", False)
    a, b = a * 2.0 ** (-13 / 25), b / 2
    a, b = a / (a + b), b / (a + b)
    assert order.run_weights.tolist() == pytest.approx([a, b])
    assert order.priority()[[2, 3]].tolist() == pytest.approx([2 / 3 * a * 7 / 25, (a * 3 / 25 + b * 5 / 11) / 3])
    assert judge_all(order, {}) == ["d3", "d4"]
    assert not order.random and make_order("mtc_hedge", lists).name == "mtc_hedge"
    assert make_order("mtc_hedge", lists).beta == 0.8  # the service's value (module docstring)


def test_mtc_hedge_takes_outside_verdicts_and_replays():
    lists = [["d1", "d2", "d3", "d4"], ["d2", "d4", "d1"]]
    outside = ExpectedMTC(lists, topic="t", beta=0.5)
    outside.record("d1", True)  # not proposed: it still moves the gains and the run weights
    proposed = ExpectedMTC(lists, topic="t", beta=0.5)
    assert proposed.next() == "d1"
    proposed.record("d1", True)
    assert outside.run_weights.tolist() == pytest.approx(proposed.run_weights.tolist())
    assert outside.next() == proposed.next() == "d2"
    history = [("d1", True), ("d2", False)]
    again = replay(ExpectedMTC(lists, topic="t", beta=0.5), history)
    assert again.next() == "d3" and again.judged == 2
    # beta 1 never moves the weights: the vote is a fixed rank prior, and MTC's weights still move
    fixed = ExpectedMTC(lists, topic="t", beta=1.0)
    fixed.record("d1", True)
    assert fixed.run_weights.tolist() == [0.5, 0.5]
    with pytest.raises(ValueError, match="beta"):
        ExpectedMTC(lists, beta=0.0)


def test_mtc_hedge_with_one_run_follows_its_list():
    # one run: every pair sum is 0, so MTC's weight and the product are 0 everywhere: the seeded doc order decides
    order = ExpectedMTC([["x", "y", "z"]], seed=1, topic="t")
    assert sorted(judge_all(order, {"y": True})) == ["x", "y", "z"]
    assert judge_all(ExpectedMTC([[]], topic="t"), {}) == []
