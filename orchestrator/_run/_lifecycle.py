"""What the user's lifecycle hooks are given and what they change, at an agent's start, each
prompt, each summary and each finished turn. What a hook may decide (context, a block) is
`agents.AgentHooks`'; this module says what each event's payload is and what the model is
given. Both executors call it: the local runtime in process, Temporal in an activity on the
agent's host (`orchestrator.temporal._lifecycle`).

SessionStart runs for every agent as it starts, SubagentStart too for a worker; UserPromptSubmit
for every input (it may block it, or add context); Stop when the root agent ends a turn,
SubagentStop when a worker does.
"""

from __future__ import annotations

from corral.agents import AgentHooks, AgentSpec, Finish, UserInput, hook_context_fragments
from corral.tools import HookEvent


async def fire_start_hooks(hooks: AgentHooks, spec: AgentSpec, first: UserInput) -> UserInput | str:
    """The first input with what the start hooks add, or the reason a hook blocked it."""
    started = await hooks.fire(
        HookEvent.SESSION_START, spec, {"source": "startup"}, subject="startup"
    )
    if spec.parent_id is not None:
        payload = {"agent_type": spec.role, "agent_nickname": spec.nickname}
        await hooks.fire(HookEvent.SUBAGENT_START, spec, payload, subject=spec.role)
    extra = hook_context_fragments(HookEvent.SESSION_START, started)
    return await fire_prompt_hooks(hooks, spec, first, extra)


async def fire_prompt_hooks(
    hooks: AgentHooks, spec: AgentSpec, message: UserInput, extra: tuple[str, ...] = ()
) -> UserInput | str:
    """`message` with what UserPromptSubmit hooks add, or the reason one blocked it."""
    submitted = await hooks.fire(HookEvent.USER_PROMPT_SUBMIT, spec, {"prompt": message.text})
    if submitted.blocked is not None:
        return blocked_prompt(submitted.blocked)
    added = (*extra, *hook_context_fragments(HookEvent.USER_PROMPT_SUBMIT, submitted))
    if not added:
        return message
    return message.model_copy(update={"attachments": (*message.attachments, *added)})


def blocked_prompt(reason: str) -> str:
    """The error a turn ends with when a UserPromptSubmit hook blocked its input."""
    return f"a UserPromptSubmit hook blocked the prompt: {reason}"


async def fire_compaction_hooks(
    hooks: AgentHooks, spec: AgentSpec, ended: bool, trigger: str, error: str | None = None
) -> None:
    """PreCompact (before the summary is asked for) or PostCompact (after): observe only."""
    event = HookEvent.POST_COMPACT if ended else HookEvent.PRE_COMPACT
    payload = {"trigger": trigger, **({"error": error} if ended else {})}
    await hooks.fire(event, spec, payload, subject=trigger)


async def fire_finish_hooks(hooks: AgentHooks, spec: AgentSpec, finish: Finish) -> None:
    """Stop (the root) or SubagentStop (a worker): observe how the turn ended."""
    payload = {
        "status": str(finish.status),
        "last_assistant_message": finish.message,
        "error": finish.error,
        "stop_hook_active": False,
    }
    if spec.parent_id is None:
        await hooks.fire(HookEvent.STOP, spec, payload)
    else:
        await hooks.fire(HookEvent.SUBAGENT_STOP, spec, payload, subject=spec.role)
