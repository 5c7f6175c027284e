"""trec_eval's command line, read as its getopt_long reads it ("hvqm:cl:nD:JN:M:R:T:oZ:" and the long options).

Short options cluster (`-qc`) and take their argument glued (`-mall_trec`, `-M100`, `-l2`) or as the next word
(`-m map`); long options take `--measure=map` or `--measure map` and may be shortened to a unique prefix; operands
may stand anywhere (GNU permutation), `--` ends the options and `-` is an operand (the run read from stdin).
"""

from __future__ import annotations

from dataclasses import dataclass, field

USAGE = """Usage: trecpool trec_eval [-h] [-q] {-m measure}* trec_rel_file trec_top_file
   -h: Give full help information, including other options
   -q: In addition to summary evaluation, give evaluation for each query
   -m: calculate and print measures indicated by 'measure'
       ('-m all_trec' prints all qrels measures, '-m official' is default)
"""

_SHORT = "hvqm:cl:nD:JN:M:R:T:oZ:"
_LONG = {  # long option -> (short letter, takes an argument)
    "help": ("h", False),
    "version": ("v", False),
    "query_eval_wanted": ("q", False),
    "measure": ("m", True),
    "complete_rel_info_wanted": ("c", False),
    "level_for_rel": ("l", True),
    "nosummary": ("n", False),
    "Debug_level": ("D", True),
    "Judged_docs_only": ("J", False),
    "Number_docs_in_coll": ("N", True),
    "Max_retrieved_per_topic": ("M", True),
    "Rel_info_format": ("R", True),
    "Results_format": ("T", True),
    "Output_old_results_format": ("o", True),
    "Zscore": ("Z", True),
}
_TAKES_ARGUMENT = {letter for letter, colon in zip(_SHORT, _SHORT[1:] + " ", strict=True) if colon == ":"}


class UsageError(Exception):
    """A command line trec_eval refuses: the message to print and the exit status."""

    def __init__(self, message: str, status: int = 1, usage: bool = True) -> None:
        super().__init__(message)
        self.status = status
        self.usage = usage


@dataclass
class Options:
    """What the command line asks for, in trec_eval's terms."""

    query: bool = False  # -q: also print each topic
    complete: bool = False  # -c: average over every qrels topic
    summary: bool = True  # -n turns it off
    judged_only: bool = False  # -J
    relevance_level: int = 1  # -l
    num_docs_in_coll: int = 0  # -N
    max_per_topic: int | None = None  # -M (None: no cut)
    rel_info_format: str = "qrels"  # -R
    results_format: str = "trec_results"  # -T
    zscore_file: str | None = None  # -Z
    measures: list[str] = field(default_factory=list)  # each -m argument, in order
    help: bool = False
    version: bool = False
    operands: list[str] = field(default_factory=list)


def atol(text: str) -> int:
    """C's atol: optional blanks and sign, then the leading digits (0 if none)."""
    text = text.lstrip(" \t\n\v\f\r")
    sign = -1 if text[:1] == "-" else 1
    text = text[1:] if text[:1] in "+-" else text
    digits = ""
    for char in text:
        if not char.isdigit() or not char.isascii():
            break
        digits += char
    return sign * int(digits) if digits else 0


def parse_arguments(argv: list[str]) -> Options:
    """The options and operands of a trec_eval command line (UsageError for what getopt_long refuses)."""
    options = Options()
    index = 0
    while index < len(argv):
        word = argv[index]
        index += 1
        if word == "--":
            options.operands.extend(argv[index:])
            break
        if word.startswith("--"):
            letter, argument, index = _long_option(word[2:], argv, index)
            _apply(options, letter, argument)
        elif word.startswith("-") and word != "-":
            position = 1
            while position < len(word):
                letter = word[position]
                position += 1
                if letter == ":" or letter not in _SHORT:
                    raise UsageError(f"invalid option -- '{letter}'")
                if letter in _TAKES_ARGUMENT:
                    if position < len(word):
                        argument = word[position:]
                    elif index < len(argv):
                        argument = argv[index]
                        index += 1
                    else:
                        raise UsageError(f"option requires an argument -- '{letter}'")
                    _apply(options, letter, argument)
                    break
                _apply(options, letter, None)
        else:
            options.operands.append(word)
    return options


def _long_option(text: str, argv: list[str], index: int) -> tuple[str, str | None, int]:
    """(short letter, argument, next index) of a long option `--name[=value]`, matching unique prefixes."""
    name, equals, value = text.partition("=")
    matches = [long for long in _LONG if long.startswith(name)]
    if name in _LONG:
        matches = [name]
    if len(matches) != 1:
        problem = "is ambiguous" if matches else "unrecognized option"
        raise UsageError(f"option '--{name}' {problem}" if matches else f"unrecognized option '--{text}'")
    letter, takes_argument = _LONG[matches[0]]
    if not takes_argument:
        if equals:
            raise UsageError(f"option '--{matches[0]}' doesn't allow an argument")
        return letter, None, index
    if equals:
        return letter, value, index
    if index < len(argv):
        return letter, argv[index], index + 1
    raise UsageError(f"option '--{matches[0]}' requires an argument")


def _apply(options: Options, letter: str, argument: str | None) -> None:
    """Record one option."""
    if letter == "h":
        options.help = True
    elif letter == "v":
        options.version = True
    elif letter == "q":
        options.query = True
    elif letter == "m":
        assert argument is not None
        options.measures.append(argument)
    elif letter == "c":
        options.complete = True
    elif letter == "l":
        options.relevance_level = atol(argument or "")
    elif letter == "n":
        options.summary = False
    elif letter == "D":
        raise UsageError("-D (debug output) is not supported by trecpool trec_eval", status=1, usage=False)
    elif letter == "J":
        options.judged_only = True
    elif letter == "N":
        options.num_docs_in_coll = atol(argument or "")
    elif letter == "M":
        options.max_per_topic = atol(argument or "")
    elif letter == "R":
        options.rel_info_format = argument or ""
    elif letter == "T":
        options.results_format = argument or ""
    elif letter == "Z":
        options.zscore_file = argument
    # -o (old output format) is obsolete in trec_eval 10.0 and changes nothing
