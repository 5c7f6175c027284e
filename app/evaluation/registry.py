"""Measure names (ir_measures syntax, plus trec_eval / sample_eval aliases) mapped to their functions."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from app.evaluation import inferred, trec_measures
from app.evaluation.errors import MeasureError
from app.evaluation.trec_measures import RankedLists

MeasureFunction = Callable[[RankedLists, int | None], np.ndarray]
LevelFunction = Callable[[RankedLists, float | None], np.ndarray]


@dataclass(frozen=True)
class MeasureSpec:
    """A measure resolved from its name."""

    name: str  # canonical name, e.g. "P@10"
    function: MeasureFunction | LevelFunction
    cutoff: int | float | None  # a rank cutoff, or the recall level (0..1) of iprec@rec
    aggregate: str  # "mean", "sum" (counts: `all` is their total, as trec_eval) or "sum_all" (total over every
    # qrels topic even with run_topics_only, as sample_eval.pl's inum_rel)
    stratified: bool  # needs sample_eval (stratified) qrels


# family -> (function, takes a cutoff: "no" | "optional" | "required", aggregate, stratified)
_FAMILIES: dict[str, tuple[MeasureFunction, str, str, bool]] = {
    "AP": (trec_measures.average_precision, "optional", "mean", False),
    "P": (trec_measures.precision_at, "required", "mean", False),
    "R": (trec_measures.recall_at, "required", "mean", False),
    "Rprec": (trec_measures.r_precision, "no", "mean", False),
    "bpref": (trec_measures.bpref, "no", "mean", False),
    "nDCG": (trec_measures.ndcg, "optional", "mean", False),
    "RR": (trec_measures.reciprocal_rank, "optional", "mean", False),
    "num_ret": (trec_measures.num_ret, "no", "sum", False),
    "num_rel": (trec_measures.num_rel, "no", "sum", False),
    "num_rel_ret": (trec_measures.num_rel_ret, "no", "sum", False),
    "infAP": (inferred.inf_ap, "no", "mean", False),
    "xinfAP": (inferred.xinf_ap, "no", "mean", True),
    "infNDCG": (inferred.inf_ndcg, "no", "mean", True),
    "iP": (inferred.inferred_precision_at, "required", "mean", True),
    "inum_rel": (inferred.inum_rel, "no", "sum_all", True),
    "inum_rel_ret": (inferred.inum_rel_ret, "no", "sum", True),
}

# trec_eval / pytrec_eval / sample_eval spellings -> canonical family
_ALIASES = {
    "map": "AP",
    "MAP": "AP",
    "map_cut": "AP",
    "P": "P",
    "recall": "R",
    "ndcg": "nDCG",
    "ndcg_cut": "nDCG",
    "NDCG": "nDCG",
    "recip_rank": "RR",
    "MRR": "RR",
    "iP": "iP",
    "infNDCG": "infNDCG",
}

# sample_eval.pl's interpolated inferred precision at a recall level: iprec@rec0.50 (also iprec@rec0.5, iprec@rec1)
_IPREC = re.compile(r"^iprec@rec(?P<level>\d*\.?\d*)$")
IPREC_LEVELS = [f"iprec@rec{i / 10:.2f}" for i in range(11)]

_NAME = re.compile(r"^(?P<family>[A-Za-z_]+?)(?:(?:@|_)(?P<cut>\d+)|(?P<tight>(?<=iP)\d+))?$")

TREC_DEFAULT = [
    "num_ret", "num_rel", "num_rel_ret", "AP", "Rprec", "bpref", "RR",
    "P@5", "P@10", "P@15", "P@20", "P@30", "P@100", "P@200", "P@500", "P@1000",
    "R@5", "R@10", "R@15", "R@20", "R@30", "R@100", "R@200", "R@500", "R@1000",
    "nDCG", "nDCG@5", "nDCG@10", "nDCG@20", "nDCG@100", "nDCG@1000",
]  # fmt: skip
SAMPLE_EVAL_DEFAULT = [
    "xinfAP", "infNDCG", "iP@5", "iP@10", "iP@15", "iP@20", "iP@30", "iP@100", "iP@200", "iP@500", "iP@1000",
    "inum_rel_ret", "inum_rel", "num_ret", *IPREC_LEVELS,
]  # fmt: skip


def default_measures(stratified: bool) -> list[str]:
    """The measures `trecpool eval` reports when none are named."""
    if not stratified:
        return list(TREC_DEFAULT)
    return TREC_DEFAULT + [m for m in SAMPLE_EVAL_DEFAULT if m not in TREC_DEFAULT]


def resolve(name: str) -> MeasureSpec:
    """The measure called `name`.

    E.g. `AP`, `P@10`, `nDCG@10`, `map`, `P_10`, `ndcg_cut_10`, `iP100`, `iprec@rec0.50` (or `iprec@rec0.5`).
    """
    iprec = _IPREC.match(name.strip())
    if iprec is not None:
        return _resolve_iprec(name, iprec.group("level"))
    match = _NAME.match(name.strip())
    if match is None:
        raise MeasureError(f"unknown measure {name!r}")
    family = match.group("family")
    family = family if family in _FAMILIES else _ALIASES.get(family, family)
    if family not in _FAMILIES:
        raise MeasureError(f"unknown measure {name!r}; known: {', '.join(_FAMILIES)}")
    function, cutoff_rule, aggregate, stratified = _FAMILIES[family]
    digits = match.group("cut") or match.group("tight")
    cutoff = int(digits) if digits is not None else None
    if cutoff_rule == "no" and cutoff is not None:
        raise MeasureError(f"measure {family} takes no cutoff ({name!r})")
    if cutoff_rule == "required" and cutoff is None:
        raise MeasureError(f"measure {family} needs a cutoff, e.g. {family}@10 ({name!r})")
    if cutoff is not None and cutoff < 1:
        raise MeasureError(f"cutoff must be at least 1 ({name!r})")
    canonical = family if cutoff is None else f"{family}@{cutoff}"
    return MeasureSpec(canonical, function, cutoff, aggregate, stratified)


def _resolve_iprec(name: str, digits: str) -> MeasureSpec:
    """iprec@rec<level>, the level between 0 and 1 in steps of 0.01; canonical with two decimals as sample_eval."""
    try:
        level = float(digits)
    except ValueError:
        raise MeasureError(f"iprec@rec needs a recall level, e.g. iprec@rec0.50 ({name!r})") from None
    hundredths = round(level * 100)
    if not 0 <= level <= 1 or abs(level * 100 - hundredths) > 1e-9:
        raise MeasureError(f"recall level must be 0..1 in steps of 0.01, e.g. iprec@rec0.50 ({name!r})")
    level = hundredths / 100
    return MeasureSpec(f"iprec@rec{level:.2f}", inferred.interpolated_precision_at_recall, level, "mean", True)
