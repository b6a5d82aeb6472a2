"""The bubblewrap sandbox against real processes: output, time, environment, filesystem."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import anyio
import pytest

from corral.tools import PermissionProfile, SandboxMode, SandboxUnavailable
from corral.tools._sandbox import BubblewrapSandbox, CommandResult, RecordingSandbox

from .sandbox_support import (
    PYTHON,
    Layout,
    is_alive,
    make_layout,
    open_fifo,
    processes_with_env,
    read_fifo_line,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def layout() -> Iterator[Layout]:
    yield from make_layout()


async def run(
    argv: Sequence[str],
    cwd: Path,
    profile: PermissionProfile,
    *,
    sandbox: BubblewrapSandbox | None = None,
    limit: float = 10.0,
    env: dict[str, str] | None = None,
    budget: int = 100_000,
) -> CommandResult:
    box = sandbox or BubblewrapSandbox()
    return await box.run(
        argv, cwd=cwd, profile=profile, timeout=limit, env=env or {}, output_budget=budget
    )


async def test_command_output_and_exit_code_come_back_with_stderr_merged(
    layout: Layout,
) -> None:
    argv = ["sh", "-c", "echo out; echo err >&2; echo again; exit 3"]
    result = await run(argv, layout.workspace, layout.profile())
    assert (result.exit_code, result.output) == (3, "out\nerr\nagain\n")
    assert not result.timed_out and result.truncated_bytes == 0
    assert result.line_count == 3


async def test_command_runs_in_the_given_directory(layout: Layout) -> None:
    result = await run(["pwd"], layout.workspace / "src", layout.profile("read-only"))
    assert result.output == f"{layout.workspace / 'src'}\n"


async def test_missing_program_is_reported_as_exit_127_not_as_a_sandbox_failure(
    layout: Layout,
) -> None:
    result = await run(["no-such-program-corral"], layout.workspace, layout.profile())
    assert result.exit_code == 127
    assert "no-such-program-corral: No such file or directory" in result.output


async def test_environment_is_clean_apart_from_the_allow_list(
    layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CORRAL_SECRET_TEST", "hunter2")
    result = await run(["env"], layout.workspace, layout.profile(), env={"EXTRA": "given"})
    variables = dict(line.split("=", 1) for line in result.output.splitlines())
    assert "CORRAL_SECRET_TEST" not in variables
    assert "hunter2" not in result.output
    assert variables["CORRAL_SANDBOX"] == "1"
    assert variables["EXTRA"] == "given"
    assert (variables["TERM"], variables["NO_COLOR"], variables["PAGER"]) == ("dumb", "1", "cat")
    assert variables["LC_ALL"] == "C.UTF-8"
    assert variables["PATH"] == os.environ["PATH"]


async def test_command_that_never_ends_is_killed_at_the_timeout_with_exit_code_124(
    layout: Layout,
) -> None:
    marker = "CORRAL_TIMEOUT_TEST"
    argv = ["sh", "-c", "sleep 30 & sleep 30"]
    result = await run(argv, layout.workspace, layout.profile(), limit=0.2, env={marker: "1"})
    assert (result.exit_code, result.timed_out) == (124, True)
    assert processes_with_env(marker) == []


async def test_timed_out_command_leaves_no_process_behind(layout: Layout) -> None:
    marker = "CORRAL_TIMEOUT_PIDS"
    fifo = open_fifo(layout.workspace / "started")
    argv = ["sh", "-c", "sleep 30 & echo up > started; wait"]
    results: list[CommandResult] = []
    try:
        async with anyio.create_task_group() as tg:

            async def go() -> None:
                results.append(
                    await run(
                        argv, layout.workspace, layout.profile(), limit=1.0, env={marker: "1"}
                    )
                )

            tg.start_soon(go)
            assert await read_fifo_line(fifo) == "up\n"
            pids = processes_with_env(marker)
    finally:
        os.close(fifo)
    assert len(pids) >= 2  # the shell and its sleep, at least
    assert results[0].exit_code == 124
    assert [pid for pid in pids if is_alive(pid)] == []


async def test_cancelled_run_kills_the_command_and_its_children(layout: Layout) -> None:
    marker = "CORRAL_CANCEL_PIDS"
    fifo = open_fifo(layout.workspace / "started")
    argv = ["sh", "-c", "sleep 30 & echo up > started; wait"]
    try:
        async with anyio.create_task_group() as tg:

            async def go() -> None:
                await run(argv, layout.workspace, layout.profile(), limit=30, env={marker: "1"})

            tg.start_soon(go)
            await read_fifo_line(fifo)
            pids = processes_with_env(marker)
            tg.cancel_scope.cancel()
    finally:
        os.close(fifo)
    assert len(pids) >= 2
    assert [pid for pid in pids if is_alive(pid)] == []


async def test_output_flood_is_cut_to_head_and_tail_within_the_budget(layout: Layout) -> None:
    argv = ["sh", "-c", "yes | head -c 20000000"]
    result = await run(argv, layout.workspace, layout.profile(), budget=1000)
    assert result.exit_code == 0
    assert result.output == "y\n" * 250 + "…4999750 tokens truncated…" + "y\n" * 250
    assert result.truncated_bytes == 20_000_000 - 1000
    assert result.line_count == 10_000_000


async def test_workspace_write_allows_writes_inside_the_root_only(layout: Layout) -> None:
    script = "echo new > made.txt; echo sneaky > ../outside/made.txt"
    result = await run(["sh", "-c", script], layout.workspace, layout.profile())
    assert (layout.workspace / "made.txt").read_text() == "new\n"
    assert not (layout.outside / "made.txt").exists()
    assert "Read-only file system" in result.output


async def test_git_folder_inside_the_root_stays_read_only(layout: Layout) -> None:
    config = layout.workspace / ".git" / "config"
    before = config.read_text()
    script = "echo evil >> .git/config; touch .git/hooks-added"
    result = await run(["sh", "-c", script], layout.workspace, layout.profile())
    assert config.read_text() == before
    assert not (layout.workspace / ".git" / "hooks-added").exists()
    assert result.output.count("Read-only file system") == 2


async def test_git_folder_is_writable_when_the_profile_allows_it(layout: Layout) -> None:
    profile = layout.profile().model_copy(update={"git_writable": True})
    result = await run(["touch", ".git/ok"], layout.workspace, profile)
    assert result.exit_code == 0
    assert (layout.workspace / ".git" / "ok").exists()


async def test_read_only_profile_cannot_write_even_in_the_workspace(layout: Layout) -> None:
    result = await run(["touch", "x"], layout.workspace, layout.profile("read-only"))
    assert result.exit_code == 1
    assert "Read-only file system" in result.output
    assert not (layout.workspace / "x").exists()


async def test_workspace_under_tmp_stays_visible_and_writable(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "seen.txt").write_text("seen\n")
    profile = PermissionProfile.for_workspace("workspace-write", workspace)
    result = await run(["sh", "-c", "cat seen.txt; echo w > written"], workspace, profile)
    assert result.output == "seen\n"
    assert (workspace / "written").read_text() == "w\n"


async def test_read_only_workspace_under_tmp_is_visible(tmp_path: Path) -> None:
    (tmp_path / "seen.txt").write_text("seen\n")
    profile = PermissionProfile.for_workspace("read-only", tmp_path)
    result = await run(["cat", "seen.txt"], tmp_path, profile)
    assert result.output == "seen\n"


async def test_tmp_is_private_to_the_command(layout: Layout) -> None:
    name = f"corral-private-{os.getpid()}"
    result = await run(["touch", f"/tmp/{name}"], layout.workspace, layout.profile("read-only"))
    assert result.exit_code == 0
    assert not (Path(tempfile.gettempdir()) / name).exists()


async def test_network_profile_reaches_a_loopback_listener(layout: Layout) -> None:
    connected = anyio.Event()

    async def on_connect(stream: anyio.abc.SocketStream) -> None:
        connected.set()
        await stream.aclose()

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    code = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2)"
    profile = layout.profile().model_copy(update={"network": True})
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, on_connect)
        result = await run([PYTHON, "-c", code], layout.workspace, profile)
        with anyio.fail_after(10):
            await connected.wait()
        tg.cancel_scope.cancel()
    assert result.exit_code == 0


async def test_host_unix_sockets_under_run_are_hidden_without_network(layout: Layout) -> None:
    if not os.access("/run", os.W_OK):
        pytest.skip("needs a writable /run to place a host socket in")
    path = Path(f"/run/corral-sandbox-test-{os.getpid()}.sock")
    connected = anyio.Event()

    async def on_connect(stream: anyio.abc.SocketStream) -> None:
        connected.set()
        await stream.aclose()

    code = f"import socket; socket.socket(socket.AF_UNIX).connect({str(path)!r})"
    listener = await anyio.create_unix_listener(path)
    try:
        async with listener, anyio.create_task_group() as tg:
            tg.start_soon(listener.serve, on_connect)
            result = await run([PYTHON, "-c", code], layout.workspace, layout.profile())
            tg.cancel_scope.cancel()
    finally:
        await anyio.Path(path).unlink(missing_ok=True)
    assert result.exit_code == 1
    assert "FileNotFoundError" in result.output
    assert not connected.is_set()


async def test_missing_bubblewrap_refuses_restricted_profiles_with_an_install_hint(
    layout: Layout,
) -> None:
    sandbox = BubblewrapSandbox(layout.base / "no-such-bwrap")
    assert not sandbox.available
    for mode in ("read-only", "workspace-write"):
        with pytest.raises(SandboxUnavailable, match=r"apt-get install bubblewrap"):
            await run(["touch", "ran"], layout.workspace, layout.profile(mode), sandbox=sandbox)
    assert not (layout.workspace / "ran").exists()


async def test_missing_bubblewrap_still_runs_full_access_commands(layout: Layout) -> None:
    sandbox = BubblewrapSandbox(layout.base / "no-such-bwrap")
    result = await run(
        ["touch", "ran"], layout.workspace, layout.profile("full-access"), sandbox=sandbox
    )
    assert result.exit_code == 0
    assert (layout.workspace / "ran").exists()


async def test_bwrap_that_cannot_create_namespaces_is_reported_as_unavailable(
    layout: Layout,
) -> None:
    fake = layout.base / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    fake.chmod(0o755)
    sandbox = BubblewrapSandbox(fake)
    with pytest.raises(SandboxUnavailable, match=r"setting up uid map: Permission denied"):
        await run(["true"], layout.workspace, layout.profile(), sandbox=sandbox)


async def test_full_access_runs_the_command_directly(layout: Layout) -> None:
    result = await run(
        ["sh", "-c", "echo direct > ../outside/direct.txt; echo $CORRAL_SANDBOX"],
        layout.workspace,
        layout.profile(SandboxMode.FULL_ACCESS),
    )
    assert result.output == "\n"
    assert (layout.outside / "direct.txt").read_text() == "direct\n"


async def test_recording_sandbox_records_calls_and_answers_the_script(tmp_path: Path) -> None:
    scripted = CommandResult(exit_code=5, output="scripted\n")
    sandbox = RecordingSandbox([scripted, SandboxUnavailable("no bwrap")])
    profile = PermissionProfile()
    first = await sandbox.run(
        ["ls"], cwd=tmp_path, profile=profile, timeout=1.0, env={}, output_budget=10
    )
    with pytest.raises(SandboxUnavailable):
        await sandbox.run(
            ["ls"], cwd=tmp_path, profile=profile, timeout=1.0, env={}, output_budget=10
        )
    third = await sandbox.run(
        ["pwd"], cwd=tmp_path, profile=profile, timeout=2.0, env={"A": "b"}, output_budget=10
    )
    assert (first, third.exit_code) == (scripted, 0)
    assert [c.argv for c in sandbox.calls] == [("ls",), ("ls",), ("pwd",)]
    assert sandbox.calls[2].env == {"A": "b"}
