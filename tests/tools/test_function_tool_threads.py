"""Where a sync function tool runs: a worker thread by default, the loop's own thread when the
caller declares it quick (`blocking=False`); either way its exceptions are tool errors."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from corral.tools import PermissionProfile, Tool, ToolContext, function_tool


def context(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, profile=PermissionProfile.for_workspace("read-only", tmp_path))


def recording_tool(threads: list[int], **options: Any) -> Tool[Any]:
    def where(x: int) -> int:
        """Records the thread it ran on."""
        threads.append(threading.get_ident())
        return x + 1

    return function_tool(where, **options)


def failing(x: int) -> int:
    """Always fails."""
    raise RuntimeError(f"no luck with {x}")


@pytest.mark.anyio
async def test_a_sync_tool_declared_quick_runs_on_the_loops_own_thread(tmp_path: Path) -> None:
    threads: list[int] = []
    out = await recording_tool(threads, blocking=False).invoke('{"x": 1}', context(tmp_path))
    assert (out.success, out.text) == (True, "2")
    assert threads == [threading.get_ident()]


@pytest.mark.anyio
async def test_a_sync_tool_runs_in_a_worker_thread_by_default(tmp_path: Path) -> None:
    threads: list[int] = []
    out = await recording_tool(threads).invoke('{"x": 1}', context(tmp_path))
    assert (out.success, out.text) == (True, "2")
    assert len(threads) == 1 and threads[0] != threading.get_ident()


@pytest.mark.anyio
async def test_the_decorator_form_takes_the_quick_declaration(tmp_path: Path) -> None:
    threads: list[int] = []

    @function_tool(name="quick", blocking=False)
    def quick(x: int) -> int:
        """Records the thread it ran on."""
        threads.append(threading.get_ident())
        return x

    out = await quick.invoke('{"x": 3}', context(tmp_path))
    assert (quick.name, out.text, threads) == ("quick", "3", [threading.get_ident()])


Build = Callable[[Callable[..., Any]], Tool[Any]]


@pytest.mark.anyio
@pytest.mark.parametrize(
    "build",
    [function_tool, lambda fn: function_tool(fn, blocking=False)],
    ids=["worker-thread", "on-the-loop"],
)
async def test_an_exception_in_a_sync_tool_is_a_tool_error_wherever_it_runs(
    tmp_path: Path, build: Build
) -> None:
    out = await build(failing).invoke('{"x": 7}', context(tmp_path))
    assert (out.success, out.text) == (False, "failing failed: RuntimeError: no luck with 7")


@pytest.mark.anyio
async def test_an_async_tool_declared_quick_is_awaited_as_before(tmp_path: Path) -> None:
    async def double(x: int) -> dict[str, int]:
        """Doubles x."""
        return {"x": 2 * x}

    out = await function_tool(double, blocking=False).invoke('{"x": 4}', context(tmp_path))
    assert (out.success, out.text) == (True, '{"x": 8}')
