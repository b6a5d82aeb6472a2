"""One write set's worker, from its first agent to its commit.

An attempt is one agent in the worker's worktree. After it ends, the pipeline runs the check
itself; if the check fails and attempts remain, a new agent carries on from the files as they
are, told what failed. Then `git status` shows what changed: the worker's own files are committed
on its branch; anything else (the tools make it impossible, but it is checked) keeps the worker
out of the merge and is reported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from corral.agents import AgentSpec, AgentStatus
from corral.tools import CorralError, Tool

from ..._run import RunRuntime, ToolScope
from ...fanout import ResultSchema, ResultSlot, report_result_tool
from ...runs import new_id
from ._check import CheckResult, CheckRunner
from ._git import Git, changed_paths, commit_paths, shortstat
from ._outcome import CHECK_FAILED, FAILED, OUTSIDE, PASSED, UNCHANGED, Attempt, WorkerOutcome
from ._partition import WriteSet
from ._task import RESULT_SCHEMA, render_task, worker_context, worker_spec

MAX_RESULT_TRIES = 3
COMPLETED = str(AgentStatus.COMPLETED)
SHUTDOWN_GRACE_S = 30.0
"""Beyond an agent's own wall-time budget, how long the pipeline waits before closing it."""


@dataclass
class ReportBook:
    """The `report_result` slot of every worker agent; `provide` is the run's tool provider."""

    schema: ResultSchema = field(default_factory=lambda: ResultSchema(RESULT_SCHEMA))
    slots: dict[str, ResultSlot] = field(default_factory=dict)

    def open(self, agent_id: str, index: int) -> ResultSlot:
        slot = ResultSlot(index=index, schema=self.schema, max_tries=MAX_RESULT_TRIES)
        self.slots[agent_id] = slot
        return slot

    def provide(self, scope: ToolScope) -> Tool[Any]:
        return report_result_tool(self.slots[scope.agent_id])


@dataclass
class WorkerShared:
    """What every worker of a run uses."""

    runtime: RunRuntime
    git: Git
    git_dir: Path
    base: str
    instruction: str
    checker: CheckRunner
    prototype: AgentSpec
    book: ReportBook
    max_attempts: int
    on_done: Callable[[WorkerOutcome], None] | None = None


async def run_worker(
    shared: WorkerShared, write_set: WriteSet, worktree: Path, branch: str
) -> WorkerOutcome:
    """Carry `write_set` to a committed (or abandoned) branch; errors end up on the outcome."""
    try:
        outcome = await _work(shared, write_set, worktree, branch)
    except CorralError as exc:
        outcome = WorkerOutcome(write_set.index, write_set.files, branch, FAILED, detail=str(exc))
    if shared.on_done is not None:
        shared.on_done(outcome)
    return outcome


async def _work(
    shared: WorkerShared, write_set: WriteSet, worktree: Path, branch: str
) -> WorkerOutcome:
    attempts: list[Attempt] = []
    check: CheckResult | None = None
    for number in range(1, shared.max_attempts + 1):
        attempts.append(await _attempt(shared, write_set, worktree, number, check))
        check = await shared.checker.run(worktree)
        if check.passed:
            break
    assert check is not None  # max_attempts >= 1
    return await _commit(shared, write_set, worktree, branch, check, tuple(attempts))


async def _attempt(
    shared: WorkerShared,
    write_set: WriteSet,
    worktree: Path,
    number: int,
    failed: CheckResult | None,
) -> Attempt:
    agent_id = new_id("agent")
    nickname = f"worker {write_set.index}" + (f" attempt {number}" if number > 1 else "")
    slot = shared.book.open(agent_id, write_set.index)
    spec = worker_spec(
        shared.prototype,
        agent_id=agent_id,
        nickname=nickname,
        worktree=worktree,
        files=write_set.files,
        git_dir=shared.git_dir,
    )
    task = render_task(
        shared.instruction,
        write_set,
        shared.checker.command,
        attempt=number,
        max_attempts=shared.max_attempts,
        failed=failed,
    )
    context = worker_context(agent_id, nickname, write_set, task)
    runtime = shared.runtime
    handle = await runtime.start(spec, task, stay_open=False, subagent_context=context)
    wall = spec.budgets.max_wall_time_s
    with anyio.move_on_after(None if wall is None else wall + SHUTDOWN_GRACE_S):
        await handle.ended.wait()
    if not handle.ended.is_set():
        await runtime.close(handle)
    usage = handle.runner.core.total_usage
    return Attempt(
        agent_id=agent_id,
        status=str(handle.status),
        error=handle.error,
        report=slot.result if slot.has_result else None,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
    )


async def _commit(
    shared: WorkerShared,
    write_set: WriteSet,
    worktree: Path,
    branch: str,
    check: CheckResult,
    attempts: tuple[Attempt, ...],
) -> WorkerOutcome:
    git = shared.git
    changed = await changed_paths(git, worktree)
    own = [path for path in changed if path in set(write_set.files)]
    outside = tuple(path for path in changed if path not in set(write_set.files))
    message = _message(shared.instruction, write_set, attempts[-1].report, check)
    commit = await commit_paths(git, worktree, own, message)
    stat = await shortstat(git, worktree, shared.base, commit) if commit else ""
    last = attempts[-1]
    agent_note = (
        None if last.status == COMPLETED else f"its agent ended {last.status}: {last.error}"
    )
    if outside:
        status = OUTSIDE
    elif not check.passed:
        status = CHECK_FAILED
    elif commit:
        status = PASSED
    else:
        status = UNCHANGED if agent_note is None else FAILED
    return WorkerOutcome(
        index=write_set.index,
        files=write_set.files,
        branch=branch,
        status=status,
        check=check,
        attempts=attempts,
        commit=commit,
        changed=tuple(own),
        diffstat=stat,
        outside=outside,
        detail=agent_note,
    )


def _message(
    instruction: str, write_set: WriteSet, report: dict[str, Any] | None, check: CheckResult
) -> str:
    first = instruction.strip().splitlines()[0] if instruction.strip() else "refactor"
    subject = f"corral refactor, worker {write_set.index}: {first}"
    if len(subject) > 72:
        subject = subject[:71] + "…"
    body = [instruction.strip()]
    if report is not None:
        body.append(f"Worker's summary: {str(report.get('summary', '')).strip()}")
    if check.command is not None:
        body.append(f"Check `{check.command}`: {check.describe()}")
    return "\n\n".join([subject, *body])
