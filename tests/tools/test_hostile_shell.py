"""Hostile commands against the real sandbox: each fails visibly and leaves the disk untouched.

Every case runs with a loopback listener open outside the sandbox and snapshots the workspace and
the folder next to it before and after: nothing may change, and nothing may connect.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import anyio
import anyio.abc
import pytest

from corral.tools import SandboxMode
from corral.tools._sandbox import BubblewrapSandbox, CommandResult

from .sandbox_support import PYTHON, Layout, make_layout, processes_with_env, snapshot

pytestmark = [pytest.mark.anyio, pytest.mark.hostile]

RO, WW = SandboxMode.READ_ONLY, SandboxMode.WORKSPACE_WRITE
EROFS = "Read-only file system"
# mount(8) as root without capabilities, and as an ordinary user (inside its own namespace).
MOUNT_REFUSED = ("ermission denied", "must be superuser")
SECRET = "corral-hostile-secret"
BUDGET = 2_000


@dataclass(frozen=True)
class Case:
    """A hostile script, the profile it runs under, and what its output must show."""

    id: str
    mode: SandboxMode
    script: str
    shows: str | tuple[str, ...] = ""  # a tuple: any one of them
    exit_code: int | None = None  # None: any failure
    limit: float = 10.0


CASES = [
    Case("ro-touch", RO, "touch new.txt", EROFS),
    Case("ro-redirect-truncate", RO, "echo pwned > src/main.py", EROFS),
    Case("ro-redirect-append", RO, "echo pwned >> src/main.py", EROFS),
    Case("ro-cp", RO, "cp src/main.py copy.py", EROFS),
    Case("ro-mv", RO, "mv src/main.py moved.py", "cannot move"),
    Case("ro-rm", RO, "rm src/main.py", EROFS),
    Case("ro-rm-outside", RO, "rm -rf {outside}", EROFS),
    Case("ro-mkdir", RO, "mkdir made", EROFS),
    Case("ro-symlink", RO, "ln -s /etc/passwd link", EROFS),
    Case("ro-python-open", RO, "{python} -c \"open('py.txt', 'w')\"", EROFS),
    Case("ro-tee", RO, "echo pwned | tee tee.txt", EROFS),
    Case("ro-dd", RO, "dd if=/dev/zero of=dd.bin count=1", EROFS),
    Case("ro-chmod", RO, "chmod 777 src/main.py", EROFS),
    Case("ro-remount-root-rw", RO, "mount -o remount,bind,rw / && touch x", MOUNT_REFUSED),
    # Writes the current value back: refused by the sandbox, and harmless if it ever were not.
    Case("ro-write-kernel-setting", RO, 'v="$(cat {core})"; echo "$v" > {core}', EROFS),
    Case("ww-absolute-outside", WW, "touch {outside}/new.txt", EROFS),
    Case("ww-dotdot-outside", WW, "echo pwned > ../outside/keep.txt", EROFS),
    Case("ww-symlink-out", WW, "echo pwned > out-link/keep.txt", EROFS),
    Case("ww-cd-through-symlink", WW, "cd out-link && touch new.txt", EROFS),
    Case("ww-hardlink-outside", WW, "ln {outside}/keep.txt hard.txt", "Invalid cross-device link"),
    Case("ww-git-config", WW, "echo '[core] hooksPath = /x' >> .git/config", EROFS),
    Case("ww-git-config-by-git", WW, "git config core.hooksPath /x", "could not lock config"),
    Case("ww-rm-git", WW, "rm -rf .git", EROFS),
    Case("ww-remount-git-rw", WW, "mount -o remount,bind,rw .git && touch .git/x", MOUNT_REFUSED),
    Case("ww-bind-mount-over-git", WW, "mount --bind src .git", MOUNT_REFUSED),
    Case(
        "ww-network-loopback",
        WW,
        "{python} -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2)\"",
        "Connection refused",
    ),
    Case("ww-never-ends", WW, "sleep 30", exit_code=124, limit=0.2),
    Case("ww-output-flood", WW, "yes pwned", "tokens truncated", exit_code=124, limit=0.3),
    Case("ww-env-secret", WW, 'echo "[$CORRAL_SECRET_TEST]"; env | grep -c SECRET', "[]\n0\n"),
    Case("ww-kill-outside-process", WW, "kill -9 {pid}", "No such process"),
]


@pytest.fixture
def layout() -> Iterator[Layout]:
    for made in make_layout():
        (made.workspace / "out-link").symlink_to(made.outside)
        yield made


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
async def test_hostile_command_fails_and_changes_nothing(
    case: Case, layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CORRAL_SECRET_TEST", SECRET)
    before = snapshot(layout.base)
    connections: list[str] = []

    async def on_connect(stream: anyio.abc.SocketStream) -> None:
        connections.append("connected")
        await stream.aclose()

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    victim = await anyio.open_process(["sleep", "60"])
    async with victim, listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, on_connect)
        port = listener.extra(anyio.abc.SocketAttribute.local_port)
        result = await run_case(case, layout, port=port, pid=victim.pid)
        assert victim.returncode is None, "a process outside the sandbox was killed"
        victim.kill()
        tg.cancel_scope.cancel()

    assert result.exit_code != 0
    if case.exit_code is not None:
        assert result.exit_code == case.exit_code
    shows = (case.shows,) if isinstance(case.shows, str) else case.shows
    assert any(text in result.output for text in shows)
    assert SECRET not in result.output
    assert len(result.output.encode()) <= BUDGET + 64
    assert connections == []
    assert snapshot(layout.base) == before
    assert processes_with_env("CORRAL_HOSTILE_RUN") == []


async def run_case(case: Case, layout: Layout, *, port: int, pid: int) -> CommandResult:
    script = case.script.format(
        workspace=layout.workspace,
        outside=layout.outside,
        port=port,
        pid=pid,
        core="/proc/sys/kernel/core_pattern",
        python=PYTHON,
    )
    return await BubblewrapSandbox().run(
        ["bash", "-c", script],
        cwd=layout.workspace,
        profile=layout.profile(case.mode),
        timeout=case.limit,
        env={"CORRAL_HOSTILE_RUN": "1"},
        output_budget=BUDGET,
    )
