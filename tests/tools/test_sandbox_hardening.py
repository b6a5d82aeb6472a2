"""The hardened sandbox still does its job: what it covers, it covers without getting in the way.

The attacks themselves are in `test_hostile_sandbox.py`; these are the other side of each fix
(a socket reachable with network on, files still the user's, placeholders cleaned up).
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import anyio
import pytest

from corral.tools import PermissionDenied, PermissionProfile, SandboxMode
from corral.tools._sandbox import BubblewrapSandbox, CommandResult
from corral.tools._sandbox._limits import sweep_orphan_cgroups
from corral.tools._sandbox._placeholders import Placeholders
from corral.tools._sandbox._protected import SKIPPED_FOLDERS, survey_protected
from corral.tools._sandbox._seccomp import seccomp_supported, setid_filter

from .sandbox_support import PYTHON, Layout, make_layout, open_fifo, read_fifo_line
from .test_hostile_sandbox import connect_from_sandbox

pytestmark = pytest.mark.anyio

PROTECTED_TOPS = (".git", ".corral", ".codex", ".agents")


@pytest.fixture
def layout() -> Iterator[Layout]:
    yield from make_layout()


async def run(script: str, cwd: Path, profile: PermissionProfile) -> CommandResult:
    return await BubblewrapSandbox().run(
        ["bash", "-c", script], cwd=cwd, profile=profile, timeout=20, env={}, output_budget=20_000
    )


async def test_host_unix_socket_is_reachable_when_the_network_is_on(layout: Layout) -> None:
    path = layout.outside / "host.sock"
    code = f"import socket; socket.socket(socket.AF_UNIX).connect({str(path)!r}); print('ok')"
    connected, result = await connect_from_sandbox(
        path, [PYTHON, "-c", code], layout, SandboxMode.WORKSPACE_WRITE, network=True
    )
    assert connected
    assert result.output == "ok\n"


async def test_files_written_in_the_sandbox_stay_the_users_to_read_and_edit(
    layout: Layout,
) -> None:
    script = "echo one > made.txt; mkdir -p new/dir; echo two > new/dir/f; chmod 755 made.txt"
    result = await run(script, layout.workspace, layout.profile())
    assert result.exit_code == 0, result.output
    made = layout.workspace / "made.txt"
    assert made.stat().st_uid == os.getuid()
    assert stat.S_IMODE(made.stat().st_mode) == 0o755
    made.write_text(made.read_text() + "edited\n")
    (layout.workspace / "new" / "dir" / "f").unlink()
    again = await run("cat made.txt; echo three >> made.txt", layout.workspace, layout.profile())
    assert again.output == "one\nedited\n"
    assert made.read_text() == "one\nedited\nthree\n"


async def test_placeholders_for_missing_protected_names_are_removed_after_the_run(
    layout: Layout,
) -> None:
    shutil.rmtree(layout.workspace / ".git")
    result = await run("ls -a; touch ok", layout.workspace, layout.profile())
    assert all(name in result.output.split() for name in PROTECTED_TOPS)
    assert (layout.workspace / "ok").exists()
    assert [n for n in PROTECTED_TOPS if (layout.workspace / n).exists()] == []


async def test_a_placeholder_stays_while_another_run_in_the_same_root_needs_it(
    layout: Layout,
) -> None:
    fifo = open_fifo(layout.base / "go")
    script = f"echo up > {layout.base}/started; read line < {layout.base}/go; mkdir .corral/x"
    os.mkfifo(layout.base / "started")
    started = os.open(layout.base / "started", os.O_RDWR | os.O_NONBLOCK)
    results: list[CommandResult] = []
    profile = PermissionProfile.for_workspace("workspace-write", layout.workspace)
    waiter = profile.model_copy(update={"writable_roots": (layout.workspace, layout.base)})
    try:
        async with anyio.create_task_group() as tg:

            async def first() -> None:
                results.append(await run(script, layout.workspace, waiter))

            tg.start_soon(first)
            assert await read_fifo_line(started) == "up\n"
            second = await run("true", layout.workspace, profile)
            assert second.exit_code == 0
            assert (layout.workspace / ".corral").is_dir()
            os.write(fifo, b"go\n")
    finally:
        os.close(fifo)
        os.close(started)
    assert "Read-only file system" in results[0].output
    assert not (layout.workspace / ".corral").exists()


async def test_a_protected_name_that_is_a_symlink_is_refused_with_a_clear_message(
    layout: Layout,
) -> None:
    (layout.workspace / ".corral").symlink_to(layout.outside)
    with pytest.raises(PermissionDenied, match=r"\.corral is a symbolic link"):
        await run("true", layout.workspace, layout.profile())


async def test_limited_reader_still_runs_programs_and_reads_its_roots(layout: Layout) -> None:
    profile = layout.profile().model_copy(update={"readable_roots": (layout.workspace,)})
    script = f"cat src/main.py; git status --short; {PYTHON} -c 'print(42)'; echo w > w.txt"
    result = await run(script, layout.workspace, profile)
    assert result.output.startswith("print('hello')\n")
    assert "42\n" in result.output
    assert (layout.workspace / "w.txt").read_text() == "w\n"


async def test_limited_reader_with_a_working_folder_outside_its_roots_is_refused(
    layout: Layout,
) -> None:
    profile = PermissionProfile(sandbox=SandboxMode.READ_ONLY, readable_roots=(layout.workspace,))
    with pytest.raises(PermissionDenied, match="outside the readable roots"):
        await run("true", layout.outside, profile)


def test_the_protected_walk_skips_dependency_folders(tmp_path: Path) -> None:
    for folder in ("a/.git", "node_modules/dep/.git", "a/b/.corral"):
        (tmp_path / folder).mkdir(parents=True)
    assert "node_modules" in SKIPPED_FOLDERS
    survey = survey_protected(PermissionProfile.for_workspace("workspace-write", tmp_path))
    found = {str(p.relative_to(tmp_path)) for p in survey.read_only}
    assert found == {"a/.git", "a/b/.corral"}
    assert {p.name for p in survey.placeholders} == set(PROTECTED_TOPS)


def test_the_setuid_filter_exists_for_the_common_machines_only() -> None:
    assert seccomp_supported("x86_64") and seccomp_supported("aarch64")
    assert not seccomp_supported("riscv64")
    assert len(setid_filter("x86_64")) % 8 == 0


class VanishesWhenOpened(os.PathLike[str]):
    """A placeholder path that the last run out removes between a claim's `mkdir` (which finds
    it) and its `open`: the window in which two runs sharing a workspace meet."""

    def __init__(self, path: Path) -> None:
        self.path, self.calls = path, 0

    def __fspath__(self) -> str:
        self.calls += 1
        if self.calls == 2 and self.path.is_dir():
            self.path.rmdir()
        return str(self.path)


def test_a_placeholder_removed_by_the_last_run_out_while_being_claimed_is_made_again(
    tmp_path: Path,
) -> None:
    placeholder = tmp_path / ".corral"
    placeholder.mkdir()
    vanishing = VanishesWhenOpened(placeholder)
    claim = Placeholders([cast(Path, vanishing)])
    claim.claim()
    try:
        assert vanishing.calls > 2, "the folder was created again after it vanished"
        assert placeholder.is_dir()
    finally:
        claim.release()
    assert not placeholder.exists()


def test_cgroups_left_by_killed_corral_processes_are_swept_and_no_others(tmp_path: Path) -> None:
    finished = subprocess.run([PYTHON, "-c", "import os; print(os.getpid())"], check=True,
                              capture_output=True, text=True)  # fmt: skip
    dead, alive = int(finished.stdout), os.getpid()
    orphan = tmp_path / f"corral-{dead}-0123456789ab"
    live = tmp_path / f"corral-{alive}-0123456789ab"
    busy = tmp_path / f"corral-{dead}-ba9876543210"
    foreign = tmp_path / "corral-0123456789ab"
    for folder in (orphan, live, busy, foreign):
        folder.mkdir()
    (busy / "cgroup.procs").write_text("")  # a real cgroup that still holds a process refuses rmdir
    sweep_orphan_cgroups(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [live.name, busy.name, foreign.name]
    )


def test_a_process_left_in_a_killed_corral_processes_cgroup_is_ended_by_the_sweep(
    tmp_path: Path,
) -> None:
    finished = subprocess.run([PYTHON, "-c", "import os; print(os.getpid())"], check=True,
                              capture_output=True, text=True)  # fmt: skip
    stuck = subprocess.Popen(["sleep", "600"])
    try:
        orphan = tmp_path / f"corral-{int(finished.stdout)}-0123456789ab"
        orphan.mkdir()
        (orphan / "cgroup.procs").write_text(f"{stuck.pid}\n")
        sweep_orphan_cgroups(tmp_path)
        assert stuck.wait(timeout=30) == -signal.SIGKILL
    finally:
        stuck.kill()
        stuck.wait(timeout=30)
