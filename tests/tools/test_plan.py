"""update_plan: a checked plan goes to the event stream; a bad one is refused and not emitted."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from corral.tools import PermissionProfile, ToolCall, ToolContext, ToolRegistry
from corral.tools._plan import update_plan_tool


class RecordingEvents:
    """An event sink that keeps what it was given."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def emit(self, kind: str, payload: Mapping[str, Any]) -> None:
        self.events.append((kind, dict(payload)))


def _ctx(tmp_path: Path, events: RecordingEvents) -> ToolContext:
    return ToolContext(cwd=tmp_path, profile=PermissionProfile(), events=events)


async def _call(tmp_path: Path, events: RecordingEvents, args: dict[str, Any]) -> tuple[bool, str]:
    registry = ToolRegistry([update_plan_tool()])
    out = await registry.dispatch(
        ToolCall("c1", "update_plan", json.dumps(args)), _ctx(tmp_path, events)
    )
    return out.success, out.text


def test_update_plan_is_a_serial_tool_that_changes_nothing_on_disk() -> None:
    tool = update_plan_tool()
    assert (tool.name, tool.mutating, tool.parallel) == ("update_plan", False, False)


@pytest.mark.anyio
async def test_plan_is_emitted_as_a_plan_updated_event(tmp_path: Path) -> None:
    events = RecordingEvents()
    plan = [
        {"step": "Read the failing test", "status": "completed"},
        {"step": "Fix the parser", "status": "in_progress"},
        {"step": "Run the suite", "status": "pending"},
    ]
    answer = await _call(tmp_path, events, {"explanation": "found the bug", "plan": plan})
    assert answer == (True, "Plan updated")
    assert events.events == [("plan_updated", {"explanation": "found the bug", "plan": plan})]


@pytest.mark.anyio
async def test_two_steps_in_progress_are_refused_and_not_emitted(tmp_path: Path) -> None:
    events = RecordingEvents()
    plan = [{"step": "a", "status": "in_progress"}, {"step": "b", "status": "in_progress"}]
    success, text = await _call(tmp_path, events, {"plan": plan})
    assert not success
    assert text == (
        "update_plan: at most one step may be in_progress, but 2 are: 'a', 'b'; "
        "the plan was not changed"
    )
    assert events.events == []


@pytest.mark.anyio
async def test_unknown_status_and_blank_steps_are_refused(tmp_path: Path) -> None:
    events = RecordingEvents()
    bad_status = await _call(tmp_path, events, {"plan": [{"step": "a", "status": "done"}]})
    blank = await _call(tmp_path, events, {"plan": [{"step": "  ", "status": "pending"}]})
    assert not bad_status[0]
    assert bad_status[1].startswith(
        "invalid arguments for update_plan: plan.0.status: Input should be"
    )
    assert blank == (False, "update_plan: step 1 has no text; the plan was not changed")
    assert events.events == []
