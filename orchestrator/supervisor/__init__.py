"""The supervisor: collab tools that let an agent spawn, message, wait for and close workers.

`spawn_child` starts a worker under its parent within the run's limits; `collab_tool_providers`
gives the five tools (Codex's semantics) to pass as a run's tool providers.
"""

from ._catalog import COLLAB_TOOL_NAMES as COLLAB_TOOL_NAMES
from ._errors import CollabError as CollabError
from ._errors import UnknownTarget as UnknownTarget
from ._profile import child_profile as child_profile
from ._profile import write_set_of as write_set_of
from ._spawn import SpawnRequest as SpawnRequest
from ._spawn import SpawnTerms as SpawnTerms
from ._spawn import check_limits as check_limits
from ._spawn import child_spec as child_spec
from ._spawn import spawn_child as spawn_child
from ._tools import collab_tool_providers as collab_tool_providers

__all__ = [
    "COLLAB_TOOL_NAMES",
    "CollabError",
    "SpawnRequest",
    "SpawnTerms",
    "UnknownTarget",
    "check_limits",
    "child_profile",
    "child_spec",
    "collab_tool_providers",
    "spawn_child",
    "write_set_of",
]
