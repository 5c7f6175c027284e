"""Qrels lines against runs prepared once: which run ranks each line where, and scores under reduced qrels.

Pool-depth and leave-out analyses evaluate every run against many *subsets of one qrels*. Everything that does not
depend on the subset is computed once here: each line's (topic, doc) pair in the prepared runs, the rank at which
each run retrieved it, and, for AP, the list of relevant retrieved entries. AP under any subset of lines is then a
few array passes over those entries (`APKernel`), far cheaper than a fresh evaluation; other measures fall back to
`evaluate_prepared` on the subset (runs still prepared only once).

Means are always over the topics of the *full* qrels (trec_eval -c): a topic whose lines were all removed scores 0.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from app.evaluation.fast.distinct import distinct
from app.evaluation.grading.grade_matrix import pair_lines, summarise_qrels, topic_columns
from app.evaluation.grading.prepared_runs import DocIndex, PreparedRuns
from app.evaluation.measures.evaluate import evaluate_prepared
from app.evaluation.measures.registry import resolve
from app.evaluation.measures.trec import ap_per_list
from app.evaluation.records import Qrels

NEVER = np.iinfo(np.int64).max  # rank of a line no selected run retrieved

GM_FLOOR = 1e-5  # trec_eval's floor for a topic's value in gm_map and gm_bpref


@dataclass(frozen=True)
class LineIndex:
    """Each qrels line located in the prepared runs."""

    prepared: PreparedRuns
    qrels: Qrels
    topics: list[str]  # the qrels' topics, in evaluation order
    line_topic: np.ndarray  # int64 [n_line] index into topics
    line_pair: np.ndarray  # int64 [n_line] pair id in `prepared`, -1 if no run retrieved the line
    relevant: np.ndarray  # bool [n_line] grade >= 1
    pair_line: np.ndarray  # int64 [n_pair + 1] line of each pair, -1 if unjudged; last slot -1 (padding lookups)

    @property
    def n_lines(self) -> int:
        """Number of qrels lines."""
        return len(self.line_topic)


def index_lines(prepared: PreparedRuns, qrels: Qrels) -> LineIndex:
    """Find every qrels line's pair id in the prepared runs (one searchsorted)."""
    judged, line_topic, _ = summarise_qrels(qrels)
    n_pair = len(prepared.pair_topic)
    q_topic = topic_columns(prepared, judged.topics)[line_topic] if len(line_topic) else np.zeros(0, np.int64)
    pair_ids, rows = pair_lines(prepared, qrels, q_topic)
    line_pair = np.full(len(qrels), -1, dtype=np.int64)
    line_pair[rows] = pair_ids
    pair_line = np.full(n_pair + 1, -1, dtype=np.int64)
    hit = line_pair >= 0
    pair_line[line_pair[hit]] = np.flatnonzero(hit)
    return LineIndex(
        prepared=prepared,
        qrels=qrels,
        topics=list(judged.topics),
        line_topic=np.asarray(line_topic, dtype=np.int64),
        line_pair=line_pair,
        relevant=np.asarray(qrels.grades, dtype=np.int64) >= 1,
        pair_line=pair_line,
    )


UNJUDGED_DOC = " "  # no docno holds a space (run and qrels lines split on whitespace): `judged_only`'s other docs


@dataclass(frozen=True)
class JudgedDocs:
    """One qrels' docnos as the vocabulary every block `judged_only` keeps shares: `UNJUDGED_DOC`, then each distinct
    docno in code-point order; `line_doc` is each qrels line's doc id in it, `index` each docno's id."""

    docs: list[str]
    line_doc: np.ndarray  # int64 [n_line]
    index: DocIndex

    @classmethod
    def of(cls, qrels: Qrels) -> JudgedDocs:
        """The qrels' vocabulary (built once per qrels: `Qrels.cached`)."""
        distinct, line_doc = np.unique(np.asarray(qrels.docs).astype(str), return_inverse=True)
        docs = [UNJUDGED_DOC, *distinct.tolist()]
        return cls(docs, line_doc.reshape(-1).astype(np.int64) + 1, DocIndex(docs))


def judged_only(prepared: PreparedRuns, qrels: Qrels) -> PreparedRuns:
    """The runs with only the (topic, doc) pairs some line of `qrels` names: every other entry becomes its topic's one
    pair of a doc no qrels names (`UNJUDGED_DOC`), at its rank. Graded against any subset of these qrels it gives the
    matrix of the runs themselves (`grade_matrix`: an entry no line names is NOT_POOLED either way) and every rank,
    list length and judged entry stays. Its docs are the qrels' own (`JudgedDocs`, one list and index for every block
    of these qrels), so pool-depth and leave-out keep a block in about 4 bytes a ranked position (int32 pair ids) and
    16 a judged pair instead of the vocabulary of every retrieved doc. Pair ids keep (topic, doc) key order, docs
    their docno order."""
    n_topic = len(prepared.topics)
    if n_topic == 0 or prepared.depth == 0:
        return prepared
    vocabulary = qrels.cached("judged_docs", JudgedDocs.of)
    line_pair = index_lines(prepared, qrels).line_pair
    found = np.flatnonzero(line_pair >= 0)
    pair_doc = np.zeros(len(prepared.pair_topic), dtype=np.int64)
    pair_doc[line_pair[found]] = vocabulary.line_doc[found]  # the docno of a pair's lines (one docno per pair)
    kept = distinct(line_pair[found])  # ascending pair ids: key order, topic-major
    topic_of = prepared.pair_topic[kept]
    counts = np.bincount(topic_of, minlength=n_topic)
    unjudged_at = np.cumsum(counts) - counts + np.arange(n_topic)  # each topic's own pair first, then its kept ones
    kept_at = np.arange(len(kept)) + topic_of + 1
    pair_topic = np.empty(len(kept) + n_topic, dtype=np.int64)
    doc_of = np.empty(len(kept) + n_topic, dtype=np.int64)
    pair_topic[unjudged_at], doc_of[unjudged_at] = np.arange(n_topic), 0
    pair_topic[kept_at], doc_of[kept_at] = topic_of, pair_doc[kept]
    remap = unjudged_at[prepared.pair_topic]
    remap[kept] = kept_at
    if len(pair_topic) < 2**31:  # pair ids are only ever indices: 4 bytes a ranked position
        remap = remap.astype(np.int32)
    pairs = np.where(prepared.pairs >= 0, remap[np.maximum(prepared.pairs, 0)], remap.dtype.type(-1))
    slim = dataclasses.replace(prepared, docs=vocabulary.docs, pairs=pairs, pair_topic=pair_topic, pair_doc=doc_of)
    slim.__dict__["doc_index"] = vocabulary.index  # the cached property, shared rather than built again per block
    return slim


def rank_limits(prepared: PreparedRuns, depth: int | np.ndarray | None) -> tuple[int, np.ndarray | None]:
    """The ranks `depth` covers: the width of the position axis to read and, when the depth is per topic (one per
    prepared topic), a bool [n_topic, width] mask of the positions within each topic's depth."""
    if depth is None:
        return prepared.depth, None
    if np.ndim(depth) == 0:
        return min(int(depth), prepared.depth), None
    per_topic = np.asarray(depth, dtype=np.int64)
    if per_topic.shape != (len(prepared.topics),):
        raise ValueError("give one depth per prepared topic")
    width = min(int(per_topic.max(initial=0)), prepared.depth)
    return width, np.arange(width)[None, :] < per_topic[:, None]


def pair_min_rank(prepared: PreparedRuns, run_mask: np.ndarray, depth: int | np.ndarray | None = None) -> np.ndarray:
    """[n_pair] best (1-based) rank of each pair over the selected runs, within `depth` (one for all topics, or one
    per prepared topic); NEVER if none."""
    n_pair = len(prepared.pair_topic)
    best = np.full(n_pair + 1, NEVER, dtype=np.int64)
    width, within = rank_limits(prepared, depth)
    block = prepared.pairs[np.asarray(run_mask, dtype=bool), :, :width]
    if block.size == 0:
        return best[:n_pair]
    ranks = np.broadcast_to(np.arange(1, width + 1, dtype=np.int64), block.shape)
    valid = block >= 0 if within is None else (block >= 0) & within[None, :, :]
    np.minimum.at(best, block[valid], ranks[valid])
    return best[:n_pair]


def line_min_rank(index: LineIndex, run_mask: np.ndarray, depth: int | np.ndarray | None = None) -> np.ndarray:
    """[n_line] best rank of each qrels line over the selected runs (within `depth`, one for all topics or one per
    prepared topic); NEVER if none ranks it."""
    best = pair_min_rank(index.prepared, run_mask, depth)
    out = np.full(index.n_lines, NEVER, dtype=np.int64)
    hit = index.line_pair >= 0
    out[hit] = best[index.line_pair[hit]]
    return out


class APKernel:
    """Per-run MAP under any subset of the qrels lines, from the relevant retrieved entries only.

    AP(run, topic) = (1 / R) * sum over kept relevant docs at position k of (kept relevant docs at or above k) / k,
    with R the kept relevant lines of the topic. Dropping a line only removes its entries and lowers R, so one
    pass over the entries (grouped by run x topic, in rank order) per subset does it.
    """

    def __init__(self, index: LineIndex) -> None:
        prepared = index.prepared
        self.n_run = len(prepared.names)
        self.n_topic = len(index.topics)
        self.line_topic = index.line_topic
        self.relevant = index.relevant
        n_prep_topic, depth = prepared.pairs.shape[1], prepared.depth
        flat = prepared.pairs.reshape(-1)
        line = index.pair_line[np.where(flat >= 0, flat, len(index.pair_line) - 1)]
        hit = np.flatnonzero(line >= 0)
        hit = hit[index.relevant[line[hit]]]
        self.line = line[hit]
        run = hit // (n_prep_topic * depth)
        self.rank = (hit % depth + 1).astype(np.float64)
        topic = index.line_topic[self.line]  # the pair's topic, as a qrels topic index
        self.group = run * self.n_topic + topic
        # entries are in (run, prepared topic, position) order, hence contiguous per group
        starts = np.flatnonzero(np.r_[True, self.group[1:] != self.group[:-1]]) if len(hit) else np.zeros(0, int)
        self.first = np.repeat(starts, np.diff(np.r_[starts, len(hit)]))

    @classmethod
    def of_blocks(cls, blocks: Iterable[PreparedRuns], qrels: Qrels) -> APKernel:
        """The kernel of blocks of prepared runs (in order) against one qrels: each block's relevant retrieved
        entries, runs laid end to end; the same arrays as the kernel of one block, and no run held."""
        return cls.joined([cls(index_lines(block, qrels)) for block in blocks], qrels)

    @classmethod
    def joined(cls, parts: Sequence[APKernel], qrels: Qrels) -> APKernel:
        """The kernels of blocks of runs against `qrels` (in the runs' order) as one, runs laid end to end."""
        judged, line_topic, _ = summarise_qrels(qrels)
        kernel = cls.__new__(cls)
        kernel.n_run, kernel.n_topic = sum(part.n_run for part in parts), len(judged.topics)
        kernel.line_topic = np.asarray(line_topic, dtype=np.int64)
        kernel.relevant = np.asarray(qrels.grades, dtype=np.int64) >= 1
        runs = np.cumsum([0] + [part.n_run for part in parts])
        entries = np.cumsum([0] + [len(part.line) for part in parts])
        pieces = [(part.line, part.rank, part.group + runs[i] * kernel.n_topic, part.first + entries[i])
                  for i, part in enumerate(parts)]  # fmt: skip
        empty = (np.zeros(0, np.int64), np.zeros(0, np.float64), np.zeros(0, np.int64), np.zeros(0, np.int64))
        kernel.line, kernel.rank, kernel.group, kernel.first = (
            np.concatenate(c) for c in zip(empty, *pieces, strict=True)
        )
        return kernel

    def per_topic(self, keep: np.ndarray | None = None) -> np.ndarray:
        """[n_run, n_topic] AP with only the lines where `keep` (bool [n_line]) is true (None: all lines)."""
        if keep is None:
            kept_entry = np.ones(len(self.line), dtype=bool)
            num_rel = np.bincount(self.line_topic, weights=self.relevant, minlength=self.n_topic)
        else:
            keep = np.asarray(keep, dtype=bool)
            kept_entry = keep[self.line]
            num_rel = np.bincount(self.line_topic, weights=keep & self.relevant, minlength=self.n_topic)
        cumulative = np.cumsum(kept_entry, dtype=np.int64)
        before = cumulative - kept_entry  # kept entries strictly before each entry (global)
        within = cumulative - before[self.first]  # kept entries of the group at or above each entry
        count = np.where(kept_entry, within, 0)
        return ap_per_list(self.group, self.rank, count, num_rel[None, :], (self.n_run, self.n_topic))

    def mean(self, keep: np.ndarray | None = None) -> np.ndarray:
        """[n_run] MAP over all qrels topics."""
        if self.n_topic == 0:
            return np.zeros(self.n_run)
        means: np.ndarray = self.per_topic(keep).mean(axis=1)
        return means


def fast_ap(measure: str) -> bool:
    """Whether `measure` is plain (uncut) AP, which APKernel computes."""
    spec = resolve(measure)
    return spec.function.__name__ == "average_precision" and spec.cutoff is None


class SubsetScorer:
    """Mean score of every run under subsets of one qrels (runs prepared once)."""

    def __init__(self, index: LineIndex, measure: str) -> None:
        self.index = index
        spec = resolve(measure)
        self.measure, self.aggregate = spec.name, spec.aggregate
        self.kernel = APKernel(index) if fast_ap(measure) else None

    def per_topic(self, keep: np.ndarray | None = None) -> np.ndarray:
        """[n_run, n_topic] scores on the full qrels' topics (0 for a topic left without lines)."""
        if self.kernel is not None:
            return self.kernel.per_topic(keep)
        index = self.index
        qrels = index.qrels if keep is None else index.qrels.subset(np.asarray(keep, dtype=bool))
        results = evaluate_prepared(index.prepared, qrels, [self.measure])
        out = np.zeros((len(index.prepared.names), len(index.topics)))
        position = {name: i for i, name in enumerate(index.topics)}
        columns = np.array([position[t] for t in results.topics], dtype=np.int64)
        if len(columns):
            out[:, columns] = results.values[:, 0, :]
        return out

    def mean(self, keep: np.ndarray | None = None) -> np.ndarray:
        """[n_run] the measure's aggregate over all topics of the full qrels (the registry's: the mean, the geometric
        mean for gm_map and gm_bpref, the total for counts)."""
        return aggregate_topics(self.per_topic(keep), self.aggregate)


def aggregate_topics(values: np.ndarray, aggregate: str) -> np.ndarray:
    """[n_run] per-run aggregate of values [n_run, n_topic] as the registry names it: "mean"; "gm" the geometric
    mean, each value floored at 1e-5 (trec_eval's gm_map); "sum" / "sum_all" the total. No topics: 0."""
    if values.shape[1] == 0:
        return np.zeros(values.shape[0])
    aggregated: np.ndarray
    if aggregate == "gm":
        aggregated = np.exp(np.log(np.maximum(values, GM_FLOOR)).mean(axis=1))
    elif aggregate in ("sum", "sum_all"):
        aggregated = values.sum(axis=1)
    else:
        aggregated = values.mean(axis=1)
    return aggregated


def run_mask(names: Sequence[str], selected: Sequence[str] | None) -> np.ndarray:
    """bool [n_run]: the runs named in `selected` (all runs when None); unknown names are an error."""
    if selected is None:
        return np.ones(len(names), dtype=bool)
    wanted = set(selected)
    unknown = wanted - set(names)
    if unknown:
        raise ValueError(f"unknown runs: {', '.join(sorted(unknown))}")
    return np.array([name in wanted for name in names], dtype=bool)
