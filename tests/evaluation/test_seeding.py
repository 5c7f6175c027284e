"""The one per-topic seeded generator: its stream is pinned, and every pool and order draws from it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.evaluation.pools import builders, moments, orders
from app.evaluation.pools.builders import build_pool
from app.evaluation.pools.seeding import topic_rng
from app.evaluation.statistics import prediction_powered


def test_the_stream_is_pinned_so_a_seed_keeps_giving_the_same_pools():
    """Changing the generator would silently change every stored pool's sample and order: these values pin it."""
    assert topic_rng(7, "701").permutation(10).tolist() == [4, 2, 9, 0, 1, 5, 7, 3, 8, 6]
    assert topic_rng(0, "t").integers(0, 1000, 5).tolist() == [451, 135, 695, 645, 734]


def test_a_topic_stream_does_not_depend_on_other_topics_and_differs_between_topics():
    assert topic_rng(3, "701").permutation(50).tolist() == topic_rng(3, "701").permutation(50).tolist()
    assert topic_rng(3, "701").permutation(50).tolist() != topic_rng(3, "702").permutation(50).tolist()
    assert topic_rng(3, "701").permutation(50).tolist() != topic_rng(4, "701").permutation(50).tolist()


VERIFICATION_0_T = [249, 430, 27, 790, 95]


def test_a_named_stream_is_pinned_and_apart_from_the_pools_stream():
    """The human verification draw takes the stream `verification`: pinned, and not the pool's sample and queue
    shuffle of the same seed (the draw would otherwise follow the queue order)."""
    assert topic_rng(0, "t", "verification").integers(0, 1000, 5).tolist() == VERIFICATION_0_T
    assert (
        topic_rng(0, "t", "verification").integers(0, 1000, 5).tolist()
        != topic_rng(0, "t").integers(0, 1000, 5).tolist()
    )
    assert topic_rng(0, "t", "").integers(0, 1000, 5).tolist() == [451, 135, 695, 645, 734]  # unnamed: the pools'
    docs = [f"d{i}" for i in range(200)]
    drawn = prediction_powered.verification_draw(5, "9", docs, np.full(200, 0.3))
    uniform = topic_rng(5, "9", prediction_powered.VERIFICATION_STREAM).random(200)  # docs are in sorted order
    assert drawn.tolist() == (uniform[np.argsort(np.argsort(docs))] < 0.3).tolist()


def test_pools_moment_pools_and_orders_use_the_one_generator():
    """No module keeps a copy of its own: a copy could drift and give the same seed different pools."""
    assert prediction_powered.topic_rng is topic_rng
    assert builders.topic_rng is topic_rng
    assert moments.topic_rng is topic_rng
    assert orders.topic_rng is topic_rng


@dataclass
class Run:
    """A run as pooling reads it."""

    topics: np.ndarray
    docs: np.ndarray
    scores: np.ndarray


def run(topics: list[str], docs: list[str]) -> Run:
    """A run with strictly decreasing scores."""
    return Run(np.array(topics), np.array(docs), np.linspace(1.0, 0.0, len(docs)))


def test_a_depth_pool_of_one_topic_keeps_its_order_when_another_topic_is_added():
    docs = [f"d{i}" for i in range(20)]
    one = build_pool([run(["1"] * 20, docs)], depth=20, seed=5)
    two = build_pool([run(["2"] * 3 + ["1"] * 20, ["x", "y", "z"] + docs)], depth=20, seed=5)
    first = two.topics == "1"
    assert one.docs.tolist() == two.docs[first].tolist()
    assert one.judging_order.tolist() == two.judging_order[first].tolist()
