"""The approver of a tool batch on Temporal: it never waits, it holds the call back instead.

A tool activity cannot wait hours for a person. When a tool asks for approval and the workflow
has no answer yet, `HeldApprover` records the ask and denies at once; the activity drops that
call's output and hands the ask to the workflow, which waits for the answer (an update, or
silence until the deadline) and runs the call again with the answer given here in advance.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextvars import ContextVar

from corral.tools import ApprovalDecision, ApprovalRequest

from ._wire import ApprovalAnswer, ApprovalAsk

CURRENT_CALL: ContextVar[str] = ContextVar("corral_current_call", default="")
"""The id of the tool call running in this task (set before its handler runs)."""
HELD = "held back until someone answers the approval request"


def approval_id_of(call_id: str, kind: str) -> str:
    return f"{call_id}.{kind}"


class HeldApprover:
    """Answers asks the workflow has decided; records and holds back the others."""

    def __init__(self, agent_id: str, answers: Sequence[ApprovalAnswer]) -> None:
        self.agent_id = agent_id
        self.answers = {a.approval_id: a for a in answers}
        self.asks: dict[str, ApprovalAsk] = {}
        """The held calls' asks, by call id."""

    async def request(self, req: ApprovalRequest) -> ApprovalDecision:
        call_id = CURRENT_CALL.get()
        approval_id = approval_id_of(call_id, str(req.kind))
        answer = self.answers.get(approval_id)
        if answer is not None:
            if answer.approve:
                return ApprovalDecision.approve(answer.reason or "approved")
            return ApprovalDecision.deny(answer.reason or "denied")
        self.asks[call_id] = ApprovalAsk(
            approval_id=approval_id,
            call_id=call_id,
            agent_id=self.agent_id,
            tool=req.tool,
            command=req.command,
            cwd=str(req.cwd),
            reason=req.reason,
            kind=str(req.kind),
        )
        return ApprovalDecision.deny(HELD)
