"""Asking someone before a command runs outside what the profile allows.

A tool builds an `ApprovalRequest`; an `Approver` (a person at a terminal, an API client, a test
callback) answers with an `ApprovalDecision`. `request_approval` is the one boundary that calls
approvers: it puts a deadline on the wait and turns an approver's failure into a denial. Which
situations need approval is the shell tool's business (`_shell`, `_safe_commands`).
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Protocol

import anyio

logger = logging.getLogger(__name__)

# How long a tool waits for an answer before it takes silence as a denial.
APPROVAL_TIMEOUT = 300.0


class ApprovalKind(StrEnum):
    ESCALATE = "escalate"
    UNTRUSTED_COMMAND = "untrusted_command"
    RETRY_UNSANDBOXED = "retry_unsandboxed"
    MCP_TOOL = "mcp_tool"


@dataclass(frozen=True)
class ApprovalRequest:
    """What is asked: which tool wants to run which command where, why, what kind of ask, and
    for which agent."""

    tool: str
    command: str
    cwd: Path
    reason: str
    kind: ApprovalKind
    agent_id: str = ""
    """The agent that asks ("" when the tool ran outside an agent)."""


@dataclass(frozen=True)
class ApprovalDecision:
    """The answer, and the reason given for it (shown to the model on a denial)."""

    approved: bool
    reason: str = ""

    @classmethod
    def approve(cls, reason: str = "approved") -> ApprovalDecision:
        return cls(approved=True, reason=reason)

    @classmethod
    def deny(cls, reason: str) -> ApprovalDecision:
        return cls(approved=False, reason=reason)


class Approver(Protocol):
    """Whoever answers approval requests."""

    async def request(self, req: ApprovalRequest) -> ApprovalDecision: ...


class DenyAllApprover:
    """The batch default: nobody is there to ask, so every request is denied."""

    def __init__(self, reason: str = "approval policy is never") -> None:
        self._reason = reason

    async def request(self, req: ApprovalRequest) -> ApprovalDecision:
        del req
        return ApprovalDecision.deny(self._reason)


ApprovalCallback = Callable[[ApprovalRequest], ApprovalDecision | Awaitable[ApprovalDecision]]


class CallbackApprover:
    """Answers with a function (sync or async) of the request."""

    def __init__(self, fn: ApprovalCallback) -> None:
        self._fn = fn

    async def request(self, req: ApprovalRequest) -> ApprovalDecision:
        answer = self._fn(req)
        if inspect.isawaitable(answer):
            return await answer
        return answer


ApprovalObserver = Callable[[ApprovalRequest, ApprovalDecision, float, float], None]
"""Told (request, decision, wall-clock time the wait began, seconds waited) after each ask."""


async def request_approval(
    approver: Approver,
    req: ApprovalRequest,
    *,
    answer_within: float = APPROVAL_TIMEOUT,
    on_wait: ApprovalObserver | None = None,
) -> ApprovalDecision:
    """Ask `approver`; silence past `answer_within` s and approver failures count as denials."""
    began_wall, began = time.time(), time.monotonic()
    decision = await _ask(approver, req, answer_within)
    if on_wait is not None:
        try:
            on_wait(req, decision, began_wall, time.monotonic() - began)
        except Exception:  # an observer's bug must not change the answer
            logger.exception("approval wait observer failed")
    return decision


async def _ask(approver: Approver, req: ApprovalRequest, answer_within: float) -> ApprovalDecision:
    try:
        with anyio.fail_after(answer_within):
            decision = await approver.request(req)
    except TimeoutError:
        return ApprovalDecision.deny(f"no answer within {answer_within:g} s")
    except Exception as exc:  # the containment boundary for approvers supplied from outside
        logger.exception("approver failed on a %s request", req.kind)
        return ApprovalDecision.deny(f"the approver failed: {type(exc).__name__}: {exc}")
    if not isinstance(decision, ApprovalDecision):
        return ApprovalDecision.deny(f"the approver answered {decision!r}, not a decision")
    return decision
