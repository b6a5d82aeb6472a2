"""An MCP server that lists a flood of tools, in one page or many: at most `MAX_TOOLS` of them
are offered (its first, in its order), with a warning that names the server, so one server
cannot make every index build and every request that carries its tools as large as it likes."""

from __future__ import annotations

import sys

import anyio
import pytest

from corral.agents import McpServerConfig
from corral.orchestrator.services.mcp import open_mcp_manager
from corral.orchestrator.services.mcp._connection import MAX_TOOLS

from .mcp_servers import HERE

pytestmark = [pytest.mark.anyio, pytest.mark.hostile, pytest.mark.timeout(120)]
WAIT = 60.0


def crowded(tools: int, pages: int) -> McpServerConfig:
    script = str(HERE / "crowded_server.py")
    return McpServerConfig(command=sys.executable, args=(script, str(tools), str(pages)))


@pytest.mark.parametrize(
    ("tools", "pages"),
    [(MAX_TOOLS + 1, 1), (5 * MAX_TOOLS, 1), (5 * MAX_TOOLS, 50), (2 * MAX_TOOLS, 100)],
    ids=["one past, one page", "five times, one page", "five times, 50 pages", "100 pages"],
)
async def test_a_server_listing_too_many_tools_offers_only_its_first(
    tools: int, pages: int, caplog: pytest.LogCaptureFixture
) -> None:
    with anyio.fail_after(WAIT):
        async with open_mcp_manager({"flood": crowded(tools, pages)}) as manager:
            offered = manager.offered()
    assert len(offered) == MAX_TOOLS
    assert {o.raw_name for o in offered} == {f"tool_{n}" for n in range(MAX_TOOLS)}
    assert any("flood" in r.message and "more than" in r.message for r in caplog.records)


async def test_a_server_at_the_cap_is_offered_whole_without_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with anyio.fail_after(WAIT):
        async with open_mcp_manager({"full": crowded(MAX_TOOLS, 3)}) as manager:
            offered = manager.offered()
    assert len(offered) == MAX_TOOLS
    assert not any("more than" in r.message for r in caplog.records)
