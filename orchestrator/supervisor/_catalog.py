"""The collab tools' names, in the order agents are given them, and what each one tells the model.

The texts are fixed for a run (they name its limits), so every agent that has these tools sends
them byte for byte alike and siblings share their request prefix.
"""

from __future__ import annotations

from corral.agents import AgentsConfig

SPAWN_AGENT = "spawn_agent"
SEND_INPUT = "send_input"
WAIT_AGENT = "wait_agent"
CLOSE_AGENT = "close_agent"
LIST_AGENTS = "list_agents"
COLLAB_TOOL_NAMES = (SPAWN_AGENT, SEND_INPUT, WAIT_AGENT, CLOSE_AGENT, LIST_AGENTS)

WAIT_DEFAULT_MS = 30_000
WAIT_MAX_MS = 3_600_000
TASK_PREVIEW_CHARS = 200


def spawn_description(limits: AgentsConfig) -> str:
    return (
        "Start a worker agent on a task of its own; it runs alongside you and answers "
        '{"agent_id", "nickname", "status", "capacity"} at once. Delegate only work that is '
        "independent of what you do next: plan the critical path yourself and hand out the "
        "side tasks. The worker sees none of your conversation, so `message` must be "
        "self-contained: the goal, the files it owns, what it may read, the checks to run, "
        "and what its final answer must contain.\n"
        "Give every worker a disjoint `write_set` (files or folders, relative to your working "
        "directory) so no two agents edit the same file; it must lie inside your own writable "
        "roots. `sandbox` may only narrow your own mode (read-only, workspace-write, "
        "full-access); a worker never gets wider permissions than yours. `role` picks its "
        "instructions: general (any task, the default), reviewer (reports problems, changes "
        "nothing), refactorer (applies one change to the files it is given), triager "
        "(classifies an issue), supervisor (splits work among workers of its own)"
        f"{_own_roles(limits)}. `model` defaults to yours.\n"
        f"Limits: at most {limits.max_threads} of your workers run at once; {_queue(limits)} "
        f"Agents nest at most {limits.max_depth} level(s) below the root. When a worker "
        "finishes you get a <subagent_notification> with its status and final message; do not "
        "redo work you delegated."
    )


def _own_roles(limits: AgentsConfig) -> str:
    names = sorted(getattr(limits, "roles", None) or {})
    if not names:
        return ""
    return (
        f"; and this configuration's own roles: {', '.join(names)} (each described with "
        "`role`; a role may fix the worker's model and narrow its sandbox)"
    )


def _queue(limits: AgentsConfig) -> str:
    # The Temporal executor builds these tools from its wire limits, which have no queue: its
    # supervisors are refused at the thread limit, and must be told so.
    waiting = getattr(limits, "max_queued_spawns", 0)
    if not waiting:
        return "wait for one or close one to start another."
    return (
        f'a spawn past that waits in a queue (status "queued", up to {waiting} waiting) and '
        "starts by itself, in order, when one of your workers finishes or is closed; "
        '`capacity` says how many of yours are {"running", "queued"} and the "limit".'
    )


def send_input_description() -> str:
    return (
        "Send a message to one of your workers (`target`: its agent id or nickname). A working "
        "agent sees it on its next model request; a finished one starts a new turn on it. With "
        "`interrupt` true, its current turn is stopped first and the message starts the next "
        'one. Answers {"delivered": true}; the reply comes later, through wait_agent or a '
        "<subagent_notification>."
    )


def wait_description() -> str:
    return (
        "Block until at least one of `targets` (agent ids or nicknames of your workers) has "
        f"finished, or until `timeout_ms` passes (default {WAIT_DEFAULT_MS}, at most "
        f'{WAIT_MAX_MS}). Answers {{"status": {{id: {{"status", "nickname", "message"}}}}, '
        '"timed_out"} for the targets that are done, with each one\'s final message or error; '
        "an agent already done is answered at once. Call it sparingly: finished workers also "
        "announce themselves with a <subagent_notification>, and you can do other work meanwhile."
    )


def close_description() -> str:
    return (
        "Stop one of your workers (`target`: agent id or nickname) and every agent it started, "
        'and answer {"previous_status"}. Close workers whose result you no longer need; a '
        "closed worker takes no more input."
    )


def list_description() -> str:
    return (
        "List every agent you started, directly or through your workers: agent id, nickname, "
        "role, status (queued until a slot frees), depth, parent and the start of its task; "
        "and your `capacity`: how many of your workers run, how many wait, and the limit."
    )
