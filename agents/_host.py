"""The agent host: one loop that carries a core's actions out through an `Effects`.

The loop and the dispatch over actions are the same wherever an agent runs; what differs is
how each action is done. The local runner (anyio, the journal written before acting, hooks) and
the Temporal driver (activities, deterministic workflow code) are two `Effects`. Between steps
an `Effects` may end the turn or add actions (the Temporal driver feeds mail and finished
background summaries there, and continues as new).
"""

from __future__ import annotations

from typing import Protocol

from ._events import (
    Action,
    AwaitPreparedCompaction,
    CallModel,
    Compact,
    Finish,
    OverBudget,
    PrepareCompaction,
    RunTools,
)


class Effects(Protocol):
    """How one transport carries out what a core asks for; each answers the core's next
    actions (after feeding it what came back)."""

    async def call_model(self, action: CallModel) -> list[Action]: ...

    async def run_tools(self, action: RunTools) -> list[Action]: ...

    async def compact(self, action: Compact) -> list[Action]: ...

    async def prepare_compaction(self, action: PrepareCompaction) -> list[Action]:
        """Start a background summary (or drop it); answers at once."""
        ...

    async def await_preparation(self, action: AwaitPreparedCompaction) -> list[Action]: ...

    async def over_budget(self, action: OverBudget) -> list[Action]:
        """Journal the core's verdict as `BudgetExceeded` and feed it back (ends the turn)."""
        ...

    async def between_steps(self, queue: list[Action]) -> Finish | None:
        """Before each step: extend `queue`, or end the turn with a `Finish`."""
        ...


async def carry_out(actions: list[Action], effects: Effects) -> Finish:
    """Carry out `actions` and all that follow until the core finishes its turn."""
    queue = list(actions)
    while queue:
        ended = await effects.between_steps(queue)
        if ended is not None:
            return ended
        action = queue.pop(0)
        if isinstance(action, Finish):
            return action
        queue.extend(await execute(action, effects))
    raise AssertionError("the core stopped without finishing")  # pragma: no cover


async def execute(action: Action, effects: Effects) -> list[Action]:
    """Do one action; answer what the core asks next."""
    match action:
        case CallModel():
            return await effects.call_model(action)
        case RunTools():
            return await effects.run_tools(action)
        case Compact():
            return await effects.compact(action)
        case PrepareCompaction():
            return await effects.prepare_compaction(action)
        case AwaitPreparedCompaction():
            return await effects.await_preparation(action)
        case OverBudget():
            return await effects.over_budget(action)
        case Finish():
            raise AssertionError("a Finish ends the loop; it is never executed")
