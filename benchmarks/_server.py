"""The scripted model server as a separate process, the way the benchmarks run it: its CPU is
then not the client's, which is what they measure."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

SERVER_STOP_TIMEOUT = 20.0


@contextmanager
def model_server(policy: str, *options: str) -> Iterator[str]:
    """`corral model-server --policy POLICY OPTIONS...` until the block exits; yields its URL."""
    argv = [sys.executable, "-m", "corral", "model-server", "--policy", policy, *options]
    with model_server_argv(argv) as url:
        yield url


@contextmanager
def model_server_argv(argv: list[str]) -> Iterator[str]:
    """The server started by `argv` (which prints its URL once it listens) until the block exits."""
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # the server prints its URL once it listens
        match = re.search(r"listening on (\S+)", line)
        if match is None:
            raise RuntimeError(f"the model server did not start: {line!r}")
        yield match.group(1)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=SERVER_STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            # A loaded machine may keep it draining connections; the figures are already in.
            process.kill()
            process.wait(timeout=SERVER_STOP_TIMEOUT)
