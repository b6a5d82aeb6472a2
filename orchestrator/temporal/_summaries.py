"""The background summaries one agent's workflow has in flight, and what each one became.

A `PrepareCompaction` starts a `corral.call_model` activity without waiting for it; the driver
feeds its outcome back as a `CompactionPrepared` once it is done (between steps, oldest first)
or when the core waits for it. A summary whose activity is gone is fed back as lost.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from corral.agents import AwaitPreparedCompaction, CompactionPrepared, PrepareCompaction, Usage

    from ._wire import ModelCallOutput

LOST = "the background summary was lost when its activity was given up"

Running = tuple[PrepareCompaction, workflow.ActivityHandle[Any]]


class BackgroundSummaries:
    """The summaries started and not yet fed back, by `prepared_id`."""

    def __init__(self) -> None:
        self._running: dict[int, Running] = {}

    def __bool__(self) -> bool:
        return bool(self._running)

    def add(self, action: PrepareCompaction, handle: workflow.ActivityHandle[Any]) -> None:
        self._running[action.prepared_id] = (action, handle)

    def take_done(self) -> list[Running]:
        """The summaries whose activity has ended, oldest first; they are no longer held."""
        done = [self._running[i] for i in sorted(self._running) if self._running[i][1].done()]
        for action, _ in done:
            del self._running[action.prepared_id]
        return done

    def take(self, prepared_id: int) -> Running | None:
        return self._running.pop(prepared_id, None)

    def cancel_all(self) -> None:
        for _, handle in self._running.values():
            handle.cancel()
        self._running.clear()


def lost_summary(action: AwaitPreparedCompaction) -> CompactionPrepared:
    """What the core is fed for a summary it waits for that is no longer running."""
    return CompactionPrepared(
        prepared_id=action.prepared_id, covered_items=action.covered_items, error=LOST
    )


def summary_outcome(
    action: PrepareCompaction, handle: workflow.ActivityHandle[Any]
) -> CompactionPrepared:
    """What the ended activity of `action` made: its summary, or why there is none."""
    result = CompactionPrepared(
        prepared_id=action.prepared_id, covered_items=action.covered_items, dropped=action.dropped
    )
    error = handle.exception()
    out: ModelCallOutput | None = None if error is not None else handle.result()
    if out is None or out.error is not None:
        message = out.error if out is not None else str(error)
        return result.model_copy(update={"error": message or LOST})
    usage = Usage.model_validate(out.usage)
    return result.model_copy(update={"summary": out.summary, "usage": usage})
