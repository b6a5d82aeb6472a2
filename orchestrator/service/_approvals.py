"""Approvals asked by the server's runs, pending until a client answers them over the API.

`ApprovalBoard` keeps every approval the runs of this server asked for, and hands each run an
`Approver` (`approver(run_id, store, poke)`). An ask is journaled into the asking agent's journal
as `approval_requested` and its outcome as `approval_answered`, so the run's event stream shows
both. The deadline belongs to the tool (`request_approval` cancels the wait when it passes); the
board only records an unanswered ask as expired, so a late answer is refused.
"""

from __future__ import annotations

import math
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from corral.agents import Store
from corral.tools import ApprovalDecision, ApprovalRequest, Approver

from ._errors import ApprovalClosed, UnknownApproval

JOURNAL_TIMEOUT = 5.0
"""How long recording an outcome may take once the wait was cancelled."""
REQUESTED, ANSWERED = "approval_requested", "approval_answered"
PENDING, APPROVED, DENIED, EXPIRED = "pending", "approved", "denied", "expired"
STATES = (PENDING, APPROVED, DENIED, EXPIRED)


@dataclass
class Approval:
    """One ask and, once known, its outcome."""

    approval_id: str
    run_id: str
    request: ApprovalRequest
    created_at: float
    deadline: float | None
    """Wall-clock time past which silence is a denial (None: the asker set no deadline)."""
    due: float = math.inf
    """The same deadline on anyio's clock."""
    limit: float | None = None
    """Seconds the asker gave for an answer."""
    state: str = PENDING
    decision_reason: str | None = None
    answered_by: str | None = None
    """`api`, `deadline`, `cancel` (the run stopped while waiting) or `error`."""
    answered: anyio.Event = field(default_factory=anyio.Event)

    @property
    def decision(self) -> ApprovalDecision:
        if self.state == APPROVED:
            return ApprovalDecision.approve(self.decision_reason or "approved")
        return ApprovalDecision.deny(self.decision_reason or "denied")

    def settle(self, state: str, reason: str, who: str) -> None:
        self.state, self.decision_reason, self.answered_by = state, reason, who
        self.answered.set()

    def to_json(self) -> dict[str, Any]:
        req = self.request
        return {
            "id": self.approval_id,
            "run_id": self.run_id,
            "agent_id": req.agent_id,
            "tool": req.tool,
            "command": req.command,
            "cwd": str(req.cwd),
            "reason": req.reason,
            "kind": str(req.kind),
            "state": self.state,
            "created_at": self.created_at,
            "deadline": self.deadline,
            "decision_reason": self.decision_reason,
            "answered_by": self.answered_by,
        }

    def requested_note(self) -> dict[str, Any]:
        shown = self.to_json()
        keys = ("tool", "command", "cwd", "reason", "kind", "deadline")
        return {"approval_id": self.approval_id, **{k: shown[k] for k in keys}}

    def answered_note(self) -> dict[str, Any]:
        return {
            "approval_id": self.approval_id,
            "decision": "approve" if self.state == APPROVED else "deny",
            "reason": self.decision_reason,
            "who": self.answered_by,
        }


class ApprovalBoard:
    """Every approval of this server's runs, pending and answered, by id."""

    def __init__(self) -> None:
        self._approvals: dict[str, Approval] = {}

    def approver(self, run_id: str, store: Store, poke: Callable[[], None]) -> Approver:
        """The approver of run `run_id`; `poke` tells the run's tailer that a note was journaled."""
        return _RunApprover(self, run_id, store, poke)

    def get(self, approval_id: str) -> Approval:
        approval = self._approvals.get(approval_id)
        if approval is None:
            raise UnknownApproval(f"no approval {approval_id} on this server")
        return approval

    def list(self, run_id: str) -> tuple[Approval, ...]:
        """The run's approvals, oldest first."""
        return tuple(a for a in self._approvals.values() if a.run_id == run_id)

    def pending(self, run_id: str) -> tuple[Approval, ...]:
        return tuple(a for a in self.list(run_id) if a.state == PENDING)

    def answer(self, approval_id: str, approve: bool, reason: str | None = None) -> Approval:
        """Answer a pending approval; the waiting agent resumes with the decision."""
        approval = self.get(approval_id)
        if approval.state != PENDING:
            raise ApprovalClosed(
                f"approval {approval_id} is {approval.state} ({approval.decision_reason}); "
                "it takes no further answer"
            )
        if approve:
            approval.settle(APPROVED, reason or "approved through the API", "api")
        else:
            approval.settle(DENIED, reason or "denied through the API", "api")
        return approval

    def open(self, run_id: str, request: ApprovalRequest) -> Approval:
        """Register an ask made under the current task's deadline (the tool's `fail_after`)."""
        approval_id = "apr_" + secrets.token_hex(8)
        due = anyio.current_effective_deadline()
        now, left = time.time(), due - anyio.current_time()
        # Rounded: the asker's `answer_within` was spent by microseconds before we got here.
        limit = None if math.isinf(due) else round(left, 2)
        deadline = None if math.isinf(due) else now + left
        approval = Approval(approval_id, run_id, request, now, deadline, due, limit)
        self._approvals[approval_id] = approval
        return approval


class _RunApprover:
    """One run's approver: asks through the board and journals the ask and its outcome."""

    def __init__(
        self, board: ApprovalBoard, run_id: str, store: Store, poke: Callable[[], None]
    ) -> None:
        self._board = board
        self._run_id = run_id
        self._store = store
        self._poke = poke

    async def request(self, req: ApprovalRequest) -> ApprovalDecision:
        approval = self._board.open(self._run_id, req)
        try:
            await self._note(approval, REQUESTED, approval.requested_note())
            await approval.answered.wait()
        except BaseException as exc:  # recorded, then re-raised: the wait ends either way
            if approval.state == PENDING:
                approval.settle(EXPIRED, *_why_unanswered(approval, exc))
            raise
        finally:
            with anyio.move_on_after(JOURNAL_TIMEOUT, shield=True):
                await self._note(approval, ANSWERED, approval.answered_note())
        return approval.decision

    async def _note(self, approval: Approval, kind: str, payload: dict[str, Any]) -> None:
        agent_id = approval.request.agent_id
        if not agent_id:  # asked outside an agent: there is no journal to write to
            return
        await self._store.append_event(agent_id, kind, payload, at=time.time())
        self._poke()


def _why_unanswered(approval: Approval, exc: BaseException) -> tuple[str, str]:
    """The denial reason and who ended an ask that got no answer."""
    if not isinstance(exc, anyio.get_cancelled_exc_class()):
        return f"the approval could not be recorded: {type(exc).__name__}: {exc}", "error"
    if approval.limit is not None and anyio.current_time() >= approval.due:
        return f"no answer within {approval.limit:g} s", "deadline"
    return "the run was cancelled", "cancel"
