"""The Dockerfile and docker-compose.yml install and start the service as the README's Quick start says.

There is no Docker engine on the development machines, so these files are kept correct by reading them here.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

from app.cli import COMMANDS

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
DOCKERFILE = (REPO / "Dockerfile").read_text(encoding="utf-8")
COMPOSE = (REPO / "docker-compose.yml").read_text(encoding="utf-8")


def _quick_start_commands() -> list[str]:
    """The shell commands of the README's Quick start section, in order."""
    section = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [line for block in re.findall(r"```bash\n(.*?)```", section, re.S) for line in block.splitlines()]


def _pip_install_spec(command: str) -> str:
    """What a `pip install` in `command` installs (e.g. `-e .` or `-e .[dev]`)."""
    words = shlex.split(command.split("pip install", 1)[1].split("&&", 1)[0])
    return " ".join(w for w in words if w != "-q")


def test_quick_start_has_exactly_two_commands():
    commands = _quick_start_commands()
    assert len(commands) == 2
    assert "trecpool serve --demo" in commands[0]
    assert "pytest" in commands[1]


def test_dockerfile_installs_what_the_first_command_installs():
    first = _quick_start_commands()[0]
    runs = re.findall(r"^RUN (.*)$", DOCKERFILE, re.M)
    installs = [r for r in runs if "pip install" in r]
    assert len(installs) == 1
    assert _pip_install_spec(installs[0]) == _pip_install_spec(first) == "-e ."


def test_dockerfile_copies_what_the_package_needs():
    copied = {w for line in re.findall(r"^COPY (.*)$", DOCKERFILE, re.M) for w in line.split()[:-1]}
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    # migrations/ is installed as app.migrations (pyproject.toml's package-dir)
    assert {"pyproject.toml", pyproject["project"]["readme"], "app", "migrations"} <= copied
    assert pyproject["tool"]["setuptools"]["package-dir"] == {"app.migrations": "migrations"}


def test_dockerfile_migrates_then_serves_with_the_readme_command():
    command = re.search(r"^CMD (.*)$", DOCKERFILE, re.M).group(1)
    assert "trecpool db upgrade && exec trecpool serve" in command
    assert "--demo" not in command  # the demo is asked for with TRECPOOL_DEMO=1, never loaded by default
    python = re.search(r"^FROM python:(\d+)\.(\d+)", DOCKERFILE, re.M)
    assert (int(python.group(1)), int(python.group(2))) >= (3, 11)


def test_compose_runs_the_image_command_and_loads_the_demo_only_when_asked():
    assert "--demo" not in COMPOSE
    assert "TRECPOOL_DEMO: ${TRECPOOL_DEMO:-0}" in COMPOSE
    app_service = COMPOSE.split("\n  app:\n", 1)[1].split("\n  worker:\n", 1)[0]
    assert "command:" not in app_service  # the Dockerfile's CMD: migrations, then serve
    assert 'command: ["trecpool", "worker"]' in COMPOSE


def test_every_command_the_readme_names_exists():
    named = set(re.findall(r"(?:^|[\s`/])trecpool ([a-z][a-z_-]*)", README, re.M))
    assert named, "the README names no trecpool command"
    assert named - set(COMMANDS) == set()


def _third_party_imports() -> dict[str, str]:
    """Every top-level module that app/ imports from outside the standard library and itself, with one file."""
    import ast
    import sys

    found: dict[str, str] = {}
    for path in sorted((REPO / "app").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top != "app" and top not in sys.stdlib_module_names:
                    found.setdefault(top, str(path.relative_to(REPO)))
    return found


def test_every_runtime_import_is_a_declared_dependency():
    from importlib.metadata import packages_distributions

    from packaging.requirements import Requirement

    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    # an extra's package counts too: tests/cli/test_datasets_extra.py checks that the core never imports one
    extras = [r for name, reqs in pyproject["project"]["optional-dependencies"].items() if name != "dev" for r in reqs]
    declared = {Requirement(r).name.lower().replace("_", "-") for r in [*pyproject["project"]["dependencies"], *extras]}
    distributions = packages_distributions()
    missing = {}
    for module, where in _third_party_imports().items():
        names = {d.lower().replace("_", "-") for d in distributions.get(module, [module])}
        if not names & declared:
            missing[module] = where
    assert missing == {}, f"imported by app/ but not in [project] dependencies or an extra: {missing}"


def _compose() -> dict:
    """docker-compose.yml, parsed."""
    import yaml

    return yaml.safe_load(COMPOSE)


def test_the_database_is_healthy_only_once_it_accepts_tcp_connections():
    db = _compose()["services"]["db"]
    test = db["healthcheck"]["test"]
    command = test[1] if test[0] == "CMD-SHELL" else " ".join(test[1:])
    words = shlex.split(command)
    # a bare pg_isready asks the socket: the image's first start runs its set-up on a socket-only server
    assert words[0] == "pg_isready" and words[words.index("-h") + 1] == "127.0.0.1"
    assert db["healthcheck"]["retries"] * _seconds(db["healthcheck"]["interval"]) >= 30


def _seconds(duration: str) -> float:
    """A compose duration such as `2s` or `1m` in seconds."""
    number, unit = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m)", duration).groups()  # type: ignore[union-attr]
    return float(number) * {"ms": 0.001, "s": 1, "m": 60}[unit]


def test_the_schema_is_migrated_once_before_the_app_and_the_workers_start():
    services = _compose()["services"]
    migrate = services["migrate"]
    assert migrate["command"][:3] == ["trecpool", "db", "upgrade"] and "--wait" in migrate["command"]
    assert migrate["depends_on"]["db"]["condition"] == "service_healthy"
    assert migrate.get("restart", "no") == "no" and "profiles" not in migrate  # one-shot, started by a plain `up`
    for name in ("app", "worker"):
        depends = services[name]["depends_on"]
        assert depends["migrate"]["condition"] == "service_completed_successfully", name
        assert depends["db"]["condition"] == "service_healthy", name
        assert services[name]["restart"] in ("unless-stopped", "always", "on-failure"), name
        assert services[name]["environment"]["DATABASE_URL"] == migrate["environment"]["DATABASE_URL"], name


def test_the_commands_compose_runs_wait_for_the_database():
    from click.testing import CliRunner

    from app.cli import cli

    for command in (["db", "upgrade"], ["worker"], ["serve"]):
        shown = CliRunner().invoke(cli, [*command, "--help"])
        assert shown.exit_code == 0 and "--wait" in shown.output, command


def test_package_data_ships_every_template_and_static_file():
    """A non-editable install carries every page template (console/ and team/ too), static file and migration."""
    data = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-data"]
    shipped: set[Path] = set()
    for package, patterns in data.items():
        root = REPO / package.replace(".", "/")
        for pattern in patterns:
            shipped.update(root.glob(pattern))
    wanted = [p for d in ("app/web/templates", "app/web/static") for p in (REPO / d).rglob("*") if p.is_file()]
    missing = sorted(str(p.relative_to(REPO)) for p in wanted if p not in shipped)
    assert wanted and missing == []
