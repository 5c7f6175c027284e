"""The code is type-checked and formatted: mypy finds nothing in app/ (pyproject.toml's [tool.mypy], strict on
app/evaluation/), every `# type: ignore` names its error code and says why, and `ruff format` changes nothing."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

pytestmark = pytest.mark.lint

REPO = Path(__file__).resolve().parents[1]

# `# type: ignore[code, ...]  # why`: the codes mypy would report, then the reason in a comment of its own
IGNORE_WITH_REASON = re.compile(r"#\s*type:\s*ignore\[[a-z0-9-]+(?:,\s*[a-z0-9-]+)*\]\s+#\s*\S")
IGNORE = re.compile(r"#\s*type:\s*ignore\b")


def _mypy(*args: str) -> subprocess.CompletedProcess[str]:
    """mypy of this venv run in the repository, with its configuration and cache (.mypy_cache)."""
    return subprocess.run([sys.executable, "-m", "mypy", *args], cwd=REPO, capture_output=True, text=True)


def test_mypy_finds_no_error_in_app() -> None:
    result = _mypy("app")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("Success: no issues found"), result.stdout + result.stderr


def test_the_numeric_core_alone_is_checked_strictly(tmp_path: Path) -> None:
    # the same untyped function in a module of app/evaluation/ and in one of app/services/: only the first is an error
    untyped = tmp_path / "untyped.py"
    untyped.write_text('"""Untyped."""\n\n\ndef half(x):\n    """Half of x."""\n    return x / 2\n')
    core, service = "app/evaluation/errors.py", "app/services/errors.py"
    result = _mypy(
        "--cache-dir",
        str(tmp_path / "cache"),  # a shadowed file must not enter the repository's cache
        "--shadow-file",
        core,
        str(untyped),
        "--shadow-file",
        service,
        str(untyped),
        core,
        service,
    )
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1, result.stdout + result.stderr
    assert errors[0].startswith(f"{core}:4:") and "[no-untyped-def]" in errors[0], result.stdout


def ignores_without_reason(source: str) -> list[int]:
    """Line numbers of `# type: ignore` comments of `source` that lack an error code or a reason after them."""
    bad = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT or not IGNORE.search(token.string):
            continue
        if not IGNORE_WITH_REASON.search(token.string):
            bad.append(token.start[0])
    return bad


def test_an_ignore_needs_its_code_and_a_reason() -> None:
    assert ignores_without_reason("x = f()  # type: ignore[arg-type]  # the stub says int, it takes str\n") == []
    assert ignores_without_reason("x = f()  # type: ignore[arg-type, misc]  # why\n") == []
    assert ignores_without_reason("x = f()  # type: ignore\n") == [1]
    assert ignores_without_reason("\nx = f()  # type: ignore[arg-type]\n") == [2]
    assert ignores_without_reason("x = f()  # type: ignore[arg-type] - a dash is no comment\n") == [1]
    assert ignores_without_reason("x = '# type: ignore'  # only text\n") == []


def test_every_type_ignore_in_app_says_which_error_and_why() -> None:
    found = {}
    for path in sorted((REPO / "app").rglob("*.py")):
        bad = ignores_without_reason(path.read_text(encoding="utf-8"))
        if bad:
            found[str(path.relative_to(REPO))] = bad
    assert found == {}, "write `# type: ignore[code]  # reason` at these lines: " + repr(found)


def test_ruff_format_changes_nothing() -> None:
    ruff = Path(sys.executable).with_name("ruff")
    result = subprocess.run([str(ruff), "format", "--check", "."], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
