"""corral's MCP tools: their names, descriptions and strict input schemas, and one dispatch.

Start tools (`corral_fanout`, `corral_review`, `corral_triage`, `corral_exec`) answer as soon as
the run is admitted, with its id and resource links (`corral://runs/{id}`, `…/results`,
`…/report`); with `wait_seconds` they first wait that long for it to end, sending progress
notifications when the call carried a progressToken. `corral_status` waits the same way.
A refused call (bad arguments, a folder or sandbox past the server's allow-lists, a full queue)
is a tool error whose one line says what to change, never a protocol error.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from pydantic import BaseModel, ValidationError

from corral.tools import CorralError

from ._core import McpRuns, Progress
from ._inputs import (
    ExecArgs,
    FanoutArgs,
    ResultsArgs,
    ReviewArgs,
    RunArgs,
    RunsArgs,
    StatusArgs,
    TriageArgs,
    tool_schema,
)
from ._requests import StartArgs, first_problem
from ._views import run_uri

logger = logging.getLogger(__name__)

Handler = Callable[[McpRuns, Any, Progress], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class CorralTool:
    name: str
    args: type[BaseModel]
    description: str
    handler: Handler
    read_only: bool = False

    def spec(self) -> types.Tool:
        hints = types.ToolAnnotations(read_only_hint=self.read_only, open_world_hint=False)
        return types.Tool(
            name=self.name,
            description=self.description,
            input_schema=tool_schema(self.args),
            annotations=hints,
        )


async def _start(runs: McpRuns, args: StartArgs, report: Progress) -> dict[str, Any]:
    run_id = await runs.start(args)
    await runs.wait(run_id, args.wait_seconds, report)
    return await runs.views.state(run_id)


async def _status(runs: McpRuns, args: StatusArgs, report: Progress) -> dict[str, Any]:
    await runs.views.state(args.run_id)  # an unknown run is refused before any wait
    await runs.wait(args.run_id, args.wait_seconds, report)
    return await runs.views.state(args.run_id)


async def _results(runs: McpRuns, args: ResultsArgs, report: Progress) -> dict[str, Any]:
    return await runs.views.results(args.run_id, args.offset, args.limit)


async def _cancel(runs: McpRuns, args: RunArgs, report: Progress) -> dict[str, Any]:
    return await runs.cancel(args.run_id)


async def _runs(runs: McpRuns, args: RunsArgs, report: Progress) -> dict[str, Any]:
    return await runs.runs(args)


_STARTS = (
    "Answers at once with the run id and resource links (corral://runs/{id}, /results, "
    "/report); set wait_seconds to wait for the end with progress notifications."
)
TOOLS: tuple[CorralTool, ...] = (
    CorralTool(
        "corral_fanout",
        FanoutArgs,
        "Fan a job out to one corral worker agent per item (hundreds at once, budgeted, "
        "journaled): each worker gets the template filled with its item and must report a "
        f"result matching result_schema. Items inline or as a JSON Lines file. {_STARTS}",
        _start,
    ),
    CorralTool(
        "corral_review",
        ReviewArgs,
        "Review a git range (BASE..HEAD) or a unified diff with parallel read-only reviewer "
        f"agents; the report (findings, Markdown, SARIF) is the run's report. {_STARTS}",
        _start,
    ),
    CorralTool(
        "corral_triage",
        TriageArgs,
        "Triage issues (gh issue list --json objects) against a label set: labels, type, "
        f"priority and duplicates for each, as the run's report. {_STARTS}",
        _start,
    ),
    CorralTool(
        "corral_exec",
        ExecArgs,
        f"Run one corral agent on a task in a working folder, in a role. {_STARTS}",
        _start,
    ),
    CorralTool(
        "corral_status",
        StatusArgs,
        "A run's status, item counts, tokens and cost; with wait_seconds, wait for it to end "
        "first, with progress notifications.",
        _status,
        read_only=True,
    ),
    CorralTool(
        "corral_results",
        ResultsArgs,
        "One page of a run's item results (index, status, result, error); next_offset gives "
        "the next page, null at the end.",
        _results,
        read_only=True,
    ),
    CorralTool("corral_cancel", RunArgs, "Cancel a run this server is executing.", _cancel),
    CorralTool(
        "corral_runs",
        RunsArgs,
        "The runs in corral's journal, newest first, optionally only those with one status.",
        _runs,
        read_only=True,
    ),
)
BY_NAME = {tool.name: tool for tool in TOOLS}


async def call_tool(
    runs: McpRuns, name: str, arguments: dict[str, Any] | None, report: Progress
) -> types.CallToolResult:
    """Carry out one tool call; every refusal is a tool error with one line for the caller."""
    tool = BY_NAME.get(name)
    if tool is None:
        return _error(f"no tool {name!r}; the tools are {', '.join(BY_NAME)}")
    try:
        args = tool.args.model_validate(arguments or {})
    except ValidationError as exc:
        return _error(f"invalid arguments for {name}: {first_problem(exc)}")
    try:
        answer = await tool.handler(runs, args, report)
    except CorralError as exc:
        return _error(f"{name}: {exc}")
    return _answer(answer)


def _answer(answer: dict[str, Any]) -> types.CallToolResult:
    content: list[types.ContentBlock] = [types.TextContent(type="text", text=json.dumps(answer))]
    run_id = answer.get("run_id")
    if isinstance(run_id, str) and "links" in answer:
        for part in ("", "results", "report"):
            content.append(
                types.ResourceLink(
                    type="resource_link",
                    name=f"{run_id} {part or 'state'}",
                    uri=run_uri(run_id, part),
                    mime_type="application/json",
                )
            )
    return types.CallToolResult(content=content, structured_content=answer)


def _error(message: str) -> types.CallToolResult:
    text = types.TextContent(type="text", text=message)
    return types.CallToolResult(content=[text], is_error=True)
