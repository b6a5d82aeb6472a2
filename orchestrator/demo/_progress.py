"""Live progress for the demo: how many agents are running and done, and the tokens they used."""

from __future__ import annotations

import sys
from typing import TextIO

from corral.agents import AgentStatus, ModelRequest, ModelResponse, RunnerHooks


class DemoProgress(RunnerHooks):
    """Prints one line per finished agent: the pipeline, the counts so far, the tokens."""

    def __init__(self, label: str, total: int, out: TextIO = sys.stdout) -> None:
        self._label = label
        self._total = total
        self._out = out
        self._started: set[str] = set()
        self._finished: dict[str, str] = {}
        self.tokens = 0

    def model_call_started(self, agent_id: str, request: ModelRequest) -> None:
        self._started.add(agent_id)

    def model_call_ended(
        self,
        agent_id: str,
        request: ModelRequest,
        response: ModelResponse | None,
        error: BaseException | None,
    ) -> None:
        if response is not None:
            self.tokens += response.usage.total_tokens

    def turn_ended(self, agent_id: str, turn: int, status: AgentStatus) -> None:
        self._finished[agent_id] = str(status)
        running = len(self._started) - len(self._finished)
        done = sum(1 for s in self._finished.values() if s == AgentStatus.COMPLETED)
        other = len(self._finished) - done
        tail = f", {other} not completed" if other else ""
        self._out.write(
            f"  {self._label}: {len(self._finished)}/{self._total} agents finished "
            f"({done} completed{tail}), {running} running, {self.tokens:,} tokens\n"
        )
        self._out.flush()
