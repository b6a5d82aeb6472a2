"""The runs the server executes: admission control, idempotency, cancel, restarts, their tasks.

`RunManager` is the one long-lived component that owns the runs: `run()` holds the task group
every run executes in, so no run outlives the server. Each run calls the same functions as the
CLI (`_execute`, `_resume`); its state is read from the journal, and this module only keeps what
the journal cannot know: that a run is still queued, was cancelled, or crashed. Every accepted
run is written to the `SubmissionBook` before the client hears 202, so a server that dies (even
by SIGKILL) carries its unfinished runs on when it starts again, or marks them interrupted.
A run on a remote executor (Temporal) is cancelled where it runs and, after a restart, waited
for again rather than resumed here; its approvals are the executor's (`approvals`, `answer`).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import TaskGroup, TaskStatus

from corral.agents import CorralConfig, RunnerHooks, RunRecord, Store, check_role
from corral.tools import CorralError, ToolServices

from ..fanout import plan_fanout, resume_fanout
from ..runs import (
    FANOUT_KINDS,
    ApprovalRefused,
    Executor,
    RunSetup,
    UnknownRunApproval,
    new_id,
)
from ._approvals import ApprovalBoard
from ._entries import CANCELLED, FAILED, INTERRUPTED, QUEUED, RUNNING, RunEntry, ServiceLimits
from ._errors import ApprovalClosed, QueueFull, RunBusy, RunRejected, UnknownApproval
from ._execute import ServiceRequest, execute
from ._models import RUN_REQUEST, ExecRequest, FanoutRequest, request_fingerprint
from ._pipelines import check_pipeline, server_path
from ._policy import ServicePolicy, resolve_run_config
from ._resume import journaled_fanout, resume_run
from ._submissions import MAX_KEY_LENGTH, Submission, SubmissionBook, same_request
from ._wakeups import LocalWakeups, Wakeups

logger = logging.getLogger(__name__)

CLEANUP_TIMEOUT = 10.0
REMOTE_CANCEL_GRACE = 30.0
"""How long a cancelled remote run may take to journal its agents' ends before the server
stops waiting for it."""
CARRIED_ON_BY_ID = frozenset({"fanout", "review", "triage"})
"""Kinds that, started again under a journaled run's id with the same inputs, carry it on."""


class _NotifyHooks(RunnerHooks):
    """Tells the run's followers that an event was journaled, so streams follow with no delay."""

    def __init__(self, notify: Callable[[], None]) -> None:
        self._notify = notify

    def event(self, agent_id: str, seq: int, kind: str, payload: Mapping[str, Any]) -> None:
        self._notify()


class RunManager:
    """Admits, executes and cancels runs; `run()` must be started before `submit`."""

    def __init__(
        self,
        store: Store,
        book: SubmissionBook,
        *,
        env: Mapping[str, str] | None = None,
        limits: ServiceLimits,
        executor: Executor | None = None,
        policy: ServicePolicy | None = None,
        wakeups: Wakeups | None = None,
    ) -> None:
        self.store = store
        self.wakeups: Wakeups = wakeups or LocalWakeups()
        """What wakes the followers of a run when its journal grows, in any process."""
        self.executor = executor
        self.book = book
        self.limits = limits
        self._stopping = False
        self._env = os.environ if env is None else env
        self._slots = anyio.Semaphore(max(1, limits.max_running))
        self.policy = policy
        """What requests may ask for; the server's own config's when None (read at `run`)."""
        self._runs: dict[str, RunEntry] = {}
        self._keys: dict[str, tuple[str, str | None]] = {}
        """Idempotency-Key -> (run id, the request's fingerprint)."""
        self._preparing = 0
        """Submissions admitted and not yet registered: they hold a slot of the queue."""
        self._tg: TaskGroup | None = None
        self.approvals = ApprovalBoard()

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        if self.policy is None:
            self.policy = await anyio.to_thread.run_sync(ServicePolicy.of_server, self._env)
        async with anyio.create_task_group() as tg:
            self._tg = tg
            await self._recover(tg)
            task_status.started()
            try:
                await anyio.sleep_forever()
            finally:
                self._stopping = True
                self._tg = None

    def get(self, run_id: str) -> RunEntry | None:
        return self._runs.get(run_id)

    @property
    def entries(self) -> list[RunEntry]:
        return list(self._runs.values())

    async def listed_entries(self, journal: Collection[str]) -> list[RunEntry]:
        """This server's runs, for a listing that read the run ids `journal` from the journal:
        not those deleted from it since they ended, which are forgotten (`_forget_deleted`)."""
        for entry in list(self._runs.values()):
            if entry.finished and entry.journaled and entry.run_id not in journal:
                await self._forget_deleted(entry.run_id)  # asks the journal again: one may
                # have ended between the listing's read and now
        return list(self._runs.values())

    async def known(self, run_id: str, record: RunRecord | None) -> RunEntry | None:
        """`get(run_id)`, given the journal's `record` of it just read: None for a run deleted
        from the journal since it ended (forgotten then)."""
        entry = self._runs.get(run_id)
        gone = entry is not None and record is None and entry.finished and entry.journaled
        if gone and await self._forget_deleted(run_id):
            return None
        return entry

    async def _forget_deleted(self, run_id: str) -> bool:
        """Forget `run_id` (entry, Idempotency-Key, submission) if the journal no longer
        holds it; whether it was forgotten."""
        if await self.store.get_run(run_id) is not None:
            return False
        self._runs.pop(run_id, None)
        for key in [k for k, (run, _) in self._keys.items() if run == run_id]:
            del self._keys[key]
        await self.book.forget(run_id)
        logger.info("run %s was deleted from the journal; the server forgets it", run_id)
        return True

    async def submit(self, request: ServiceRequest, key: str | None) -> str:
        """Admit a run and return its id (or the id of the one submitted with the same key).

        The queue's slot is taken before the first await, so submissions still being prepared
        count against `max_queued`; `IdempotencyConflict` if `key` came with another request.
        """
        fingerprint = request_fingerprint(request)
        if key is not None and len(key) > MAX_KEY_LENGTH:
            raise RunRejected(f"the Idempotency-Key is over {MAX_KEY_LENGTH} characters")
        if key is not None and (earlier := await self._earlier(key)) is not None:
            return same_request(key, *earlier, fingerprint)  # a replay takes no queue slot
        with self._queue_slot() as hand_over:
            entry = await self._prepare(request)
            if key is not None and key in self._keys:  # the same key arrived while we prepared
                return same_request(key, *self._keys[key], fingerprint)
            if self._tg is None:
                raise RunRejected("the server is shutting down; submit the run again later")
            self._runs[entry.run_id] = entry
            hand_over()
            await self._register(entry, key, fingerprint)
            self._tg.start_soon(self._execute, entry, name=f"run {entry.run_id}")
        return entry.run_id

    @contextmanager
    def _queue_slot(self) -> Iterator[Callable[[], None]]:
        """Admit a run and hold its place in the queue while it is prepared; call the function
        it gives once the run's entry is registered, which holds the place from then on.

        Entered with no await between the check and the hold, so concurrent submissions
        cannot all pass one check (`QueueFull` when the queue is full)."""
        self._admit()
        self._preparing += 1
        held = True

        def hand_over() -> None:
            nonlocal held
            if held:
                self._preparing, held = self._preparing - 1, False

        try:
            yield hand_over
        finally:
            hand_over()

    async def _earlier(self, key: str) -> tuple[str, str | None] | None:
        """The run `key` was first used for, with that request's fingerprint, if any; none
        when that run has been deleted from the journal since (the key starts a new run)."""
        if key in self._keys:
            run_id, fingerprint = self._keys[key]
            entry = self._runs.get(run_id)
            journaled = entry is not None and entry.finished and entry.journaled
            if journaled and await self._forget_deleted(run_id):
                return None
            return run_id, fingerprint
        kept = await self.book.for_key(key)
        if kept is None:
            return None
        if kept.finished and kept.journaled and await self._forget_deleted(kept.run_id):
            return None
        return kept.run_id, kept.fingerprint

    async def _register(self, entry: RunEntry, key: str | None, fingerprint: str) -> None:
        if key is not None:
            self._keys[key] = (entry.run_id, fingerprint)
        try:
            await self.book.add(_submission(entry, key, fingerprint))
        except BaseException:
            self._runs.pop(entry.run_id)
            self._keys.pop(key or "", None)
            raise

    async def status(self, run_id: str) -> str | None:
        """What a client is told about `run_id`: None if neither the server nor journal knows it."""
        entry = self._runs.get(run_id)
        if entry is not None:
            return await self.status_of(entry)
        record = await self.store.get_run(run_id)
        return record.status if record is not None else None

    async def _recover(self, tg: TaskGroup) -> None:
        """Take up the runs a previous server process accepted and left unfinished."""
        for submission in await self.book.unfinished():
            entry = await self._recovered_entry(submission)
            if entry is None:
                continue
            self._runs[entry.run_id] = entry
            if submission.key is not None:
                self._keys[submission.key] = (entry.run_id, submission.fingerprint)
            if entry.finished:
                await self._settle(entry)
            else:
                tg.start_soon(self._execute, entry, name=f"run {entry.run_id}")

    async def _recovered_entry(self, submission: Submission) -> RunEntry | None:
        run_id = submission.run_id
        record = await self.store.get_run(run_id)
        try:
            request = RUN_REQUEST.validate_python(submission.request)
            config, cwd = await anyio.to_thread.run_sync(self._resolve, request)
        except (CorralError, ValueError) as exc:
            logger.error("run %s cannot be carried on after a restart: %s", run_id, exc)
            if record is not None and record.status in (RUNNING, QUEUED, INTERRUPTED):
                await self.store.update_run(run_id, status=FAILED, updated_at=time.time())
            await self.book.finish(run_id, FAILED)
            return None
        entry = RunEntry(run_id, request, config, cwd, created_at=submission.created_at)
        entry.resumed = entry.journaled = record is not None
        if self.limits.on_restart == "interrupt":
            entry.status, entry.finished = INTERRUPTED, True
            entry.error = "the server restarted and [service] on_restart is interrupt"
        action = "carried on" if entry.resumed else "started"
        logger.info("run %s: %s after a restart", run_id, "left" if entry.finished else action)
        return entry

    @property
    def remote(self) -> bool:
        """Whether runs execute elsewhere (Temporal), not in this process."""
        return self.executor is not None and self.executor.kind != "local"

    async def cancel(self, run_id: str) -> RunEntry | None:
        """Stop the run; a remote one is cancelled where it runs, and waited for a while, so
        its agents' ends reach the journal (and the event stream) before it is settled."""
        entry = self._runs.get(run_id)
        if entry is None or entry.finished or entry.status == CANCELLED:
            return entry
        started = entry.status == RUNNING
        entry.status = CANCELLED
        if not (started and self.remote and self._tg is not None):
            entry.scope.cancel()
            return entry
        try:
            assert self.executor is not None
            await self.executor.cancel(run_id)
        except CorralError as exc:
            logger.warning("run %s: %s; the server stops waiting for it", run_id, exc)
            entry.scope.cancel()
            return entry
        self._tg.start_soon(_stop_waiting, entry, name=f"cancel {run_id}")
        return entry

    async def retry_failed(self, run_id: str) -> RunEntry | None:
        """Run a journaled fan-out's failed items again with fresh agents, keeping the done ones
        (`corral resume RUN --retry-failed`); None if the journal has no such run."""
        current = self._runs.get(run_id)
        if current is not None and not current.finished:
            raise RunBusy(f"run {run_id} is still executing on this server; retry it once it ends")
        record = await self.store.get_run(run_id)
        if record is None:
            return None
        if record.kind not in FANOUT_KINDS:
            raise RunRejected(
                f"run {run_id} is a {record.kind} run: only fan-outs have failed items to run again"
            )
        with self._queue_slot() as hand_over:
            request = journaled_fanout(record, await self.store.items(run_id))
            config, cwd = await anyio.to_thread.run_sync(self._resolve, request)
            if self._tg is None:
                raise RunRejected("the server is shutting down; retry the run later")
            entry = RunEntry(run_id, request, config, cwd, resumed=True, retry_failed=True)
            self._runs[run_id] = entry
            hand_over()
            self._tg.start_soon(self._execute, entry, name=f"retry {run_id}")
        return entry

    async def list_approvals(self, run_id: str) -> list[dict[str, Any]]:
        """The run's approvals as the API shows them, oldest first, wherever the run executes."""
        shown = [approval.to_json() for approval in self.approvals.list(run_id)]
        if self.executor is not None and self.remote:
            shown += await self.executor.approvals(run_id, self.store)
        return shown

    async def answer_approval(
        self, approval_id: str, approve: bool, reason: str | None
    ) -> dict[str, Any]:
        """Answer a pending approval: `UnknownApproval` or `ApprovalClosed` when it cannot be."""
        try:
            return self.approvals.answer(approval_id, approve, reason).to_json()
        except UnknownApproval:
            if self.executor is None or not self.remote:
                raise
        try:
            return await self.executor.answer(
                approval_id, approve=approve, reason=reason, journal=self.store
            )
        except UnknownRunApproval as exc:
            raise UnknownApproval(str(exc)) from exc
        except ApprovalRefused as exc:
            raise ApprovalClosed(str(exc)) from exc

    def _admit(self) -> None:
        live = [e for e in self._runs.values() if not e.finished]
        waiting = sum(1 for e in live if e.status == QUEUED) + self._preparing
        running = sum(1 for e in live if e.status == RUNNING)
        free = max(0, self.limits.max_running - running)
        if waiting >= self.limits.max_queued + free:
            raise QueueFull(
                f"{running} runs are running and {waiting} waiting, the most this server "
                f"allows; retry in {self.limits.retry_after} s",
                self.limits.retry_after,
            )

    async def _prepare(self, request: ServiceRequest) -> RunEntry:
        run_id = request.run_id or new_id("run")
        taken = await self.store.get_run(run_id) is not None or await self.book.get(run_id)
        if run_id in self._runs or taken:
            raise RunRejected(f"run id {run_id!r} is taken; choose another or leave it out")
        config, cwd = await anyio.to_thread.run_sync(self._resolve, request)
        return RunEntry(run_id, request, config, cwd)

    def _resolve(self, request: ServiceRequest) -> tuple[CorralConfig, Path]:
        """The run's folder and config, with its inputs checked against the server's policy;
        `InvalidInput` (a 422 naming the rule) if bad. Folders are checked before they are
        looked at, so a refusal says nothing of what exists outside the allowed roots."""
        policy = self.policy
        assert policy is not None, "RunManager.run() sets the policy before runs are taken"
        cwd = policy.check_folder(server_path(request.cd) if request.cd else policy.workdir, "cd")
        if not cwd.is_dir():
            raise RunRejected(f"cd {str(cwd)!r} is not a directory on the server")
        if isinstance(request, FanoutRequest):
            plan_fanout(request.items, request.template, request.result_schema)
        elif not isinstance(request, ExecRequest):
            if request.repo is not None:
                policy.check_folder(server_path(request.repo), "repo")
            cwd = check_pipeline(request, cwd)
        overrides = {
            "model": request.model,
            "base_url": request.base_url,
            "model_provider_api": request.api,
            "sandbox_mode": request.sandbox,
        }
        config = resolve_run_config(
            policy, cwd=cwd, env=self._env, overrides=overrides, settings=request.config
        )
        if isinstance(request, ExecRequest):
            check_role(request.role, config.agents.roles)
        return config, cwd

    async def _execute(self, entry: RunEntry) -> None:
        try:
            with entry.scope:
                async with self._slots:
                    entry.status = RUNNING
                    async with anyio.create_task_group() as tg:
                        follow = entry.log.follow
                        tg.start_soon(follow, self.store, entry.run_id, _ended(entry), self.wakeups)
                        try:
                            await self._work(entry)
                        finally:
                            entry.finished = True
                            self.wakeups.notify(entry.run_id)
        except Exception as exc:  # the one boundary: a run's crash must not stop the server
            if entry.status == CANCELLED:  # a remote run's wait ends in its cancellation
                logger.info("run %s cancelled: %s", entry.run_id, _describe(exc))
            else:
                logger.exception("run %s failed", entry.run_id)
                entry.status, entry.error = FAILED, _describe(exc)
        finally:
            entry.finished = True
            entry.done.set()
            with anyio.move_on_after(CLEANUP_TIMEOUT, shield=True):
                await self._settle(entry)

    async def _work(self, entry: RunEntry) -> None:
        notify = partial(self.wakeups.notify, entry.run_id)
        approver = self.approvals.approver(entry.run_id, self.store, notify)
        setup = RunSetup(
            hooks=_NotifyHooks(notify),
            env=self._env,
            services=ToolServices(approver=approver),
            executor=self.executor,
        )
        # Started again under its id, a fan-out (review and triage are fan-outs) carries on what
        # the journal holds and rebuilds its report, and a remote run joins its workflow, which
        # outlived the server. An exec run is resumed by replay; a refactor is refused.
        carried_by_id = self.remote or entry.request.kind in CARRIED_ON_BY_ID
        if entry.retry_failed:
            await resume_fanout(entry.config, entry.run_id, setup=setup, retry_failed=True)
            return
        if entry.resumed and not carried_by_id:
            await resume_run(entry.run_id, config=entry.config, setup=setup, store=self.store)
            return
        await execute(
            entry.request,
            config=entry.config,
            cwd=entry.cwd,
            setup=setup,
            run_id=entry.run_id,
            store=self.store,
        )

    async def _settle(self, entry: RunEntry) -> None:
        """Leave the journal consistent: a run stopped mid-way is `interrupted`, not `running`.

        A run the server's own stop interrupted stays unfinished in the book, to be carried on
        at the next start; every other run gets its final word there.
        """
        record = await self.store.get_run(entry.run_id)
        entry.journaled = record is not None
        open_in_journal = record is not None and record.status in (RUNNING, QUEUED)
        # A run cancelled by the server's stop may have journaled `interrupted` itself.
        unfinished = record is None or open_in_journal or record.status == INTERRUPTED
        held_over = self._stopping and entry.status in (QUEUED, RUNNING) and unfinished
        # A remote run's workflow goes on without this server: the journal is its to write.
        if open_in_journal and not (held_over and self.remote):
            final = INTERRUPTED if entry.status == CANCELLED or held_over else FAILED
            await self.store.update_run(entry.run_id, status=final, updated_at=time.time())
        await entry.log.read_round(self.store, entry.run_id)
        ending: dict[str, Any] = {"status": await self.status_of(entry)}
        if held_over:
            ending = {
                "status": INTERRUPTED,
                "error": "the server stopped; it carries the run on when it starts again",
            }
        else:
            await self.book.finish(entry.run_id, ending["status"], journaled=entry.journaled)
        if entry.error is not None:
            ending["error"] = entry.error
        entry.log.finish(ending)

    async def status_of(self, entry: RunEntry) -> str:
        """What a client is told: the service's word while queued or when it stopped the run."""
        if entry.status in (QUEUED, CANCELLED, FAILED, INTERRUPTED):
            return entry.status
        record = await self.store.get_run(entry.run_id)
        return record.status if record is not None else entry.status


async def _stop_waiting(entry: RunEntry) -> None:
    """Give a cancelled remote run `REMOTE_CANCEL_GRACE` s to end, then stop waiting for it."""
    with anyio.move_on_after(REMOTE_CANCEL_GRACE):
        await entry.done.wait()
    entry.scope.cancel()


def _ended(entry: RunEntry) -> Callable[[], bool]:
    return lambda: entry.finished


def _submission(entry: RunEntry, key: str | None, fingerprint: str) -> Submission:
    # The folder is stored resolved: a restarted server may run from another directory.
    request = entry.request.model_copy(update={"cd": str(entry.cwd)})
    stored = request.model_dump(mode="json", by_alias=True, exclude_none=True)
    return Submission(entry.run_id, key, stored, entry.created_at, fingerprint)


def _describe(exc: Exception) -> str:
    if isinstance(exc, CorralError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
