"""Concurrent compaction: one `Compactor` per process bounds how many agents summarise at once.

Create one and pass it as `compaction_gate=` to every `agents.AgentRunner`; the agent core
decides when to compact (early in the background, or at the threshold) and what to keep.
Manual compaction of an idle agent is `await runner.compact_now()`.
"""

from ._compactor import DEFAULT_MAX_CONCURRENT as DEFAULT_MAX_CONCURRENT
from ._compactor import DEFAULT_WAIT_TIMEOUT as DEFAULT_WAIT_TIMEOUT
from ._compactor import Compactor as Compactor
from ._compactor import CompactorStats as CompactorStats
from ._errors import CompactionSlotTimeout as CompactionSlotTimeout
from ._errors import CompactorConfigError as CompactorConfigError

__all__ = [
    "DEFAULT_MAX_CONCURRENT",
    "DEFAULT_WAIT_TIMEOUT",
    "CompactionSlotTimeout",
    "Compactor",
    "CompactorConfigError",
    "CompactorStats",
]
