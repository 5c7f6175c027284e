"""What the benchmark scripts share: a free loopback port, and the app served by uvicorn in a thread."""

from __future__ import annotations

import socket
import threading
import time

import uvicorn


def free_port() -> int:
    """An unused loopback TCP port."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve_in_thread(app: object) -> tuple[str, uvicorn.Server]:
    """Serve `app` on a free loopback port in a daemon thread; its base URL (once it accepts connections) and the
    server (set `should_exit` to stop it)."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}", server
