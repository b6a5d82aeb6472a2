"""Memory across runs: what runs learned, kept per project, recalled into later turns.

Phase 1 (`MemoryService.after_run`): a completed run's transcript is sent once to the model,
which answers the facts worth keeping; they are redacted, embedded and stored with their
project, files, run, agent and time. Phase 2 (`consolidate`): a project's raw memories are
merged into a short list of insights that cite their sources. Recall (`recall`) ranks a
project's memories for a turn (`_ranking`) and renders the marked fragment (`_fragment`).
The store lives where the journal does (`open_memories`): its SQLite file
(`open_sqlite_memories`) or its PostgreSQL database (`open_postgres_memories`); or the
in-memory twin.
"""

from ._copy import MemoryCopy as MemoryCopy
from ._copy import UnreadableMemories as UnreadableMemories
from ._copy import copy_memories as copy_memories
from ._fragment import render_memory as render_memory
from ._open import open_memories as open_memories
from ._postgres import PostgresMemories as PostgresMemories
from ._postgres import open_postgres_memories as open_postgres_memories
from ._ranking import Ranked as Ranked
from ._ranking import jaccard as jaccard
from ._ranking import rank as rank
from ._ranking import relevance as relevance
from ._records import Insight as Insight
from ._records import MemoryRecord as MemoryRecord
from ._records import UnknownMemory as UnknownMemory
from ._records import project_of as project_of
from ._requests import CONSOLIDATION as CONSOLIDATION
from ._requests import EXTRACTION as EXTRACTION
from ._requests import PURPOSE_KEY as PURPOSE_KEY
from ._service import MemoryService as MemoryService
from ._sqlite import MemoryStoreUnavailable as MemoryStoreUnavailable
from ._sqlite import SqliteMemories as SqliteMemories
from ._sqlite import open_sqlite_memories as open_sqlite_memories
from ._store import InMemoryMemories as InMemoryMemories
from ._store import MemoryStore as MemoryStore

__all__ = [
    "CONSOLIDATION",
    "EXTRACTION",
    "PURPOSE_KEY",
    "InMemoryMemories",
    "Insight",
    "MemoryCopy",
    "MemoryRecord",
    "MemoryService",
    "MemoryStore",
    "MemoryStoreUnavailable",
    "PostgresMemories",
    "Ranked",
    "SqliteMemories",
    "UnknownMemory",
    "UnreadableMemories",
    "copy_memories",
    "jaccard",
    "open_memories",
    "open_postgres_memories",
    "open_sqlite_memories",
    "project_of",
    "rank",
    "relevance",
    "render_memory",
]
