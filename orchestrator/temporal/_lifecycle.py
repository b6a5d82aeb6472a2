"""The user's lifecycle hooks (`docs/hooks.md`) on Temporal, fired on the agent's host through the
local runtime's own code (`orchestrator._run`'s `fire_*_hooks`).

The start hooks (SessionStart, SubagentStart, the first UserPromptSubmit) run inside the agent's
preparation, which journals their `hook_ran` notes before the task they may have added context
to; the later events (each further prompt, a summary's start and end, the end of a turn) run in
the `corral.lifecycle` activity, whose notes the workflow journals with its next batch. The
workflow schedules that activity only for the events the worker's `[hooks]` configures
(`hook_events`), so a run without hooks, and a history recorded before hooks ran here, replay
unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from temporalio import activity

from corral.agents import (
    HOOK_NOTE,
    AgentHooks,
    AgentSpec,
    AgentStatus,
    Finish,
    Store,
    UserInput,
    event_from_payload,
    event_to_payload,
)
from corral.tools import HookEvent, HookRun, HookRunner, HooksConfig

from .._run import (
    blocked_prompt,
    fire_compaction_hooks,
    fire_finish_hooks,
    fire_prompt_hooks,
    fire_start_hooks,
)
from ._heartbeat import heartbeating
from ._journal import write_batch
from ._lifecycle_flow import LIFECYCLE_ACTIVITY, LifecycleInput, LifecycleOutput
from ._services import WorkerServices
from ._wire import JournalBatch


def hook_events(config: HooksConfig) -> tuple[str, ...]:
    """The events `config` runs commands on, for the workflow to know which to fire."""
    return tuple(event.value for event in HookEvent if getattr(config, event.value))


class _Collected:
    """`AgentHooks` whose runs are collected as journal notes instead of written at once."""

    def __init__(self, config: HooksConfig) -> None:
        self.notes: list[dict[str, Any]] = []
        runner = None if config.empty else HookRunner(config)
        self.hooks = AgentHooks(runner, self._record)

    async def _record(self, agent_id: str, run: HookRun) -> None:
        self.notes.append({"kind": HOOK_NOTE, **run.model_dump(mode="json")})


@dataclass(frozen=True)
class Opening:
    """How an agent's first turn opens, as journaled from seq 1: its start hooks' notes, then
    its first input (None when a hook blocked it, `blocked` saying why)."""

    notes: tuple[dict[str, Any], ...]
    first: dict[str, Any] | None
    blocked: str | None = None


async def journaled_opening(
    config: HooksConfig, store: Store, spec: AgentSpec, first: UserInput
) -> Opening:
    """Fire the agent's start hooks on `first` and journal what they made; a retried
    preparation finds it journaled and runs no hook again."""
    have = [event.payload for event in await store.events(spec.agent_id)]
    if have:
        return _opening_of(have)
    collected = _Collected(config)
    async with heartbeating():
        opened = await fire_start_hooks(collected.hooks, spec, first)
    notes = tuple(collected.notes)
    if isinstance(opened, str):
        opening = Opening(notes, None, opened)
    else:
        opening = Opening(notes, event_to_payload(opened))
    events = (*notes, *([] if opening.first is None else [opening.first]))
    await write_batch(store, JournalBatch(agent_id=spec.agent_id, first_seq=1, events=events))
    return opening


def _opening_of(journaled: list[dict[str, Any]]) -> Opening:
    """The opening an earlier attempt journaled: notes up to the first input, or only notes
    when a hook blocked it (its reason is in the blocking note)."""
    at = next((i for i, p in enumerate(journaled) if p["kind"] != HOOK_NOTE), None)
    if at is not None:
        return Opening(tuple(journaled[:at]), journaled[at])
    reason = next((n.get("reason", "") for n in journaled if n.get("decision") == "block"), "")
    return Opening(tuple(journaled), None, blocked_prompt(str(reason)))


class LifecycleActivities:
    """The `corral.lifecycle` activity, bound to one worker's services (it runs on the host)."""

    def __init__(self, services: WorkerServices) -> None:
        self.services = services

    @property
    def on_host(self) -> list[Any]:
        return [self.fire]

    @activity.defn(name=LIFECYCLE_ACTIVITY)
    async def fire(self, call: LifecycleInput) -> LifecycleOutput:
        spec = self.services.spec_of(call.spec)
        collected = _Collected(self.services.config.hooks)
        hooks = collected.hooks
        answer = LifecycleOutput()
        async with heartbeating():
            if call.event == "prompt":
                answer = await _prompt(hooks, spec, call)
            elif call.event == "compaction":
                await fire_compaction_hooks(hooks, spec, call.ended, call.trigger, call.error)
            else:
                finish = Finish(
                    AgentStatus(call.status or AgentStatus.FAILED), call.message, call.error
                )
                await fire_finish_hooks(hooks, spec, finish)
        return answer.model_copy(update={"notes": tuple(collected.notes)})


async def _prompt(hooks: AgentHooks, spec: AgentSpec, call: LifecycleInput) -> LifecycleOutput:
    message = event_from_payload(call.prompt or {})
    assert isinstance(message, UserInput), "a prompt is a user_input event"
    opened = await fire_prompt_hooks(hooks, spec, message)
    if isinstance(opened, str):
        return LifecycleOutput(blocked=opened)
    return LifecycleOutput(prompt=event_to_payload(opened))
