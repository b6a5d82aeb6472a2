"""The `Store` seam: what the runner, the supervisor and the CLI need from a journal.

`SQLiteStore` (embedded) and `PostgresStore` (shared) are the production implementations and
`MemoryStore` their in-memory twin; all raise the same errors and assign the same `seq` numbers
(tests/store/conformance holds them to it). Nothing here knows how events are interpreted:
the agent core gives payloads their meaning.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ._delete import DeletedRun
from ._lease import LeaseRecord
from ._records import (
    AgentRecord,
    ItemRecord,
    JournalEvent,
    LedgerEntry,
    NewEvent,
    NumberedEvent,
    RunRecord,
)


class Store(Protocol):
    """A durable journal of runs, agents, their events, batch items and tool side effects.

    Every method may be called concurrently from many tasks. Unknown ids raise `UnknownRun`,
    `UnknownAgent`, `UnknownItem` or `UnknownCall`; taken ids raise `DuplicateRecord`.
    """

    @property
    def journal(self) -> str:
        """Where the journal lives (a file path, or a URL without its password), for messages."""
        ...

    async def create_run(self, run: RunRecord) -> None: ...

    async def get_run(self, run_id: str) -> RunRecord | None: ...

    async def list_runs(self, *, status: str | None = None) -> list[RunRecord]:
        """Runs oldest first, optionally only those with `status`."""
        ...

    async def update_run(self, run_id: str, **fields: Any) -> None:
        """Change `status`, `updated_at`, `config` or `summary`."""
        ...

    async def create_agent(
        self, agent: AgentRecord, *, events: Sequence[NewEvent] = ()
    ) -> list[JournalEvent]:
        """Add an agent; its run, and its parent if it has one, must exist.

        `events`, when given, are the agent's first events (at its `created_at`), appended in the
        same transaction, all or none, and answered with their `seq`s: an agent and the note of
        its start are one write, not two."""
        ...

    async def get_agent(self, agent_id: str) -> AgentRecord | None: ...

    async def list_agents(self, run_id: str) -> list[AgentRecord]:
        """The run's agents, oldest first."""
        ...

    async def update_agent(self, agent_id: str, **fields: Any) -> None:
        """Change anything but the ids, `created_at`, `base_instructions` and `depth`."""
        ...

    async def append_event(
        self, agent_id: str, kind: str, payload: dict[str, Any], *, at: float
    ) -> JournalEvent:
        """Durably record an event and return it with the next `seq` of its agent."""
        ...

    async def append_events(
        self,
        agent_id: str,
        events: Sequence[NewEvent],
        *,
        at: float,
        agent_update: Mapping[str, Any] | None = None,
        ledger_starts: Sequence[LedgerEntry] = (),
    ) -> list[JournalEvent]:
        """Durably record consecutive events, all or none, in one transaction; answers them
        with their `seq`s (what `append_event` does for each, for one write instead of many).
        `agent_update`, when given, is an `update_agent` of the same agent in that transaction;
        `ledger_starts` are `ledger_start`s in it too (the calls a model response asked for
        that run at once: one write per response instead of one more per call)."""
        ...

    async def append_events_at(
        self, agent_id: str, first_seq: int, events: Sequence[NumberedEvent]
    ) -> list[JournalEvent]:
        """Atomically add the events of a batch numbered from `first_seq` that are not there yet.

        For writers that number events themselves and may write a batch twice (a retried
        Temporal activity): events already journaled at their seq are skipped, the rest added,
        all in one transaction. A gap or another kind at a seq raises `SeqConflict`.
        Answers the events added.
        """
        ...

    async def events(self, agent_id: str, *, after_seq: int = 0) -> list[JournalEvent]:
        """The agent's events with `seq > after_seq`, in order."""
        ...

    async def run_events(
        self, run_id: str, *, after: int = 0, limit: int | None = None
    ) -> list[JournalEvent]:
        """Up to `limit` events of every agent of the run with `run_seq > after`, in order."""
        ...

    async def put_items(self, run_id: str, items: Sequence[ItemRecord]) -> None:
        """Add batch items, all or none; an index already present raises `DuplicateRecord`."""
        ...

    async def update_item(self, run_id: str, index: int, **fields: Any) -> None:
        """Change `status`, `agent_id`, `result`, `error`, `usage` or `cost_usd`."""
        ...

    async def items(self, run_id: str) -> list[ItemRecord]:
        """The run's items by index."""
        ...

    async def ledger_start(self, entry: LedgerEntry) -> None:
        """Record a tool call as started; written BEFORE the tool runs, so a crash leaves it.

        Calls are keyed by `(agent_id, call_id)`: call ids are only unique within one agent.
        """
        ...

    async def ledger_finish(
        self,
        agent_id: str,
        call_id: str,
        *,
        output: str,
        success: bool,
        at: float,
        event: NewEvent | None = None,
    ) -> JournalEvent | None:
        """Record the outcome of the agent's started call; finishing twice is `DuplicateRecord`.

        With `event`, that event is appended in the same transaction and answered: the call's
        result reaches the ledger and the journal together or not at all.
        """
        ...

    async def ledger(self, agent_id: str) -> list[LedgerEntry]:
        """The agent's ledger in the order the calls started."""
        ...

    async def take_lease(self, lease: LeaseRecord) -> LeaseRecord:
        """Make `lease` (taken at `lease.since`) the run's one live lease, and answer it.

        A live lease of another holder that is not gone raises `RunLeaseHeld`; one that is gone
        is released, and the answer's `taken_from` says whose it was and why it was taken over.
        """
        ...

    async def renew_lease(self, run_id: str, holder: str, *, at: float) -> bool:
        """Beat the holder's live lease; False if it is no longer live (released or taken)."""
        ...

    async def release_lease(self, run_id: str, holder: str, *, at: float) -> None:
        """Let go of the holder's lease; a lease already released is left as it is."""
        ...

    async def leases(self, run_id: str) -> list[LeaseRecord]:
        """Every lease the run has had, oldest first (the live one, if any, is last)."""
        ...

    async def delete_run(self, run_id: str, *, at: float, force: bool = False) -> DeletedRun:
        """Delete the run with its agents, events, items, ledger and leases, all or none, and
        answer how many of each went.

        A run that may still be carried on (status `queued`, `pending` or `running`, or a live
        lease whose holder is not gone at `at`) raises `RunActive` unless `force`; so does a run
        whose agents another run's agents or items name, whatever `force` says.
        """
        ...

    async def aclose(self) -> None:
        """Release the journal; later calls raise `StoreClosed`. Closing twice is harmless."""
        ...
