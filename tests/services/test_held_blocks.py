"""A block's held parts read back from their bytes exactly: every array bit for bit, the rest equal."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest

from app.services.held_blocks import HeldBlock
from app.services.score_intervals import PredictionPowered, SamplingParts


def block(*, jackknife: bool, estimated: bool) -> HeldBlock:
    """A block of two runs over three topics with awkward values: NaN, -0.0, the smallest subnormal, 1/3."""
    rng = np.random.default_rng(3)
    awkward = np.array([math.nan, -0.0, 5e-324, 1 / 3, 1.0, 0.1 + 0.2])
    scored = rng.choice(awkward, size=(2, 4, 3))
    parts = SamplingParts(
        ["1", "10", "2"],
        {"xinfAP": rng.random((2, 3)), "infNDCG": rng.random((2, 3))},
        {"xinfAP": rng.random((2, 3)), "infNDCG": np.full((2, 3), math.nan)},
        rng.random((2, 3)) if jackknife else None,
        np.array([[True, False, True], [False, False, True]]),
    )
    powered = PredictionPowered(
        {"AP": rng.random(2), "P@10": np.array([0.0, math.inf])},
        {"AP": "prediction_powered"},
        {"level": 0.95, "n_human": 12, "n_items": 40, "share": 1 / 3},
    )
    return HeldBlock(
        [17, 4],
        ["1", "10", "2"],
        scored,
        scored + 1 if estimated else scored,
        {"17": {"AP": {"all": 1 / 3}, "P@10": {"all": math.nan}}, "4": {"AP": {"all": 0.1 + 0.2}}},
        parts,
        powered if estimated else None,
    )


def same_array(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    """Equal dtype, shape and bytes (NaN equal to itself, -0.0 not to 0.0)."""
    if a is None or b is None:
        return a is None and b is None
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("jackknife", [True, False])
@pytest.mark.parametrize("estimated", [True, False])
def test_a_block_reads_back_bit_for_bit(jackknife: bool, estimated: bool) -> None:
    held = block(jackknife=jackknife, estimated=estimated)
    back = HeldBlock.from_bytes(held.to_bytes())
    assert back.run_ids == [17, 4] and back.topics == ["1", "10", "2"]
    assert same_array(back.scored, held.scored) and same_array(back.stored, held.stored)
    assert back.means["17"]["AP"]["all"] == 1 / 3 and math.isnan(back.means["17"]["P@10"]["all"])
    assert back.means["4"]["AP"]["all"] == 0.1 + 0.2
    parts, kept = back.parts, held.parts
    assert parts.topics == kept.topics and same_array(parts.jackknife, kept.jackknife)
    assert same_array(parts.imputed, kept.imputed) and parts.imputed.dtype == np.bool_
    assert list(parts.between) == ["xinfAP", "infNDCG"] and list(parts.mean) == ["xinfAP", "infNDCG"]
    assert all(same_array(parts.between[m], kept.between[m]) for m in kept.between)
    assert all(same_array(parts.mean[m], kept.mean[m]) for m in kept.mean)
    if not estimated:
        assert back.estimated is None
        return
    assert back.estimated is not None and held.estimated is not None
    assert list(back.estimated.se) == ["AP", "P@10"]
    assert all(same_array(back.estimated.se[m], held.estimated.se[m]) for m in held.estimated.se)
    assert back.estimated.estimators == held.estimated.estimators and back.estimated.info == held.estimated.info


def test_the_bytes_hold_no_pickled_object() -> None:
    """Read with allow_pickle=False: an object array would not load (and none is written)."""
    data = block(jackknife=True, estimated=True).to_bytes()
    with np.load(io.BytesIO(data), allow_pickle=False) as archive:
        assert all(archive[name].dtype != object for name in archive.files)
