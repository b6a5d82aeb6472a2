"""bwrap's status pipe (`--json-status-fd`), read without blocking."""

from __future__ import annotations

import contextlib
import os
import re
import signal

from ._process import kill_process_group

_CHILD_PID = re.compile(rb'"child-pid": (\d+)')


class StatusPipe:
    """bwrap's `--json-status-fd`: the sandbox's init pid, then the command's exit code.

    bwrap writes `exit-code` only once the command itself was exec'ed, which tells a failed
    sandbox setup apart from a command that failed.
    """

    def __init__(self) -> None:
        self._read_fd, self.write_fd = os.pipe()
        os.set_blocking(self._read_fd, False)
        self._data = b""

    def command_started(self) -> bool:
        return b'"exit-code"' in self._read()

    def stop_sandbox(self, bwrap_pid: int) -> None:
        """Kill the sandbox's init, so the kernel empties its pid namespace and bwrap exits.

        Killing bwrap itself would leave the namespace to die later (through the parent-death
        signal); before the init exists, the group holds everything and is killed instead.
        """
        match = _CHILD_PID.search(self._read())
        if match is None:
            kill_process_group(bwrap_pid)
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(match.group(1)), signal.SIGKILL)

    def close(self) -> None:
        os.close(self._read_fd)
        os.close(self.write_fd)

    def _read(self) -> bytes:
        while True:
            try:
                chunk = os.read(self._read_fd, 4096)
            except BlockingIOError:
                break
            if not chunk:
                break
            self._data += chunk
        return self._data
