"""The journal: runs, agents, their events, batch items and a ledger of tool side effects.

The runner writes every event here before acting on it and resumes by replaying it. `Store` is
the seam; `open_sqlite_store` gives the durable SQLite implementation and `MemoryStore` its
in-memory twin. `export_jsonl` writes one run as JSON Lines.
"""

from ._errors import DuplicateRecord as DuplicateRecord
from ._errors import InvalidRecord as InvalidRecord
from ._errors import JournalFailed as JournalFailed
from ._errors import JournalUnreadable as JournalUnreadable
from ._errors import SeqConflict as SeqConflict
from ._errors import StoreClosed as StoreClosed
from ._errors import StoreError as StoreError
from ._errors import UnknownAgent as UnknownAgent
from ._errors import UnknownCall as UnknownCall
from ._errors import UnknownItem as UnknownItem
from ._errors import UnknownRun as UnknownRun
from ._export import export_jsonl as export_jsonl
from ._lease import LeaseRecord as LeaseRecord
from ._lease import RunLeaseHeld as RunLeaseHeld
from ._lease import holder_gone as holder_gone
from ._lease import this_host as this_host
from ._memory import MemoryStore as MemoryStore
from ._protocol import Store as Store
from ._records import AgentRecord as AgentRecord
from ._records import ItemRecord as ItemRecord
from ._records import JournalEvent as JournalEvent
from ._records import LedgerEntry as LedgerEntry
from ._records import NewEvent as NewEvent
from ._records import NumberedEvent as NumberedEvent
from ._records import RunRecord as RunRecord
from ._schema import MIGRATIONS as MIGRATIONS
from ._schema import SCHEMA_VERSION as SCHEMA_VERSION
from ._sqlite import SQLiteStore as SQLiteStore
from ._sqlite import open_sqlite_store as open_sqlite_store

__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "AgentRecord",
    "DuplicateRecord",
    "InvalidRecord",
    "ItemRecord",
    "JournalEvent",
    "JournalFailed",
    "JournalUnreadable",
    "LeaseRecord",
    "LedgerEntry",
    "MemoryStore",
    "NewEvent",
    "NumberedEvent",
    "RunLeaseHeld",
    "RunRecord",
    "SQLiteStore",
    "SeqConflict",
    "Store",
    "StoreClosed",
    "StoreError",
    "UnknownAgent",
    "UnknownCall",
    "UnknownItem",
    "UnknownRun",
    "export_jsonl",
    "holder_gone",
    "open_sqlite_store",
    "this_host",
]
