"""Approvals over HTTP: a run asks; a client approves or denies; silence past a deadline denies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import MemoryStore, ServiceConfig
from corral.orchestrator.service import ApprovalClosed, CorralClient, ServerEvent
from corral.orchestrator.service._approvals import ApprovalBoard
from corral.tools import ApprovalKind, ApprovalRequest, SandboxMode, request_approval
from tests._journal import seed_agent

from ._harness import TOKEN, WAIT, Harness, open_service, outputs

pytestmark = pytest.mark.anyio


class Asker:
    """A model that asks to run `commands` outside the sandbox, one per turn, then finishes.

    Every request it receives is kept, so a test can see what the agent was told.
    """

    def __init__(self, *commands: list[str]) -> None:
        self.commands = commands
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: dict[str, Any]) -> Any:
        self.requests.append(request)
        done = len(outputs(request))
        if done == len(self.commands):
            return "finished"
        arguments = {
            "command": self.commands[done],
            "escalate": True,
            "justification": f"May I run step {done + 1} outside the sandbox?",
        }
        return [{"type": "function_call", "name": "shell", "arguments": json.dumps(arguments)}]

    def told(self) -> list[str]:
        """The tool outputs the model received, in order."""
        return outputs(self.requests[-1])


def escalating(tmp_path: Path) -> ServiceConfig:
    """A server whose token holders may approve commands outside the sandbox."""
    return ServiceConfig(allowed_roots=(tmp_path,), max_sandbox=SandboxMode.FULL_ACCESS)


def exec_request(service: Harness, timeout_sec: float) -> dict[str, Any]:
    return {
        "kind": "exec",
        "task": "run the steps",
        "base_url": service.model_url,
        "cd": str(service.cwd),
        "config": [
            'approval_policy="on-request"',
            f"shell.approval_timeout_sec={timeout_sec}",
        ],
    }


async def test_an_approved_command_runs_and_a_denied_one_tells_the_model_why(
    tmp_path: Path,
) -> None:
    model = Asker(["echo", "ran-outside-the-sandbox"], ["echo", "never-printed"])
    seen: list[ServerEvent] = []
    pending: list[list[dict[str, Any]]] = []
    answers: list[dict[str, Any]] = []
    async with (
        open_service(tmp_path, model, service=escalating(tmp_path)) as service,
        CorralClient(service.url, TOKEN) as client,
    ):
        run_id = (await client.submit(exec_request(service, WAIT)))["id"]
        with anyio.fail_after(WAIT):
            async for event in client.events(run_id):
                seen.append(event)
                if event.event != "approval_requested":
                    continue
                pending.append(await client.approvals(run_id, state="pending"))
                approval_id = event.data["payload"]["approval_id"]
                if len(answers) == 0:
                    answers.append(await client.answer(approval_id, "approve"))
                else:
                    answers.append(await client.answer(approval_id, "deny", "not on a Friday"))
        listed = await client.approvals(run_id)
    first, second = model.told()
    assert "ran-outside-the-sandbox" in first
    assert "approval was denied (not on a Friday)" in second
    assert "never-printed" not in second
    assert [[a["command"] for a in p] for p in pending] == [
        ["echo ran-outside-the-sandbox"],
        ["echo never-printed"],
    ]
    assert pending[0][0]["reason"] == "May I run step 1 outside the sandbox?"
    assert pending[0][0]["agent_id"] and pending[0][0]["kind"] == "escalate"
    assert [a["state"] for a in answers] == ["approved", "denied"]
    assert [a["state"] for a in listed] == ["approved", "denied"]
    notes = [e.data["payload"] for e in seen if e.event == "approval_answered"]
    assert [(n["decision"], n["who"]) for n in notes] == [("approve", "api"), ("deny", "api")]
    assert notes[1]["reason"] == "not on a Friday"
    assert (seen[-1].event, seen[-1].data["status"]) == ("end", "completed")


async def test_an_unanswered_approval_expires_as_a_denial_and_refuses_a_late_answer(
    tmp_path: Path,
) -> None:
    model = Asker(["echo", "too-late"])
    seen: list[ServerEvent] = []
    async with (
        open_service(tmp_path, model, service=escalating(tmp_path)) as service,
        CorralClient(service.url, TOKEN) as client,
    ):
        run_id = (await client.submit(exec_request(service, 0.3)))["id"]
        with anyio.fail_after(WAIT):
            seen = [e async for e in client.events(run_id)]
        requested = next(e for e in seen if e.event == "approval_requested").data["payload"]
        with pytest.raises(ApprovalClosed, match=r"409: approval apr_[0-9a-f]+ is expired"):
            await client.answer(requested["approval_id"], "approve")
        (expired,) = await client.approvals(run_id, state="expired")
        still_pending = await client.approvals(run_id, state="pending")
    answered = next(e for e in seen if e.event == "approval_answered").data["payload"]
    assert model.told() == ["the command was not run: approval was denied (no answer within 0.3 s)"]
    assert answered == {
        "approval_id": requested["approval_id"],
        "decision": "deny",
        "reason": "no answer within 0.3 s",
        "who": "deadline",
    }
    assert requested["deadline"] > seen[0].data["at"]
    assert expired["decision_reason"] == "no answer within 0.3 s" and still_pending == []
    assert seen[-1].data["status"] == "completed"


async def test_answers_to_unknown_approvals_or_with_bad_bodies_are_refused(
    tmp_path: Path,
) -> None:
    async with open_service(tmp_path, lambda request: "idle") as service:
        unknown = await service.http.post("/v1/approvals/apr_0", json={"decision": "approve"})
        bad = await service.http.post("/v1/approvals/apr_0", json={"decision": "maybe"})
        no_run = await service.http.get("/v1/runs/run-none/approvals")
        bad_state = await service.http.get("/v1/runs/run-none/approvals?state=later")
    assert unknown.status_code == 404 and "no approval apr_0" in unknown.json()["error"]
    assert bad.status_code == 422 and bad.json()["errors"][0]["loc"] == ["decision"]
    assert no_run.status_code == 404
    assert bad_state.status_code == 422


async def test_an_approval_pending_when_its_run_is_cancelled_is_journaled_as_expired() -> None:
    store, journaled = MemoryStore(), anyio.Event()
    await seed_agent(store, "a1")
    board = ApprovalBoard()
    approver = board.approver("r", store, journaled.set)
    req = ApprovalRequest("shell", "make deploy", Path("/w"), "May I?", ApprovalKind.ESCALATE, "a1")
    async with anyio.create_task_group() as tg:
        tg.start_soon(request_approval, approver, req)
        with anyio.fail_after(WAIT):
            await journaled.wait()
        tg.cancel_scope.cancel()
    (approval,) = board.list("r")
    with pytest.raises(ApprovalClosed, match=r"is expired \(the run was cancelled\)"):
        board.answer(approval.approval_id, approve=True)
    notes = [(e.kind, e.payload) for e in await store.events("a1")]
    assert approval.state == "expired" and board.pending("r") == ()
    assert notes[1] == (
        "approval_answered",
        {
            "approval_id": approval.approval_id,
            "decision": "deny",
            "reason": "the run was cancelled",
            "who": "cancel",
        },
    )
    assert notes[0][1]["command"] == "make deploy" and notes[0][1]["deadline"] is not None
