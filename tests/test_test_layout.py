"""The tests' own layout: shared fixtures live in conftest.py files and plain helpers in helper modules, so no module
under tests/ imports another test module (`tests.<package>.test_*`); the one exception is the role table's
documented home, imported by the OpenAPI security test."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
ALLOWED = {("tests/api/test_openapi_security.py", "tests.api.test_role_table")}

pytestmark = pytest.mark.lint


def _is_test_module(name: str) -> bool:
    """Whether a dotted module name is a test module under tests/."""
    parts = name.split(".")
    return parts[0] == "tests" and parts[-1].startswith("test_")


def imported_test_modules(source: str) -> list[tuple[int, str]]:
    """The test modules a source imports, anywhere in it (also inside functions): (line, dotted name)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if _is_test_module(alias.name)]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if _is_test_module(node.module):
                found.append((node.lineno, node.module))
            else:  # `from tests.api import test_pools`
                found += [
                    (node.lineno, f"{node.module}.{alias.name}")
                    for alias in node.names
                    if _is_test_module(f"{node.module}.{alias.name}")
                ]
    return found


def test_the_check_finds_each_way_of_importing_a_test_module() -> None:
    source = (
        "from tests.api.test_pools import setup_campaign\n"
        "import tests.cli.test_analyse\n"
        "from tests.api import test_evaluations, helpers\n"
        "def f():\n"
        "    from tests.services.test_analysis_registry import TOY\n"
        "from tests.api.helpers import auth\n"
        "from tests.conftest import job_settings\n"
        "from tests.evaluation.cases import random_case\n"
    )
    assert imported_test_modules(source) == [
        (1, "tests.api.test_pools"),
        (2, "tests.cli.test_analyse"),
        (3, "tests.api.test_evaluations"),
        (5, "tests.services.test_analysis_registry"),
    ]


def test_no_module_under_tests_imports_a_test_module() -> None:
    offences = []
    for path in sorted(TESTS.rglob("*.py")):
        where = path.relative_to(REPO).as_posix()
        for line, module in imported_test_modules(path.read_text(encoding="utf-8")):
            if (where, module) not in ALLOWED:
                offences.append(f"{where}:{line} imports {module}")
    assert offences == [], "put shared fixtures in a conftest.py and helpers in a helper module:\n" + "\n".join(
        offences
    )
