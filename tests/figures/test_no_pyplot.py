"""No module under app/ uses matplotlib.pyplot: its global figure registry is not safe from thread-pool handlers."""

from __future__ import annotations

import ast
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app"


def pyplot_uses(source: str) -> list[int]:
    """Lines of `source` importing matplotlib.pyplot (import, from-import or a module-name string)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import) and any(a.name.startswith("matplotlib.pyplot") for a in node.names):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and (
            (node.module or "").startswith("matplotlib.pyplot")
            or (node.module == "matplotlib" and any(a.name == "pyplot" for a in node.names))
        ):
            lines.append(node.lineno)
        elif isinstance(node, ast.Constant) and node.value == "matplotlib.pyplot":
            lines.append(node.lineno)
    return lines


def test_the_scan_finds_each_way_of_importing_pyplot() -> None:
    source = (
        "import matplotlib.pyplot as plt\nfrom matplotlib import pyplot\nfrom matplotlib.pyplot import subplots\n"
        "import importlib\nimportlib.import_module('matplotlib.pyplot')\nfrom matplotlib.figure import Figure\n"
    )
    assert pyplot_uses(source) == [1, 2, 3, 5]


def test_no_module_under_app_imports_pyplot() -> None:
    modules = sorted(APP.rglob("*.py"))
    assert any(path.name == "report.py" and path.parent.name == "figures" for path in modules)
    found = {str(p.relative_to(APP)): pyplot_uses(p.read_text()) for p in modules}
    assert {path: lines for path, lines in found.items() if lines} == {}
