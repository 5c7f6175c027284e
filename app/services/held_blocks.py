"""What one block of runs of a sampled, incomplete or combined evaluation keeps for the step over every run, and its
bytes: a fanned-out block stores them (`evaluation_block_parts`) for the block that reduces the evaluation.

The bytes are an `.npz` archive (no pickled objects: `np.load(allow_pickle=False)`) of the arrays, bit for bit, and a
JSON header for the rest (Python's JSON writes floats by `repr`, which reads back exactly; NaN as NaN)."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.services.score_intervals import PredictionPowered, SamplingParts

_HEADER = "header"


@dataclass(frozen=True)
class HeldBlock:
    """What the reduce step needs of one block of runs: its ids, topics, per-topic values [run, measure, topic] as
    scored (the sampling variances' bias term reads them) and as stored (a combined version's estimates in place),
    means (the `all` topic), sampling parts and labelling standard errors; a few numbers per run and topic, no run
    line."""

    run_ids: list[int]
    topics: list[str]
    scored: np.ndarray
    stored: np.ndarray
    means: dict[str, dict[str, dict[str, float]]]
    parts: SamplingParts
    estimated: PredictionPowered | None

    def to_bytes(self) -> bytes:
        """The block as an npz archive of its arrays with a JSON header (`from_bytes` reads it back exactly)."""
        parts = self.parts
        arrays: dict[str, np.ndarray] = {"scored": self.scored, "stored": self.stored, "imputed": parts.imputed}
        if parts.jackknife is not None:
            arrays["jackknife"] = parts.jackknife
        arrays |= {f"between_{i}": v for i, v in enumerate(parts.between.values())}
        arrays |= {f"mean_{i}": v for i, v in enumerate(parts.mean.values())}
        estimated: dict[str, Any] | None = None
        if self.estimated is not None:
            arrays |= {f"se_{i}": v for i, v in enumerate(self.estimated.se.values())}
            estimated = {
                "se": list(self.estimated.se),
                "estimators": self.estimated.estimators,
                "info": self.estimated.info,
            }
        header = {
            "run_ids": self.run_ids,
            "topics": self.topics,
            "means": self.means,
            "parts_topics": parts.topics,
            "between": list(parts.between),
            "mean": list(parts.mean),
            "estimated": estimated,
        }
        arrays[_HEADER] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
        buffer = io.BytesIO()
        savez: Callable[..., None] = np.savez  # arrays by name (numpy's stubs type the keywords as its options)
        savez(buffer, **arrays)
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> HeldBlock:
        """The block `to_bytes` wrote."""
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
        header = json.loads(arrays.pop(_HEADER).tobytes().decode())
        parts = SamplingParts(
            header["parts_topics"],
            {m: arrays[f"between_{i}"] for i, m in enumerate(header["between"])},
            {m: arrays[f"mean_{i}"] for i, m in enumerate(header["mean"])},
            arrays.get("jackknife"),
            arrays["imputed"],
        )
        estimated = None
        if (found := header["estimated"]) is not None:
            se = {m: arrays[f"se_{i}"] for i, m in enumerate(found["se"])}
            estimated = PredictionPowered(se, found["estimators"], found["info"])
        return cls(
            [int(r) for r in header["run_ids"]],
            header["topics"],
            arrays["scored"],
            arrays["stored"],
            header["means"],
            parts,
            estimated,
        )
