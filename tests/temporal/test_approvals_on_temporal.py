"""Approvals and durable timers on Temporal's time-skipping server, where an hour takes
seconds: an approved, a denied and an unanswered escalation, and a wall-time budget that ends
an agent still waiting for its approval.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import AgentStatus, CorralConfig, open_sqlite_store
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.runs import ExecJob, FanoutJob, RunSetup
from corral.orchestrator.temporal import (
    ActivityPolicy,
    ApprovalRejected,
    TemporalExecutor,
    TemporalSettings,
    answer_approval,
    pending_approvals,
)

from ._harness import WAIT, call, in_process_worker, outputs, record, time_skipping

pytestmark = pytest.mark.anyio

HOUR = 3600.0
POLICY = ActivityPolicy(heartbeat_s=2.0, host_start_s=10.0)
ESCALATIONS = ("esc-a", "esc-b", "esc-c")


def escalate(call_id: str) -> dict[str, Any]:
    name = call_id[-1]
    return call(
        call_id,
        "shell",
        {
            "command": f"echo {name} > {name}.txt",
            "escalate": True,
            "justification": f"may I write {name}.txt?",
        },
    )


def ask_three(request: dict[str, Any]) -> Any:
    """Three escalated commands in one batch, then a summary of what came back."""
    done = outputs(request)
    if not done:
        return [escalate(call_id) for call_id in ESCALATIONS]
    return "answers: " + json.dumps(done)


class Asks:
    """Collects the `approval_requested` notes the workflows journal."""

    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.notes: list[dict[str, Any]] = []
        self.all_in = anyio.Event()

    def __call__(self, agent_id: str, events: list[dict[str, Any]]) -> None:
        self.notes += [e for e in events if e["kind"] == "approval_requested"]
        if len(self.notes) >= self.expected:
            self.all_in.set()

    def by_call(self) -> dict[str, dict[str, Any]]:
        return {note["call_id"]: note for note in self.notes}


def config_for(home: Path, base_url: str, *, approval_s: float, wall_s: float | None) -> Any:
    return CorralConfig(
        home=home,
        base_url=base_url,
        approval_policy="on-request",
        shell={"approval_timeout_sec": approval_s},
        budgets={"max_wall_time_s": wall_s},
    )


async def test_one_approved_one_denied_and_one_unanswered_for_an_hour(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "ws"
    cwd.mkdir()
    asks = Asks(expected=3)
    async with serve_model_server(ask_three) as model, time_skipping() as env:
        config = config_for(home, model.base_url, approval_s=HOUR, wall_s=None)
        async with in_process_worker(env.client, config, on_journal=asks):
            ex = TemporalExecutor(TemporalSettings(address="test"), POLICY, env.client)
            handle = await ex.start_single(
                config,
                ExecJob(task="write three files", cwd=cwd, run_id="run-ask"),
                RunSetup(env={}),
            )
            with anyio.fail_after(WAIT):
                await asks.all_in.wait()
                notes = asks.by_call()
                agent = notes["esc-a"]["workflow_id"]
                ids = {call_id: note["approval_id"] for call_id, note in notes.items()}
                await answer_approval(env.client, agent, ids["esc-a"], True, "fine by me")
                await answer_approval(env.client, agent, ids["esc-b"], False, "not a.txt's job")
                still = await pending_approvals(env.client, agent)
                with pytest.raises(ApprovalRejected, match="already approved"):
                    await answer_approval(env.client, agent, ids["esc-a"], False)
                with pytest.raises(ApprovalRejected, match="no approval 'nope'"):
                    await answer_approval(env.client, agent, "nope", True)
                output = await handle.result()  # the hour of silence passes here
            await record(env.client, "run-ask", "approval")
        last = model.requests[-1]["normalised"]
    assert [a.call_id for a in still] == ["esc-c"]
    assert output.root.status == "completed"
    answers = outputs(last)
    assert answers["esc-a"].startswith("Exit code: 0")
    denied = "the command was not run: approval was denied"
    assert answers["esc-b"] == f"{denied} (not a.txt's job)"
    assert answers["esc-c"] == f"{denied} (no answer within 3600 s)"
    assert (cwd / "a.txt").read_text() == "a\n"
    assert not (cwd / "b.txt").exists() and not (cwd / "c.txt").exists()
    async with open_sqlite_store(home / "journal.sqlite") as store:
        events = await store.events(output.root.agent_id)
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
    tmp_path: Path,
) -> None:
    home, cwd = tmp_path / "home", tmp_path / "ws"
    cwd.mkdir()
    async with serve_model_server(ask_once) as model, time_skipping() as env:
        config = config_for(home, model.base_url, approval_s=2 * HOUR, wall_s=HOUR)
        async with in_process_worker(env.client, config):
            ex = TemporalExecutor(TemporalSettings(address="test"), POLICY, env.client)
            with anyio.fail_after(WAIT):
                outcome = await ex.run_single(
                    config, ExecJob(task="write a", cwd=cwd, run_id="run-slow"), RunSetup(env={})
                )
    assert outcome.finish.status is AgentStatus.BUDGET_EXCEEDED
    assert outcome.finish.error == "wall-time budget exceeded: 3600 s"
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


async def test_a_fanout_items_approval_is_answered_on_the_items_workflow(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "ws"
    cwd.mkdir()
    asks = Asks(expected=1)
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    async with serve_model_server(item_asks) as model, time_skipping() as env:
        config = config_for(home, model.base_url, approval_s=HOUR, wall_s=None)
        ex = TemporalExecutor(TemporalSettings(address="test"), POLICY, env.client)

        async def approve() -> None:
            await asks.all_in.wait()
            note = asks.notes[0]
            await answer_approval(env.client, note["workflow_id"], note["approval_id"], True)

        # No time may pass while the answer is on its way: the hour must not run out first.
        with env.auto_time_skipping_disabled(), anyio.fail_after(WAIT):
            async with (
                in_process_worker(env.client, config, on_journal=asks),
                anyio.create_task_group() as tg,
            ):
                tg.start_soon(approve)
                done = await ex.run_fanout(
                    config,
                    FanoutJob(
                        items=tuple([{"n": 1}]),
                        template="Item {n}",
                        result_schema=schema,
                        cwd=cwd,
                        run_id="run-items",
                    ),
                )
    assert asks.notes[0]["workflow_id"] == "run-items.item-0"
    assert [(i.status, i.result) for i in done.outcome.items] == [("done", {"n": 1})]
    assert (cwd / "a.txt").read_text() == "a\n"
