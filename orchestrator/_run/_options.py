"""`RuntimeOptions`: what every agent of a run shares (config, journal, model clients, tools)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from corral.agents import CompactionGate, CorralConfig, RunnerHooks, Store
from corral.tools import ToolRegistry, ToolServices

from ._assemble import ToolProvider
from ._clients import ClientPool
from ._recall import RunMemory

if TYPE_CHECKING:
    # Only named here: the skills index (numpy, bm25s) is loaded when a run discovers skills.
    from ..services._skills_service import SkillsService


@dataclass
class RuntimeOptions:
    """What every agent of the run shares."""

    config: CorralConfig
    store: Store
    run_id: str
    clients: ClientPool
    hooks: RunnerHooks = field(default_factory=RunnerHooks)
    services: ToolServices = field(default_factory=ToolServices)
    tool_providers: Mapping[str, ToolProvider] = field(default_factory=dict)
    skills: SkillsService | None = None
    compactor: CompactionGate | None = None
    """Bounds how many agents of the process summarise at once."""
    equip: Callable[[ToolRegistry], None] | None = None
    """Adds the process's shared tools (MCP, `tool_search`) to each agent's registry."""
    clock: Callable[[], float] = time.time
    memory: RunMemory | None = None
    """Recalls memories into each turn (`[memories]`); None when memory is off."""
