"""A long-lived command on a pseudo-terminal, confined exactly like a one-shot `run`.

`start_interactive` sets the host up (`prepare`), builds the same bubblewrap command line as
`_bwrap` and starts the command with a pty as its stdin, stdout and stderr; `InteractiveProcess`
keeps what it writes (`pump`, run by the owner's task group, so a chatty dev server never stalls
on a full terminal between calls; the head and tail of `RETAINED_BYTES` are kept), hands it over
within a deadline, writes to it, and stops it (the sandbox's init first, so the whole pid
namespace goes) and undoes the host setup. Owning sessions is the caller's job.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import pty
import termios
from collections.abc import Mapping, Sequence
from pathlib import Path

import anyio
from anyio.abc import Process, TaskStatus

from .._errors import InvalidInput, OperationFailed
from .._permissions import PermissionProfile, SandboxMode
from .._truncate import HeadTailBuffer
from ._bwrap_args import bwrap_options
from ._prepare import Preparation, check_workdir, prepare
from ._process import REAP_TIMEOUT, STOP_GRACE, kill_process_group
from ._status_pipe import StatusPipe

_READ_CHUNK = 65536
RETAINED_BYTES = 1024 * 1024
"""Output kept between two reads (Codex's `UNIFIED_EXEC_OUTPUT_MAX_BYTES`): head and tail."""
# Undoing a session's host setup (placeholders, cgroup) after it was stopped.
_RELEASE_TIMEOUT = 5.0


class InteractiveProcess:
    """One started command on a pty: read within a deadline, write, stop (idempotent)."""

    def __init__(
        self,
        process: Process,
        master_fd: int,
        preparation: Preparation | None,
        status: StatusPipe | None,
    ) -> None:
        self._process = process
        self._master = master_fd
        self._preparation = preparation
        self._status = status
        self._eof = False
        self._stopped = False
        self._retained = HeadTailBuffer(RETAINED_BYTES)
        self._pumping = False
        self._pump_scope = anyio.CancelScope()
        self._pumped = anyio.Event()

    @property
    def returncode(self) -> int | None:
        """The exit code once the command ended (negative: killed by that signal)."""
        return self._process.returncode

    @property
    def finished(self) -> bool:
        """The command exited and everything it wrote was read."""
        return self._eof and self._process.returncode is not None

    async def wait(self) -> int:
        """Wait until the command exits (put a deadline on it); answers its exit code."""
        return await self._process.wait()

    async def pump(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Keep the command's output until it ends or `stop` (run it in a task of the owner,
        with `start`: from then on `read` leaves the terminal to it)."""
        if self._stopped:  # stopped before this task got to run: the terminal is closed
            self._pumped.set()
            task_status.started()
            return
        self._pumping = True
        task_status.started()
        try:
            with self._pump_scope:
                await self._copy_output()
        except OSError:  # the terminal failed under us: the session's output ends here
            self._eof = True
        finally:
            self._pumped.set()

    async def read(self, buffer: HeadTailBuffer, within: float) -> None:
        """Wait until `within` seconds pass or the command ended, then move what it wrote since
        the last read into `buffer` (reading it here when nobody pumps)."""
        with anyio.move_on_after(within):
            if self._pumping:
                await self._pumped.wait()
            else:
                await self._copy_output()
            with anyio.move_on_after(STOP_GRACE):
                await self._process.wait()
        kept, self._retained = self._retained, HeadTailBuffer(RETAINED_BYTES)
        buffer.write(kept.text().encode("utf-8"))

    async def _copy_output(self) -> None:
        while not self._eof:
            chunk = self._read_nowait()
            if chunk is None:
                await anyio.wait_readable(self._master)
            elif chunk:
                self._retained.write(chunk)

    async def write(self, data: bytes, within: float) -> int:
        """Send `data` to the command's terminal; answers how many bytes it took before
        `within` seconds passed (a command that does not read fills the terminal's buffer)."""
        view = memoryview(data)
        with anyio.move_on_after(within):
            while view:
                try:
                    view = view[os.write(self._master, view) :]
                except BlockingIOError:
                    await anyio.wait_writable(self._master)
                except OSError as exc:
                    message = f"the session's terminal is closed ({exc.strerror})"
                    raise OperationFailed(message) from exc
        return len(data) - len(view)

    async def stop(self) -> None:
        """Kill the command and everything it started; reap it and undo the host setup."""
        if self._stopped:
            return
        self._stopped = True
        with anyio.move_on_after(REAP_TIMEOUT, shield=True):
            if self._pumping:  # off the terminal before it is closed
                self._pump_scope.cancel()
                await self._pumped.wait()
            if self._process.returncode is None:
                self._halt()
                with anyio.move_on_after(STOP_GRACE):
                    await self._process.wait()
            kill_process_group(self._process.pid)
            await self._process.aclose()
        with contextlib.suppress(OSError):
            os.close(self._master)
        if self._status is not None:
            self._status.close()
        if self._preparation is not None:
            with anyio.move_on_after(_RELEASE_TIMEOUT, shield=True):
                await anyio.to_thread.run_sync(self._preparation.release)

    def _halt(self) -> None:
        if self._status is not None:
            self._status.stop_sandbox(self._process.pid)
        else:
            kill_process_group(self._process.pid)

    def _read_nowait(self) -> bytes | None:
        """What is waiting on the terminal; b"" at the end, None when nothing is there yet."""
        try:
            chunk = os.read(self._master, _READ_CHUNK)
        except BlockingIOError:
            return None
        except OSError as exc:
            # Linux answers EIO once every holder of the terminal's other end has gone.
            if exc.errno != errno.EIO:
                raise
            chunk = b""
        if not chunk:
            self._eof = True
        return chunk


async def start_interactive(
    argv: Sequence[str],
    *,
    cwd: Path,
    profile: PermissionProfile,
    environment: Mapping[str, str],
    bwrap: str,
    max_processes: int | None,
) -> InteractiveProcess:
    """Start `argv` on a new pty, confined by the `bwrap` binary unless `profile` is full
    access (the caller has checked that the binary exists)."""
    if not argv or not argv[0]:
        raise InvalidInput("the command is empty: give a program and its arguments")
    if not await anyio.Path(cwd).is_dir():
        raise InvalidInput(f"the working directory {cwd} does not exist")
    if profile.sandbox is SandboxMode.FULL_ACCESS:
        return await _start(argv, cwd, environment, None, None)
    check_workdir(profile, cwd)
    setup = functools.partial(prepare, profile, environment, max_processes)
    prepared = await anyio.to_thread.run_sync(setup)
    try:
        return await _start_confined(argv, cwd, profile, environment, prepared, bwrap)
    except BaseException:
        with anyio.move_on_after(_RELEASE_TIMEOUT, shield=True):
            await anyio.to_thread.run_sync(prepared.release)
        raise


async def _start_confined(
    argv: Sequence[str],
    cwd: Path,
    profile: PermissionProfile,
    environment: Mapping[str, str],
    prepared: Preparation,
    bwrap: str,
) -> InteractiveProcess:
    status = StatusPipe()
    try:
        options = bwrap_options(
            profile, cwd, environment, status_fd=status.write_fd, facts=prepared.facts
        )
        limit = prepared.limit
        command = [*limit.outer, bwrap, *options, "--", *limit.inner, *argv]
        fds = (status.write_fd, *prepared.pass_fds)
        return await _start(command, cwd, environment, prepared, status, fds)
    except BaseException:
        status.close()
        raise


async def _start(
    argv: Sequence[str],
    cwd: Path,
    environment: Mapping[str, str],
    prepared: Preparation | None,
    status: StatusPipe | None,
    pass_fds: Sequence[int] = (),
) -> InteractiveProcess:
    master, slave = pty.openpty()
    try:
        _quiet_terminal(slave)
        os.set_blocking(master, False)
        try:
            process = await anyio.open_process(
                list(argv),
                stdin=slave,
                stdout=slave,
                stderr=slave,
                cwd=cwd,
                env=dict(environment),
                start_new_session=True,
                pass_fds=pass_fds,
            )
        except OSError as exc:
            raise OperationFailed(f"could not start {argv[0]}: {exc.strerror or exc}") from exc
    except BaseException:
        os.close(master)
        raise
    finally:
        os.close(slave)
    return InteractiveProcess(process, master, prepared, status)


def _quiet_terminal(fd: int) -> None:
    """No echo: the model reads what the command wrote, not its own input a second time."""
    with contextlib.suppress(termios.error):
        attrs = termios.tcgetattr(fd)
        attrs[3] &= ~termios.ECHO
        termios.tcsetattr(fd, termios.TCSANOW, attrs)
