"""`AgentHandle`: one live agent of a run, as the run's scheduler sees it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import anyio

from corral.agents import AgentRunner, AgentSpec, AgentStatus, Finish, JournalEvent, UserInput

FinishCallback = Callable[["AgentHandle", Finish], Awaitable[None]]


@dataclass(frozen=True)
class Restoring:
    """How `RunRuntime.restore` brings an agent back: messages for its next turn (`inbox`),
    only as a place in the tree (`closed`), and whether it runs at once (`launch`)."""

    inbox: tuple[str, ...] = ()
    closed: bool = False
    launch: bool = True


AT_ONCE = Restoring()
"""An agent restored to run at once, with nothing added to its inbox."""


@dataclass(eq=False)
class AgentHandle:
    """An agent, its runner, its place in the tree, and what it is doing now."""

    spec: AgentSpec
    runner: AgentRunner
    task: str
    parent: AgentHandle | None = None
    stay_open: bool = True
    on_finish: FinishCallback | None = None
    children: list[AgentHandle] = field(default_factory=list)
    status: AgentStatus = AgentStatus.PENDING
    final_message: str | None = None
    error: str | None = None
    closed: bool = False
    inbox: list[str] = field(default_factory=list)
    subagent_context: str | None = None
    """Who this worker is; every turn carries it, so compaction re-injects it."""
    skills: str | None = None
    first: UserInput | None = None
    """The task of an agent that has not begun it: a queued worker, or a restored agent that
    was journaled but stopped before its task began."""
    journaled_first: tuple[UserInput, JournalEvent] | None = None
    """The task as journaled with the agent's row (a root agent with no lifecycle hooks to
    change it), for its first turn to take without writing it again."""
    queued: bool = False
    """Waiting in its parent's queue for a thread slot (see `_admission`)."""
    orphaned: bool = False
    """An ancestor ended while this worker was still open: it ends too, taking no more turns
    (see `AgentLives._end_workers`)."""
    ending: bool = False
    """Final, but its end not yet journaled: it keeps its slot until then, so the journal never
    shows a queued sibling start before this one ended."""
    leaving: bool = False
    """Its loop has ended or is ending: it takes no more turns, and no new worker is started
    under it (nobody would hear that worker's end, and nobody would end it)."""
    turn_scope: anyio.CancelScope | None = None
    agent_scope: anyio.CancelScope | None = None
    ended: anyio.Event = field(default_factory=anyio.Event)
    _wake: anyio.Event = field(default_factory=anyio.Event)

    @property
    def agent_id(self) -> str:
        return self.spec.agent_id

    @property
    def nickname(self) -> str:
        return self.spec.nickname

    @property
    def depth(self) -> int:
        return self.spec.depth

    @property
    def running(self) -> bool:
        """Not done yet: working, or queued to start (its parent still waits for it)."""
        return not self.status.is_final and not self.closed

    @property
    def waiting_to_start(self) -> bool:
        return self.queued and self.running

    @property
    def holds_slot(self) -> bool:
        """Counts against its parent's thread limit: started, and not done or not yet noted."""
        return (self.running or self.ending) and not self.queued

    def wake(self) -> None:
        self._wake.set()

    async def wait_for_wake(self) -> None:
        await self._wake.wait()
        self._wake = anyio.Event()

    def subtree(self) -> list[AgentHandle]:
        """This agent and every descendant, parents before children."""
        found = [self]
        for child in self.children:
            found.extend(child.subtree())
        return found

    def has_running_descendants(self) -> bool:
        return any(a.running for a in self.subtree()[1:])
