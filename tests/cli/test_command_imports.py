"""The command modules of `trecpool` do not import each other: `serve` and `demo` share app.cli.serving instead."""

from __future__ import annotations

import grimp
import pytest

COMMAND_MODULES = ("app.cli.server", "app.cli.demo", "app.cli.worker")


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    """The import graph of app, as import-linter builds it."""
    return grimp.build_graph("app")


def test_demo_does_not_import_the_serve_command(graph: grimp.ImportGraph) -> None:
    """`demo` runs the server through app.cli.serving; `serve --demo` is the one that imports the demo loop."""
    assert graph.find_shortest_chain(importer="app.cli.demo", imported="app.cli.server") is None
    assert graph.find_shortest_chain(importer="app.cli.demo", imported="app.cli.serving") is not None


def test_serving_imports_no_command_module(graph: grimp.ImportGraph) -> None:
    """The shared serving code depends on no command, so every command may import it."""
    chains = {m: graph.find_shortest_chain(importer="app.cli.serving", imported=m) for m in COMMAND_MODULES}
    assert chains == dict.fromkeys(COMMAND_MODULES)


def test_no_two_command_modules_import_each_other(graph: grimp.ImportGraph) -> None:
    """No mutual import between serve, demo and worker, directly or through other modules."""
    mutual = [
        (a, b)
        for a in COMMAND_MODULES
        for b in COMMAND_MODULES
        if a < b
        and graph.find_shortest_chain(importer=a, imported=b) is not None
        and graph.find_shortest_chain(importer=b, imported=a) is not None
    ]
    assert mutual == []
