"""The measure registry: every measure with its parameters, a one-line description and its reference.

In the style of ir_measures: a family (`Measure`) says what it computes and where it comes from; a name such as
`P@10`, `ndcg_cut_10` or `iprec@rec0.50` resolves (`resolve`) to a `MeasureSpec` holding its function and cutoff.
`trecpool measures` lists `MEASURES`; pages and the API describe measures with `describe`. To add a measure: write
its function over `RankedLists` (trec.py or inferred.py) and add one `Measure` to `MEASURES`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from app.evaluation.errors import MeasureError
from app.evaluation.measures import inferred, trec
from app.evaluation.measures.trec import RankedLists

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
    description: str = ""  # the family's one-line description
    family: str = ""  # the family's name in MEASURES


TREC_EVAL = "trec_eval 10.0 (github.com/usnistgov/trec_eval)"
SAMPLE_EVAL = "sample_eval.pl (Yilmaz, Kanoulas and Aslam, SIGIR 2008; TREC/TRECVID inferred measures)"
AXIOU = "AxIoU paper: Hao, Nakano et al., SIGIR 2022 (and its supplementary material)"
MOMENT_DETR = "Moment-DETR / QVHighlights evaluation (Lei, Berg and Bansal, NeurIPS 2021)"


@dataclass(frozen=True)
class Measure:
    """One measure family, as `trecpool measures` lists it: name, parameters, a one-line description, a reference.

    Document measures carry their function over `RankedLists`; moment measures (`kind` "moment") are computed by
    app.evaluation.moments and have none here.
    """

    name: str  # family name, e.g. "P"
    description: str
    reference: str
    parameters: str = ""  # how the name takes its parameters, e.g. "@k: rank cutoff (required)"
    function: MeasureFunction | LevelFunction | None = None
    cutoff: str = "no"  # takes a rank cutoff: "no" | "optional" | "required"
    aggregate: str = "mean"  # "mean", "sum" or "sum_all" (see MeasureSpec)
    stratified: bool = False  # needs sample_eval (stratified) qrels
    kind: str = "trec"  # "trec" (TREC qrels), "sample_eval" (5-column qrels) or "moment"
    aliases: tuple[str, ...] = ()


_CUT_OPTIONAL = "@k: rank cutoff (optional)"
_CUT_REQUIRED = "@k: rank cutoff (required)"

MEASURES: tuple[Measure, ...] = (
    Measure("AP", "Average precision: mean precision at each relevant doc's rank (unretrieved count 0).", TREC_EVAL,
            _CUT_OPTIONAL, trec.average_precision, "optional", aliases=("map", "MAP", "map_cut")),
    Measure("P", "Precision: relevant docs in the top k, over k.", TREC_EVAL, _CUT_REQUIRED,
            trec.precision_at, "required"),
    Measure("R", "Recall: relevant docs in the top k, over all relevant docs.", TREC_EVAL, _CUT_REQUIRED,
            trec.recall_at, "required", aliases=("recall",)),
    Measure("Rprec", "R-precision: precision at rank R, R the topic's number of relevant docs.", TREC_EVAL,
            function=trec.r_precision),
    Measure("bpref", "Binary preference: relevant docs ranked above judged non-relevant ones.", TREC_EVAL,
            function=trec.bpref),
    Measure("nDCG", "Normalised discounted cumulative gain (gain = grade, discount log2(rank + 1)).", TREC_EVAL,
            _CUT_OPTIONAL, trec.ndcg, "optional", aliases=("ndcg", "ndcg_cut", "NDCG")),
    Measure("RR", "Reciprocal rank of the first relevant doc (within the top k if given).", TREC_EVAL,
            _CUT_OPTIONAL, trec.reciprocal_rank, "optional", aliases=("recip_rank", "MRR")),
    Measure("num_ret", "Retrieved docs (after the max_results cut); `all` is the total.", TREC_EVAL,
            function=trec.num_ret, aggregate="sum"),
    Measure("num_rel", "Relevant docs in the qrels; `all` is the total.", TREC_EVAL,
            function=trec.num_rel, aggregate="sum"),
    Measure("num_rel_ret", "Relevant docs retrieved; `all` is the total.", TREC_EVAL,
            function=trec.num_rel_ret, aggregate="sum"),
    Measure("infAP", "Inferred AP from incomplete judgements (unjudged docs sampled uniformly).",
            "trec_eval 10.0 infAP (Yilmaz and Aslam, CIKM 2006)", function=inferred.inf_ap),
    Measure("xinfAP", "Extended inferred AP over stratified samples of the pool.", SAMPLE_EVAL,
            function=inferred.xinf_ap, stratified=True, kind="sample_eval"),
    Measure("infNDCG", "Inferred nDCG over stratified samples of the pool.", SAMPLE_EVAL,
            function=inferred.inf_ndcg, stratified=True, kind="sample_eval"),
    Measure("iP", "Inferred precision at rank k over stratified samples.", SAMPLE_EVAL, _CUT_REQUIRED,
            inferred.inferred_precision_at, "required", stratified=True, kind="sample_eval"),
    Measure("iprec@rec", "Interpolated inferred precision at a recall level.", SAMPLE_EVAL,
            "level in 0..1 in steps of 0.01, e.g. iprec@rec0.50 (required)",
            inferred.interpolated_precision_at_recall, stratified=True, kind="sample_eval"),
    Measure("inum_rel", "Inferred number of relevant docs; total over every qrels topic.", SAMPLE_EVAL,
            function=inferred.inum_rel, aggregate="sum_all", stratified=True, kind="sample_eval"),
    Measure("inum_rel_ret", "Inferred number of relevant docs retrieved; `all` is the total.", SAMPLE_EVAL,
            function=inferred.inum_rel_ret, aggregate="sum", stratified=True, kind="sample_eval"),
    Measure("AxIoU", "Average max IoU: mean over k <= K of the best temporal IoU in the top k.", AXIOU,
            "@K: cutoff (required)", kind="moment"),
    Measure("R@K,theta", "Recall: 1 if a moment in the top K has IoU >= theta (> theta with `>`).", AXIOU,
            "@K,theta or @K,>theta: cutoff and IoU threshold (required)", kind="moment"),
    Measure("AP@K,theta", "Moment AP at K: mean over k <= K of the share of the top k with IoU >= theta.", AXIOU,
            "@K,theta: cutoff and IoU threshold (required)", kind="moment"),
    Measure("DCG@K", "DCG of temporal IoU as gain, discount log2(rank + 1).", AXIOU, "@K: cutoff (required)",
            kind="moment"),
    Measure("mAP", "Detection mAP over IoU thresholds (default 0.5:0.95 in steps of 0.05).", MOMENT_DETR,
            "@theta or @lo:hi: IoU threshold(s) (optional)", kind="moment"),
)  # fmt: skip

_FAMILIES: dict[str, Measure] = {m.name: m for m in MEASURES if m.kind != "moment" and m.name != "iprec@rec"}


# trec_eval / pytrec_eval / sample_eval spellings -> canonical family
_ALIASES = {alias: m.name for m in MEASURES for alias in m.aliases}

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
    measure = _FAMILIES[family]
    function, cutoff_rule, aggregate = measure.function, measure.cutoff, measure.aggregate
    assert function is not None
    digits = match.group("cut") or match.group("tight")
    cutoff = int(digits) if digits is not None else None
    if cutoff_rule == "no" and cutoff is not None:
        raise MeasureError(f"measure {family} takes no cutoff ({name!r})")
    if cutoff_rule == "required" and cutoff is None:
        raise MeasureError(f"measure {family} needs a cutoff, e.g. {family}@10 ({name!r})")
    if cutoff is not None and cutoff < 1:
        raise MeasureError(f"cutoff must be at least 1 ({name!r})")
    canonical = family if cutoff is None else f"{family}@{cutoff}"
    return MeasureSpec(canonical, function, cutoff, aggregate, measure.stratified, measure.description, family)


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
    description = measure_family("iprec@rec").description
    return MeasureSpec(
        f"iprec@rec{level:.2f}",
        inferred.interpolated_precision_at_recall,
        level,
        "mean",
        True,
        description,
        "iprec@rec",
    )


_MOMENT_FAMILIES = {"AxIoU": "AxIoU", "R": "R@K,theta", "AP": "AP@K,theta", "DCG": "DCG@K", "mAP": "mAP"}


def measure_family(name: str) -> Measure:
    """The registry entry of a family name (`AP`, `iprec@rec`, `AxIoU`, ...) or of a full measure name."""
    by_name = {m.name: m for m in MEASURES}
    if name in by_name:
        return by_name[name]
    try:
        return by_name[resolve(name).family]
    except MeasureError:
        from app.evaluation.moments.measures import parse_moment_measure

        return by_name[_MOMENT_FAMILIES[parse_moment_measure(name).family]]


def describe(name: str) -> str:
    """A one-line description of a measure name for pages and help texts (empty for names the registry lacks)."""
    try:
        spec = resolve(name)
    except MeasureError:
        try:
            return measure_family(name).description
        except MeasureError:
            return ""
    if spec.cutoff is None:
        return spec.description
    unit = "recall level" if spec.name.startswith("iprec@rec") else "cutoff"
    return f"{spec.description} ({unit} {spec.cutoff})"


def measure_help() -> str:
    """The help text of a `measure=` parameter: the document measure families with their descriptions."""
    families = "; ".join(
        f"{m.name}{'@k' if m.cutoff == 'required' else ''}: {m.description.rstrip('.')}"
        for m in MEASURES
        if m.kind != "moment"
    )
    return f"measure to sort by, e.g. AP, P@10, nDCG@10 (default: the evaluation's first measure). {families}"
