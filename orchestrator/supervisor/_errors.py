"""Errors of the collab tools: what a supervisor asked for that cannot be done.

    InvalidInput                  (tools) the caller's mistake
    ├── SpawnRefused              (orchestrator._run) a limit was reached, or the spawn was invalid
    └── CollabError               a collab tool call that cannot be carried out
        └── UnknownTarget         the target names none of the caller's workers

Handlers raise these; the tool registry hands their message to the model as a failed output.
"""

from __future__ import annotations

from corral.tools import InvalidInput


class CollabError(InvalidInput):
    """A collab tool was called with something it cannot act on."""


class UnknownTarget(CollabError):
    """The target is neither the id nor the nickname of one of the caller's workers."""
