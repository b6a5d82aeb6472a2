"""The approvals of runs on Temporal as the service shows them, read from the run's journal.

Agents on Temporal journal each ask as `approval_requested` (with the workflow that holds it) and
its outcome as `approval_answered`; `journaled_asks` pairs them into `Ask`s whose JSON is the one
the service shows for local runs. Whether an unanswered ask still waits is the workflow's to say
(`_runner` asks it); nothing here talks to Temporal.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, TypeVar

from pydantic import ValidationError

from corral.agents import Store, StoreError

from ._wire import AnsweredNote, RequestedNote

REQUESTED, ANSWERED = "approval_requested", "approval_answered"
PENDING, APPROVED, DENIED, EXPIRED = "pending", "approved", "denied", "expired"
SEPARATOR = ":"
"""Between the workflow id and its own approval id: neither run ids nor agent ids hold one."""
ENDED_UNANSWERED = "the run ended before the approval was answered"


@dataclass(frozen=True)
class Ask:
    """One journaled ask of a run on Temporal and, once known, its answer."""

    run_id: str
    agent_id: str
    note: RequestedNote
    at: float
    answer: AnsweredNote | None = None

    @staticmethod
    def api_id(workflow_id: str, approval_id: str) -> str:
        """The id the API shows: an approval id is unique only within its workflow."""
        return f"{workflow_id}{SEPARATOR}{approval_id}"

    @property
    def workflow_id(self) -> str:
        return self.note.workflow_id

    @property
    def approval_id(self) -> str:
        return self.note.approval_id

    @property
    def id(self) -> str:
        return self.api_id(self.workflow_id, self.approval_id)

    def answered(self, approve: bool, reason: str, who: str) -> Ask:
        note = AnsweredNote(
            approval_id=self.approval_id,
            decision="approve" if approve else "deny",
            reason=reason,
            who=who,
        )
        return replace(self, answer=note)

    def to_json(self, *, pending: bool = True) -> dict[str, Any]:
        """The service's approval JSON; `pending` says whether an unanswered ask still waits."""
        note = self.note
        state, reason, who = self._outcome(pending)
        return {
            "id": self.id,
            "run_id": self.run_id,
            "agent_id": note.agent_id or self.agent_id,
            "tool": note.tool,
            "command": note.command,
            "cwd": note.cwd,
            "reason": note.reason,
            "kind": note.approval_kind,
            "state": state,
            "created_at": self.at,
            "deadline": self.at + note.timeout_s,
            "decision_reason": reason,
            "answered_by": who,
        }

    def _outcome(self, pending: bool) -> tuple[str, str | None, str | None]:
        if self.answer is None:
            return (PENDING, None, None) if pending else (EXPIRED, ENDED_UNANSWERED, "cancel")
        who, reason = self.answer.who or "api", self.answer.reason
        if who == "deadline":
            return EXPIRED, reason, who
        return (APPROVED if self.answer.decision == "approve" else DENIED), reason, who


async def journaled_asks(journal: Store, run_id: str) -> list[Ask]:
    """The run's asks on Temporal, oldest first, each with its answer if one was journaled.

    An ask made again under the same id (an item restarted on another host) replaces the
    earlier one."""
    asks: dict[str, Ask] = {}
    latest: dict[tuple[str, str], str] = {}
    for event in await journal.run_events(run_id):
        payload = event.payload
        if event.kind == REQUESTED and "workflow_id" in payload:
            ask = Ask(run_id, event.agent_id, _note(RequestedNote, payload), event.at)
            asks.pop(ask.id, None)
            asks[ask.id] = ask
            latest[(event.agent_id, ask.approval_id)] = ask.id
        elif event.kind == ANSWERED:
            key = latest.get((event.agent_id, str(payload.get("approval_id"))))
            if key is not None:
                asks[key] = replace(asks[key], answer=_note(AnsweredNote, payload))
    return list(asks.values())


NoteT = TypeVar("NoteT", RequestedNote, AnsweredNote)


def _note(model: type[NoteT], payload: dict[str, Any]) -> NoteT:
    """A journaled approval note, read once at this boundary."""
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        raise StoreError(f"a journaled approval note cannot be read: {exc}") from exc


def split_approval_id(api_id: str) -> list[str]:
    """The run ids an API approval id may belong to, longest first (run ids may hold dots)."""
    workflow_id, separator, approval_id = api_id.partition(SEPARATOR)
    if not separator or not approval_id:
        return []
    parts = workflow_id.split(".")
    return [".".join(parts[:n]) for n in range(len(parts) - 1, 0, -1)]
