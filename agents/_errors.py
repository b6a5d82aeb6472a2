"""Errors of the `agents` package, under the common roots in `tools._errors`::

CorralError
├── InvalidInput
│   ├── ConfigError          (agents._config) a config file, variable or flag is invalid
│   └── AgentsMdError        (agents._agents_md) an AGENTS.md cannot be read as text
└── OperationFailed
    ├── ModelError           (agents.model) the model endpoint failed
    └── CoreStateError       an event arrived that the core's state cannot accept (a bug
                             in the driver, or a journal that does not replay)
"""

from __future__ import annotations

from corral.tools._errors import OperationFailed


class CoreStateError(OperationFailed):
    """The agent core was fed an event its state does not allow."""
