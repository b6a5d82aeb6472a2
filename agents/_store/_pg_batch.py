"""Group commit for the PostgreSQL store: one writer task runs the writes waiting at that moment
in one transaction, each under its own savepoint.

Appends hold their run's lock until commit, and a durable commit waits for the disk, so one
write per transaction would cap a run at one commit's latency per event. Batched, a commit
carries every write that queued meanwhile. A write that fails is undone alone and its caller
gets its error. When the connection drops the batch is retried on a new one; each write saved
its answer under its id (`applied_ops`) in the same transaction, so a batch whose commit did go
through is answered from the journal, never applied twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Final, Generic, Protocol, TypeVar, cast

import anyio
import anyio.to_thread
from anyio.streams.memory import MemoryObjectReceiveStream

from ._errors import StoreClosed
from ._pg_errors import retryable, translate
from ._pg_rows import decode_result, encode_result

T = TypeVar("T")

RETRY_DEADLINE_S: Final = 30.0
"""How long an operation keeps retrying on new connections before it fails."""


class PgRunner(Protocol):
    """What a batch needs of the connections it runs on (`_pg_pool.PgRunner`)."""

    label: str

    def recover(self, attempt: int) -> None: ...

    def connection(self) -> AbstractContextManager[Any]: ...


MAX_BATCH = 256
"""The most writes one transaction holds, so a long queue still commits in steps."""


class PgJob(Generic[T]):
    """One write: a function of the connection, its id, and what became of it."""

    def __init__(self, operation: Callable[[Any], T], op_id: str) -> None:
        self.operation = operation
        self.op_id = op_id
        self.done = anyio.Event()
        self._outcome: tuple[bool, Any] | None = None

    def settle(self, ok: bool, value: Any) -> None:
        self._outcome = (ok, value)

    def outcome(self, label: str) -> T:
        if self._outcome is None:
            raise StoreClosed(f"journal {label} stopped before this write ran; nothing changed")
        ok, value = self._outcome
        if not ok:
            raise value
        return cast(T, value)


async def write_loop(runner: PgRunner, receive: MemoryObjectReceiveStream[PgJob[Any]]) -> None:
    """Run queued writes in batches until the store closes its end of the channel."""
    # Shielded, as SQLite's writer: the shielded cleanup of a cancelled run still reaches the
    # journal. It ends when the store closes the channel, which closing the store always does.
    with anyio.CancelScope(shield=True):
        async with receive:
            async for first in receive:
                batch = [first, *_waiting(receive)]
                try:
                    await anyio.to_thread.run_sync(run_batch, runner, batch)
                finally:
                    for job in batch:
                        job.done.set()


def _waiting(receive: MemoryObjectReceiveStream[PgJob[Any]]) -> list[PgJob[Any]]:
    jobs: list[PgJob[Any]] = []
    while len(jobs) < MAX_BATCH - 1:
        try:
            jobs.append(receive.receive_nowait())
        except (anyio.WouldBlock, anyio.EndOfStream):
            break
    return jobs


def run_batch(runner: PgRunner, batch: Sequence[PgJob[Any]]) -> None:
    """Run `batch` in one transaction, retrying it whole on a new connection if one drops."""
    import psycopg

    deadline = time.monotonic() + RETRY_DEADLINE_S
    attempt = 0
    while True:
        try:
            outcomes = _attempt(runner, batch, retried=attempt > 0)
        except psycopg.Error as exc:
            if not retryable(exc) or time.monotonic() > deadline:
                error = translate(exc, runner.label)
                for job in batch:
                    job.settle(False, error)
                return
        else:
            for job, (ok, value) in zip(batch, outcomes, strict=True):
                job.settle(ok, value)
            return
        attempt += 1
        runner.recover(attempt)


def _attempt(
    runner: PgRunner, batch: Sequence[PgJob[Any]], *, retried: bool
) -> list[tuple[bool, Any]]:
    """One try of the batch. Writes run without savepoints (each costs two round trips); when
    one fails, the transaction is rolled back and the batch run again without it: the writes
    before it see the same journal again, so each gets the answer it would have had."""
    failed: dict[int, BaseException] = {}
    while True:  # at most once more per write of the batch
        try:
            with runner.connection() as conn:
                return _try_batch(runner, conn, batch, failed, retried=retried)
        except _Again:
            continue


def _try_batch(
    runner: PgRunner,
    conn: Any,
    batch: Sequence[PgJob[Any]],
    failed: dict[int, BaseException],
    *,
    retried: bool,
) -> list[tuple[bool, Any]]:
    with conn.transaction():
        saved = _saved(conn, batch) if retried else {}
        outcomes: list[tuple[bool, Any]] = []
        fresh: list[tuple[str, Any]] = []
        for n, job in enumerate(batch):
            if n in failed:
                outcomes.append((False, failed[n]))
            elif job.op_id in saved:
                outcomes.append((True, decode_result(saved[job.op_id])))
            else:
                error = _one(runner, conn, job, fresh)
                if error is not None:
                    failed[n] = error
                    raise _Again
                outcomes.append((True, fresh[-1][1]))
        _save(conn, fresh)
        return outcomes


class _Again(Exception):
    """A write failed: roll the batch back and run it again without that write."""


def _saved(conn: Any, batch: Sequence[PgJob[Any]]) -> dict[str, str]:
    sql = "SELECT op_id, result FROM applied_ops WHERE op_id = ANY(%s)"
    rows = conn.execute(sql, ([job.op_id for job in batch],)).fetchall()
    return {str(op_id): str(result) for op_id, result in rows}


def _save(conn: Any, fresh: Sequence[tuple[str, Any]]) -> None:
    """Save every write's answer in one statement, in the batch's transaction."""
    if not fresh:
        return
    now = time.time()
    values = ", ".join(["(%s, %s, %s)"] * len(fresh))
    args = [v for op_id, result in fresh for v in (op_id, encode_result(result), now)]
    conn.execute(f"INSERT INTO applied_ops (op_id, result, at) VALUES {values}", args)


def _one(
    runner: PgRunner, conn: Any, job: PgJob[Any], fresh: list[tuple[str, Any]]
) -> BaseException | None:
    """Run one write; its error (to hand to its caller), or None with its answer in `fresh`."""
    import psycopg

    try:
        fresh.append((job.op_id, job.operation(conn)))
    except psycopg.Error as exc:
        if conn.broken or retryable(exc):
            raise  # the whole batch is retried on a new connection
        return translate(exc, runner.label)
    except Exception as exc:  # the write's own error (a store error): handed to its caller
        return exc
    return None
