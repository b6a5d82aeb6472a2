"""A destructive MCP tool waits for approval over HTTP: approved through the API in one run,
refused by the deadline in another; a read-only one runs unasked."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest

from corral.agents import ServiceConfig
from corral.orchestrator.service import CorralClient, ServerEvent
from corral.tools import SandboxMode

from ..orchestrator.mcp_servers import ANNOTATED_SERVER
from ._harness import TOKEN, WAIT, Harness, open_service, outputs

pytestmark = pytest.mark.anyio


class Caller:
    """A model that calls `tools` of the `srv` MCP server, one per turn, then finishes."""

    def __init__(self, *tools: str) -> None:
        self.tools = tools
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: dict[str, Any]) -> Any:
        self.requests.append(request)
        done = len(outputs(request))
        if done == len(self.tools):
            return "finished"
        name = f"mcp__srv__{self.tools[done]}"
        return [{"type": "function_call", "name": name, "arguments": json.dumps({"target": "db"})}]

    def told(self) -> list[str]:
        return outputs(self.requests[-1])


def mcp_request(service: Harness, timeout_sec: float) -> dict[str, Any]:
    return {
        "kind": "exec",
        "task": "call the tools",
        "base_url": service.model_url,
        "cd": str(service.cwd),
        "sandbox": "read-only",
        "config": [
            'approval_policy="on-request"',
            f"shell.approval_timeout_sec={timeout_sec}",
            f"mcp_servers.srv.command={json.dumps(sys.executable)}",
            f"mcp_servers.srv.args=[{json.dumps(str(ANNOTATED_SERVER))}]",
        ],
    }


def allowing(tmp_path: Path) -> ServiceConfig:
    return ServiceConfig(
        allowed_roots=(tmp_path,), max_sandbox=SandboxMode.FULL_ACCESS, allow_mcp_overrides=True
    )


async def run_answering(
    tmp_path: Path, model: Caller, timeout_sec: float, decision: Literal["approve"] | None
) -> list[ServerEvent]:
    seen: list[ServerEvent] = []
    async with (
        open_service(tmp_path, model, service=allowing(tmp_path)) as service,
        CorralClient(service.url, TOKEN) as client,
    ):
        run_id = (await client.submit(mcp_request(service, timeout_sec)))["id"]
        with anyio.fail_after(WAIT * 2):
            async for event in client.events(run_id):
                seen.append(event)
                if event.event == "approval_requested" and decision is not None:
                    await client.answer(event.data["payload"]["approval_id"], decision)
    return seen


async def test_a_destructive_tool_runs_once_approved_over_http_and_a_read_only_one_unasked(
    tmp_path: Path,
) -> None:
    model = Caller("peek", "wipe")
    seen = await run_answering(tmp_path, model, WAIT, "approve")
    asked = [e.data["payload"] for e in seen if e.event == "approval_requested"]
    assert model.told() == ["peek ran", "wipe ran"]
    assert [(a["kind"], a["reason"]) for a in asked] == [
        ("mcp_tool", "the server marks this tool destructive")
    ]
    assert seen[-1].data["status"] == "completed"


async def test_an_unanswered_destructive_call_is_refused_at_the_deadline(tmp_path: Path) -> None:
    model = Caller("wipe")
    seen = await run_answering(tmp_path, model, 0.3, None)
    assert model.told() == [
        "mcp__srv__wipe was not called: approval was denied (no answer within 0.3 s)"
    ]
    answered = next(e for e in seen if e.event == "approval_answered").data["payload"]
    assert answered["who"] == "deadline"
