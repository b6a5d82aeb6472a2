"""`exec_command` and `write_stdin` against the real sandbox: a process that keeps running
between calls, answers input, is bounded in output and is stopped with its owner."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import anyio
import pytest

from corral.tools import ExecSessions, SandboxMode, SessionQuota, open_exec_sessions

from .exec_support import (
    answerer_command,
    call,
    context,
    processes_with_arg,
    registry,
    session_id,
)
from .sandbox_support import Layout, make_layout

pytestmark = pytest.mark.anyio


@pytest.fixture
def layout() -> Iterator[Layout]:
    yield from make_layout()


async def test_a_session_answers_input_in_later_calls_and_stops_with_its_agent(
    layout: Layout,
) -> None:
    marker = f"corral-exec-{secrets.token_hex(4)}"
    sessions = ExecSessions()
    ctx = context(layout.workspace, layout.profile(), sessions)
    reg = registry()
    with anyio.fail_after(30):
        started = await call(
            reg, ctx, "exec_command", cmd=answerer_command(marker), yield_time_ms=1500
        )
        assert "ready" in started.text, started.text
        sid = session_id(started)
        first = await call(
            reg, ctx, "write_stdin", session_id=sid, chars="one\n", yield_time_ms=1500
        )
        second = await call(
            reg, ctx, "write_stdin", session_id=sid, chars="two\n", yield_time_ms=1500
        )
        assert "answer:one" in first.text and "answer:one" not in second.text
        assert "answer:two" in second.text
        assert f"Process running with session ID {sid}" in second.text
        assert processes_with_arg(marker)
        await sessions.close_agent("agent-1")
    assert processes_with_arg(marker) == []
    gone = await call(reg, ctx, "write_stdin", session_id=sid, chars="three\n")
    assert not gone.success
    assert f"session {sid} is not running" in gone.text


async def test_a_command_that_exits_within_the_yield_reports_its_code_and_frees_its_session(
    layout: Layout,
) -> None:
    sessions = ExecSessions()
    ctx = context(layout.workspace, layout.profile(), sessions)
    with anyio.fail_after(20):
        out = await call(registry(), ctx, "exec_command", cmd="echo hi; exit 3")
    assert "Process exited with code 3" in out.text
    assert out.text.endswith("Output:\nhi\r\n")
    assert len(sessions) == 0


async def test_a_flood_of_output_is_cut_in_the_middle_like_shell_output(layout: Layout) -> None:
    sessions = ExecSessions()
    ctx = context(layout.workspace, layout.profile(), sessions)
    cmd = "seq 1 100000"
    with anyio.fail_after(30):
        out = await call(registry(), ctx, "exec_command", cmd=cmd, max_output_tokens=200)
    assert "Total output lines: 100000" in out.text
    assert "truncated" in out.text
    assert len(out.text) < 2_000
    await sessions.aclose()


async def test_stopping_the_run_stops_every_session_and_refuses_new_ones(layout: Layout) -> None:
    marker = f"corral-exec-{secrets.token_hex(4)}"
    sessions = ExecSessions()
    reg = registry()
    with anyio.fail_after(30):
        for agent in ("agent-1", "agent-2"):
            ctx = context(layout.workspace, layout.profile(), sessions, agent_id=agent)
            await call(reg, ctx, "exec_command", cmd=answerer_command(marker), yield_time_ms=250)
        assert len(processes_with_arg(marker)) >= 2
        await sessions.aclose()
        assert processes_with_arg(marker) == []
        late = await call(reg, ctx, "exec_command", cmd="true")
    assert not late.success
    assert "the run is stopping" in late.text


async def test_full_access_sessions_run_unconfined_and_still_stop(layout: Layout) -> None:
    marker = f"corral-exec-{secrets.token_hex(4)}"
    sessions = ExecSessions()
    ctx = context(layout.workspace, layout.profile(SandboxMode.FULL_ACCESS), sessions)
    with anyio.fail_after(30):
        out = await call(
            registry(), ctx, "exec_command", cmd=answerer_command(marker), yield_time_ms=1000
        )
        assert "ready" in out.text
        await sessions.aclose()
    assert processes_with_arg(marker) == []


async def test_a_chatty_command_runs_on_between_calls_and_its_tail_is_kept(layout: Layout) -> None:
    async with open_exec_sessions(quota=SessionQuota()) as sessions:
        ctx = context(layout.workspace, layout.profile(), sessions)
        reg = registry()
        with anyio.fail_after(30):
            cmd = "seq 1 300000; echo finished"
            out = await call(reg, ctx, "exec_command", cmd=cmd, yield_time_ms=250)
            if "Process running" in out.text:
                # Nobody reads now: the pump does, so the command is never stuck on the terminal.
                await sessions.get("agent-1", session_id(out)).process.wait()
                out = await call(reg, ctx, "write_stdin", session_id=session_id(out))
    assert "Process exited with code 0" in out.text
    assert out.text.rstrip().endswith("finished")
