"""Running a fan-out, and resuming one: the journal's run and items around a `WorkerPool`.

`run_fanout` checks every input first (`plan_fanout`), then journals the run with its settings
and all its items, and runs the workers; given the id of a run already journaled with the same
inputs, it carries that run on instead. `resume_fanout` needs only the run's id. Both read the
outcomes back from the journal, record the run's summary, hand a completed run to memory once
(`_remember`), and write the results file. The workers run in this process, or in several
(`processes`, `orchestrator._procs`) sharing the journal, the rate limiters and the run's budget.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

import anyio
import anyio.to_thread
from pydantic import ValidationError

from corral.agents import (
    AgentRecord,
    AgentSpec,
    CorralConfig,
    ItemRecord,
    RunRecord,
    Store,
    UnknownRun,
    open_store,
)
from corral.tools import ApprovalPolicy, InvalidInput, OperationFailed

from .._run import price_for
from ..runs import (
    FANOUT_KINDS,
    FanoutJob,
    FanoutKind,
    RunSetup,
    StartCallback,
    open_run,
)
from ._errors import FanoutInputError, NotAFanoutRun
from ._items import FanoutItem
from ._outcome import FAILED, FINAL_STATUSES, PENDING, FanoutOutcome, ItemOutcome, write_results
from ._plan import (
    STDOUT,
    FanoutPlan,
    FanoutSettings,
    prepare_fanout,
)
from ._pool import SlotBook, WorkerPool, item_owners
from ._remember import remember_fanout
from ._report import REPORT_RESULT
from ._schema import ResultSchema
from ._template import Template

FANOUT: FanoutKind = "fanout"
CLEANUP_TIMEOUT = 10.0

_Begin = Callable[[Store], Awaitable[list[ItemRecord]]]


async def run_fanout(config: CorralConfig, job: FanoutJob, setup: RunSetup) -> FanoutOutcome:
    """One worker per item of `job` on its template filled from it, each reporting a result
    valid under its schema; here, in this process (`Executor.run` is how callers start one).

    `concurrency` defaults to `config.agents.fanout_concurrency`; the workers' shape is
    `job.worker`; `out` is a results file, or "-" for the caller to print them.
    """
    env = _environ(setup)
    ready = prepare_fanout(config, job, env)
    run_id, settings, plan = ready.run_id, ready.settings, ready.plan
    carried_on = await _same_run_journaled(config, job.run_kind, settings, plan, run_id)
    start = _reopen_run if carried_on else partial(_journal_run, kind=job.run_kind)
    begin = partial(start, run_id=run_id, settings=settings, items=plan.items)
    carry = _Carry(run_id, settings, ready.prototype, env, begin, processes=job.processes)
    return await _carry_out(ready.config, carry, setup)


async def resume_fanout(
    config: CorralConfig,
    run_id: str,
    *,
    setup: RunSetup,
    base_url: str | None = None,
    on_start: StartCallback | None = None,
    retry_failed: bool = False,
    processes: int | None = None,
) -> FanoutOutcome:
    """Carry on fan-out run `run_id`: finished items are kept, the others carried to their end.

    With `retry_failed`, failed items run again too, each with a fresh agent; done ones are kept.
    `processes` as for `FanoutJob.processes` (chosen from the cores and what is left if None).
    """
    env = _environ(setup)
    async with open_store(config) as lookup:
        run = await lookup.get_run(run_id)
    if run is None:
        raise UnknownRun(run_id, lookup.journal)
    if run.kind not in FANOUT_KINDS:
        raise NotAFanoutRun(f"run {run_id} is a {run.kind} run, not a fan-out")
    try:
        settings = FanoutSettings.model_validate(run.config)
    except ValidationError as exc:
        raise NotAFanoutRun(f"run {run_id}'s fan-out settings cannot be read: {exc}") from exc
    prototype = settings.prototype(env, base_url, config)

    async def begin(store: Store) -> list[ItemRecord]:
        await store.update_run(run_id, status="running", updated_at=time.time())
        records = await store.items(run_id)
        if not records:
            raise FanoutInputError(
                f"run {run_id} has no items: it stopped before they were journaled; start it again"
            )
        return records

    if on_start is not None:
        setup = replace(setup, on_start=on_start)
    carry = _Carry(run_id, settings, prototype, env, begin, base_url, retry_failed, processes)
    return await _carry_out(config, carry, setup)


async def _journal_run(
    store: Store,
    *,
    run_id: str,
    settings: FanoutSettings,
    items: Sequence[FanoutItem],
    kind: FanoutKind = FANOUT,
) -> list[ItemRecord]:
    """Journal a new fan-out run (of `kind`: a pipeline's own) with its settings and every
    item, pending."""
    now = time.time()
    await store.create_run(
        RunRecord(
            run_id=run_id,
            kind=kind,
            status="running",
            created_at=now,
            updated_at=now,
            config=settings.model_dump(mode="json"),
        )
    )
    records = [ItemRecord(run_id=run_id, index=i.index, input=i.data) for i in items]
    await store.put_items(run_id, records)
    return records


async def _reopen_run(
    store: Store, *, run_id: str, settings: FanoutSettings, items: Sequence[FanoutItem]
) -> list[ItemRecord]:
    """A run journaled before with the same inputs, running again with the items it holds."""
    del settings, items  # the journal already holds them
    await store.update_run(run_id, status="running", updated_at=time.time())
    return await store.items(run_id)


async def _same_run_journaled(
    config: CorralConfig, kind: FanoutKind, settings: FanoutSettings, plan: FanoutPlan, run_id: str
) -> bool:
    """Whether `run_id` is a fan-out journaled before with these inputs, to be carried on (a
    command run again after a crash, a service restarted); another run there is refused."""
    async with open_store(config) as store:
        journaled = await store.get_run(run_id)
        if journaled is None:
            return False
        records = await store.items(run_id)
    same = (
        journaled.kind == kind
        and journaled.config.get("template") == settings.template
        and journaled.config.get("result_schema") == settings.result_schema
        and [r.input for r in records] == [i.data for i in plan.items]
    )
    if not same:
        raise FanoutInputError(
            f"run id {run_id} is taken by a {journaled.kind} run with other inputs; choose "
            f"another run id, or carry that run on with `corral resume {run_id}`"
        )
    return True


async def find_fanout_run(config: CorralConfig, target: str) -> str | None:
    """The fan-out run that `target` (a run or agent id) names, or None if it names no fan-out."""
    async with open_store(config) as store:
        agent = await store.get_agent(target)
        run = await store.get_run(agent.run_id if agent is not None else target)
    return run.run_id if run is not None and run.kind in FANOUT_KINDS else None


@dataclass(frozen=True)
class _Carry:
    """A fan-out about to be carried out: its id, settings, workers' prototype, and how its
    items are journaled or read back (`begin`)."""

    run_id: str
    settings: FanoutSettings
    prototype: AgentSpec
    env: Mapping[str, str]
    begin: _Begin
    base_url: str | None = None
    retry_failed: bool = False
    processes: int | None = None
    """Worker processes; chosen from the cores and the items left when None."""


async def _carry_out(config: CorralConfig, carry: _Carry, setup: RunSetup) -> FanoutOutcome:
    run_id, settings, prototype = carry.run_id, carry.settings, carry.prototype
    schema = ResultSchema(settings.result_schema)
    book = SlotBook(schema, settings.max_result_tries)
    providers = {**setup.tool_providers, REPORT_RESULT: book.provide}
    async with open_run(config, run_id, replace(setup, tool_providers=providers)) as runtime:
        store = runtime.store
        records = await carry.begin(store)
        owners = item_owners(await store.list_agents(run_id))
        dropped = set_aside(records, owners) if carry.retry_failed else []
        if carry.retry_failed:
            records = retry_records(records, owners)
        if setup.on_start is not None:
            left = sum(1 for r in records if r.status not in FINAL_STATUSES)
            setup.on_start(run_id, len(records), left)
        pool = WorkerPool(
            runtime=runtime,
            book=book,
            template=Template(settings.template),
            prototype=prototype,
            price=price_for(config.prices, prototype.model.model),
            env=carry.env,
            base_url=carry.base_url,
            owners=owners,
            on_queue_wait=_queue_observer(),
        )
        processes = worker_processes(
            carry.processes, records, settings, config, setup, prototype.model.base_url
        )
        try:
            if processes > 1:
                await _in_processes(pool, carry, setup, (processes, records, owners), dropped)
            else:
                await pool.run(records, settings.concurrency)
        except (anyio.get_cancelled_exc_class(), OperationFailed):
            with anyio.move_on_after(CLEANUP_TIMEOUT, shield=True):
                await store.update_run(run_id, status="interrupted", updated_at=time.time())
            raise
        outcome = await _outcome(store, run_id, settings.out)
        deadline = config.memories.extraction_timeout_sec
        await remember_fanout(runtime, prototype, settings.template, deadline)
    if outcome.out is not None:
        await anyio.to_thread.run_sync(write_results, outcome.lines(), outcome.out, run_id)
    return outcome


async def _outcome(store: Store, run_id: str, out: str | None) -> FanoutOutcome:
    records = await store.items(run_id)
    path = Path(out) if out is not None and out != STDOUT else None
    outcome = FanoutOutcome(
        run_id=run_id,
        items=tuple(ItemOutcome.from_record(r) for r in records),
        journal=store.journal,
        out=path,
        to_stdout=out == STDOUT,
    )
    status = "done" if outcome.ok else "failed"
    await store.update_run(run_id, status=status, updated_at=time.time(), summary=outcome.totals())
    return outcome


def worker_processes(
    asked: int | None,
    records: Sequence[ItemRecord],
    settings: FanoutSettings,
    config: CorralConfig,
    setup: RunSetup,
    base_url: str | None = None,
) -> int:
    """How many processes run the workers: `asked`, or chosen from the cores, the size, and
    whether the model's endpoint (`base_url`) is on this machine.

    Only the fan-out's own tools and the `never` approval policy reach other processes: the
    caller's Python tools and a terminal to ask at stay in this one, so such a run keeps to it.
    """
    from .._procs import default_processes, is_loopback

    in_process = set(setup.tool_providers) - {REPORT_RESULT}
    asks = config.approval_policy != ApprovalPolicy.NEVER
    if asked is None:
        left = sum(1 for r in records if r.status not in FINAL_STATUSES)
        if in_process or asks:
            return 1
        local = is_loopback(base_url)
        return default_processes(left, settings.concurrency, local_model=local)
    if asked > 1 and in_process:
        raise InvalidInput(
            f"the caller's own tools ({', '.join(sorted(in_process))}) cannot reach worker "
            "processes; run this fan-out with processes=1"
        )
    if asked > 1 and asks:
        raise InvalidInput(
            f"approval_policy = {config.approval_policy} asks at this terminal, which worker "
            "processes cannot reach; use --processes 1, or approval_policy = never"
        )
    return asked


async def _in_processes(
    pool: WorkerPool,
    carry: _Carry,
    setup: RunSetup,
    work: tuple[int, list[ItemRecord], dict[int, AgentRecord]],
    dropped: list[str],
) -> None:
    from .._procs import ProcessRun, SharedBudget, run_in_processes
    from ._handover import JournalReadBack

    processes, records, owners = work
    runtime = pool.runtime
    config = runtime.config
    # Before any agent starts, so this process's agents charge the budget the workers share.
    budget = SharedBudget(runtime.budget.limits, deadline=runtime.budget.deadline)
    runtime.budget = budget
    run = ProcessRun(
        run_id=carry.run_id,
        config=config,
        processes=processes,
        concurrency=carry.settings.concurrency,
        # The limiters this process's own agents go through: one per endpoint for all.
        limiters=runtime.options.clients.limiters,
        budget=budget,
        hooks=setup.hooks,
        env=setup.env,
        base_url=carry.base_url,
        local=pool.run_one,
        read_back=JournalReadBack(pool.store, carry.run_id, pool.owners, dropped),
    )
    await run_in_processes(run, records, owners)


def set_aside(records: list[ItemRecord], owners: dict[int, AgentRecord]) -> list[str]:
    """The agents whose failed items `retry_records` runs again with fresh agents."""
    return [owners[r.index].agent_id for r in records if r.status == FAILED and r.index in owners]


def retry_records(records: list[ItemRecord], owners: dict[int, AgentRecord]) -> list[ItemRecord]:
    """`records` with every failed item made pending again, and its old agent dropped from
    `owners` so a fresh one starts. Only in memory: the journal keeps the item failed until its
    new agent is journaled, so a crash in between leaves nothing half-reset."""
    fresh: list[ItemRecord] = []
    for record in records:
        if record.status == FAILED:
            owners.pop(record.index, None)
            record = record.model_copy(update={"status": PENDING, "agent_id": None, "error": None})
        fresh.append(record)
    return fresh


def _environ(setup: RunSetup) -> Mapping[str, str]:
    return os.environ if setup.env is None else setup.env


def _queue_observer() -> Callable[[float], None]:
    from corral.observability import record_queue_wait  # the OpenTelemetry SDK costs start-up time

    return record_queue_wait
