"""The package installs as a user installs it: every package listed, the migrations shipped, a database migrated.

pyproject.toml lists its packages (the checkout's top-level `migrations/` is installed as `app.migrations`, which
setuptools' package finder cannot map), so a forgotten new package is caught here; a plain `pip install .` in a
clean venv, no extras and not editable, then migrates a fresh database to head with that venv's `trecpool`.

The clean venv takes its dependencies from this test run's environment (a path file, after the install) instead of
unpacking numpy, scipy, matplotlib and pgserver again (two thirds of CI's slowest test), and `pip check` there
asserts that what the installed package declares is satisfied: that a runtime dependency is declared at all is
tests/test_packaging.py's check, and .ci/run installs the project into an empty venv before the tests.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import inspect

from app.storage import migrations
from app.storage.database import make_engine
from app.storage.models import Base

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
INSTALL_SECONDS = 300  # the package alone (its build backend may need a download on a cold pip cache)


def test_every_package_of_app_is_listed_and_migrations_is_installed_as_app_migrations():
    setuptools = PYPROJECT["tool"]["setuptools"]
    found = {".".join(p.parent.relative_to(REPO).parts) for p in (REPO / "app").rglob("__init__.py")}
    assert set(setuptools["packages"]) == found | {"app.migrations"}
    assert setuptools["package-dir"] == {"app.migrations": "migrations"}
    assert not (REPO / "app" / "migrations").exists()
    assert migrations.MIGRATIONS_DIR == REPO / "migrations"  # this checkout's, installed editable


def _source_copy(target: Path) -> Path:
    """What `pip install .` reads of the checkout, copied without caches."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    target.mkdir()
    for name in ("pyproject.toml", PYPROJECT["project"]["readme"]):
        shutil.copy(REPO / name, target / name)
    for name in ("app", "migrations"):
        shutil.copytree(REPO / name, target / name, ignore=ignore)
    return target


def test_a_plain_install_migrates_a_fresh_database_to_head(create_database: Callable[[], str], tmp_path: Path):
    """`pip install .` (no extras, not editable) in a clean venv whose dependencies are this run's; its `trecpool db
    upgrade` reads the migrations it installed (app/migrations in site-packages) and brings an empty database to
    head."""
    source = _source_copy(tmp_path / "source")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python)]  # this run's pip, working on the clean venv
    installed = subprocess.run(
        [*pip, "install", "-q", "--no-compile", "--no-deps", str(source)],
        capture_output=True,
        text=True,
        timeout=INSTALL_SECONDS,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    # the dependencies, after the install (pip never sees this run's editable trecpool as one to replace); a path
    # file adds the folder but not its own path files, so this run's editable `app` stays out of the venv
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    (Path(site.stdout.strip()) / "test-run-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    checked = subprocess.run([*pip, "check"], capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    shipped = subprocess.run(
        [str(python), "-c", "from app.storage import migrations; print(migrations.MIGRATIONS_DIR)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    folder = Path(shipped.stdout.strip())
    assert folder.is_relative_to(venv) and folder.parts[-2:] == ("app", "migrations"), shipped.stderr
    assert sorted(p.name for p in (folder / "versions").glob("*.py")) == sorted(
        p.name for p in (REPO / "migrations" / "versions").glob("*.py")
    )

    url = create_database()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRECPOOL_")}
    env.update(DATABASE_URL=url, TRECPOOL_DATA_DIR=str(tmp_path / "data"))
    upgraded = subprocess.run(
        [str(venv / "bin" / "trecpool"), "db", "upgrade", "--wait", "10"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert upgraded.returncode == 0, upgraded.stdout + upgraded.stderr
    engine = make_engine(url)
    try:
        assert migrations.current_revision(engine) == migrations.head_revision()
        assert set(Base.metadata.tables) <= set(inspect(engine).get_table_names())
    finally:
        engine.dispose()
