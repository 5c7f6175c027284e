"""The per-process cache of parsed qrels versions: one read per version, the same judgements, bounded."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from sqlalchemy.orm import Session

from app.services import qrels, qrels_cache
from app.storage.models import QrelsVersion
from tests.services.conftest import ORGANISER, new_campaign


@pytest.fixture(autouse=True)
def empty_cache() -> Iterator[None]:
    """Each test starts and ends with nothing cached."""
    qrels_cache.clear()
    yield
    qrels_cache.clear()


def versions(session: Session, n: int) -> list[QrelsVersion]:
    """`n` imported qrels versions of one campaign, version k judging k + 1 docs per topic."""
    made = new_campaign(session, n_topics=3)
    found = []
    for k in range(n):
        text = "".join(f"{t} 0 d{d} {d % 2}\n" for t in made.topics for d in range(k + 1))
        found.append(qrels.import_qrels(session, ORGANISER, made.id, text.encode(), label=f"q{k}", max_errors=10))
    return found


def test_a_version_is_read_once_and_is_the_same_judgements(session: Session) -> None:
    (version,) = versions(session, 1)
    first = qrels_cache.cached_qrels(session, version)
    assert qrels_cache.cached_qrels(session, version) is first
    read = qrels.load_qrels(session, version)
    assert first.topics.tolist() == read.topics.tolist() == ["1", "2", "3"]
    assert first.docs.tolist() == read.docs.tolist() == ["d0"] * 3
    assert first.grades.tolist() == read.grades.tolist() == [0, 0, 0]
    with pytest.raises(ValueError, match="read-only"):
        first.grades[0] = 5
    assert len(qrels_cache.cached_keys()) == 1 and qrels_cache.cached_keys()[0][1] == version.id


def test_the_least_recently_used_version_leaves_first(session: Session) -> None:
    made = versions(session, qrels_cache.MAX_VERSIONS + 1)
    for version in made[:-1]:
        qrels_cache.cached_qrels(session, version)
    qrels_cache.cached_qrels(session, made[0])  # used again: now the most recent
    qrels_cache.cached_qrels(session, made[-1])
    assert [key[1] for key in qrels_cache.cached_keys()] == [v.id for v in (made[2], made[3], made[0], made[4])]
    assert len(qrels_cache.cached_qrels(session, made[3])) == 3 * 4


def test_versions_beyond_the_memory_bound_are_read_every_time(session: Session, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    small, large = versions(session, 2)
    size = qrels_cache.footprint(qrels.load_qrels(session, small))
    assert size > 6 * np.dtype(np.int64).itemsize  # the string objects count, not only the pointers
    monkeypatch.setattr(qrels_cache, "MAX_MB", size * 1.5 / 2**20)
    assert qrels_cache.cached_qrels(session, large) is not qrels_cache.cached_qrels(session, large)
    assert qrels_cache.cached_keys() == []
    qrels_cache.cached_qrels(session, small)
    assert [key[1] for key in qrels_cache.cached_keys()] == [small.id]
