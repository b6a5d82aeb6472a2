"""Agents on Temporal get what a local run gives them: the worker's MCP tools (offered directly,
or found with `tool_search` above the threshold) and the skills matched to their task.

Each test runs a time-skipping test server, a corral worker in this process with a real
`mcp-server-time` behind it (or a skill in its home), and the scripted model server.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import AgentStatus, CorralConfig, McpServerConfig
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.runs import ExecJob, FanoutJob, RunSetup
from corral.orchestrator.temporal import ActivityPolicy, TemporalExecutor, TemporalSettings

from ._harness import WAIT, call, in_process_worker, outputs, time_skipping

pytestmark = pytest.mark.anyio

POLICY = ActivityPolicy(heartbeat_s=2.0, host_start_s=10.0)
TIME_TOOL = "mcp__time__get_current_time"
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
TEMPLATE = "Item {n}: ask the time server for the time in UTC, then report n."
_ITEM = re.compile(r"Item (\d+):")
TIME_SERVER = McpServerConfig(
    command=sys.executable, args=("-m", "mcp_server_time", "--local-timezone", "UTC")
)
SKILL = """---
name: release-notes
description: Write release notes for a version from the merged pull requests and commits.
---
# Release notes

1. List the merged pull requests since the last tag.
2. Group them into features, fixes and chores.
"""


def tool_names(request: dict[str, Any]) -> list[str]:
    return [tool["name"] for tool in request["tools"]]


def messages(request: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (item["role"], "".join(part.get("text", "") for part in item["content"]))
        for item in request["input"]
        if item.get("type") == "message"
    ]


def ask_the_time_then_report(request: dict[str, Any]) -> Any:
    """A fan-out item: the time tool, then `report_result`, then one line."""
    item = int(_ITEM.findall(json.dumps(request["input"]))[-1])
    done = outputs(request)
    if not done:
        return [call("time", TIME_TOOL, {"timezone": "UTC"})]
    if len(done) == 1:
        return [call("report", "report_result", {"n": item})]
    return f"item {item} reported"


def search_then_ask_the_time(request: dict[str, Any]) -> Any:
    """Find the time tool with `tool_search` first if it is not offered, then call it."""
    done = outputs(request)
    if TIME_TOOL not in tool_names(request) and not done:
        return [call("search", "tool_search", {"query": "current time in a timezone"})]
    if "time" not in done:
        return [call("time", TIME_TOOL, {"timezone": "UTC"})]
    return "the time is: " + done["time"]


async def test_a_fanout_item_on_temporal_calls_an_mcp_tool_and_reads_its_answer(
    tmp_path: Path,
) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    async with serve_model_server(ask_the_time_then_report) as model, time_skipping() as env:
        config = CorralConfig(home=home, base_url=model.base_url, mcp_servers={"time": TIME_SERVER})
        async with in_process_worker(env.client, config):
            ex = TemporalExecutor(TemporalSettings(address="test"), POLICY, env.client)
            with anyio.fail_after(WAIT):
                done = await ex.run_fanout(
                    config,
                    FanoutJob(
                        items=tuple([{"n": 7}]),
                        template=TEMPLATE,
                        result_schema=SCHEMA,
                        cwd=workspace,
                        run_id="run-mcp",
                    ),
                )
        requests = [r["normalised"] for r in model.requests]
    assert [(i.status, i.result) for i in done.outcome.items] == [("done", {"n": 7})]
    first, second, *_ = requests
    assert tool_names(first)[-2:] == ["mcp__time__convert_time", TIME_TOOL]
    assert "report_result" in tool_names(first) and "tool_search" not in tool_names(first)
    answer = json.loads(outputs(second)["time"])
    assert answer["timezone"] == "UTC" and "datetime" in answer


async def test_above_the_threshold_an_agent_on_temporal_finds_the_tool_with_tool_search(
    tmp_path: Path,
) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    async with serve_model_server(search_then_ask_the_time) as model, time_skipping() as env:
        config = CorralConfig(
            home=home,
            base_url=model.base_url,
            mcp_servers={"time": TIME_SERVER},
            tool_search_threshold=0,
        )
        async with in_process_worker(env.client, config):
            ex = TemporalExecutor(TemporalSettings(address="test"), POLICY, env.client)
            with anyio.fail_after(WAIT):
                outcome = await ex.run_single(
                    config, ExecJob(task="what time is it?", cwd=workspace), RunSetup(env={})
                )
        first, second, third = (r["normalised"] for r in model.requests)
    assert "tool_search" in tool_names(first) and TIME_TOOL not in tool_names(first)
    assert tool_names(second)[: len(tool_names(first))] == tool_names(first), "appended only"
    assert TIME_TOOL in tool_names(second)
    assert outcome.finish.status is AgentStatus.COMPLETED
    assert outcome.finish.message is not None and '"datetime"' in outcome.finish.message
    assert '"datetime"' in outputs(third)["time"]


async def test_an_agent_on_temporal_sees_matching_skills_and_the_body_of_a_mentioned_one(
    tmp_path: Path,
) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    (home / "skills" / "release-notes").mkdir(parents=True)
    (home / "skills" / "release-notes" / "SKILL.md").write_text(SKILL)
    task = "Use $release-notes to draft the notes for version 2.1"
    async with serve_model_server(lambda r: "drafted") as model, time_skipping() as env:
        config = CorralConfig(home=home, base_url=model.base_url)
        async with in_process_worker(env.client, config):
            ex = TemporalExecutor(TemporalSettings(address="test"), POLICY, env.client)
            with anyio.fail_after(WAIT):
                outcome = await ex.run_single(
                    config, ExecJob(task=task, cwd=workspace), RunSetup(env={})
                )
        sent = messages(model.requests[0]["normalised"])
    assert outcome.finish.message == "drafted"
    listing = [(role, text) for role, text in sent if text.startswith("<skills_instructions>")]
    assert len(listing) == 1 and listing[0][0] == "developer"
    assert "release-notes" in listing[0][1]
    body = sent[sent.index(("user", task)) + 1]
    assert body[0] == "user" and body[1].startswith("<skill>")
    assert "Group them into features, fixes and chores." in body[1]
