"""A run as the server holds it (`RunEntry`), the words it uses for a run's state, and the
limits it admits runs under (`ServiceLimits`). `RunManager` (`_runs`) owns the entries.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import anyio

from corral.agents import CorralConfig

from ._events import EventLog
from ._execute import ServiceRequest

QUEUED, RUNNING, CANCELLED, FAILED = "queued", "running", "cancelled", "failed"
INTERRUPTED = "interrupted"
OnRestart = Literal["resume", "interrupt"]


@dataclass(frozen=True)
class ServiceLimits:
    max_running: int = 4
    """Runs executing at once."""
    max_queued: int = 16
    """Runs waiting for a slot; one more is refused with 429."""
    retry_after: int = 5
    """Seconds a refused client is told to wait (`Retry-After`)."""
    on_restart: OnRestart = "resume"
    """What becomes of runs a stopped server left unfinished (`[service] on_restart`)."""


@dataclass
class RunEntry:
    """A run submitted to this server."""

    run_id: str
    request: ServiceRequest
    config: CorralConfig
    cwd: Path
    status: str = QUEUED
    """`queued`, `running`, or a final word the journal cannot say: `cancelled`, `failed`,
    `interrupted` (left so by a restart)."""
    error: str | None = None
    created_at: float = field(default_factory=time.time)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    log: EventLog = field(default_factory=EventLog)
    finished: bool = False
    journaled: bool = False
    """The journal held the run (seen when it ended, or after a restart): if it no longer
    does, the run was deleted from it (`corral journal delete`)."""
    resumed: bool = False
    """Carried on from the journal after a restart, rather than started afresh."""
    retry_failed: bool = False
    """A finished fan-out whose failed items run again (`POST /v1/runs/{id}/retry`)."""
    done: anyio.Event = field(default_factory=anyio.Event)
    """Set once the run's work has ended, however it ended."""
