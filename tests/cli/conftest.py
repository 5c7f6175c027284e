"""Fixtures of the `trecpool analyse` tests: small collections written to the test's temporary folder (the code
that writes them is in tests/cli/analyse_cases.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.analyse_cases import write_collection, write_moment_collection


@pytest.fixture()
def files(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Five random runs on four topics, their qrels and a groups file: (runs, qrels, qrels path, run paths, groups
    path)."""
    return write_collection(tmp_path)


@pytest.fixture()
def moment_files(tmp_path: Path) -> tuple[Path, list[Path]]:
    """A moment ground truth for 12 topics and 5 runs near it: (ground truth path, run paths)."""
    return write_moment_collection(tmp_path)
