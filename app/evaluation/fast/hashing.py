"""Vectorised string hashing and grouping: integer ids for millions of docnos without a Python dict.

Invariants:
- `hash_codes` depends only on a string's code points, not on the padding width of the matrix holding it (a zero
  code point adds nothing); `hash_strings(matrix=False)` uses Python's `hash()` instead. The two kinds differ: one
  grading or grouping uses one kind for every value it compares.
- Hashes only propose: `group_hashes` may put different hashes in one group (they share the top bits) and equal
  hashes may stand for different strings; every caller checks each group against the strings and splits it.
- `KeyTable` holds distinct, well-mixed uint64 keys (fewer than 2**31; slots are addressed by the top bits, so
  keys must be outputs of `mix`/`hash_codes`), and `hits` returns positions in ascending order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

_CHUNK = 1 << 16  # keys per pass of a table look-up (its scratch fits in the cache)
_MAX_HASH_WIDTH = 256  # wider fixed-width strings are hashed with Python's hash() instead
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _splitmix_constants(n: int) -> np.ndarray:
    """n odd 64-bit multipliers (splitmix64 sequence)."""
    out = []
    state = 0x9E3779B97F4A7C15
    for _ in range(n):
        state = (state + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        out.append((z ^ (z >> 31)) | 1)
    return np.array(out, dtype=np.uint64)


_CONSTANTS = _splitmix_constants(_MAX_HASH_WIDTH)


def mix(h: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser of uint64 values (a bijection that spreads every input bit)."""
    h = h ^ (h >> np.uint64(30))
    h *= _M1
    h ^= h >> np.uint64(27)
    h *= _M2
    h ^= h >> np.uint64(31)
    return h


def hash_codes(codes: np.ndarray) -> np.ndarray:
    """uint64 hash of each row of a zero-padded code-point matrix [n, width] (independent of the padding)."""
    n, width = codes.shape
    if width > _MAX_HASH_WIDTH:
        raise ValueError("too wide to hash as a matrix")
    h = np.zeros(n, dtype=np.uint64)
    columns = np.ascontiguousarray(codes.T)
    for j in range(width):
        h += columns[j].astype(np.uint64) * _CONSTANTS[j]
    return mix(h)


def code_matrix(values: np.ndarray) -> np.ndarray | None:
    """A unicode array's code points as an [n, width] uint32 matrix (a view), or None if not a unicode array."""
    if values.dtype.kind != "U":
        return None
    width = values.dtype.itemsize // 4
    if width == 0:
        return np.zeros((len(values), 0), dtype=np.uint32)
    return np.ascontiguousarray(values).view(np.uint32).reshape(len(values), width)


def matrix_hashable(values: np.ndarray) -> bool:
    """Whether `hash_strings(values, matrix=True)` is cheap: a unicode array of moderate width."""
    return values.dtype.kind == "U" and values.dtype.itemsize // 4 <= _MAX_HASH_WIDTH


def hash_strings(values: np.ndarray, *, matrix: bool) -> np.ndarray:
    """uint64 hash of each string: by code points (`matrix`, unicode arrays) or by Python's hash() (any array).

    Both are consistent within one process; a caller must use the same kind for all values it compares.
    """
    if matrix:
        codes = code_matrix(values)
        if codes is None:
            codes = code_matrix(np.asarray(values, dtype=str))
        assert codes is not None
        return hash_codes(codes)
    return mix(np.fromiter(map(hash, values.tolist()), dtype=np.int64, count=len(values)).view(np.uint64))


def group_hashes(hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(group id of each value, index of one member of each group), groups in hash order.

    Equal hashes share a group; different hashes may too when they agree on their top bits (the row index is packed
    into the low bits so that one plain sort, much faster than an argsort, gives the order): callers verify groups.
    """
    n = len(hashes)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    bits = max(int(n - 1).bit_length(), 1)
    low = np.uint64((1 << bits) - 1)
    packed = (hashes & ~low) | np.arange(n, dtype=np.uint64)
    packed.sort()
    order = (packed & low).astype(np.int64)
    key = packed & ~low
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(key[1:], key[:-1], out=new[1:])
    group_sorted = np.cumsum(new) - 1
    group = np.empty(n, dtype=np.int64)
    group[order] = group_sorted
    return group, order[new]


class KeyTable:
    """A hash table of distinct, well-mixed uint64 keys, built and probed with numpy.

    Each slot (addressed by a key's top bits) holds the index of one key (int32, -1 if empty); the keys that find
    their slot taken go to a smaller table of their own (on re-mixed keys), asked only by look-ups whose slot is
    marked as having overflowed. With 8 slots per key the slots (4 bytes each) stay small enough for the L2 cache,
    about 6% of the keys overflow, and most look-ups of absent keys end at an empty slot (a table kept alongside a
    large vocabulary takes fewer: `slots_per_key`, 5 bytes a slot). Masks are turned into index arrays before
    selecting with them: numpy's boolean indexing branches on every element and mispredicts.
    """

    SLOTS_PER_KEY = 8

    def __init__(self, keys: np.ndarray, slots_per_key: int = SLOTS_PER_KEY) -> None:
        self.keys = np.asarray(keys, dtype=np.uint64)
        if len(self.keys) >= 2**31:
            raise ValueError("too many keys for int32 slots")
        self._bits = max(int(slots_per_key * len(self.keys)).bit_length(), 4)
        size = 1 << self._bits
        self._slot_index = np.full(size, -1, dtype=np.int32)
        home = (self.keys >> np.uint64(64 - self._bits)).view(np.intp)
        number = np.arange(len(self.keys), dtype=np.int32)
        self._slot_index[home] = number  # one of the keys of each slot sits in it (no sort: whichever write lands)
        self._overflow_index = np.flatnonzero(np.take(self._slot_index, home) != number)
        self._overflowed = np.zeros(size, dtype=bool)
        self._overflow: KeyTable | None = None
        if len(self._overflow_index):
            # a key equal to another shares its slot: it is the key at home or overflows with it (the overflow
            # table, on a bijection of the keys, finds that)
            others = self.keys[self._overflow_index]
            if np.any(self.keys[self._slot_index[home[self._overflow_index]]] == others):
                raise ValueError("the keys of a KeyTable must be distinct")
            self._overflowed[home[self._overflow_index]] = True
            self._overflow = KeyTable(mix(others), slots_per_key)

    def hits(self, parts: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """(ascending positions, key indices) of the keys found in `parts` laid end to end (positions count across).

        Works a chunk at a time in scratch buffers: a look-up is a few passes, and fresh multi-megabyte temporaries
        per pass would cost more in page faults than the passes themselves. The look-ups that must go on to the
        overflow table are gathered from every chunk and asked there in one call (a few per cent of the keys, in
        one list, rather than a chain of small calls per chunk), then merged into the ascending positions.
        """
        scratch = min(max((len(p) for p in parts), default=0), _CHUNK)
        buffers = (np.empty(scratch, dtype=np.uint64), np.empty(scratch, dtype=np.int32))
        positions, indices, later_at, later_keys = [], [], [], []
        offset = 0
        for part in parts:
            part = np.asarray(part, dtype=np.uint64)
            for lo in range(0, len(part), _CHUNK):
                at, index, other = self._probe(part[lo : lo + _CHUNK], buffers)
                positions.append(at + (offset + lo))
                indices.append(index)
                if len(other):
                    later_at.append(other + (offset + lo))
                    later_keys.append(part[lo + other])
            offset += len(part)
        if not positions:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        at, index = np.concatenate(positions).astype(np.int64, copy=False), np.concatenate(indices).astype(np.int64)
        if self._overflow is None or not later_at:
            return at, index
        where, found = self._overflow.hits([mix(np.concatenate(later_keys))])
        if len(where) == 0:
            return at, index
        extra_at = np.concatenate(later_at).astype(np.int64)[where]  # ascending, and never a position in `at`
        slots = np.searchsorted(at, extra_at)
        return np.insert(at, slots, extra_at), np.insert(index, slots, self._overflow_index[found])

    def _probe(self, keys: np.ndarray, buffers: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, ...]:
        """(ascending positions, key indices) of the keys found in their home slots, and the ascending positions of
        the keys to ask the overflow table (not at home, and their home slot overflowed), using scratch `buffers`."""
        n = len(keys)
        slot_buffer, index_buffer = buffers
        slot = np.right_shift(keys, np.uint64(64 - self._bits), out=slot_buffer[:n]).view(np.intp)
        held = np.take(self._slot_index, slot, out=index_buffer[:n])
        candidates = np.flatnonzero(held >= 0)
        index, wanted = held[candidates], keys[candidates]
        same = self.keys[index] == wanted
        match = np.flatnonzero(same)
        at, index = candidates[match], index[match]
        if self._overflow is None:
            return at, index, np.zeros(0, np.int64)
        other = candidates[np.flatnonzero(~same)]
        return at, index, other[np.flatnonzero(self._overflowed[slot[other]])]
