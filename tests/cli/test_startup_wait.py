"""`trecpool serve` and `trecpool worker` wait, for a bounded time and saying so, for a database that comes up late
(and the worker for its schema to be migrated), as in `docker compose up` on a fresh volume; `-h` is their help."""

from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from sqlalchemy import make_url

from app.cli import cli
from app.config import get_settings
from app.storage import migrations

TRECPOOL = str(Path(sys.executable).with_name("trecpool"))


def _free_port() -> int:
    """A loopback port nothing listens on (yet)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Proxy:
    """A TCP forwarder from a loopback port to PostgreSQL, started when the test says the database is up."""

    def __init__(self, port: int, upstream: tuple[str, int] | str) -> None:
        self.port, self.upstream = port, upstream
        self.listener: socket.socket | None = None

    def start(self) -> None:
        """Listen on the port and forward every connection."""
        self.listener = socket.create_server(("127.0.0.1", self.port))
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        """Accept connections until closed."""
        assert self.listener is not None
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if isinstance(self.upstream, str):  # the embedded PostgreSQL listens on a Unix socket only
                server = socket.socket(socket.AF_UNIX)
                server.connect(self.upstream)
            else:
                server = socket.create_connection(self.upstream)
            for source, target in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, target), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, target: socket.socket) -> None:
        """Copy bytes one way until either side closes."""
        try:
            while data := source.recv(65536):
                target.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, target):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        """Stop listening."""
        if self.listener is not None:
            self.listener.close()


class Command:
    """A `trecpool` subprocess whose stderr lines are collected as they come."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [TRECPOOL, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        """Queue each stderr line."""
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.put(line.rstrip("\n"))

    def wait_for_line(self, text: str, timeout: float = 60.0) -> str:
        """The first line (from now on) containing `text`; fails after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                pytest.fail(f"no line with {text!r} within {timeout} s; saw {self.seen}")
            self.seen.append(line)
            if text in line:
                return line

    def stop(self) -> int:
        """SIGTERM, then the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


@pytest.fixture
def late_database(create_database) -> Iterator[tuple[str, str, Proxy]]:  # type: ignore[no-untyped-def]
    """(the URL of an empty database, the same database through a port that opens only on `proxy.start()`, proxy)."""
    url = create_database()
    parsed = make_url(url)
    port = _free_port()
    socket_dir = parsed.query.get("host")  # pgserver's URL names its socket's folder, not a TCP host
    upstream: tuple[str, int] | str = (
        f"{socket_dir}/.s.PGSQL.{parsed.port or 5432}"
        if isinstance(socket_dir, str)
        else (parsed.host or "127.0.0.1", parsed.port or 5432)
    )
    proxy = Proxy(port, upstream)
    late = (
        parsed.difference_update_query(["host"]).set(host="127.0.0.1", port=port).render_as_string(hide_password=False)
    )
    yield url, late, proxy
    proxy.close()


def _env(database_url: str, tmp_path: Path) -> dict[str, str]:
    """The environment of a trecpool subprocess on `database_url`."""
    return {**os.environ, "DATABASE_URL": database_url, "TRECPOOL_DATA_DIR": str(tmp_path), "COLUMNS": "200"}


def test_worker_waits_for_the_database_then_for_its_schema(late_database, tmp_path):
    url, late, proxy = late_database
    worker = Command(["worker", "--wait", "120"], _env(late, tmp_path))
    try:
        line = worker.wait_for_line("waiting for the database")
        assert "cannot reach PostgreSQL at 127.0.0.1:" in line and "s left)" in line
        proxy.start()  # PostgreSQL comes up; its schema is still empty
        line = worker.wait_for_line("database schema is at revision none")
        assert line.startswith("waiting for the database (") and "trecpool db upgrade" in line
        migrations.upgrade(url)  # the migration completes
        worker.wait_for_line("worker process(es)")
        assert not any(line.startswith("error") for line in worker.seen), worker.seen
    finally:
        status = worker.stop()
    assert status == 0, worker.seen


def test_serve_waits_for_the_database(late_database, tmp_path):
    url, late, proxy = late_database
    migrations.upgrade(url)
    port = _free_port()
    server = Command(["serve", "--no-worker", "--port", str(port), "--wait", "120"], _env(late, tmp_path))
    try:
        server.wait_for_line("waiting for the database")
        proxy.start()
        server.wait_for_line("Uvicorn running")
        assert httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=10).json()["status"] == "ok"
    finally:
        status = server.stop()
    assert status == 0, server.seen


def test_waiting_is_bounded_and_ends_with_one_clear_error(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", f"postgresql://postgres@127.0.0.1:{_free_port()}/trecpool")
    get_settings.cache_clear()
    try:
        result = CliRunner().invoke(cli, ["worker", "--wait", "2"])
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    waiting, last = lines[:-1], lines[-1]
    assert len(waiting) >= 2 and all(line.startswith("waiting for the database (") for line in waiting), lines
    assert last.startswith("error: cannot reach PostgreSQL at 127.0.0.1:"), last
    assert "gave up after waiting 2 s" in last and "Traceback" not in result.output


def test_a_missing_database_is_not_waited_for(monkeypatch, pg_admin_url):
    url = make_url(pg_admin_url).set(database="trecpool_no_such_db").render_as_string(hide_password=False)
    monkeypatch.setenv("DATABASE_URL", url)
    get_settings.cache_clear()
    try:
        result = CliRunner().invoke(cli, ["worker", "--wait", "600"])
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "does not exist" in lines[0], lines  # a configuration error: no retry


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_short_help_option(command):
    result = CliRunner().invoke(cli, [command, "-h"])
    assert result.exit_code == 0, result.output
    assert f"Usage: trecpool {command}" in result.output and "--wait" in result.output
