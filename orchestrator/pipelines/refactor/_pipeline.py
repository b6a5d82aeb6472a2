"""`run_refactor`: a repository, an instruction and a file selection, to one result branch.

Everything that can be refused is checked before anything is made: the repository (clean, with
a commit), the files, the branch names, and the check on the unchanged HEAD. Then one journaled
run: a worktree and branch per write set, the workers side by side, the passing branches merged
into the result in its own worktree, the check run on the merged result. The worktrees are
removed however the run ends; the user's working tree and current branch are never touched.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import anyio

from corral.agents import AgentSpec, CorralConfig, RunRecord, Store
from corral.tools import BubblewrapSandbox, Sandbox

from ..._run import RunRuntime
from ...fanout import REPORT_RESULT
from ...runs import (
    RefactorJob,
    RunSetup,
    build_root_spec,
    journal_path,
    new_id,
    open_run,
    refuse_remote,
)
from ._check import CHECK_WORLD, NOT_FOUND_EXIT, CheckResult, CheckRunner
from ._errors import CheckFailsAtHead, RefactorInputError
from ._git import Git, ensure_identity
from ._merge import create_result_branch, merge_workers
from ._outcome import MERGED, RefactorOutcome, WorkerOutcome
from ._partition import WriteSet, partition
from ._repo import Repository, check_new_branches, open_repository, select_files
from ._task import WORKER_INSTRUCTIONS
from ._worker import ReportBook, WorkerShared, run_worker
from ._workspace import Worktrees, open_worktrees

REFACTOR = "refactor"
WORKTREES_HERE = (
    "its workers edit git worktrees of the repository on this machine, which workers on "
    "other hosts cannot reach"
)
WORKER_WALL_TIME_S = 30 * 60.0
"""An attempt's wall-time budget when the config sets none."""
JOURNAL_TIMEOUT = 10.0
_RUN_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")


@dataclass(frozen=True)
class RefactorPlan:
    """The run about to start: its write sets and branches, told to `on_start`."""

    run_id: str
    repo: Path
    base: str
    branch: str
    write_sets: tuple[WriteSet, ...]
    worktrees: Path


def worker_branch(run_id: str, index: int) -> str:
    return f"corral/refactor/{run_id}/{index}"


def default_branch(run_id: str) -> str:
    """`corral/refactor/<run>/result`: beside the worker branches, since git cannot hold a
    branch `corral/refactor/<run>` and branches below it at once."""
    return f"corral/refactor/{run_id}/result"


async def run_refactor(
    config: CorralConfig,
    request: RefactorJob,
    *,
    setup: RunSetup | None = None,
    on_start: Callable[[RefactorPlan], None] | None = None,
    on_worker: Callable[[WorkerOutcome], None] | None = None,
) -> RefactorOutcome:
    """Refactor `request.repo` as asked; raises `RefactorInputError`s before making anything."""
    setup = setup or RunSetup()
    refuse_remote(setup.executor, "refactor", WORKTREES_HERE)
    _check_request(request)
    git = Git()
    repo = await open_repository(git, request.repo)
    files = await select_files(git, repo, request.files)
    sets = partition(files, request.concurrency)
    run_id = request.run_id or new_id("run")
    branch = request.branch or default_branch(run_id)
    await check_new_branches(git, repo, branch, [worker_branch(run_id, s.index) for s in sets])
    await ensure_identity(git, repo.root)
    checker = CheckRunner(
        request.check,
        _sandbox(setup),
        repo_git_dir=repo.common_dir,
        network=config.network_access,
        allowed_domains=config.network.allowed_domains,
        denied_domains=config.network.denied_domains,
    )
    async with open_worktrees(git, repo, run_id, request.worktrees_dir) as trees:
        result = await trees.add_detached("result")
        await _refuse_failing_check(checker, result)
        plan = RefactorPlan(run_id, repo.root, repo.head, branch, tuple(sets), trees.folder)
        run = _Run(config, request, setup, git, repo, checker, trees, plan)
        return await run.carry_out(result, on_start, on_worker)


def _check_request(request: RefactorJob) -> None:
    if not request.instruction.strip():
        raise RefactorInputError("the instruction is empty; say what to change")
    if request.run_id is not None and not _RUN_ID.fullmatch(request.run_id):
        raise RefactorInputError(
            f"run id {request.run_id!r} names branches and folders: use letters, digits, "
            "'.', '_' and '-' only"
        )
    if request.check is not None and not request.check.strip():
        raise RefactorInputError("--check is empty; give a command, or leave --check out")


async def _refuse_failing_check(checker: CheckRunner, worktree: Path) -> None:
    baseline = await checker.run(worktree)
    if baseline.not_found:
        raise CheckFailsAtHead(
            f"the check `{checker.command}` cannot run: a command it names was not found in the "
            f"sandbox (exit {NOT_FOUND_EXIT}); {CHECK_WORLD}. Use a program from the system or "
            f"one inside the repository. Its last lines:\n{baseline.tail()}"
        )
    if not baseline.passed:
        raise CheckFailsAtHead(
            f"the check `{checker.command}` already fails on the unchanged HEAD "
            f"({baseline.describe()}), so no worker could pass it; fix it or choose another "
            f"--check. Its last lines:\n{baseline.tail()}"
        )


def _sandbox(setup: RunSetup) -> Sandbox:
    return setup.services.sandbox or BubblewrapSandbox()


@dataclass
class _Run:
    """One journaled refactor run, from its worktrees to its result branch."""

    config: CorralConfig
    request: RefactorJob
    setup: RunSetup
    git: Git
    repo: Repository
    checker: CheckRunner
    trees: Worktrees
    plan: RefactorPlan

    async def carry_out(
        self,
        result: Path,
        on_start: Callable[[RefactorPlan], None] | None,
        on_worker: Callable[[WorkerOutcome], None] | None,
    ) -> RefactorOutcome:
        book = ReportBook()
        providers = {**self.setup.tool_providers, REPORT_RESULT: book.provide}
        run_id = self.plan.run_id
        async with open_run(
            self.config, run_id, replace(self.setup, tool_providers=providers)
        ) as rt:
            await rt.store.create_run(self._record())
            if on_start is not None:
                on_start(self.plan)
            try:
                outcome = await self._work(rt, book, result, on_worker)
            except anyio.get_cancelled_exc_class():
                with anyio.move_on_after(JOURNAL_TIMEOUT, shield=True):
                    await _journal_end(rt.store, run_id, "interrupted", None)
                raise
            await _journal_end(rt.store, run_id, "done" if outcome.ok else "failed", outcome)
        return outcome

    async def _work(
        self,
        runtime: RunRuntime,
        book: ReportBook,
        result: Path,
        on_worker: Callable[[WorkerOutcome], None] | None,
    ) -> RefactorOutcome:
        shared = WorkerShared(
            runtime=runtime,
            git=self.git,
            git_dir=self.repo.common_dir,
            base=self.repo.head,
            instruction=self.request.instruction,
            checker=self.checker,
            prototype=self._prototype(),
            book=book,
            max_attempts=self.request.max_attempts,
            on_done=on_worker,
        )
        outcomes = await self._run_workers(shared)
        merged = await merge_workers(self.git, result, outcomes, self.plan.run_id)
        branch: str | None = None
        final: CheckResult | None = None
        if any(worker.status == MERGED for worker in merged):
            final = await self.checker.run(result)
            await create_result_branch(self.git, result, self.plan.branch)
            branch = self.plan.branch
        return RefactorOutcome(
            run_id=self.plan.run_id,
            repo=self.repo.root,
            base=self.repo.head,
            branch=branch,
            workers=tuple(merged),
            merged_check=final,
            journal=journal_path(self.config),
        )

    async def _run_workers(self, shared: WorkerShared) -> list[WorkerOutcome]:
        places: list[tuple[WriteSet, Path, str]] = []
        for write_set in self.plan.write_sets:  # one at a time: git locks the repository's config
            name = worker_branch(self.plan.run_id, write_set.index)
            path = await self.trees.add_branch(f"w{write_set.index}", name)
            places.append((write_set, path, name))
        outcomes: dict[int, WorkerOutcome] = {}

        async def one(write_set: WriteSet, path: Path, name: str) -> None:
            outcomes[write_set.index] = await run_worker(shared, write_set, path, name)

        async with anyio.create_task_group() as tg:
            for place in places:
                tg.start_soon(one, *place)
        return [outcomes[index] for index in sorted(outcomes)]

    def _prototype(self) -> AgentSpec:
        env: Mapping[str, str] = os.environ if self.setup.env is None else self.setup.env
        spec = build_root_spec(
            self.config,
            cwd=self.repo.root,
            env=env,
            run_id=self.plan.run_id,
            role="refactorer",
            extra_tools=(REPORT_RESULT,),
        )
        extra = self.config.developer_instructions
        developer = f"{extra.strip()}\n\n{WORKER_INSTRUCTIONS}" if extra else WORKER_INSTRUCTIONS
        budgets = spec.budgets
        if budgets.max_wall_time_s is None:
            budgets = budgets.model_copy(update={"max_wall_time_s": WORKER_WALL_TIME_S})
        update = {"developer_instructions": developer, "budgets": budgets, "nickname": "worker"}
        return spec.model_copy(update=update)

    def _record(self) -> RunRecord:
        now = time.time()
        # The job as it ran (its id and branch chosen), and what the run found and planned.
        job = self.request.model_copy(update={"run_id": self.plan.run_id})
        config: dict[str, Any] = {
            **job.model_dump(mode="json"),
            "repo": str(self.repo.root),
            "base": self.repo.head,
            "source_branch": self.repo.branch,
            "branch": self.plan.branch,
            "write_sets": [list(s.files) for s in self.plan.write_sets],
        }
        return RunRecord(
            run_id=self.plan.run_id,
            kind=REFACTOR,
            status="running",
            created_at=now,
            updated_at=now,
            config=config,
        )


async def _journal_end(
    store: Store, run_id: str, status: str, outcome: RefactorOutcome | None
) -> None:
    summary = outcome.totals() if outcome is not None else None
    fields: dict[str, Any] = {"status": status, "updated_at": time.time()}
    if summary is not None:
        fields["summary"] = summary
    await store.update_run(run_id, **fields)
