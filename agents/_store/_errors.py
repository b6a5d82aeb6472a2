"""Errors the journal raises, every one a `StoreError` and also a caller mistake or a failure.

The store translates `sqlite3` exceptions here, once, so callers never see a driver error::

    StoreError (also CorralError)
    ├── InvalidInput: the caller's mistake, exit code 2
    │   ├── UnknownRun          no run with that id
    │   ├── UnknownAgent        no agent with that id
    │   ├── UnknownItem         the run has no batch item at that index
    │   ├── UnknownCall         no ledger entry with that call id
    │   ├── DuplicateRecord     the id is taken, or the call was already finished
    │   ├── InvalidRecord       a field that may not change, a value of the wrong type, not JSON
    │   │   └── SeqConflict     numbered events that do not fit what the agent's journal holds
    │   ├── JournalUnreadable   not SQLite, corrupt, not a corral journal, or a newer schema
    │   └── RunActive           (`_delete`) a run to delete may still run, or others point at it
    └── OperationFailed: a runtime failure
        ├── JournalFailed       SQLite failed mid-operation (locked too long, disk full, I/O)
        └── StoreClosed         the store was used after `aclose()`
"""

from __future__ import annotations

from corral.tools import CorralError, InvalidInput, OperationFailed


class StoreError(CorralError):
    """Base of every journal error; catch it to handle any store failure."""


class UnknownRun(StoreError, InvalidInput):
    """No run with the given id exists in this journal."""

    def __init__(self, run_id: str, journal: str) -> None:
        super().__init__(f"no run named {run_id!r} in {journal}; `corral runs` lists them")
        self.run_id = run_id


class UnknownAgent(StoreError, InvalidInput):
    """No agent with the given id exists in this journal."""

    def __init__(self, agent_id: str, journal: str) -> None:
        super().__init__(
            f"no agent named {agent_id!r} in {journal}; `corral status RUN` lists a run's agents"
        )
        self.agent_id = agent_id


class UnknownItem(StoreError, InvalidInput):
    """The run has no batch item at the given index."""

    def __init__(self, run_id: str, index: int, journal: str) -> None:
        super().__init__(
            f"run {run_id!r} in {journal} has no item {index}; `corral status RUN` lists its items"
        )
        self.run_id = run_id
        self.index = index


class UnknownCall(StoreError, InvalidInput):
    """No ledger entry with the given call id exists; `ledger_start` must come first."""

    def __init__(self, call_id: str, journal: str) -> None:
        super().__init__(
            f"no tool call {call_id!r} in the ledger of {journal}; "
            "record it with ledger_start before the tool runs"
        )
        self.call_id = call_id


class DuplicateRecord(StoreError, InvalidInput):
    """The id is already taken, or the outcome being recorded was already recorded."""


class InvalidRecord(StoreError, InvalidInput):
    """A record or update carries a field that may not change or a value that does not fit."""


class SeqConflict(InvalidRecord):
    """Events numbered by their writer do not line up with the agent's journal."""


class JournalUnreadable(StoreError, InvalidInput):
    """The file is not a corral journal this version can read."""


class JournalFailed(StoreError, OperationFailed):
    """SQLite failed during an operation; everything committed before it is kept."""


class StoreClosed(StoreError, OperationFailed):
    """The store was used after it was closed."""


def taken(what: str, key: object, journal: str) -> DuplicateRecord:
    """The error for creating a record whose id is already in the journal."""
    return DuplicateRecord(f"{what} {key!r} already exists in {journal}; pick another id")
