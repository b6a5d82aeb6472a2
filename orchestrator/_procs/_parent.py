"""The parent side of a fan-out in several processes: it starts the workers, deals the items,
runs its own share of them, and is the one place the run's rate limits and budget are kept.

Items are dealt one at a time to whichever process has room (each may run its share of the run's
concurrency at once, and never more than the concurrency in all; this one starts on its share while
the others start up, and runs the share of a worker process that was lost too, so the run keeps its
concurrency), so an item is handed to exactly one process at a time. Permits, budget charges and
the workers' hook calls come back over each worker's channel. A worker process that ends before it
is told to stop (killed, out of memory) does not fail the run, nor does one that is alive but
silent past its heartbeat timeout (`_heartbeat`: stopped, deadlocked, its event loop blocked),
which is killed with its process group: once it is gone for sure (reaped), the items it had not
finished are read back from the journal and dealt again, to another process or this one, which
carries each on by replay as `corral resume` would (its ledger decides what already ran). However
the run ends, every worker process has exited, or has been killed, before `run_in_processes`
returns.
"""

from __future__ import annotations

import logging
import math
import os
import socket
import subprocess
import sys
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import anyio
from anyio.abc import Process, TaskGroup

from corral.agents import (
    AgentRecord,
    AgentStatus,
    CorralConfig,
    ItemRecord,
    ModelRequest,
    ModelResponse,
    RunnerHooks,
    SafeHooks,
    Usage,
)
from corral.agents.model import is_loopback_url
from corral.tools import OperationFailed

from .._ratelimit import RateLimiterRegistry
from ._budget import BudgetDesk, SharedBudget, has_run_limits
from ._deal import Deal, LocalWorker, ReadItems
from ._heartbeat import Silence, beat_interval, kill_group, watch_silence
from ._permits import PermitDesk
from ._wire import Channel, Message, MessageTooLarge

STOP_TIMEOUT = 10.0
"""How long a worker process may take to stop its agents and exit before it is killed."""
START_TIMEOUT = 120.0
"""How long a worker process may take to open the run (imports, journal, MCP servers)."""
_FINAL = ("done", "failed")
logger = logging.getLogger(__name__)
RELAYED = ("agent_started", "turn_ended", "model_call_ended", "event")
"""The hooks a worker process hands its parent; the others stay in the worker. An answered
model call arrives as its model and usage alone (no input, no output items)."""


class WorkerProcessGone(OperationFailed):
    """A worker process ended before the run was done with it, and its items cannot be dealt
    again (the run gave no way to read them back)."""


@dataclass(frozen=True)
class ProcessRun:
    """What the parent hands every worker process."""

    run_id: str
    config: CorralConfig
    processes: int
    concurrency: int
    limiters: RateLimiterRegistry
    budget: SharedBudget
    hooks: RunnerHooks
    env: Mapping[str, str] | None = None
    base_url: str | None = None
    local: Callable[[ItemRecord], Awaitable[None]] | None = None
    """Runs one item in this process, which then counts as one of the `processes`: it takes
    items at once, while the others start up, and its own spare CPU is not wasted."""
    read_back: ReadItems | None = None
    """How a lost worker process's items are read back to be dealt again; None: its loss fails
    the run (`WorkerProcessGone`)."""

    def init_message(self) -> Message:
        # Only what the parent's hooks watch crosses the channel: a progress line needs no
        # journal events, and hooks that watch nothing need nothing at all.
        relay = [name for name in RELAYED if _overrides(self.hooks, name)]
        return {
            "op": "init",
            "config": self.config.model_dump(mode="json"),
            "run_id": self.run_id,
            "env": dict(self.env) if self.env is not None else None,
            "base_url": self.base_url,
            "deadline": self.budget.deadline,
            "share_budget": has_run_limits(self.budget.limits),
            "relay_hooks": relay,
        }


async def run_in_processes(
    run: ProcessRun, records: list[ItemRecord], owners: dict[int, AgentRecord]
) -> None:
    """Carry every unfinished item of `records` to `done` or `failed` in `run.processes`
    processes; `owners` is each item's agent to restore (missing: start afresh)."""
    todo = [r for r in records if r.status not in _FINAL]
    if not todo:
        return
    count = max(1, min(run.processes, len(todo)))
    share = math.ceil(run.concurrency / count)
    owned = [(r, owners[r.index].agent_id if r.index in owners else None) for r in todo]
    deal = Deal(deque(owned), len(todo), run.concurrency)
    try:
        await _run_all(run, deal, count, share, {})
    except BaseExceptionGroup as group:
        raise _first(group) from None
    finally:
        run.budget.post = None


async def _run_all(
    run: ProcessRun,
    deal: Deal,
    count: int,
    share: int,
    posts: dict[int, Callable[[Message], None]],
) -> None:
    desk = BudgetDesk(run.budget, posts)
    if has_run_limits(run.budget.limits):
        run.budget.post = desk.local_spent
    workers = [
        _WorkerProcess(number, run, deal, share, desk)
        for number in range(count - 1 if run.local is not None else count)
    ]
    async with anyio.create_task_group() as tg:
        for worker in workers:
            deal.workers.append(worker)
            posts[worker.number] = worker.post
            tg.start_soon(worker.run)
        if run.local is not None:
            deal.local = LocalWorker(run.local, deal, share)
            tg.start_soon(deal.local.run)
        await deal.all_final.wait()
        for worker in workers:
            worker.stop()


def _first(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The error to report of a task group's: a worker process's end before anything else."""
    gone = group.subgroup(lambda exc: isinstance(exc, WorkerProcessGone))
    found: BaseException = gone if gone is not None else group
    while isinstance(found, BaseExceptionGroup) and len(found.exceptions) == 1:
        found = found.exceptions[0]
    while isinstance(found, BaseExceptionGroup):
        found = found.exceptions[0]
    return found


class _WorkerProcess:
    def __init__(self, number: int, run: ProcessRun, deal: Deal, share: int, desk: BudgetDesk):
        self.number = number
        self.run_spec = run
        self.deal = deal
        self.share = share
        self.desk = desk
        self.in_flight = 0
        self.dealt: dict[int, tuple[ItemRecord, str | None]] = {}
        """The items handed to this process and not yet reported final, by index."""
        self.stopping = False
        self.ready = False
        self.channel: Channel | None = None
        self.hooks = SafeHooks(run.hooks)
        self.timeout = run.config.agents.fanout_heartbeat_timeout_sec
        self.silence = Silence()
        self.watching = False
        self.killed: str | None = None
        """Why this process was killed before it could end by itself (None: it was not)."""

    def post(self, message: Message) -> None:
        if self.channel is not None:
            self.channel.post(message)

    def stop(self) -> None:
        self.stopping = True
        self.post({"op": "stop"})

    async def run(self) -> None:
        ours, theirs = socket.socketpair()
        try:
            process = await _spawn(theirs.fileno())
        finally:
            theirs.close()
        try:
            self.channel = channel = await Channel.from_socket(ours)
            async with anyio.create_task_group() as tg:
                tg.start_soon(channel.run)
                channel.post(self.run_spec.init_message())
                if self.stopping:  # every item was final before this worker was up
                    channel.post({"op": "stop"})
                await self._serve(channel, tg, process)
                tg.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                if self.channel is not None:
                    with anyio.move_on_after(STOP_TIMEOUT):
                        await self.channel.flush_and_close()
                await _reap(process)
        if not self.stopping:
            what = self.killed or f"ended with exit code {process.returncode}"
            await self._hand_over(process, what)

    async def _watch(self, process: Process, tg: TaskGroup) -> None:
        """Kill this worker process once it has been silent past its heartbeat timeout."""
        await watch_silence(self.silence, beat_interval(self.timeout))
        self._kill(process, f"went silent for {self.timeout:g} s (no heartbeat) and was killed")
        tg.cancel_scope.cancel()

    def _heard(self, process: Process, tg: TaskGroup) -> None:
        """A word from the worker. The first (a beat, once it has read its `init`) starts the
        watch: what came before is its interpreter starting, which `START_TIMEOUT` bounds."""
        if not self.watching:
            self.watching = True
            tg.start_soon(self._watch, process, tg)
        self.silence.heard()

    def _kill(self, process: Process, why: str) -> None:
        if process.returncode is None:  # not reaped yet: its pid is still its own
            self.killed = why
            kill_group(process.pid)

    async def _hand_over(self, process: Process, what: str) -> None:
        """This process is gone for sure (reaped): deal its unfinished items again."""
        self.stopping = True
        held, self.dealt, self.in_flight = list(self.dealt.values()), {}, 0
        read_back = self.run_spec.read_back
        if read_back is None or process.returncode is None:
            # Not reaped (it did not die even when killed): it might still write its items, so
            # dealing them again could run one twice. The run stops; `corral resume` is safe.
            raise self._gone(process, what)
        if self.deal.local is None and all(worker.stopping for worker in self.deal.workers):
            raise self._gone(process, what + " and no other process is left to take its items")
        logger.warning(
            "worker process %d (pid %s) of run %s %s; its %d unfinished items go to the "
            "other processes",
            self.number,
            process.pid,
            self.run_spec.run_id,
            what,
            len(held),
        )
        self.deal.hand_back(await read_back([record.index for record, _ in held]), len(held))

    def _gone(self, process: Process, what: str) -> WorkerProcessGone:
        run_id = self.run_spec.run_id
        return WorkerProcessGone(
            f"worker process {self.number} (pid {process.pid}) of run {run_id} {what}; the run "
            f"stopped: carry it on with `corral resume {run_id}`"
        )

    async def _serve(self, channel: Channel, tg: TaskGroup, process: Process) -> None:
        permits = PermitDesk(self.run_spec.limiters, channel, tg)
        try:
            with anyio.fail_after(START_TIMEOUT) as startup:
                async for message in channel.messages():
                    self._heard(process, tg)
                    op = message.get("op")
                    if op == "ready" and not self.ready:
                        self.ready = True
                        startup.deadline = float("inf")
                        self.deal.deal_more()
                    elif op == "finished" and self.dealt.pop(int(message["index"]), None):
                        self.in_flight -= 1
                        self.deal.finished()
                    elif op == "attempt":
                        permits.ask(message)
                    elif op == "used":
                        permits.used(message)
                    elif op == "release":
                        permits.give_back(message)
                    elif op == "spent":
                        self.desk.spent(self.number, message)
                    elif op == "hook":
                        self._relay(message)
        except TimeoutError:
            logger.warning(
                "worker process %d did not start within %g s", self.number, START_TIMEOUT
            )
            self._kill(process, f"did not start within {START_TIMEOUT:g} s and was killed")
        finally:
            permits.drop_all()

    @property
    def serving(self) -> bool:
        """Whether this process takes items: started, and not stopped or lost."""
        return self.ready and not self.stopping

    @property
    def lost(self) -> bool:
        """Whether this process ended before the run was done with it."""
        return self.stopping and not self.deal.all_final.is_set()

    def deal_more(self) -> None:
        while self.serving and self.in_flight < self.share:
            taken = self.deal.take()
            if taken is None:
                return
            record, owner = taken
            self.in_flight += 1
            self.dealt[record.index] = (record, owner)
            self._post_item(record, owner)

    def _post_item(self, record: ItemRecord, owner: str | None) -> None:
        if self.channel is None:
            return
        try:
            message = {"op": "item", "record": record.model_dump(mode="json"), "owner": owner}
            self.channel.post_checked(message)
        except MessageTooLarge as exc:
            # Sent anyway, it would end every worker process it was dealt to, one after another.
            run_id = self.run_spec.run_id
            raise MessageTooLarge(
                f"item {record.index} of run {run_id} is too large to hand to a worker process "
                f"({exc}); carry the run on in one process: "
                f"`corral resume {run_id} --processes 1`"
            ) from exc

    def _relay(self, message: Message) -> None:
        name, args = message.get("name"), message.get("args", [])
        if name == "agent_started":
            self.hooks.agent_started(*args)
        elif name == "turn_ended":
            self.hooks.turn_ended(args[0], args[1], AgentStatus(args[2]))
        elif name == "model_call_ended":
            agent_id, model, usage = args
            request = ModelRequest(model=model, instructions="", input=())
            answer = ModelResponse(items=[], usage=Usage.model_validate(usage), model=model)
            self.hooks.model_call_ended(agent_id, request, answer, None)
        elif name == "event":
            self.hooks.event(*args)


def _overrides(hooks: RunnerHooks, name: str) -> bool:
    return getattr(type(hooks), name) is not getattr(RunnerHooks, name)


def _worker_environ() -> dict[str, str]:
    env = dict(os.environ)
    # The workers import this very corral, wherever the parent found it.
    root = str(Path(sys.modules["corral"].__file__ or "").resolve().parent.parent)
    paths = [root, env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(p for p in paths if p))
    return env


async def _spawn(fd: int) -> Process:
    env = _worker_environ()
    # -P: the folder corral runs in is the user's repository, whose `json.py` or `corral/`
    # must never be imported by a worker (which holds the model key, outside the sandbox).
    # A process group of its own, so a wedged worker is killed with whatever it started; it
    # ignores Ctrl-C anyway, and sees its channel close if this process dies.
    return await anyio.open_process(
        [sys.executable, "-P", "-m", "corral.orchestrator._procs", str(fd)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=None,
        pass_fds=(fd,),
        env=env,
        start_new_session=True,
    )


async def _reap(process: Process) -> None:
    """Wait for the worker to exit after its channel closed; kill it if it does not."""
    with anyio.move_on_after(STOP_TIMEOUT):
        await process.wait()
    if process.returncode is None:
        kill_group(process.pid)
        with anyio.move_on_after(STOP_TIMEOUT):
            await process.wait()
    await process.aclose()


def default_processes(
    items: int, concurrency: int, cores: int | None = None, *, local_model: bool = False
) -> int:
    """Worker processes for a fan-out of `items` left at `concurrency` at once when none is
    asked for: one per core up to 4, but only when each gets enough agents to pay for its
    start-up (32 at once, 64 items); else 1, the in-process path. A model server on this
    machine (`local_model`: a loopback endpoint) keeps a core for itself: a real one (a model
    run on this machine's CPU) wants every core it can get. The scripted server no longer
    does: since round 5 it costs about a fifth of the client's CPU per turn, not half
    (`benchmarks._turn_processes`; docs/performance.md)."""
    cpus = cores if cores is not None else (os.cpu_count() or 1)
    if local_model:
        cpus -= 1
    return max(1, min(cpus, 4, concurrency // 32, items // 64))


def is_loopback(base_url: str | None) -> bool:
    """Whether `base_url` names this machine (localhost or a loopback address)."""
    return is_loopback_url(base_url or "")
