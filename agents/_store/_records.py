"""The journal's records and the one codec that turns them into rows and back.

Both stores keep rows, not records: JSON-valued fields are stored as JSON text, so the SQLite
store and its in-memory twin accept, reject and return exactly the same values. Which fields an
update may touch is declared here, next to the fields themselves.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from corral.tools import ToolCall

from .._json import dumps_ascii, loads
from ._errors import DuplicateRecord, InvalidRecord, SeqConflict

Row = dict[str, Any]
NumberedEvent = tuple[str, dict[str, Any], float]
"""An event its writer numbered itself, for `Store.append_events_at`: (kind, payload, at)."""
NewEvent = tuple[str, dict[str, Any]]
"""An event to append after the agent's last one, for `Store.append_events`: (kind, payload)."""


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    # Fields kept as JSON text in a row, and fields an update may change.
    json_fields: ClassVar[frozenset[str]] = frozenset()
    mutable_fields: ClassVar[frozenset[str]] = frozenset()


class RunRecord(_Record):
    """One run: an `exec`, a `fanout` or a pipeline, with its config and final summary."""

    json_fields = frozenset({"config", "summary"})
    mutable_fields = frozenset({"status", "updated_at", "config", "summary"})

    run_id: str
    kind: str
    status: str
    created_at: float
    updated_at: float
    config: dict[str, Any]
    summary: dict[str, Any] = Field(default_factory=dict)


class AgentRecord(_Record):
    """One agent of a run; `base_instructions` are fixed for its life, so resume reuses them."""

    json_fields = frozenset({"config", "usage"})
    mutable_fields = frozenset(
        {"nickname", "role", "status", "updated_at", "config"}
        | {"final_message", "error", "usage", "cost_usd"}
    )

    agent_id: str
    run_id: str
    parent_id: str | None
    nickname: str
    role: str
    status: str
    created_at: float
    updated_at: float
    base_instructions: str
    config: dict[str, Any]
    final_message: str | None = None
    error: str | None = None
    usage: dict[str, int] = Field(default_factory=dict)
    cost_usd: float = 0.0
    depth: int = 0


class JournalEvent(_Record):
    """One event of an agent, numbered twice by the store, both 1-based and gap-free.

    `seq` counts the agent's own events (what its core replays); `run_seq` counts every event of
    the agent's run in the order they were journaled, so a run's event stream has one sequence
    that outlives the process reading it.
    """

    json_fields = frozenset({"payload"})

    agent_id: str
    seq: int
    kind: str
    payload: dict[str, Any]
    at: float
    run_seq: int = 0


class ItemRecord(_Record):
    """One input of a batch run and what became of it."""

    json_fields = frozenset({"input", "result", "usage"})
    mutable_fields = frozenset({"status", "agent_id", "result", "error", "usage", "cost_usd"})

    run_id: str
    index: int
    status: str = "pending"
    input: dict[str, Any]
    agent_id: str | None = None
    result: Any | None = None
    error: str | None = None
    usage: dict[str, int] = Field(default_factory=dict)
    cost_usd: float = 0.0


class LedgerEntry(_Record):
    """A tool call with side effects: written `started` before it runs, `finished` after.

    Keyed by `(agent_id, call_id)`, since a call id is only unique within its agent.
    """

    mutable_fields = frozenset({"state", "output", "success", "finished_at"})

    call_id: str
    agent_id: str
    tool: str
    arguments: str
    state: Literal["started", "finished"] = "started"
    output: str | None = None
    success: bool | None = None
    started_at: float
    finished_at: float | None = None

    @classmethod
    def of_call(cls, call: ToolCall, agent_id: str, *, started_at: float) -> LedgerEntry:
        """The `started` entry of `call`, written before it runs."""
        return cls(
            call_id=call.call_id,
            agent_id=agent_id,
            tool=call.name,
            arguments=call.arguments,
            started_at=started_at,
        )


R = TypeVar("R", bound=_Record)


def dump_json(value: Any, what: str) -> str:
    """Encode `value` as compact JSON text; NaN, infinities and non-JSON objects are refused."""
    try:
        return dumps_ascii(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidRecord(f"{what} is not storable as JSON: {exc}") from exc


def to_row(record: _Record) -> Row:
    """The row that stores `record`: its fields, with JSON-valued ones as JSON text."""
    row = record.model_dump()
    name = type(record).__name__
    for field in sorted(record.json_fields):
        row[field] = dump_json(row[field], f"{name}.{field}")
    return row


def from_row(cls: type[R], row: Mapping[str, Any]) -> R:
    """The record a row stores; the inverse of `to_row`."""
    values = {name: row[name] for name in cls.model_fields}
    for field in cls.json_fields:
        values[field] = loads(values[field])
    return cls.model_validate(values)


def updated(record: R, fields: Mapping[str, Any]) -> R:
    """`record` with `fields` changed, validated; refuses fields that are not `mutable_fields`."""
    name = type(record).__name__
    fixed = sorted(set(fields) - record.mutable_fields)
    if fixed:
        allowed = ", ".join(sorted(record.mutable_fields))
        raise InvalidRecord(f"cannot change {name} field(s) {', '.join(fixed)}; allowed: {allowed}")
    try:
        return type(record).model_validate({**record.model_dump(), **fields})
    except ValidationError as exc:
        raise InvalidRecord(f"invalid {name} update: {exc}") from exc


def changed_columns(cls: type[_Record], fields: Mapping[str, Any]) -> Row:
    """The columns an update of `fields` writes, each value validated alone and JSON-valued
    ones as JSON text: what `updated` checks, without reading and rewriting the whole record
    (an agent's row carries its config; the hot path updates only its usage and cost)."""
    name = cls.__name__
    fixed = sorted(set(fields) - cls.mutable_fields)
    if fixed:
        allowed = ", ".join(sorted(cls.mutable_fields))
        raise InvalidRecord(f"cannot change {name} field(s) {', '.join(fixed)}; allowed: {allowed}")
    row: Row = {}
    for field, value in fields.items():
        try:
            checked = _field_adapter(cls, field).validate_python(value)
        except ValidationError as exc:
            raise InvalidRecord(f"invalid {name} update: {exc}") from exc
        json_valued = field in cls.json_fields
        row[field] = dump_json(checked, f"{name}.{field}") if json_valued else checked
    return row


_adapters: dict[tuple[type[_Record], str], TypeAdapter[Any]] = {}


def _field_adapter(cls: type[_Record], field: str) -> TypeAdapter[Any]:
    adapter = _adapters.get((cls, field))
    if adapter is None:
        annotation: Any = cls.model_fields[field].annotation
        adapter = _adapters[cls, field] = TypeAdapter(annotation)
    return adapter


def check_items(run_id: str, items: Sequence[ItemRecord]) -> None:
    """Refuse a batch whose items belong to another run or repeat an index."""
    strays = sorted({item.run_id for item in items} - {run_id})
    if strays:
        raise InvalidRecord(f"items for run {run_id!r} name other runs: {', '.join(strays)}")
    counts = Counter(item.index for item in items)
    repeated = sorted(index for index, count in counts.items() if count > 1)
    if repeated:
        raise DuplicateRecord(f"items for run {run_id!r} repeat index(es) {repeated}")


def check_started(entry: LedgerEntry) -> None:
    """Refuse a ledger entry that claims an outcome before its tool ran."""
    outcome = (entry.output, entry.success, entry.finished_at)
    if entry.state != "started" or outcome != (None, None, None):
        raise InvalidRecord(
            f"ledger_start got call {entry.call_id!r} with an outcome; "
            "start it with state='started' and record the outcome with ledger_finish"
        )


def event_row(
    agent_id: str, seq: int, kind: str, payload: dict[str, Any], at: float, *, run_seq: int
) -> tuple[Row, JournalEvent]:
    """The row that stores a new event, and the event as reading that row back gives it:
    `to_row(make_event(...))` and `from_row` without their two copies of the payload."""
    if not _plain_event(agent_id, seq, kind, payload, at, run_seq):
        checked = make_event(agent_id, seq, kind, payload, at, run_seq=run_seq)
        agent_id, seq, kind, at = checked.agent_id, checked.seq, checked.kind, checked.at
        payload, run_seq = checked.payload, checked.run_seq
    # Values of exactly the declared types pass validation unchanged, so the event is built
    # without it (a third of an append's cost in the journal's thread); anything else went
    # through `make_event` above and is refused or converted as before.
    text = dump_json(payload, "JournalEvent.payload")
    event = JournalEvent.model_construct(
        agent_id=agent_id, seq=seq, kind=kind, payload=loads(text), at=at, run_seq=run_seq
    )
    row = {"agent_id": agent_id, "seq": seq, "kind": kind, "payload": text, "at": at}
    return {**row, "run_seq": run_seq}, event


def _plain_event(*values: object) -> bool:
    """True when `JournalEvent` would take these values (agent id, seq, kind, payload, at,
    run_seq) as they are."""
    agent_id, seq, kind, payload, at, run_seq = values
    return (
        type(agent_id) is str
        and type(seq) is int
        and type(run_seq) is int
        and type(kind) is str
        and type(at) is float
        and type(payload) is dict
        and all(type(key) is str for key in payload)
    )


def make_event(
    agent_id: str, seq: int, kind: str, payload: dict[str, Any], at: float, *, run_seq: int
) -> JournalEvent:
    """A validated event with the `seq` and `run_seq` the store chose."""
    try:
        return JournalEvent(
            agent_id=agent_id, seq=seq, kind=kind, payload=payload, at=at, run_seq=run_seq
        )
    except ValidationError as exc:
        raise InvalidRecord(f"invalid event for agent {agent_id!r}: {exc}") from exc


def events_to_add(
    agent_id: str, first_seq: int, kinds: Sequence[str], last: int, have: Sequence[str]
) -> int:
    """How many of a batch numbered from `first_seq` the journal already holds, to be skipped.

    `last` is the agent's last seq and `have` the kinds it holds from `first_seq` on. A gap
    before the batch, or another kind at the same seq, is a `SeqConflict`.
    """
    if first_seq < 1 or last < first_seq - 1:
        raise SeqConflict(
            f"agent {agent_id!r} has events up to seq {last}; a batch from seq {first_seq} "
            "would leave a gap"
        )
    overlap = min(len(have), len(kinds))
    for offset in range(overlap):
        if have[offset] != kinds[offset]:
            raise SeqConflict(
                f"agent {agent_id!r} has a {have[offset]!r} event at seq {first_seq + offset} "
                f"where its writer numbered a {kinds[offset]!r}: another writer touched it"
            )
    return overlap


def finish_entry(entry: LedgerEntry, *, output: str, success: bool, at: float) -> LedgerEntry:
    """`entry` with its outcome; a call's outcome is recorded once."""
    if entry.state == "finished":
        raise DuplicateRecord(
            f"agent {entry.agent_id!r} tool call {entry.call_id!r} already finished at "
            f"{entry.finished_at}; "
            "a call's outcome is recorded once"
        )
    changes = {"state": "finished", "output": output, "success": success, "finished_at": at}
    return updated(entry, changes)
