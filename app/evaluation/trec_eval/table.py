"""trec_eval 10.0's measure table: every measure in its printing order, its parameters and how it prints.

A `-m` argument is a measure or a nickname (`official`, `all_trec`, `set`), optionally followed by `.` and the
measure's parameters (`P.5,10`, `iprec_at_recall..1,.5`, `ndcg.1=3,2=9`, `rbp.p=0.5`). As in trec_eval, a measure
asked for twice takes the parameters of its first `-m` that gives some, and measures print in the table's order
whatever the order of the `-m` arguments.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.evaluation.trec_eval.options import UsageError, atol

# how a measure takes parameters (trec_eval's init procedures)
NONE = "none"  # no parameters
LONG_CUTOFFS = "long_cutoffs"  # ranks, sorted, positive and distinct (P.5,10)
DOUBLE_CUTOFFS = "double_cutoffs"  # numbers, sorted, distinct (iprec_at_recall.0,.5)
DOUBLE_PARAMS = "double_params"  # numbers in the order given (utility.1,-1,0,0)
PAIR_PARAMS = "pair_params"  # name=value pairs (ndcg.1=3,2=9; rbp.p=0.5)

# how a measure prints
FLOAT = "float"  # per topic and in `all` (mean), %6.4f
LONG = "long"  # per topic and in `all` (total), %ld
GEOMETRIC = "geometric"  # only in `all`: the geometric mean
COUNT = "count"  # num_q: only in `all`
RUNID = "runid"  # only in `all`: the run's tag
TEXT = "text"  # relstring: only per topic


@dataclass(frozen=True)
class TableEntry:
    """One measure of trec_eval's table."""

    name: str
    params: str  # NONE, LONG_CUTOFFS, DOUBLE_CUTOFFS, DOUBLE_PARAMS or PAIR_PARAMS
    prints: str  # FLOAT, LONG, GEOMETRIC, COUNT, RUNID or TEXT
    defaults: tuple[float, ...] = ()  # default cutoffs or parameters
    supported: bool = True  # False: needs a rel_info format other than qrels


_OTHER_FORMATS = (
    "prefs_num_prefs_poss",
    "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret",
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
    "prefs_avgjg_Rnonrel",
    "prefs_simp_ret",
    "prefs_pair_ret",
    "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp",
    "prefs_pair_imp",
    "prefs_avgjg_imp",
    "map_avgjg",
    "P_avgjg",
    "Rprec_mult_avgjg",
)  # fmt: skip  (measures of trec_eval's prefs and qrels_jg rel_info formats, which are not read here)
_RANKS = (5.0, 10.0, 15.0, 20.0, 30.0, 100.0, 200.0, 500.0, 1000.0)
_ELEVEN = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

TABLE: tuple[TableEntry, ...] = (
    TableEntry("runid", NONE, RUNID),
    TableEntry("num_q", NONE, COUNT),
    TableEntry("num_ret", NONE, LONG),
    TableEntry("num_rel", NONE, LONG),
    TableEntry("num_rel_ret", NONE, LONG),
    TableEntry("map", NONE, FLOAT),
    TableEntry("gm_map", NONE, GEOMETRIC),
    TableEntry("Rprec", NONE, FLOAT),
    TableEntry("bpref", NONE, FLOAT),
    TableEntry("recip_rank", NONE, FLOAT),
    TableEntry("iprec_at_recall", DOUBLE_CUTOFFS, FLOAT, _ELEVEN),
    TableEntry("P", LONG_CUTOFFS, FLOAT, _RANKS),
    TableEntry("relstring", DOUBLE_PARAMS, TEXT, (10.0,)),
    TableEntry("recall", LONG_CUTOFFS, FLOAT, _RANKS),
    TableEntry("infAP", NONE, FLOAT),
    TableEntry("gm_bpref", NONE, GEOMETRIC),
    TableEntry("Rprec_mult", DOUBLE_CUTOFFS, FLOAT, (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
    TableEntry("utility", DOUBLE_PARAMS, FLOAT, (1.0, -1.0, 0.0, 0.0)),
    TableEntry("11pt_avg", DOUBLE_PARAMS, FLOAT, _ELEVEN),
    TableEntry("binG", NONE, FLOAT),
    TableEntry("G", PAIR_PARAMS, FLOAT),
    TableEntry("dcg", PAIR_PARAMS, FLOAT),
    TableEntry("ideal_dcg", PAIR_PARAMS, FLOAT),
    TableEntry("ndcg", PAIR_PARAMS, FLOAT),
    TableEntry("ndcg_rel", PAIR_PARAMS, FLOAT),
    TableEntry("Rndcg", PAIR_PARAMS, FLOAT),
    TableEntry("ndcg_cut", LONG_CUTOFFS, FLOAT, _RANKS),
    TableEntry("map_cut", LONG_CUTOFFS, FLOAT, _RANKS),
    TableEntry("relative_P", LONG_CUTOFFS, FLOAT, _RANKS),
    TableEntry("success", LONG_CUTOFFS, FLOAT, (1.0, 5.0, 10.0)),
    TableEntry("set_P", NONE, FLOAT),
    TableEntry("set_relative_P", NONE, FLOAT),
    TableEntry("set_recall", NONE, FLOAT),
    TableEntry("set_map", NONE, FLOAT),
    TableEntry("set_F", DOUBLE_PARAMS, FLOAT, (1.0,)),
    TableEntry("num_nonrel_judged_ret", NONE, LONG),
    *(TableEntry(name, NONE, FLOAT, supported=False) for name in _OTHER_FORMATS),
    TableEntry("yaap", NONE, FLOAT),
    TableEntry("rbp", PAIR_PARAMS, FLOAT),
    TableEntry("rbp_resid", NONE, FLOAT),
    TableEntry("unj", LONG_CUTOFFS, FLOAT, (5.0, 10.0, 20.0)),
)

_OFFICIAL = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
             "iprec_at_recall", "P")  # fmt: skip
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": _OFFICIAL,
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
    "all_trec": (*_OFFICIAL, "relstring", "recall", "unj", "rbp", "rbp_resid", "infAP", "gm_bpref", "utility",
                 "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success", "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg",
                 "binG", "G", "set_P", "set_recall", "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret"),
    "all_prefs": ("runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
                  "prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret",
                  "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp",
                  "prefs_pair_imp", "prefs_avgjg_imp"),
    "prefs": ("runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
              "prefs_simp", "prefs_pair", "prefs_avgjg"),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
}  # fmt: skip
_BY_NAME = {entry.name: entry for entry in TABLE}


@dataclass(frozen=True)
class Selected:
    """A measure to compute: its table entry, its parameters and the names of the values it prints."""

    entry: TableEntry
    values: tuple[float, ...]  # cutoffs or parameters (numbers)
    pairs: tuple[tuple[str, float], ...]  # name=value parameters
    printable: str | None  # the parameter text given on the command line (None: the defaults)
    names: tuple[str, ...]  # the printed name of each value


def select(arguments: list[str]) -> list[Selected]:
    """The measures `-m` arguments ask for, in table order (official when there are none).

    UsageError for a name trec_eval does not know ("illegal measure") or a measure it can only compute from a
    rel_info format other than qrels.
    """
    marked: set[str] = set()
    given: dict[str, str] = {}  # measure -> the first parameter text given for it
    for argument in arguments or ["official"]:
        name, dot, params = argument.partition(".")
        if dot:
            if params == "":
                raise UsageError(f"improper measure in parameter '{name}'\ntrec_eval: illegal measure '{name}'")
            given.setdefault(name, params)
        if name in NICKNAMES:
            marked.update(NICKNAMES[name])
        elif name in _BY_NAME:
            marked.add(name)
        else:
            raise UsageError(f"illegal measure '{name}'", usage=False)
    unsupported = [entry.name for entry in TABLE if entry.name in marked and not entry.supported]
    if unsupported:
        raise UsageError(
            f"{', '.join(unsupported)} need(s) preference or judgement-group rel_info (-R prefs, qrels_prefs, "
            "qrels_jg), which trecpool trec_eval does not read",
            status=2,
            usage=False,
        )
    return [_parameters(entry, given.get(entry.name)) for entry in TABLE if entry.name in marked]


def _parameters(entry: TableEntry, text: str | None) -> Selected:
    """A marked measure with its parameters (from the command line, else the defaults) and value names."""
    values: tuple[float, ...] = entry.defaults
    pairs: tuple[tuple[str, float], ...] = ()
    if text is not None and entry.params == LONG_CUTOFFS:
        values = tuple(sorted(float(atol(part)) for part in text.split(",")))
        if values[0] <= 0:
            raise UsageError(f"Negative cutoff detected\ntrec_eval: Cannot initialize measure '{entry.name}'", 2, False)
    elif text is not None and entry.params in (DOUBLE_CUTOFFS, DOUBLE_PARAMS):
        values = tuple(atof(part) for part in text.split(","))
        if entry.params == DOUBLE_CUTOFFS:
            values = tuple(sorted(values))
    elif text is not None and entry.params == PAIR_PARAMS:
        pairs = _pairs(entry.name, text)
    if entry.params in (LONG_CUTOFFS, DOUBLE_CUTOFFS) and len(set(values)) != len(values):
        raise UsageError(f"duplicate cutoffs detected\ntrec_eval: Cannot initialize measure '{entry.name}'", 2, False)
    if text is not None and entry.params == NONE:
        text = None  # trec_eval keeps no parameters for such measures
    if entry.params == LONG_CUTOFFS:
        names = tuple(f"{entry.name}_{int(value)}" for value in values)
    elif entry.params == DOUBLE_CUTOFFS:
        names = tuple(f"{entry.name}_{value:3.2f}"[: len(entry.name) + 9] for value in values)
    elif text is not None:
        names = (f"{entry.name}_{text}",)
    else:
        names = (entry.name,)
    return Selected(entry, values, pairs, text, names)


def _pairs(name: str, text: str) -> tuple[tuple[str, float], ...]:
    """trec_eval's `name=value,...` parameters (ndcg.1=3,2=9; rbp.p=0.5)."""
    parts = [part.partition("=") for part in text.split(",")]
    if any(not equals for _, equals, _ in parts) or "==" in text:
        raise UsageError(
            f"malformed pair parameters in '{text}'\ntrec_eval: Cannot initialize measure '{name}'", 2, False
        )
    return tuple((key, atof(value)) for key, _, value in parts)


def atof(text: str) -> float:
    """C's atof: the longest leading number (0.0 if none), as trec_eval reads parameters."""
    text = text.lstrip(" \t\n\v\f\r")
    best = 0.0
    for end in range(len(text), 0, -1):
        try:
            best = float(text[:end])
        except ValueError:
            continue
        if text[:end].strip().lower() in ("nan", "inf", "infinity", "+inf", "-inf", "+nan", "-nan"):
            return best
        if "_" in text[:end]:
            continue
        return best
    return best
