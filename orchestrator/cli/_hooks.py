"""What `exec`, `resume` and the pipelines tell a person (or a script) while agents work."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any, TextIO

from corral.agents import FunctionCall, RunnerHooks, SafeHooks
from corral.tools import ToolOutput

from ._approval import shown
from ._json_out import json_text


class JsonLinesHooks(RunnerHooks):
    """Prints every journaled event as one JSON line."""

    def __init__(self, out: TextIO = sys.stdout) -> None:
        self._out = out

    def event(self, agent_id: str, seq: int, kind: str, payload: Mapping[str, Any]) -> None:
        line = {"agent_id": agent_id, "seq": seq, "kind": kind, "payload": payload}
        self._out.write(json_text(line) + "\n")
        self._out.flush()


class ProgressHooks(RunnerHooks):
    """Tells a person on stderr what the agents are doing, one line per tool call; once a second
    agent starts (a supervisor's worker), each line names the agent it is about. Names,
    arguments and outputs are the model's and the files' text: what a terminal would act on is
    spelled out."""

    def __init__(self, out: TextIO = sys.stderr) -> None:
        self._out = out
        self._names: dict[str, str] = {}

    def agent_started(self, agent_id: str, parent_id: str | None, name: str) -> None:
        self._names[agent_id] = name

    def tool_call_started(self, agent_id: str, call: FunctionCall) -> None:
        args = call.arguments if len(call.arguments) <= 160 else call.arguments[:157] + "..."
        self._line(f"{self._who(agent_id)}-> {call.name} {args}")

    def tool_call_ended(self, agent_id: str, call: FunctionCall, output: ToolOutput) -> None:
        first = output.text.strip().splitlines()[:1]
        status = "ok" if output.success else "error"
        summary = first[0][:160] if first else ""
        self._line(f"{self._who(agent_id)}<- {call.name} {status}: {summary}")

    def _line(self, text: str) -> None:
        self._out.write(f"  {shown(text)}\n")
        self._out.flush()

    def _who(self, agent_id: str) -> str:
        if len(self._names) < 2:
            return ""
        return f"[{self._names.get(agent_id, agent_id)}] "


class RunAnnounced(SafeHooks):
    """Says `line` (the run id and how to see it) when the first agent starts, that is once the
    run is in the journal: said before, a run that failed to start (no API key, a bad base URL)
    left an id that `corral status` could not find."""

    def __init__(self, inner: RunnerHooks, line: str, out: TextIO | None = None) -> None:
        super().__init__(inner)
        self._line: str | None = line
        self._out = out

    def agent_started(self, agent_id: str, parent_id: str | None, name: str) -> None:
        if self._line is not None:
            out = self._out if self._out is not None else sys.stderr
            print(self._line, file=out)
            out.flush()
            self._line = None
        super().agent_started(agent_id, parent_id, name)
