"""The MCP server's work, free of the protocol: start runs, wait on them, read and cancel them.

`McpRuns` sits on the HTTP service's `RunManager`, so a run started over MCP is admitted,
checked against the server's `[service]` allow-lists, executed and journaled exactly as one sent
to `corral serve`: `corral status`, the API and the dashboard see it like any other. Waiting
reports progress (items finished of items in all) through a callback each time the run's
journal moves.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final

import anyio
from anyio.abc import TaskGroup

from ..service import RunEntry, RunManager, ServicePolicy
from ._errors import ToolInputRefused
from ._inputs import RunsArgs
from ._requests import StartArgs, service_request
from ._subscriptions import Subscriptions, watch_run
from ._views import OPEN_RUNS, RunViews

Progress = Callable[[float, float | None, str], Awaitable[None]]
"""`(progress, total, message)`: where a waiting call reports how far the run is."""
PROGRESS_POLL: Final = 1.0
"""Seconds between two looks at the journal when no event woke the waiter."""


class McpRuns:
    """What the tools do; `tg` is the server's task group, where run watchers live."""

    def __init__(self, manager: RunManager, subscriptions: Subscriptions, tg: TaskGroup) -> None:
        self.manager = manager
        self.views = RunViews(manager)
        self.subscriptions = subscriptions
        self._tg = tg
        self._watched: set[str] = set()

    @property
    def policy(self) -> ServicePolicy:
        assert self.manager.policy is not None, "the manager is running"
        return self.manager.policy

    async def start(self, args: StartArgs) -> str:
        """Admit the run `args` ask for and return its id; `InvalidInput` if refused."""
        request = await anyio.to_thread.run_sync(service_request, args, self.policy)
        run_id = await self.manager.submit(request, args.idempotency_key)
        if run_id in self._watched:  # a repeated call: the first one's watcher is on it
            return run_id
        self._watched.add(run_id)
        entry = self.manager.get(run_id)
        if entry is not None:
            self._tg.start_soon(watch_run, entry, self.subscriptions, name=f"watch {run_id}")
        return run_id

    async def wait(self, run_id: str, seconds: float, report: Progress) -> None:
        """Wait up to `seconds` for the run to end, reporting each change of its progress.

        A run this server executes wakes the wait as its journal moves; one another process
        executes (`corral serve`, `corral fanout` on the same journal) is looked at every
        `PROGRESS_POLL` seconds."""
        if seconds <= 0:
            return
        entry = self.manager.get(run_id)
        last: list[tuple[int, int | None]] = []
        with anyio.move_on_after(seconds):
            while True:
                # Looked at before the journal, so the last change is reported before returning.
                ended, count = await self._ended(run_id, entry)
                now = await self.views.progress(run_id)
                if now not in last[-1:]:
                    last.append(now)
                    await report(now[0], now[1], _said(*now))
                if ended:
                    return
                if entry is None:
                    await anyio.sleep(PROGRESS_POLL)  # nothing here can tell of its progress
                else:
                    await entry.log.wait_beyond(count, PROGRESS_POLL)

    async def _ended(self, run_id: str, entry: RunEntry | None) -> tuple[bool, int]:
        if entry is not None:
            return entry.done.is_set(), len(entry.log.events)
        record = await self.manager.store.get_run(run_id)
        return record is None or record.status not in OPEN_RUNS, 0

    async def cancel(self, run_id: str) -> dict[str, Any]:
        entry = await self.manager.cancel(run_id)
        if entry is None:
            raise ToolInputRefused(
                f"no run {run_id} is executing on this server; only its own runs can be cancelled"
            )
        return await self.views.state(run_id)

    async def runs(self, args: RunsArgs) -> dict[str, Any]:
        return await self.views.runs(args.status, args.limit)


def _said(done: int, total: int | None) -> str:
    return f"{done} of {total} items finished" if total else "starting"
