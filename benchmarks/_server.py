"""The scripted model server as a separate process, the way the benchmarks run it: its CPU is
then not the client's, which is what they measure."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SERVER_STOP_TIMEOUT = 20.0
_PIDS: dict[str, int] = {}
"""Each running server's process, by the URL it serves."""


@contextmanager
def model_server(policy: str, *options: str, code: Path | None = None) -> Iterator[str]:
    """`corral model-server --policy POLICY OPTIONS...` until the block exits; yields its URL.

    `code`: a checkout of other corral code (e.g. `git worktree add /tmp/before main`) whose
    server runs instead of this one, to compare servers in one run.
    """
    argv = [sys.executable, "-m", "corral", "model-server", "--policy", policy, *options]
    with model_server_argv(argv, code=code) as url:
        yield url


@contextmanager
def model_server_argv(argv: list[str], *, code: Path | None = None) -> Iterator[str]:
    """The server started by `argv` (which prints its URL once it listens) until the block exits."""
    env, cwd = None, None
    if code is not None:
        # `-m` puts the working folder first on the path: that checkout's corral, then.
        env, cwd = {**os.environ, "PYTHONPATH": str(code)}, code
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env=env, cwd=cwd)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # the server prints its URL once it listens
        match = re.search(r"listening on (\S+)", line)
        if match is None:
            raise RuntimeError(f"the model server did not start: {line!r}")
        _PIDS[match.group(1)] = process.pid
        yield match.group(1)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=SERVER_STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            # A loaded machine may keep it draining connections; the figures are already in.
            process.kill()
            process.wait(timeout=SERVER_STOP_TIMEOUT)


def server_cpu(url: str) -> float:
    """CPU seconds the server serving `url` has used so far (user and system)."""
    with open(f"/proc/{_PIDS[url]}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
