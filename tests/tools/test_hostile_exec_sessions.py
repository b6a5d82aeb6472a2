"""Hostile use of `exec_command` and `write_stdin`: another agent's session, guessed and stale
ids, session floods, input nobody reads, unapproved commands, and escapes from the sandbox."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from corral.tools import (
    ApprovalPolicy,
    ExecSessions,
    PermissionProfile,
    SandboxMode,
    SessionQuota,
)

from .exec_support import answerer_command, call, context, processes_with_arg, registry, session_id
from .sandbox_support import Layout, make_layout, snapshot

pytestmark = [pytest.mark.anyio, pytest.mark.hostile]


@pytest.fixture
def layout() -> Iterator[Layout]:
    yield from make_layout()


async def test_an_agent_cannot_write_to_or_read_from_another_agents_session(
    layout: Layout,
) -> None:
    sessions = ExecSessions()
    reg = registry()
    owner = context(layout.workspace, layout.profile(), sessions, agent_id="owner")
    intruder = context(layout.workspace, layout.profile(), sessions, agent_id="intruder")
    with anyio.fail_after(30):
        started = await call(
            reg, owner, "exec_command", cmd=answerer_command("x"), yield_time_ms=1500
        )
        sid = session_id(started)
        stolen = await call(reg, intruder, "write_stdin", session_id=sid, chars="evil\n")
        assert not stolen.success
        assert f"session {sid} is not running" in stolen.text
        mine = await call(
            reg, owner, "write_stdin", session_id=sid, chars="ok\n", yield_time_ms=1500
        )
        await sessions.aclose()
    assert "answer:ok" in mine.text
    assert "evil" not in mine.text


@pytest.mark.parametrize("sid", [0, -1, 1, 1000, 2**62])
async def test_a_guessed_or_stale_session_id_is_refused_as_not_running(
    layout: Layout, sid: int
) -> None:
    ctx = context(layout.workspace, layout.profile(), ExecSessions())
    out = await call(registry(), ctx, "write_stdin", session_id=sid, chars="rm -rf /\n")
    assert not out.success
    assert f"session {sid} is not running" in out.text
    assert "exec_command" in out.text


async def test_an_agent_past_its_session_cap_starts_nothing_more(layout: Layout) -> None:
    marker = f"corral-cap-{secrets.token_hex(4)}"
    sessions = ExecSessions(max_per_agent=2, quota=SessionQuota(3))
    reg = registry()
    ctx = context(layout.workspace, layout.profile(), sessions)
    with anyio.fail_after(30):
        for _ in range(2):
            await call(reg, ctx, "exec_command", cmd=answerer_command(marker), yield_time_ms=250)
        running = processes_with_arg(marker)
        third = await call(reg, ctx, "exec_command", cmd=answerer_command(marker))
        assert not third.success and "limit" in third.text
        assert processes_with_arg(marker) == running
        other = context(layout.workspace, layout.profile(), sessions, agent_id="agent-2")
        await call(reg, other, "exec_command", cmd=answerer_command(marker), yield_time_ms=250)
        running = processes_with_arg(marker)
        fourth = await call(reg, other, "exec_command", cmd=answerer_command(marker))
        assert not fourth.success
        assert "this corral process has 3 running command sessions" in fourth.text
        assert processes_with_arg(marker) == running
        assert len(sessions) == 3
        await sessions.aclose()
    assert processes_with_arg(marker) == []


async def test_input_the_command_never_reads_cannot_hang_the_agent(layout: Layout) -> None:
    sessions = ExecSessions()
    reg = registry()
    ctx = context(layout.workspace, layout.profile(), sessions)
    with anyio.fail_after(30):
        started = await call(reg, ctx, "exec_command", cmd="sleep 30", yield_time_ms=250)
        flood = ("x" * 99 + "\n") * 40_000
        out = await call(reg, ctx, "write_stdin", session_id=session_id(started), chars=flood)
        await sessions.aclose()
    assert not out.success
    assert "bytes were written: the command is not reading" in out.text


async def test_untrusted_policy_asks_before_a_session_starts_and_a_denial_runs_nothing(
    layout: Layout,
) -> None:
    profile = PermissionProfile.for_workspace(SandboxMode.WORKSPACE_WRITE, layout.workspace)
    profile = profile.model_copy(update={"approval": ApprovalPolicy.UNTRUSTED})
    sessions = ExecSessions()
    ctx = context(layout.workspace, profile, sessions)
    with anyio.fail_after(30):
        out = await call(registry(), ctx, "exec_command", cmd="touch pwned")
    assert not out.success
    assert "approval was denied" in out.text
    assert not (layout.workspace / "pwned").exists()
    assert len(sessions) == 0


@pytest.mark.parametrize(
    ("mode", "script"),
    [
        (SandboxMode.WORKSPACE_WRITE, "echo x > ../outside/pwned"),
        (SandboxMode.WORKSPACE_WRITE, "echo x > .git/hooks/pre-commit"),
        (SandboxMode.READ_ONLY, "echo x > src/main.py"),
        (SandboxMode.WORKSPACE_WRITE, "(setsid sh -c 'sleep 1; echo x > ../outside/late' &)"),
    ],
    ids=["outside", "git-hooks", "read-only", "detached-child"],
)
async def test_a_session_is_confined_like_shell(
    layout: Layout, mode: SandboxMode, script: str
) -> None:
    before = snapshot(layout.base)
    sessions = ExecSessions()
    ctx = context(layout.workspace, layout.profile(mode), sessions)
    with anyio.fail_after(30):
        await call(registry(), ctx, "exec_command", cmd=script, yield_time_ms=250)
        await sessions.aclose()
    assert snapshot(layout.base) == before


@pytest.mark.parametrize("workdir", ["../outside", "/", "{home}"])
async def test_a_workdir_the_profile_hides_or_cannot_read_is_refused(
    layout: Layout, tmp_path: Path, workdir: str
) -> None:
    home = tmp_path / "corral-home"
    home.mkdir()
    profile = PermissionProfile(
        sandbox=SandboxMode.WORKSPACE_WRITE,
        writable_roots=(layout.workspace,),
        readable_roots=(layout.workspace,),
        hidden_roots=(home,),
    )
    sessions = ExecSessions()
    ctx = context(layout.workspace, profile, sessions)
    out = await call(registry(), ctx, "exec_command", cmd="ls", workdir=workdir.format(home=home))
    assert not out.success
    assert len(sessions) == 0


async def test_runs_in_one_process_share_its_session_cap(layout: Layout) -> None:
    quota = SessionQuota(2)
    runs = [ExecSessions(quota=quota), ExecSessions(quota=quota)]
    reg = registry()
    with anyio.fail_after(30):
        for number, sessions in enumerate(runs):
            ctx = context(layout.workspace, layout.profile(), sessions, agent_id=f"a{number}")
            started = await call(reg, ctx, "exec_command", cmd="sleep 30", yield_time_ms=250)
            assert started.success, started.text
        third = await call(reg, ctx, "exec_command", cmd="sleep 30")
        assert not third.success and "this corral process has 2" in third.text
        await runs[0].aclose()
        fourth = await call(reg, ctx, "exec_command", cmd="sleep 30", yield_time_ms=250)
        assert fourth.success, "a session that ended gives its place back"
        await runs[1].aclose()
    assert quota.live == 0
