"""The run's budget across processes: the parent keeps the totals, each worker a close copy.

A worker's `SharedBudget` is its runtime's `RunBudget`: it counts its own spending at once and
posts each charge to the parent, whose `BudgetDesk` adds it to the run's totals and sends every
other worker what the rest of the run has spent. A worker so checks each request against its own
spending plus the others' as of their last message. The bound: when the run's budget runs out,
it is exceeded by at most the turns already in flight in every process (as in one process) plus,
in each other process, the requests it sends before the parent's word arrives: the charges of
one pipe round trip. With no run-wide limit set, nothing is sent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from corral.agents import BudgetConfig, Usage

from .._run import RunBudget
from ._wire import Message

_COUNTS = ("tokens", "cost_usd", "tool_calls", "turns")


def has_run_limits(limits: BudgetConfig) -> bool:
    """Whether any run-wide limit other than wall time is set (wall time needs no messages)."""
    return any(
        value is not None
        for value in (
            limits.run_max_tokens,
            limits.run_max_cost_usd,
            limits.run_max_tool_calls,
            limits.run_max_turns,
        )
    )


class SharedBudget(RunBudget):
    """A worker process's view of the run's budget; posts what it spends with `post`."""

    post: Callable[[Message], None] | None = None

    def charge(self, usage: Usage, cost: float, tool_calls: int) -> str | None:
        exhausted = super().charge(usage, cost, tool_calls)
        if self.post is not None:
            self.post(_spent(usage.total_tokens, cost, tool_calls, 1))
        return exhausted

    def add_prior(self, usage: Usage, cost: float, tool_calls: int, turns: int) -> None:
        super().add_prior(usage, cost, tool_calls, turns)
        if self.post is not None:
            self.post(_spent(usage.total_tokens, cost, tool_calls, turns))

    def others_spent(self, message: Message, before: dict[str, float]) -> None:
        """Take in what the other processes have spent (`message`), replacing `before`."""
        for name in _COUNTS:
            setattr(self, name, getattr(self, name) + message[name] - before.get(name, 0))
            before[name] = message[name]
        if self._exhausted is None:
            self._exhausted = message.get("exhausted") or self._check()


@dataclass
class _Share:
    tokens: float = 0.0
    cost_usd: float = 0.0
    tool_calls: float = 0.0
    turns: float = 0.0


LOCAL = -1
"""The parent's own share, when it runs items too."""


class BudgetDesk:
    """The parent's accountant: the run's totals (its own budget, `master`) and each worker's
    share of them."""

    def __init__(self, master: RunBudget, posts: dict[int, Callable[[Message], None]]) -> None:
        self._master = master
        self._posts = posts
        self._shares: dict[int, _Share] = {}

    def spent(self, worker: int, message: Message) -> None:
        """Worker process `worker` spent what `message` says: add it, tell the others."""
        usage = Usage(input_tokens=int(message["tokens"]), output_tokens=0)
        counts = (message["cost_usd"], message["tool_calls"], message["turns"])
        RunBudget.add_prior(self._master, usage, *counts)  # not relayed back as the parent's own
        exhausted = self._master.exhausted or self._master._check()
        if exhausted is not None:
            self._master._exhausted = exhausted
        self._add(worker, message)

    def local_spent(self, message: Message) -> None:
        """This process's agents spent `message` (the master counted it already)."""
        self._add(LOCAL, message)

    def _add(self, worker: int, message: Message) -> None:
        share = self._shares.setdefault(worker, _Share())
        for name in _COUNTS:
            setattr(share, name, getattr(share, name) + message[name])
        for other, post in self._posts.items():
            if other != worker:
                post(self._others(other, self._master.exhausted))

    def _others(self, worker: int, exhausted: str | None) -> Message:
        share = self._shares.get(worker, _Share())
        message: Message = {"op": "budget", "exhausted": exhausted}
        for name in _COUNTS:
            message[name] = getattr(self._master, name) - getattr(share, name)
        return message


def _spent(tokens: int, cost: float, tool_calls: int, turns: int) -> Message:
    return {
        "op": "spent",
        "tokens": tokens,
        "cost_usd": cost,
        "tool_calls": tool_calls,
        "turns": turns,
    }
