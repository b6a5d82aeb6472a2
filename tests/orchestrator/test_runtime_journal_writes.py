"""How many journal writes an agent's life costs in a run's runtime: its row, the note of its
start and (for a root with no lifecycle hooks) its task in one; each response one, the end of
the turn with it; each tool result one; the note of its end one. Each write is a transaction
and, on SQLite, two thread hand-offs, which one agent at a time pays in full."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import MemoryStore, RunnerHooks, RunRecord

from .test_supervisor import RUN_ID, WAIT, call, open_supervised_run, outputs, start_root

pytestmark = pytest.mark.anyio


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    return root


class WriteLog(MemoryStore):
    """The in-memory journal, noting each write and the events it carried."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []

    async def create_agent(self, agent: Any, *, events: Any = ()) -> Any:
        self.writes.append("create_agent " + " ".join(kind for kind, _ in events))
        return await super().create_agent(agent, events=events)

    async def append_event(self, agent_id: str, kind: str, *args: Any, **kwargs: Any) -> Any:
        self.writes.append(f"append_event {kind}")
        return await super().append_event(agent_id, kind, *args, **kwargs)

    async def append_events(self, agent_id: str, events: Any, **kwargs: Any) -> Any:
        ends = "status" in (kwargs.get("agent_update") or {})
        self.writes.append("append_events" + (" +end" if ends else ""))
        return await super().append_events(agent_id, events, **kwargs)

    async def ledger_finish(self, *args: Any, **kwargs: Any) -> Any:
        self.writes.append("ledger_finish")
        return await super().ledger_finish(*args, **kwargs)

    async def update_agent(self, *args: Any, **kwargs: Any) -> None:
        self.writes.append("update_agent")
        await super().update_agent(*args, **kwargs)


class Seen(RunnerHooks):
    def __init__(self) -> None:
        self.events: list[tuple[int, str]] = []

    def event(self, agent_id: str, seq: int, kind: str, payload: Mapping[str, Any]) -> None:
        self.events.append((seq, kind))


def waits_once(request: dict[str, Any]) -> Any:
    """One tool call (a wait on no worker answers at once), then the answer."""
    if not outputs(request):
        return [call("w1", "wait_agent", targets=[], timeout_ms=10)]
    return "done"


async def test_a_root_agents_row_start_note_and_task_are_one_write(workspace: Path) -> None:
    store, seen = WriteLog(), Seen()
    await store.create_run(
        RunRecord(
            run_id=RUN_ID, kind="exec", status="running", created_at=0, updated_at=0, config={}
        )
    )
    async with open_supervised_run(waits_once, workspace, store=store, hooks=seen) as (rt, _):
        root = await start_root(rt, workspace, "wait once", stay_open=False)
        with anyio.fail_after(WAIT):
            await root.ended.wait()

    assert store.writes == [
        "create_agent agent_started user_input",
        "append_events",
        "ledger_finish",
        "append_events +end",
        "append_event agent_finished",
    ]
    journaled = [(e.seq, e.kind) for e in await store.events(root.agent_id)]
    assert journaled[:2] == [(1, "agent_started"), (2, "user_input")]
    assert journaled[-1][1] == "agent_finished"
    assert seen.events == journaled  # every event reached the hooks once, in order
    record = await store.get_agent(root.agent_id)
    assert record is not None
    assert (record.status, record.final_message) == ("completed", "done")
