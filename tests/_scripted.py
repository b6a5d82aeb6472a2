"""Scripted-model helpers the end-to-end and scenario tests share: reading a logged request,
answering with tool calls, and the supervisor that spawns workers and waits for them all.

A worker is told it is one by its `<subagent_context>` message; the supervisor's script and the
workers' answers are one policy, so every run of a supervisor tree can use it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import anyio

CONTEXT_TAG = "<subagent_context>"


def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    args = json.dumps(arguments)
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": args}


def outputs(request: dict[str, Any]) -> dict[str, str]:
    items = request["input"]
    return {i["call_id"]: i["output"] for i in items if i.get("type") == "function_call_output"}


def texts(request: dict[str, Any]) -> list[tuple[str, str]]:
    """Every message of the request's input as (role, text), in order."""
    return [
        (item["role"], "".join(p.get("text", "") for p in item["content"]))
        for item in request["input"]
        if item.get("type") == "message"
    ]


def user_texts(request: dict[str, Any]) -> list[str]:
    return [text for role, text in texts(request) if role == "user"]


def is_worker(request: dict[str, Any]) -> bool:
    """Whether the request is a spawned worker's: it carries a `<subagent_context>` message."""
    return any(text.startswith(CONTEXT_TAG) for _, text in texts(request))


def spent(tokens: int, result: Any) -> dict[str, Any]:
    """`result` as the model's answer, billed as `tokens` input tokens."""
    output = [{"type": "message", "content": result}] if isinstance(result, str) else result
    usage = {"input_tokens": tokens, "output_tokens": 0, "cached_tokens": 0}
    return {"output": output, "usage": {**usage, "reasoning_tokens": 0}}


@dataclass(frozen=True)
class Supervise:
    """Workers answer `done: <their task>` at once; the supervisor spawns `workers` (by call
    id) in one turn, waits until every one is done, then answers `last`. A supervisor asked
    `follow_up[0]` after that answers `follow_up[1]`."""

    workers: Mapping[str, dict[str, Any]]
    last: str
    follow_up: tuple[str, str] | None = None

    def __call__(self, request: dict[str, Any]) -> Any:
        if is_worker(request):
            return f"done: {user_texts(request)[-1]}"
        if self.follow_up is not None and user_texts(request)[-1] == self.follow_up[0]:
            return self.follow_up[1]
        done = outputs(request)
        if not done:
            return [call(call_id, "spawn_agent", args) for call_id, args in self.workers.items()]
        pending = self.pending(done)
        if pending:
            wait = {"targets": pending, "timeout_ms": 20_000}
            return [call(f"wait-{len(done)}", "wait_agent", wait)]
        return self.last

    def pending(self, done: Mapping[str, str]) -> list[str]:
        """The spawned workers no `wait_agent` has yet seen done."""
        spawned = [json.loads(done[call_id])["agent_id"] for call_id in self.workers]
        finished: set[str] = set()
        for call_id, output in done.items():
            if call_id.startswith("wait-"):
                finished.update(json.loads(output)["status"])
        return [agent for agent in spawned if agent not in finished]


TWO_WORKERS: dict[str, dict[str, Any]] = {
    "spawn-a": {"message": "review a.py", "role": "reviewer", "sandbox": "read-only"},
    "spawn-b": {"message": "fix the bug in src", "write_set": ["src"]},
}


class StallWorkers:
    """A supervisor of `TWO_WORKERS` whose workers' model requests hang until `release`;
    `stalled` is set once both workers are waiting and the supervisor is in `wait_agent`."""

    def __init__(self) -> None:
        self.supervise = Supervise(TWO_WORKERS, last="both workers are done")
        self.waiting: set[str] = set()
        self.stalled = anyio.Event()
        self.release = anyio.Event()
        self.supervisor_waits = False

    async def __call__(self, request: dict[str, Any]) -> Any:
        if not is_worker(request):
            answer = self.supervise(request)
            self.supervisor_waits = answer[0]["name"] == "wait_agent" if answer else False
            self._check()
            return answer
        self.waiting.add(user_texts(request)[-1])
        self._check()
        await self.release.wait()
        return "too late"

    def _check(self) -> None:
        if len(self.waiting) == 2 and self.supervisor_waits:
            self.stalled.set()


class SpawnAllAtOnce:
    """A supervisor that spawns `count` workers in one answer (`spawn-0`, `spawn-1`, ...), waits
    until every one is done and answers `all <count> done`. The workers hold their answers until
    the supervisor has heard back from all the spawns, so the thread limit is full while the
    rest wait in the queue; `spawn_answers` keeps what the spawns answered."""

    def __init__(self, count: int, hold: float) -> None:
        self.hold = hold
        self.spawned = anyio.Event()
        self.spawn_answers: dict[str, str] = {}
        spawns = {f"spawn-{i}": {"message": f"task {i}"} for i in range(count)}
        self.supervise = Supervise(spawns, last=f"all {count} done")

    async def __call__(self, request: dict[str, Any]) -> Any:
        if is_worker(request):
            with anyio.fail_after(self.hold):
                await self.spawned.wait()
            return "worker done"
        done = outputs(request)
        if done:
            self.spawned.set()
            self.spawn_answers = self.spawn_answers or done
        return self.supervise(request)
