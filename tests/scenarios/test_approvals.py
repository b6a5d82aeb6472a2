"""Approvals on each executor: escalated commands approved, denied and left unanswered past
their deadline; an agent whose wall-time budget runs out while it waits for an answer; and a
fan-out item's ask. Deadlines are `executor.long_s`: an hour on Temporal's time-skipping server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import AgentStatus, CorralConfig, open_sqlite_store
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.runs import ExecJob, FanoutJob
from corral.tools import CorralError
from tests._scripted import call, outputs

from ._seam import WAIT, Seam

pytestmark = pytest.mark.anyio

ESCALATIONS = ("esc-a", "esc-b", "esc-c")
DENIED = "the command was not run: approval was denied"


def escalate(call_id: str) -> dict[str, Any]:
    name = call_id[-1]
    arguments = {
        "command": f"echo {name} > {name}.txt",
        "escalate": True,
        "justification": f"may I write {name}.txt?",
    }
    return call(call_id, "shell", arguments)


def ask_three(request: dict[str, Any]) -> Any:
    """Three escalated commands in one batch, then a summary of what came back."""
    done = outputs(request)
    if not done:
        return [escalate(call_id) for call_id in ESCALATIONS]
    return "answers: " + json.dumps(done)


def config_for(home: Path, base_url: str, *, approval_s: float, wall_s: float | None) -> Any:
    return CorralConfig(
        home=home,
        base_url=base_url,
        approval_policy="on-request",
        shell={"approval_timeout_sec": approval_s},
        budgets={"max_wall_time_s": wall_s},
    )


async def test_one_approved_one_denied_and_one_unanswered_until_its_deadline(
    executor: Seam, tmp_path: Path
) -> None:
    home, cwd, run_id = tmp_path / "home", tmp_path / "ws", executor.run_id("run-ask")
    cwd.mkdir()
    job = ExecJob(task="write three files", cwd=cwd, run_id=run_id)
    async with serve_model_server(ask_three) as model:
        config = config_for(home, model.base_url, approval_s=executor.long_s, wall_s=None)
        async with executor.serving(config), anyio.create_task_group() as tg:
            release = executor.stop_time()

            async def answer_two() -> None:
                asks = {ask.command: ask for ask in await executor.asks(3)}
                await executor.answer(asks["echo a > a.txt"], True, "fine by me")
                await executor.answer(asks["echo b > b.txt"], False, "not a.txt's job")
                with pytest.raises(CorralError, match="approved"):
                    await executor.answer(asks["echo a > a.txt"], False, "changed my mind")
                release()  # the deadline of the third passes from here

            tg.start_soon(answer_two)
            with anyio.fail_after(WAIT):
                outcome = await executor.run(job, executor.setup(run_id), config)
            await executor.replay(run_id, "approval")
        last = model.requests[-1]["normalised"]
    assert outcome.finish.status is AgentStatus.COMPLETED
    answers = outputs(last)
    assert answers["esc-a"].startswith("Exit code: 0")
    assert answers["esc-b"] == f"{DENIED} (not a.txt's job)"
    assert answers["esc-c"] == f"{DENIED} (no answer within {executor.long_s:g} s)"
    assert (cwd / "a.txt").read_text() == "a\n"
    assert not (cwd / "b.txt").exists() and not (cwd / "c.txt").exists()
    async with open_sqlite_store(home / "journal.sqlite") as store:
        events = await store.events(outcome.agent_id)
    answered = [e.payload for e in events if e.kind == "approval_answered"]
    assert [(a["decision"], a["who"]) for a in answered] == [
        ("approve", "api"),
        ("deny", "api"),
        ("deny", "deadline"),
    ]
    assert [e.seq for e in events] == list(range(1, len(events) + 1))


def ask_once(request: dict[str, Any]) -> Any:
    return [escalate("esc-a")] if not outputs(request) else "answered"


async def test_the_wall_time_budget_ends_an_agent_still_waiting_for_its_approval(
    executor: Seam, tmp_path: Path
) -> None:
    home, cwd, run_id = tmp_path / "home", tmp_path / "ws", executor.run_id("run-slow")
    cwd.mkdir()
    long_s = executor.long_s
    async with serve_model_server(ask_once) as model:
        config = config_for(home, model.base_url, approval_s=2 * long_s, wall_s=long_s)
        async with executor.serving(config):
            with anyio.fail_after(WAIT):
                outcome = await executor.run(
                    ExecJob(task="write a", cwd=cwd, run_id=run_id), executor.setup(run_id), config
                )
    assert outcome.finish.status is AgentStatus.BUDGET_EXCEEDED
    assert outcome.finish.error == f"wall-time budget exceeded: {long_s:g} s"
    assert len(model.requests) == 1, "the model was not asked again"
    assert not (cwd / "a.txt").exists()


def item_asks(request: dict[str, Any]) -> Any:
    """A fan-out worker escalates once, then reports n = 1 and ends."""
    done = outputs(request)
    if not done:
        return [escalate("esc-a")]
    if "report" not in done:
        return [call("report", "report_result", {"n": 1})]
    return "reported"


async def test_a_fanout_items_approval_is_answered_and_its_command_runs(
    executor: Seam, tmp_path: Path
) -> None:
    home, cwd, run_id = tmp_path / "home", tmp_path / "ws", executor.run_id("run-items")
    cwd.mkdir()
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    job = FanoutJob(
        items=({"n": 1},), template="Item {n}", result_schema=schema, cwd=cwd, run_id=run_id
    )
    async with serve_model_server(item_asks) as model:
        config = config_for(home, model.base_url, approval_s=executor.long_s, wall_s=None)
        async with executor.serving(config), anyio.create_task_group() as tg:
            release = executor.stop_time()  # no time may pass while the answer is on its way

            async def approve() -> None:
                (ask,) = await executor.asks(1)
                await executor.answer(ask, True, "go ahead")

            tg.start_soon(approve)
            with anyio.fail_after(WAIT):
                outcome = await executor.run(job, executor.setup(run_id), config)
            release()
    assert [(i.status, i.result) for i in outcome.items] == [("done", {"n": 1})]
    assert (cwd / "a.txt").read_text() == "a\n"
