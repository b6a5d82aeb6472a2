"""Workflow code that fires an agent's lifecycle hooks after its start, on its host.

Each function schedules the `corral.lifecycle` activity (`_lifecycle`; its wire models are
here) only when the worker's `[hooks]` has commands for the event (`AgentDriver.hook_events`),
hands the `hook_ran` notes it answers to the driver to journal with its next batch, and says
what the hooks decided: a prompt's added context or block. The local runtime fires the same
events in process, through the same code.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any, Literal

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from corral.agents import Finish, UserInput, event_from_payload, event_to_payload
    from corral.tools import HookEvent

    from ._wire import WireSpec, _Wire

if TYPE_CHECKING:
    from ._drive import AgentDriver

LIFECYCLE_ACTIVITY = "corral.lifecycle"


class LifecycleInput(_Wire):
    """One lifecycle event of an agent after its start, to fire on its host."""

    spec: WireSpec
    event: Literal["prompt", "compaction", "finish"]
    prompt: dict[str, Any] | None = None
    """`prompt`: the `user_input` event about to be fed."""
    status: str | None = None
    """`finish`: how the turn ended (with `message` and `error`)."""
    message: str | None = None
    error: str | None = None
    """`finish`: the turn's error; `compaction`: why the summary failed."""
    ended: bool = False
    """`compaction`: False before the summary is asked for (PreCompact), True after."""
    trigger: str = "auto"


class LifecycleOutput(_Wire):
    """What the hooks of one event decided, and their `hook_ran` notes for the journal."""

    notes: tuple[dict[str, Any], ...] = ()
    prompt: dict[str, Any] | None = None
    """`prompt`: the input to feed, with the context the hooks added."""
    blocked: str | None = None
    """`prompt`: why a hook blocked it; the turn ends with this error."""


LIFECYCLE_TIMEOUT = timedelta(minutes=30)
"""Room for an event's commands, one after another (each is killed at its own `timeout`, at
most 600 s); a host that dies meanwhile is noticed by its missed heartbeats."""


async def fire_prompt_hooks(driver: AgentDriver, message: UserInput) -> UserInput | str:
    """`message` with what UserPromptSubmit hooks add, or the reason one blocked it."""
    if HookEvent.USER_PROMPT_SUBMIT not in driver.hook_events:
        return message
    call = LifecycleInput(spec=driver.spec, event="prompt", prompt=event_to_payload(message))
    out = await _fire(driver, call)
    if out.blocked is not None or out.prompt is None:
        return out.blocked or "a UserPromptSubmit hook answered no prompt"
    opened = event_from_payload(out.prompt)
    assert isinstance(opened, UserInput), "the hooks answer the prompt they were given"
    return opened


async def fire_compaction_hooks(
    driver: AgentDriver, *, ended: bool, trigger: str, error: str | None = None
) -> None:
    """PreCompact (before the summary is asked for) or PostCompact (after): observe only."""
    event = HookEvent.POST_COMPACT if ended else HookEvent.PRE_COMPACT
    if event not in driver.hook_events:
        return
    call = LifecycleInput(
        spec=driver.spec, event="compaction", ended=ended, trigger=trigger, error=error
    )
    await _observe(driver, call)


async def fire_finish_hooks(driver: AgentDriver, finish: Finish) -> None:
    """Stop (the root) or SubagentStop (a worker): observe how the turn ended."""
    root = driver.spec.parent_id is None
    event = HookEvent.STOP if root else HookEvent.SUBAGENT_STOP
    if event not in driver.hook_events:
        return
    call = LifecycleInput(
        spec=driver.spec,
        event="finish",
        status=str(finish.status),
        message=finish.message,
        error=finish.error,
    )
    await _observe(driver, call)


async def _observe(driver: AgentDriver, call: LifecycleInput) -> None:
    """Fire hooks that only observe: a host lost meanwhile changes nothing of the agent's
    outcome (as a failed hook never does); the next step on that host finds it gone."""
    from ._drive import HostLost  # here: `_drive` imports this module

    try:
        await _fire(driver, call)
    except HostLost as lost:
        workflow.logger.warning("%s hooks of %s not run: %s", call.event, driver.agent_id, lost)


async def _fire(driver: AgentDriver, call: LifecycleInput) -> LifecycleOutput:
    out: LifecycleOutput = await driver.on_host(
        LIFECYCLE_ACTIVITY, call, LifecycleOutput, LIFECYCLE_TIMEOUT
    )
    for note in out.notes:
        driver.note(note)
    return out
