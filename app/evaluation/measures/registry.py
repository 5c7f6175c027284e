"""The measure registry: every measure with its parameters, a one-line description and its reference.

In the style of ir_measures: a family (`Measure`) says what it computes and where it comes from; a name such as
`P@10`, `ndcg_cut_10`, `P.10`, `Rprec_mult_0.20`, `RBP(p=0.5)` or `iprec@rec0.50` resolves (`resolve`) to a
`MeasureSpec` holding its function and parameter. `trecpool measures` lists `MEASURES`; pages and the API describe
measures with `describe`. To add a measure: write its function over `RankedLists` (trec.py or inferred.py) and add
one `Measure` to `MEASURES`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.evaluation.errors import MeasureError
from app.evaluation.measures import inferred, trec
from app.evaluation.measures.trec import RankedLists

# A measure over ranked lists and its family's parameter: a rank cutoff (int), a recall level, an R multiple or RBP's
# p (float), or None; the family decides which (`Measure.parameter`), so the parameter's type is not one type here.
MeasureFunction = Callable[[RankedLists, Any], np.ndarray]


@dataclass(frozen=True)
class MeasureSpec:
    """A measure resolved from its name."""

    name: str  # canonical name, e.g. "P@10"
    function: MeasureFunction
    cutoff: int | float | None  # the family's parameter: a rank cutoff, a recall level, an R multiple or RBP's p
    aggregate: str  # "mean", "gm" (geometric mean, each value floored at 1e-5, as trec_eval's gm_map), "sum"
    # (counts: `all` is their total, as trec_eval) or "sum_all" (total over every qrels topic even with
    # run_topics_only, as sample_eval.pl's inum_rel)
    stratified: bool  # needs sample_eval (stratified) qrels
    description: str = ""  # the family's one-line description
    family: str = ""  # the family's name in MEASURES


TREC_EVAL = "trec_eval 10.0 (github.com/usnistgov/trec_eval)"
SAMPLE_EVAL = "sample_eval.pl (Yilmaz, Kanoulas and Aslam, SIGIR 2008; TREC/TRECVID inferred measures)"
AXIOU = (
    "AxIoU paper: Togashi, Otani, Nakashima, Rahtu, Heikkilä and Sakai, AxIoU: An Axiomatically Justified Measure "
    "for Video Moment Retrieval, CVPR 2022 (and its supplementary material)"
)
MOMENT_DETR = "Moment-DETR / QVHighlights evaluation (Lei, Berg and Bansal, NeurIPS 2021)"
RBP_PAPER = "Moffat and Zobel, Rank-Biased Precision, ACM TOIS 27(1), 2008; as ir_measures' RBP(rel=1, p)"
IR_MEASURES = "ir_measures (ir-measur.es), Judged@k"


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
    function: MeasureFunction | None = None
    cutoff: str = "no"  # takes a parameter: "no" | "optional" | "required"
    aggregate: str = "mean"  # "mean", "gm", "sum" or "sum_all" (see MeasureSpec)
    stratified: bool = False  # needs sample_eval (stratified) qrels
    kind: str = "trec"  # "trec" (TREC qrels), "sample_eval" (5-column qrels) or "moment"
    aliases: tuple[str, ...] = ()
    parameter: str = "rank"  # what the parameter is: "rank" (an integer cutoff), "fraction" (a recall level or
    # an R multiple, a number) or "persistence" (RBP's p, written name(p=0.5))


_CUT_OPTIONAL = "@k: rank cutoff (optional)"
_CUT_REQUIRED = "@k: rank cutoff (required)"
_P_REQUIRED = "(p=x): persistence, 0 < p < 1 (required), e.g. RBP(p=0.5)"

MEASURES: tuple[Measure, ...] = (
    Measure("AP", "Average precision: mean precision at each relevant doc's rank (unretrieved count 0).", TREC_EVAL,
            _CUT_OPTIONAL, trec.average_precision, "optional", aliases=("map", "MAP", "map_cut")),
    Measure("gm_map", "Geometric mean of AP over topics, each AP floored at 1e-5 (per topic: AP).", TREC_EVAL,
            function=trec.average_precision, aggregate="gm", aliases=("GMAP", "gm_ap")),
    Measure("P", "Precision: relevant docs in the top k, over k.", TREC_EVAL, _CUT_REQUIRED,
            trec.precision_at, "required"),
    Measure("R", "Recall: relevant docs in the top k, over all relevant docs.", TREC_EVAL, _CUT_REQUIRED,
            trec.recall_at, "required", aliases=("recall",)),
    Measure("Rprec", "R-precision: precision at rank R, R the topic's number of relevant docs.", TREC_EVAL,
            function=trec.r_precision),
    Measure("Rprec_mult", "Precision at rank (long)(x R + 0.9): R-precision at a multiple x of R.", TREC_EVAL,
            "@x: multiple of R (required), e.g. Rprec_mult@0.20 or Rprec_mult_0.20", trec.r_precision_multiple,
            "required", parameter="fraction"),
    Measure("bpref", "Binary preference: relevant docs ranked above judged non-relevant ones.", TREC_EVAL,
            function=trec.bpref),
    Measure("gm_bpref", "Geometric mean of bpref over topics, each floored at 1e-5 (per topic: bpref).", TREC_EVAL,
            function=trec.bpref, aggregate="gm"),
    Measure("nDCG", "Normalised discounted cumulative gain (gain = grade, discount log2(rank + 1)).", TREC_EVAL,
            _CUT_OPTIONAL, trec.ndcg, "optional", aliases=("ndcg", "ndcg_cut", "NDCG")),
    Measure("dcg", "Discounted cumulative gain (gain = grade, discount log2(rank + 1)), not normalised.", TREC_EVAL,
            function=trec.dcg),
    Measure("ideal_dcg", "DCG of the ideal ranking of the topic's judged docs.", TREC_EVAL, function=trec.ideal_dcg),
    Measure("ndcg_rel", "nDCG averaged over the relevant docs' ranks (an unretrieved one counts the list's end).",
            TREC_EVAL, function=trec.ndcg_rel),
    Measure("Rndcg", "nDCG averaged over the ranks where the ideal gain changes (R-levels).", TREC_EVAL,
            function=trec.rndcg),
    Measure("binG", "Mean over relevant docs of 1 / log2(2 + non-relevant docs at or above it).", TREC_EVAL,
            function=trec.bin_g),
    Measure("G", "Gain of each doc over log2(2 + ideal cost so far - gain so far), over the ideal gain.", TREC_EVAL,
            function=trec.g_measure),
    Measure("RR", "Reciprocal rank of the first relevant doc (within the top k if given).", TREC_EVAL,
            _CUT_OPTIONAL, trec.reciprocal_rank, "optional", aliases=("recip_rank", "MRR")),
    Measure("iprec_at_recall", "Interpolated precision at a recall level: best precision at any recall >= it.",
            TREC_EVAL, "@x: recall level 0..1 (required), e.g. iprec_at_recall@0.10 or iprec_at_recall_0.10",
            trec.interpolated_precision, "required", aliases=("IPrec",), parameter="fraction"),
    Measure("11pt_avg", "Mean interpolated precision at the 11 recall levels 0, 0.1, ..., 1.", TREC_EVAL,
            function=trec.eleven_point_average),
    Measure("relative_P", "Relevant docs in the top k, over min(k, R).", TREC_EVAL, _CUT_REQUIRED,
            trec.relative_precision_at, "required"),
    Measure("success", "1 if a relevant doc is in the top k, else 0.", TREC_EVAL, _CUT_REQUIRED, trec.success_at,
            "required", aliases=("Success",)),
    Measure("set_P", "Precision of the retrieved set: relevant retrieved over retrieved.", TREC_EVAL,
            function=trec.set_precision),
    Measure("set_recall", "Recall of the retrieved set: relevant retrieved over relevant.", TREC_EVAL,
            function=trec.set_recall),
    Measure("set_relative_P", "Relevant retrieved over min(retrieved, relevant).", TREC_EVAL,
            function=trec.set_relative_precision),
    Measure("set_map", "Set precision times set recall.", TREC_EVAL, function=trec.set_map),
    Measure("set_F", "F measure of the retrieved set: 2 P R / (P + R).", TREC_EVAL, function=trec.set_f),
    Measure("utility", "Relevant retrieved minus non-relevant retrieved (trec_eval's utility 1,-1,0,0).", TREC_EVAL,
            function=trec.utility),
    Measure("yaap", "Robertson's smoothed AP: log((1 + S) / (1 + R - S)), S the sum of precisions at rel docs.",
            TREC_EVAL, function=trec.yaap),
    Measure("rbp", "trec_eval's rank-biased precision: grades as gains, scaled to 0..1 when above 1 (p = 0.9).",
            TREC_EVAL, "(p=x): persistence (optional, default 0.9), e.g. rbp(p=0.5) or rbp.p=0.5",
            trec.rank_biased_precision, "optional", parameter="persistence"),
    Measure("rbp_resid", "trec_eval's rbp residual (p = 0.9): p^n + (1 - p) sum of p^(rank-1) over unjudged docs; "
            "0 if every doc is judged.", TREC_EVAL, function=trec.rbp_residual),
    Measure("RBP", "Rank-biased precision: (1 - p) times the sum of p^(rank - 1) over relevant docs.", RBP_PAPER,
            _P_REQUIRED, trec.binary_rbp, "required", parameter="persistence"),
    Measure("RBP_resid", "RBP's residual: the most unjudged docs and docs past the list's end could add.",
            RBP_PAPER, _P_REQUIRED, trec.binary_rbp_residual, "required", parameter="persistence"),
    Measure("unj", "Unjudged docs (not in the qrels, or grade < 0) in the top k, over k.", TREC_EVAL,
            _CUT_REQUIRED, trec.unjudged_at, "required"),
    Measure("Judged", "Docs of the top k that are in the qrels (any grade), over min(k, docs retrieved).",
            IR_MEASURES, _CUT_REQUIRED, trec.judged_at, "required", aliases=("judged",)),
    Measure("num_q", "Topics averaged over (with -c, every qrels topic); `all` is the total.", TREC_EVAL,
            function=trec.num_q, aggregate="sum"),
    Measure("num_ret", "Retrieved docs (after the max_results cut); `all` is the total.", TREC_EVAL,
            function=trec.num_ret, aggregate="sum"),
    Measure("num_rel", "Relevant docs in the qrels; `all` is the total.", TREC_EVAL,
            function=trec.num_rel, aggregate="sum"),
    Measure("num_rel_ret", "Relevant docs retrieved; `all` is the total.", TREC_EVAL,
            function=trec.num_rel_ret, aggregate="sum"),
    Measure("num_nonrel_judged_ret", "Judged non-relevant docs retrieved; `all` is the total.", TREC_EVAL,
            function=trec.num_nonrel_judged_ret, aggregate="sum"),
    Measure("infAP", "Inferred AP from incomplete judgements (grade < 0: pooled, not judged; sampled uniformly).",
            "trec_eval 10.0 infAP (Yilmaz and Aslam, CIKM 2006)", function=trec.inf_ap),
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


# trec_eval / pytrec_eval / ir_measures / sample_eval spellings -> canonical family
_ALIASES = {alias: m.name for m in MEASURES for alias in m.aliases}

# sample_eval.pl's interpolated inferred precision at a recall level: iprec@rec0.50 (also iprec@rec0.5, iprec@rec1)
_IPREC = re.compile(r"^iprec@rec(?P<level>\d*\.?\d*)$")
IPREC_LEVELS = [f"iprec@rec{i / 10:.2f}" for i in range(11)]

_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)"
_SUFFIXED = re.compile(rf"^(?P<family>.+?)(?:@|_)(?P<param>{_NUMBER})$")  # P@10, P_10, Rprec_mult_0.20
_TIGHT = re.compile(r"^(?P<family>iP)(?P<param>\d+)$")  # sample_eval.pl's iP100
_DOTTED = re.compile(r"^(?P<family>[^.]+)\.(?P<param>.*)$")  # trec_eval's -m form: P.10, rbp.p=0.5
_CALLED = re.compile(r"^(?P<family>[A-Za-z_][A-Za-z0-9_]*)\((?P<param>[^()]*)\)$")  # RBP(p=0.5)
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


def aggregate_of(name: str) -> str:
    """How the measure called `name` averages its topics ("mean", "gm", "sum", "sum_all"); "mean" for a measure
    outside the registry (the moment measures)."""
    try:
        return resolve(name).aggregate
    except MeasureError:
        return "mean"


def resolve(name: str) -> MeasureSpec:
    """The measure called `name`, in any spelling of trecpool, trec_eval, pytrec_eval, ir_measures or sample_eval.

    E.g. `AP`, `map`, `P@10`, `P_10`, `P.10`, `nDCG@10`, `ndcg_cut_10`, `ndcg_cut.10`, `Rprec_mult_0.20`,
    `iprec_at_recall.0.1`, `RBP(p=0.5)`, `rbp.p=0.5`, `Judged@10`, `iP100`, `iprec@rec0.50` (or `iprec@rec0.5`).
    A trec_eval name with several parameters (`P.5,10`) names several measures: see `expand_names`.
    """
    text = name.strip()
    family = _family(text)
    if family is not None:
        return _spec(name, family, None)
    iprec = _IPREC.match(text)
    if iprec is not None:
        return _resolve_iprec(name, iprec.group("level"))
    for pattern in (_CALLED, _DOTTED, _TIGHT, _SUFFIXED):
        match = pattern.match(text)
        if match is not None and _family(match.group("family")) is not None:
            return _spec(name, _family(match.group("family")) or "", match.group("param"))
    raise MeasureError(f"unknown measure {name!r}; known: {', '.join(_FAMILIES)}")


_RANKS = "5,10,15,20,30,100,200,500,1000"
_MULTIPLES = "0.20,0.40,0.60,0.80,1.00,1.20,1.40,1.60,1.80,2.00"
_OFFICIAL = ("num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
             "iprec_at_recall.0.00,0.10,0.20,0.30,0.40,0.50,0.60,0.70,0.80,0.90,1.00", f"P.{_RANKS}")  # fmt: skip
# trec_eval 10.0's nicknames (measures.c), with its default parameters written out; runid (the run's tag) and
# relstring (a string of grades) are left out: they are not numbers
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": _OFFICIAL,
    "set": ("num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall", "set_relative_P",
            "set_map", "set_F"),
    "all_trec": (*_OFFICIAL, f"recall.{_RANKS}", "unj.5,10,20", "rbp", "rbp_resid", "infAP", "gm_bpref", "utility",
                 "11pt_avg", "ndcg", f"relative_P.{_RANKS}", f"Rprec_mult.{_MULTIPLES}",
                 "success.1,5,10", f"map_cut.{_RANKS}", f"ndcg_cut.{_RANKS}", "ndcg_rel", "Rndcg", "binG", "G", "set_P",
                 "set_recall", "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret"),
}  # fmt: skip


def expand_names(name: str) -> list[str]:
    """The measure names in `name`: trec_eval's `P.5,10` names P.5 and P.10, its nicknames (`official`, `set`,
    `all_trec`) their measures in trec_eval's order; any other name is itself."""
    if name.strip() in NICKNAMES:
        return [one for member in NICKNAMES[name.strip()] for one in expand_names(member)]
    match = _DOTTED.match(name.strip())
    if match is None or "," not in match.group("param") or _family(match.group("family")) is None:
        return [name]
    family = _FAMILIES[_family(match.group("family")) or ""]
    if family.parameter == "persistence":
        return [name]
    return [f"{match.group('family')}.{part}" for part in match.group("param").split(",")]


def _family(text: str) -> str | None:
    """The family a bare name stands for (its own name or an alias), or None."""
    if text in _FAMILIES:
        return text
    return _ALIASES.get(text)


def _spec(name: str, family: str, param: str | None) -> MeasureSpec:
    """The MeasureSpec of `family` with its parameter written `param` (None: none given)."""
    measure = _FAMILIES[family]
    assert measure.function is not None
    value = None if param is None else _parameter(name, measure, param)
    if measure.cutoff == "no" and value is not None:
        raise MeasureError(f"measure {family} takes no parameter ({name!r})")
    if measure.cutoff == "required" and value is None:
        raise MeasureError(f"measure {family} needs a parameter: {measure.parameters} ({name!r})")
    if value is None:
        canonical = family
    elif measure.parameter == "persistence":
        canonical = f"{family}(p={value:g})"
    elif measure.parameter == "fraction":
        canonical = f"{family}@{value:.2f}" if round(value, 2) == value else f"{family}@{value:g}"
    else:
        canonical = f"{family}@{value}"
    aggregate = measure.aggregate
    return MeasureSpec(canonical, measure.function, value, aggregate, measure.stratified, measure.description, family)


def _parameter(name: str, measure: Measure, param: str) -> int | float:
    """The parameter of `measure` written `param` (a rank cutoff, a number, or RBP's `p=x`)."""
    if "," in param and measure.parameter != "persistence":
        raise MeasureError(f"{name!r} names several measures; give one parameter per name, e.g. {measure.name}.10")
    if measure.parameter == "rank":
        if not param.isdigit() or int(param) < 1:
            raise MeasureError(f"cutoff must be a whole number of at least 1 ({name!r})")
        return int(param)
    if measure.parameter == "persistence":
        settings = dict(part.partition("=")[::2] if "=" in part else ("p", part) for part in param.split(","))
        if set(settings) - {"p", "rel"} or settings.get("rel", "1").strip() != "1" or "p" not in settings:
            raise MeasureError(f"{measure.name} takes its persistence as {measure.name}(p=0.5) ({name!r})")
        value = _number(name, settings["p"])
        if not 0 < value < 1:
            raise MeasureError(f"persistence p must be between 0 and 1 ({name!r})")
        return value
    value = _number(name, param)
    if value < 0:
        raise MeasureError(f"parameter must be at least 0 ({name!r})")
    return value


def _number(name: str, text: str) -> float:
    """A finite number written `text`, or a MeasureError naming `name`."""
    try:
        value = float(text.strip())
    except ValueError:
        raise MeasureError(f"{text!r} is not a number ({name!r})") from None
    if not np.isfinite(value):
        raise MeasureError(f"{text!r} is not a finite number ({name!r})")
    return value


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
    unit = _UNITS.get(spec.family, "cutoff")
    return f"{spec.description} ({unit} {spec.cutoff})"


_UNITS = {"iprec@rec": "recall level", "iprec_at_recall": "recall level", "Rprec_mult": "multiple of R", "rbp": "p",
          "RBP": "p", "RBP_resid": "p"}  # fmt: skip


def measure_help() -> str:
    """The help text of a `measure=` parameter: the document measure families with their descriptions."""
    families = "; ".join(
        f"{m.name}{'@k' if m.cutoff == 'required' else ''}: {m.description.rstrip('.')}"
        for m in MEASURES
        if m.kind != "moment"
    )
    return f"measure to sort by, e.g. AP, P@10, nDCG@10 (default: the evaluation's first measure). {families}"
