"""Per-topic pool depths: a depth pool's {topic: k} (as Westerveld's pools, 50 or 100 per topic, and TREC's had).

A depth pool may name a depth per topic (`depths`), its `depth` being the default for the topics it does not name.
The map is checked against the campaign's topics (every topic named must exist, every depth >= 1), stored in the
pool's params as `depths` (the strata then reach the deepest topic's depth: `[[1, max k, 1.0]]`), and read back by
the pool statistics, the live board and the pool-depth and leave-out analyses, which use each topic's own depth.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.services.errors import InvalidInput
from app.storage.models import Pool, Topic

MAX_DEPTH = 100_000
_PAIR = re.compile(r"^\s*([^\s:,]+)\s*:\s*(\d+)\s*$")


def parse_depths(text: str, field: str = "depths") -> dict[str, int]:
    """Per-topic depths from text like `1:50, 2:100` (commas or new lines between pairs); InvalidInput naming the
    pair that is not TOPIC:DEPTH, a depth outside 1..100000 or a topic given twice. Empty text: {}."""
    depths: dict[str, int] = {}
    problems: list[dict[str, object]] = []
    parts = [p for p in re.split(r"[,\n]", text) if p.strip()]
    for number, part in enumerate(parts, start=1):
        match = _PAIR.match(part)
        if match is None:
            problems.append({"field": field, "message": f"pair {number} ({part.strip()!r}) is not TOPIC:DEPTH"})
            continue
        topic, depth = match.group(1), int(match.group(2))
        if not 1 <= depth <= MAX_DEPTH:
            problems.append({"field": field, "message": f"topic {topic}: depth {depth} is not 1..{MAX_DEPTH}"})
        elif topic in depths:
            problems.append({"field": field, "message": f"topic {topic} is given twice"})
        else:
            depths[topic] = depth
    if problems:
        raise InvalidInput("invalid per-topic depths", problems)
    return depths


def check_depths(
    session: Session, campaign_id: int, depths: Mapping[str, int], *, field: str = "depths"
) -> dict[str, int]:
    """The map as plain ints, every topic a topic of the campaign and every depth in 1..100000; InvalidInput naming
    each bad entry otherwise."""
    known = set(session.scalars(select(Topic.number).where(Topic.campaign_id == campaign_id)))
    problems: list[dict[str, object]] = []
    for topic, depth in depths.items():
        if topic not in known:
            problems.append({"field": field, "message": f"unknown topic {topic!r}"})
        elif not 1 <= int(depth) <= MAX_DEPTH:
            problems.append({"field": field, "message": f"topic {topic}: a depth from 1 to {MAX_DEPTH}, not {depth}"})
    if problems:
        raise InvalidInput("invalid per-topic depths", problems)
    return {str(t): int(d) for t, d in depths.items()}


def stored_depths(pool: Pool) -> dict[str, int] | None:
    """A depth pool's per-topic depths as stored ({topic: k} for the topics named), None for a pool without them."""
    found = (pool.params or {}).get("depths")
    if not isinstance(found, dict) or not found:
        return None
    return {str(t): int(d) for t, d in found.items()}


def default_depth(pool: Pool) -> int:
    """The depth of the topics a pool's per-topic depths do not name: its `depth`, else its deepest rank."""
    depth = (pool.params or {}).get("depth")
    return int(depth) if depth is not None else int(pool.params["strata"][-1][1])


def depth_of_topics(pool: Pool, topics: Sequence[str]) -> dict[str, int] | None:
    """{topic: its pool depth} for each of `topics` when the pool has per-topic depths, else None (the pool's depth
    is then one for every topic: its strata's last rank)."""
    depths = stored_depths(pool)
    if depths is None:
        return None
    default = default_depth(pool)
    return {t: depths.get(t, default) for t in topics}
