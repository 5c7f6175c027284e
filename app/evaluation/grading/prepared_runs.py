"""Runs sorted and cut once (trec_eval order) as integer (topic, doc) pair ids, ready to be graded against any qrels.

`PreparedRuns` is what analyses evaluate many qrels against (pool depth, leave-out): the costly part, a vocabulary
of every retrieved (topic, docno) pair, is built once; `grade_matrix.grade_matrix` then grades it per qrels.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from app.evaluation.fast.hashing import KeyTable, group_hashes, hash_strings, matrix_hashable, mix
from app.evaluation.fast.string_order import string_order
from app.evaluation.ordering import ranked_order
from app.evaluation.records import RunTable

_TOPIC_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
DOC_SLOTS_PER_KEY = 2  # a `DocIndex` lives as long as its prepared runs: a smaller table than a look-up's own


def lookup(values: np.ndarray, vocabulary: dict[str, int]) -> np.ndarray:
    """Integer ids of `values` in `vocabulary`, -1 for strings it lacks."""
    get = vocabulary.get
    return np.fromiter((get(v, -1) for v in values.tolist()), np.int64, len(values))


class DocIndex:
    """Each docno's index in a list of distinct docnos, as a dict would give it, without a Python call per value
    looked up: the docnos' hashes (Python's `hash`, mixed) in a `KeyTable`, every hit checked against the strings (a
    dict, if two of the docnos share a 64-bit hash)."""

    def __init__(self, docs: Sequence[str]) -> None:
        self.docs = np.empty(len(docs), dtype=object)
        self.docs[:] = docs
        self.table: KeyTable | None = None
        self.index: dict[str, int] | None = None
        self._last: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # the last array asked, where it held
        # docnos and their indices (kept small: a block's runs hold few of a large qrels' docnos)
        try:
            self.table = KeyTable(hash_strings(self.docs, matrix=False), slots_per_key=DOC_SLOTS_PER_KEY)
        except ValueError:  # two docnos with one hash
            self.index = {name: i for i, name in enumerate(docs)}

    def __len__(self) -> int:
        """Number of docnos."""
        return len(self.docs)

    def ids(self, values: np.ndarray) -> np.ndarray:
        """int64: each value's index in the docnos, -1 for strings they lack. The docnos found in the last array
        asked are kept and that array is answered again without a look-up: a qrels' arrays never change
        (`records.Qrels`), and one qrels' docnos are asked for each of its gradings (the imputations' plan, the
        jackknife's line index)."""
        values = np.asarray(values)
        last = self._last  # read once: another thread's look-up may replace it meanwhile
        if last is None or last[0] is not values:
            last = (values, *self._found(values))
            self._last = last
        _, where, index = last
        out = np.full(len(values), -1, dtype=np.int64)
        out[where] = index
        return out

    def _found(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(positions, docno indices) of the values that are docnos."""
        if self.table is None:
            assert self.index is not None
            found = lookup(values, self.index)
            where = np.flatnonzero(found >= 0)
            return where, found[where]
        where, index = self.table.hits([hash_strings(values, matrix=False)])
        same = np.flatnonzero(np.asarray(values[where] == self.docs[index], dtype=bool))
        return where[same], index[same]


@dataclass(frozen=True)
class PreparedRuns:
    """Several runs sorted by score desc / docno desc and cut at max_results, ready for any qrels.

    `pairs[run, topic, position]` is the id of the (topic, doc) pair ranked there (-1 past the list's end); a pair
    id p stands for topic `pair_topic[p]` and doc `pair_doc[p]` (indices into `topics` / `docs`).
    """

    names: list[str]
    topics: list[str]  # every topic some run answers
    docs: list[str]  # every retrieved doc
    pairs: np.ndarray  # int64 [n_run, n_topic, depth] (int32 in `lines.judged_only`'s copies: ids, never summed)
    lengths: np.ndarray  # int64 [n_run, n_topic], ranked list length after the cut
    pair_topic: np.ndarray  # int64 [n_pair]
    pair_doc: np.ndarray  # int64 [n_pair]
    max_results: int

    @property
    def depth(self) -> int:
        """Width of the position axis."""
        return int(self.pairs.shape[2])

    @cached_property
    def doc_index(self) -> DocIndex:
        """Each doc's index in `docs`: built on first use and kept, so grading against many qrels builds it once."""
        return DocIndex(self.docs)


def prepare_runs(runs: Sequence[RunTable], max_results: int = 1000, names: Sequence[str] | None = None) -> PreparedRuns:
    """Sort every run's topics by score desc then docno desc, cut at max_results, as pair ids in one array.

    No Python object per row: (topic, doc) pairs and docnos get ids from vectorised hashes grouped by one sort and
    checked against the strings (see fast.hashing); topics come from each run's contiguous topic segments; the order
    is `ordering.ranked_order` (tests compare all of it with a plain dict-and-lexsort reference).
    """
    names = list(names) if names is not None else [r.tag for r in runs]
    n_run = len(runs)
    sizes = np.array([len(run) for run in runs], dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    n_rows = int(offsets[-1])
    if n_rows == 0:
        empty = np.zeros(0, np.int64)
        return PreparedRuns(names, [], [], np.zeros((n_run, 0, 0), np.int64), np.zeros((n_run, 0), np.int64),
                            empty, empty, max_results)  # fmt: skip
    docs = [np.asarray(run.docs) for run in runs]
    topic_seen, topic_vocab = _topic_ids(runs)
    pair_group, pair_rows, doc_of_pair, doc_names = _group_pairs(runs, docs, offsets, topic_seen)

    # Topic and doc ids in name order (code points, i.e. UTF-8 byte order).
    topic_names = sorted(topic_vocab)
    topic_rank = np.empty(len(topic_names), np.int64)
    topic_rank[[topic_vocab[name] for name in topic_names]] = np.arange(len(topic_names))
    doc_order = string_order(doc_names)  # np.argsort(doc_names, kind="stable"), faster for ASCII docnos
    doc_rank = np.empty(len(doc_names), np.int64)
    doc_rank[doc_order] = np.arange(len(doc_names))
    docs_sorted = doc_names[doc_order].tolist()  # a unicode array's items are str already; an object array's may not be
    if doc_names.dtype.kind != "U":
        docs_sorted = [str(v) for v in docs_sorted]
    n_doc, n_topic = max(len(docs_sorted), 1), len(topic_names)
    pair_topic_all = topic_rank[topic_seen[pair_rows]]
    pair_doc_all = doc_rank[doc_of_pair]

    # Order: score desc, then docno desc, within each (run, topic).
    score = np.concatenate([np.asarray(run.scores, dtype=np.float64) for run in runs])
    run_id = np.repeat(np.arange(n_run, dtype=np.int64), sizes)
    group = run_id * n_topic + topic_rank[topic_seen]
    order = ranked_order(group, score, pair_doc_all[pair_group], offsets.tolist())
    g = group if order is None else group[order]
    starts = np.flatnonzero(np.concatenate(([True], g[1:] != g[:-1])))
    group_sizes = np.diff(np.append(starts, n_rows))
    position = np.arange(n_rows) - np.repeat(starts, group_sizes)
    if int(group_sizes.max()) > max_results:
        keep = position < max_results
        order = np.flatnonzero(keep) if order is None else order[keep]
        g, position = g[keep], position[keep]

    # Pair ids: the retrieved (topic, doc) pairs within the cut, numbered in (topic, doc) order.
    row_pair = pair_group if order is None else pair_group[order]
    used = np.zeros(len(pair_rows), dtype=bool)
    used[row_pair] = True
    used_pairs = np.flatnonzero(used)
    pair_keys = pair_topic_all[used_pairs] * n_doc + pair_doc_all[used_pairs]
    by_key = np.argsort(pair_keys, kind="stable")
    new_id = np.empty(len(pair_rows), dtype=np.int64)
    new_id[used_pairs[by_key]] = np.arange(len(used_pairs))
    depth = int(min(max_results, group_sizes.max()))
    pairs = np.full((n_run * n_topic, depth), -1, dtype=np.int64)
    pairs[g, position] = new_id[row_pair]
    lengths = np.bincount(g, minlength=n_run * n_topic).astype(np.int64)
    pair_keys = pair_keys[by_key]
    return PreparedRuns(
        names=names,
        topics=topic_names,
        docs=docs_sorted,
        pairs=pairs.reshape(n_run, n_topic, depth),
        lengths=lengths.reshape(n_run, n_topic),
        pair_topic=pair_keys // n_doc,
        pair_doc=pair_keys % n_doc,
        max_results=max_results,
    )


def _topic_ids(runs: Sequence[RunTable]) -> tuple[np.ndarray, dict[str, int]]:
    """Each row's topic id (first-seen order) and the vocabulary.

    One dict look-up per segment of equal consecutive topics (a run file usually has one segment per topic).
    """
    vocabulary: dict[str, int] = {}
    parts = []
    for run in runs:
        topics = np.asarray(run.topics)
        if len(topics) == 0:
            parts.append(np.zeros(0, np.int64))
            continue
        starts = np.concatenate(([0], np.flatnonzero(topics[1:] != topics[:-1]) + 1))
        ids = [vocabulary.setdefault(str(name), len(vocabulary)) for name in topics[starts].tolist()]
        parts.append(np.repeat(np.array(ids, np.int64), np.diff(np.append(starts, len(topics)))))
    return np.concatenate(parts), vocabulary


def _group_pairs(
    runs: Sequence[RunTable], docs: list[np.ndarray], offsets: np.ndarray, topic: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Group the rows (all runs concatenated) by (topic, docno), and the pairs by docno.

    Returns each row's pair group, a member row of each pair group, each pair group's doc group, and each doc
    group's docno. Groups come from hashes (the parser's, or computed here); every row is compared with its
    group's member, and groups that turn out to mix values (hash collisions) are split exactly.
    """
    by_matrix = all(run.doc_hashes is not None or matrix_hashable(d) for run, d in zip(runs, docs, strict=True))
    doc_hash = np.concatenate(
        [
            run.doc_hashes if by_matrix and run.doc_hashes is not None else hash_strings(d, matrix=by_matrix)
            for run, d in zip(runs, docs, strict=True)
        ]
    )
    row_hash = mix(doc_hash + (topic.astype(np.uint64) + np.uint64(1)) * _TOPIC_MULTIPLIER)
    pair_group, pair_rows = group_hashes(row_hash)
    pair_docs = _strings_at(docs, offsets, pair_rows)
    bad = topic != topic[pair_rows][pair_group]
    for r, d in enumerate(docs):
        lo, hi = int(offsets[r]), int(offsets[r + 1])
        bad[lo:hi] |= d != pair_docs[pair_group[lo:hi]]
    if bad.any():

        def pair_keys(rows: np.ndarray) -> list[tuple[int, str]]:
            strings = _strings_at(docs, offsets, rows).tolist()
            return list(zip(topic[rows].tolist(), map(str, strings), strict=True))

        pair_group, pair_rows = _split_groups(pair_group, pair_rows, bad, pair_keys)
        pair_docs = _strings_at(docs, offsets, pair_rows)

    doc_of_pair, doc_members = group_hashes(doc_hash[pair_rows])
    doc_names = pair_docs[doc_members]
    bad = pair_docs != doc_names[doc_of_pair]
    if bad.any():
        doc_of_pair, doc_members = _split_groups(
            doc_of_pair, doc_members, bad, lambda rows: [str(v) for v in pair_docs[rows].tolist()]
        )
        doc_names = pair_docs[doc_members]
    return pair_group, pair_rows, doc_of_pair, doc_names


def _split_groups(
    group: np.ndarray, members: np.ndarray, bad: np.ndarray, keys_of: Callable[[np.ndarray], Sequence[Hashable]]
) -> tuple[np.ndarray, np.ndarray]:
    """Regroup exactly (by `keys_of(rows)`) the rows of every group holding a `bad` row; other groups keep theirs."""
    suspect = np.unique(group[bad])
    rows = np.flatnonzero(np.isin(group, suspect))
    ids: dict[Hashable, int] = {}
    new = np.array([ids.setdefault(key, len(ids)) for key in keys_of(rows)], dtype=np.int64)
    keep = np.ones(len(members), dtype=bool)
    keep[suspect] = False
    group = (np.cumsum(keep) - 1)[group]
    group[rows] = int(keep.sum()) + new
    first = np.unique(new, return_index=True)[1]
    return group, np.concatenate((members[keep], rows[first]))


def _strings_at(docs: list[np.ndarray], offsets: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The docnos at global row indices `rows` (rows of all runs concatenated), as one array."""
    run_of = np.searchsorted(offsets, rows, side="right") - 1
    parts = [
        (where, docs[r][rows[where] - offsets[r]])
        for r in range(len(docs))
        if len(where := np.flatnonzero(run_of == r))
    ]
    dtypes = [values.dtype for _, values in parts]
    unicode = all(dtype.kind == "U" for dtype in dtypes)
    out = np.empty(len(rows), dtype=max(dtypes, key=lambda dt: dt.itemsize) if unicode and dtypes else object)
    for where, values in parts:
        out[where] = values
    return out
