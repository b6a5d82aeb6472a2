"""Approvals inside an agent's workflow: pending asks, their answers, and the client side.

`ApprovalBook` is workflow state: the asks a tool batch handed back, and each one's answer,
given through the workflow's `approve` update (whose validator calls `check`) or made a denial
when the deadline's durable timer fires. `answer_approval` is what a client (the HTTP service)
calls; `pending_approvals` reads the workflow's query. Both name the agent's workflow id.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.service import RPCError

from corral.tools import InvalidInput

from ._wire import AnsweredNote, ApprovalAnswer, ApprovalAsk, RequestedNote

APPROVE_UPDATE = "approve"
PENDING_QUERY = "pending_approvals"


class ApprovalRejected(InvalidInput):
    """The answer was refused: no such pending approval, or it was answered already."""


class ApprovalHandlers:
    """The `approve` update (with its validator) and the `pending_approvals` query, for every
    workflow that holds an agent; the workflow keeps its asks in `book`."""

    book: ApprovalBook

    @workflow.update(name=APPROVE_UPDATE)
    def approve(self, reply: ApprovalAnswer) -> ApprovalAnswer:
        return self.book.answer(reply.approval_id, reply.approve, reply.reason, reply.who)

    @approve.validator
    def _check_approval(self, reply: ApprovalAnswer) -> None:
        self.book.check(reply.approval_id)

    @workflow.query(name=PENDING_QUERY)
    def pending_approvals(self) -> list[ApprovalAsk]:
        return self.book.pending()


class ApprovalBook:
    """The asks of one agent and their answers, by approval id."""

    def __init__(self) -> None:
        self.asks: dict[str, ApprovalAsk] = {}
        self.answers: dict[str, ApprovalAnswer] = {}

    def open(self, asks: tuple[ApprovalAsk, ...]) -> None:
        for ask in asks:
            self.asks[ask.approval_id] = ask
            self.answers.pop(ask.approval_id, None)

    def pending(self) -> list[ApprovalAsk]:
        return [a for i, a in self.asks.items() if i not in self.answers]

    def check(self, approval_id: str) -> None:
        """Raise unless `approval_id` is an ask still waiting for its answer."""
        if approval_id not in self.asks:
            known = ", ".join(a.approval_id for a in self.pending()) or "none"
            raise ValueError(f"no approval {approval_id!r} here; pending: {known}")
        answered = self.answers.get(approval_id)
        if answered is not None:
            verdict = "approved" if answered.approve else "denied"
            raise ValueError(
                f"approval {approval_id} was already {verdict} ({answered.reason}, "
                f"by {answered.who}); it takes no further answer"
            )

    def answer(self, approval_id: str, approve: bool, reason: str, who: str) -> ApprovalAnswer:
        ask = self.asks[approval_id]
        default = "approved" if approve else "denied"
        answer = ApprovalAnswer(
            approval_id=approval_id,
            call_id=ask.call_id,
            approve=approve,
            reason=reason or default,
            who=who,
        )
        self.answers[approval_id] = answer
        return answer


def requested_note(ask: ApprovalAsk, workflow_id: str, timeout_s: float) -> dict[str, Any]:
    """The journal's `approval_requested` note (`RequestedNote`) of `ask`."""
    fields = ask.model_dump(exclude={"kind"})
    note = RequestedNote(
        **fields, approval_kind=ask.kind, workflow_id=workflow_id, timeout_s=timeout_s
    )
    return note.model_dump(mode="json")


def answered_note(answer: ApprovalAnswer) -> dict[str, Any]:
    """The journal's `approval_answered` note (`AnsweredNote`) of `answer`."""
    decision = "approve" if answer.approve else "deny"
    note = AnsweredNote(
        approval_id=answer.approval_id, decision=decision, reason=answer.reason, who=answer.who
    )
    return note.model_dump(mode="json")


async def answer_approval(
    client: Client, workflow_id: str, approval_id: str, approve: bool, reason: str = ""
) -> ApprovalAnswer:
    """Answer a pending approval of the agent whose workflow is `workflow_id`; raises
    `ApprovalRejected` when there is no such pending approval."""
    handle = client.get_workflow_handle(workflow_id)
    reply = ApprovalAnswer(approval_id=approval_id, call_id="", approve=approve, reason=reason)
    try:
        answer: ApprovalAnswer = await handle.execute_update(
            APPROVE_UPDATE, reply, result_type=ApprovalAnswer
        )
    except WorkflowUpdateFailedError as exc:
        cause = exc.cause.message if hasattr(exc.cause, "message") else str(exc.cause)
        raise ApprovalRejected(f"approval {approval_id} was not answered: {cause}") from exc
    except RPCError as exc:
        raise ApprovalRejected(
            f"approval {approval_id} was not answered: workflow {workflow_id}: {exc.message}"
        ) from exc
    return answer


async def pending_approvals(client: Client, workflow_id: str) -> list[ApprovalAsk]:
    """The asks of the agent whose workflow is `workflow_id` that wait for an answer."""
    handle = client.get_workflow_handle(workflow_id)
    found: list[ApprovalAsk] = await handle.query(PENDING_QUERY, result_type=list[ApprovalAsk])
    return found
