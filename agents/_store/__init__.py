"""The journal: runs, agents, their events, batch items and a ledger of tool side effects.

The runner writes every event here before acting on it and resumes by replaying it. `Store` is
the seam; `open_store`/`open_journal` open the configured one: the embedded SQLite file
(`open_sqlite_store`) or a shared PostgreSQL database (`open_postgres_store`). `MemoryStore` is
their in-memory twin. `export_jsonl` writes one run as JSON Lines.
"""

from ._delete import DeletedRun as DeletedRun
from ._delete import RunActive as RunActive
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
from ._open import Migration as Migration
from ._open import migrate_journal as migrate_journal
from ._open import open_journal as open_journal
from ._open import open_store as open_store
from ._pg_pool import PgRunner as PgRunner
from ._pg_pool import open_pg_runner as open_pg_runner
from ._pg_rows import from_pg as from_pg
from ._pg_rows import to_pg as to_pg
from ._pg_schema import NOTIFY_CHANNEL as NOTIFY_CHANNEL
from ._pg_schema import PG_SCHEMA_VERSION as PG_SCHEMA_VERSION
from ._pg_schema import redact_url as redact_url
from ._postgres import PostgresStore as PostgresStore
from ._postgres import open_postgres_store as open_postgres_store
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
from ._targets import JOURNAL_FILE as JOURNAL_FILE
from ._targets import Target as Target
from ._targets import describe as describe_journal
from ._targets import is_postgres as is_postgres
from ._targets import journal_target as journal_target
from ._targets import parse_target as parse_target
from ._text import TextSafeConnection as TextSafeConnection

__all__ = [
    "JOURNAL_FILE",
    "MIGRATIONS",
    "NOTIFY_CHANNEL",
    "PG_SCHEMA_VERSION",
    "SCHEMA_VERSION",
    "AgentRecord",
    "DeletedRun",
    "DuplicateRecord",
    "InvalidRecord",
    "ItemRecord",
    "JournalEvent",
    "JournalFailed",
    "JournalUnreadable",
    "LeaseRecord",
    "LedgerEntry",
    "MemoryStore",
    "Migration",
    "NewEvent",
    "NumberedEvent",
    "PgRunner",
    "PostgresStore",
    "RunActive",
    "RunLeaseHeld",
    "RunRecord",
    "SQLiteStore",
    "SeqConflict",
    "Store",
    "StoreClosed",
    "StoreError",
    "Target",
    "TextSafeConnection",
    "UnknownAgent",
    "UnknownCall",
    "UnknownItem",
    "UnknownRun",
    "describe_journal",
    "export_jsonl",
    "from_pg",
    "holder_gone",
    "is_postgres",
    "journal_target",
    "migrate_journal",
    "open_journal",
    "open_pg_runner",
    "open_postgres_store",
    "open_sqlite_store",
    "open_store",
    "parse_target",
    "redact_url",
    "this_host",
    "to_pg",
]
