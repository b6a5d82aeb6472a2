"""The user's lifecycle hooks for one agent: SessionStart, UserPromptSubmit, Stop, the subagent
and compaction events. (The tool events run in `tools`, around every call.)

`AgentHooks` runs an event's commands where the agent's own commands run (its folder, profile
and sandbox), journals every run as a `hook_ran` note through the driver's `record`, and answers
what the hooks decided: context to show the model (a `<hook_context>` fragment) or a block.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from corral.tools import BubblewrapSandbox, HookEvent, HookRun, HookRunner, Sandbox
from corral.tools._user_hooks import HookOutcome, HookScope

from ._assembly import AgentSpec
from ._fragments import HOOK_CONTEXT

HOOK_NOTE = "hook_ran"
Record = Callable[[str, HookRun], Awaitable[None]]
"""Journals one run for an agent id (as a `hook_ran` note)."""


@dataclass(frozen=True)
class AgentHooks:
    """The configured hooks, the sandbox they run in, and where their runs are journaled."""

    runner: HookRunner | None
    record: Record
    sandbox: Sandbox | None = None

    async def fire(
        self,
        event: HookEvent,
        spec: AgentSpec,
        payload: Mapping[str, Any] | None = None,
        *,
        subject: str | None = None,
    ) -> HookOutcome:
        """Run `event`'s hooks for the agent of `spec`; nothing configured: nothing runs."""
        if self.runner is None:
            return HookOutcome()
        scope = HookScope(
            cwd=spec.cwd,
            profile=spec.profile,
            sandbox=self.sandbox or BubblewrapSandbox(),
            base=_base_payload(spec),
        )
        outcome = await self.runner.run(event, scope, payload or {}, subject=subject)
        for run in outcome.runs:
            await self.record(spec.agent_id, run)
        return outcome


def hook_context_fragments(event: HookEvent, outcome: HookOutcome) -> tuple[str, ...]:
    """The context `outcome` adds, each piece as a marked fragment naming its event."""
    return tuple(HOOK_CONTEXT.render(f"\n{event.value}: {text}\n") for text in outcome.context)


def _base_payload(spec: AgentSpec) -> dict[str, Any]:
    return {
        "session_id": spec.agent_id,
        "run_id": spec.run_id,
        "parent_id": spec.parent_id,
        "agent_role": spec.role,
        "cwd": str(spec.cwd),
    }
