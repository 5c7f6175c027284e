"""Parsed qrels versions kept per process, so the blocks of a fanned-out evaluation a worker runs read and parse
their version once instead of once a block.

A version's judgements never change once it is cut or imported (its entries are only ever written with it), so
(database, version id, creation time) names one content for good; the creation time tells apart a version whose id
a recreated database hands out again. The cache holds at most `MAX_VERSIONS` versions and about `MAX_MB` of parsed
judgements, least recently used out first; a larger version is read every time as before. Cached arrays are made
read-only, so a caller that tried to change them in place would fail rather than change other blocks' qrels.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from datetime import datetime

import numpy as np
from sqlalchemy.orm import Session

from app.evaluation.records import Qrels
from app.services.qrels import load_qrels
from app.storage.models import QrelsVersion

MAX_VERSIONS = 4
MAX_MB = 256.0
Key = tuple[str, int, datetime | None]

_cache: OrderedDict[Key, tuple[Qrels, int]] = OrderedDict()
_lock = threading.Lock()


def footprint(qrels: Qrels) -> int:
    """The bytes a parsed qrels holds: its arrays, and the string objects of its object arrays."""
    total = 0
    for array in (qrels.topics, qrels.docs, qrels.grades, qrels.strata, qrels.lines):
        if array is None:
            continue
        total += array.nbytes
        if array.dtype == object:
            total += sum(map(sys.getsizeof, array.tolist()))
    return total


def _frozen(qrels: Qrels) -> Qrels:
    """The qrels with every array read-only."""
    for array in (qrels.topics, qrels.docs, qrels.grades, qrels.strata, qrels.lines):
        if isinstance(array, np.ndarray):
            array.setflags(write=False)
    return qrels


def _key(session: Session, version: QrelsVersion) -> Key:
    """What names a version's content for good: its database, id and creation time."""
    return (str(session.connection().engine.url), version.id, version.created_at)


def cached_qrels(session: Session, version: QrelsVersion) -> Qrels:
    """The version's parsed qrels (`load_qrels`), read once per process while it stays cached."""
    key = _key(session, version)
    with _lock:
        found = _cache.get(key)
        if found is not None:
            _cache.move_to_end(key)
            return found[0]
    qrels = load_qrels(session, version)  # outside the lock: other versions are served meanwhile
    size = footprint(qrels)
    if size > MAX_MB * 2**20:
        return qrels
    with _lock:
        _cache[key] = (_frozen(qrels), size)
        _cache.move_to_end(key)
        while len(_cache) > MAX_VERSIONS or sum(s for _, s in _cache.values()) > MAX_MB * 2**20:
            _cache.popitem(last=False)
    return qrels


def clear() -> None:
    """Forget every cached version."""
    with _lock:
        _cache.clear()


def cached_keys() -> list[Key]:
    """The cached versions' keys, least recently used first."""
    with _lock:
        return list(_cache)
