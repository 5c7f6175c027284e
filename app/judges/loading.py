"""Naming a judge: `MODULE:FUNCTION` (or a built-in's short name) to the function, its options, and the
configuration hash the organiser registers in the model assessor's provenance."""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

BUILT_IN = {
    "simulated": "app.judges.simulated:judge",
    "openai": "app.judges.openai_chat:judge",
}
SPEC = re.compile(r"^([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*):([A-Za-z_]\w*)$")
OPTION = re.compile(r"^([A-Za-z_][\w-]*)=(.*)$", re.DOTALL)
# option names that would put a secret in the hash, the shell history or a process listing: keys come from env vars
SECRET_NAMES = re.compile(r"(api_?key|token|secret|password|passwd|credential)", re.IGNORECASE)

Judge = Callable[..., list[dict[str, Any]]]


class JudgeSpecError(ValueError):
    """A judge that cannot be loaded or an option that cannot be taken, said in one line."""


def canonical(spec: str) -> str:
    """The judge's `module:function`, a built-in's short name expanded (JudgeSpecError if malformed)."""
    name = BUILT_IN.get(spec.strip(), spec.strip())
    if not SPEC.match(name):
        known = ", ".join(BUILT_IN)
        raise JudgeSpecError(f"--judge {spec!r}: expected MODULE:FUNCTION (e.g. mypackage.judges:judge) or {known}")
    return name


def load_judge(spec: str) -> Judge:
    """The function a judge spec names (JudgeSpecError naming what is missing)."""
    name = canonical(spec)
    module_name, function_name = name.split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise JudgeSpecError(f"--judge {spec!r}: no module {exc.name!r} (is it installed or on PYTHONPATH?)") from None
    except Exception as exc:  # noqa: BLE001  # the judge's own import failed: say so in one line
        raise JudgeSpecError(f"--judge {spec!r}: importing {module_name} failed: {type(exc).__name__}: {exc}") from None
    function = getattr(module, function_name, None)
    if function is None:
        raise JudgeSpecError(f"--judge {spec!r}: module {module_name} has no {function_name!r}")
    if not callable(function):
        raise JudgeSpecError(f"--judge {spec!r}: {name} is not a function")
    judge: Judge = function
    return judge


def parse_options(pairs: Iterable[str]) -> dict[str, str]:
    """`KEY=VALUE` strings as a dict (JudgeSpecError for a malformed pair, a repeated key or a secret's name)."""
    options: dict[str, str] = {}
    for pair in pairs:
        match = OPTION.match(pair)
        if match is None:
            raise JudgeSpecError(f"--option {pair!r}: expected KEY=VALUE")
        key, value = match.group(1).replace("-", "_"), match.group(2)
        if SECRET_NAMES.search(key):
            raise JudgeSpecError(
                f"--option {key}: secrets are never options (they would enter the configuration hash and the shell "
                "history); give an API key in the environment variable the judge reads (openai: TRECPOOL_JUDGE_API_KEY)"
            )
        if key in options:
            raise JudgeSpecError(f"--option {key} given twice")
        options[key] = value
    return options


def config_hash(spec: str, options: Mapping[str, str]) -> str:
    """SHA-256 (hex) of the canonical judge spec and its options sorted by key: the same judge and options give the
    same hash, whichever spelling named the judge and in whichever order the options came."""
    document = json.dumps(
        {"judge": canonical(spec), "options": sorted((str(k), str(v)) for k, v in options.items())},
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(document.encode()).hexdigest()


def check_options(judge: Judge, options: Mapping[str, str], spec: str, given: Iterable[str] = ("max_grade",)) -> None:
    """Refuse, before any item is pulled, options the judge does not take and required ones it is not given
    (`given`: those the client passes itself)."""
    try:
        parameters = list(inspect.signature(judge).parameters.values())[1:]  # the first is the items
    except (TypeError, ValueError):
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return
    named = {p.name: p for p in parameters if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    unknown = sorted(set(options) - set(named))
    if unknown:
        takes = ", ".join(named) or "no options"
        raise JudgeSpecError(f"--option {unknown[0]}: {canonical(spec)} takes no such option (it takes: {takes})")
    missing = [n for n, p in named.items() if p.default is p.empty and n not in options and n not in set(given)]
    if missing:
        needed = " ".join(f"--option {n}=..." for n in missing)
        raise JudgeSpecError(f"--judge {spec}: {canonical(spec)} needs {needed}")
