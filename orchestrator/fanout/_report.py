"""`report_result`: the tool through which a fan-out worker hands in its item's result.

Its parameters are the user's schema. Each call is judged against it: a valid result is kept and
answered "result recorded"; an invalid one goes back to the model with the validation errors,
until the tries run out. The judgement is a pure function of the calls, so after a crash the
slot is rebuilt by judging the calls the ledger recorded, in order, without asking the model; a
call the crash interrupted is judged when resume runs it again (the tool has no side effects:
its arguments are the whole result).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from corral.agents import LedgerEntry
from corral.tools import Tool, ToolContext, ToolOutput

from ._schema import ResultSchema

REPORT_RESULT = "report_result"
RESULT_RECORDED = "result recorded"
_INVALID = "invalid result"
_ALREADY = "a result is already recorded"
_NO_TRIES = "no tries left"
_JUDGED = (RESULT_RECORDED, _INVALID, _ALREADY, _NO_TRIES)

WORKER_INSTRUCTIONS = (
    "You are one worker of a batch, and the last user message is your whole task. When you "
    f"have the answer, call `{REPORT_RESULT}` once with it; its parameters are the required "
    "result format. If it answers with errors, fix the result and call it again. Once it "
    f'answers "{RESULT_RECORDED}", you are done: end your turn with a one-line summary.'
)


class AnyArguments(BaseModel):
    """Accepts any JSON object: the result schema, not pydantic, judges the arguments."""

    model_config = ConfigDict(extra="allow")


@dataclass
class ResultSlot:
    """What one item's worker has reported so far."""

    index: int
    schema: ResultSchema
    max_tries: int
    tries: int = 0
    has_result: bool = False
    result: Any = None
    last_problems: str = ""

    def judge(self, arguments: dict[str, Any]) -> ToolOutput:
        """Judge one call: keep a valid result, count an invalid one, refuse once settled."""
        if self.has_result:
            return ToolOutput.error(f"{_ALREADY} for this item; end your turn now")
        if self.tries >= self.max_tries:
            return ToolOutput.error(f"{_NO_TRIES}: this item has failed; end your turn now")
        problems = self.schema.problems(arguments)
        if not problems:
            self.has_result = True
            self.result = self.schema.result_of(arguments)
            return ToolOutput(RESULT_RECORDED)
        self.tries += 1
        self.last_problems = "; ".join(problems)
        head = f"{_INVALID} ({self.tries} of {self.max_tries} tries): {self.last_problems}"
        if self.tries >= self.max_tries:
            return ToolOutput.error(f"{head}\nThat was the last try: this item has failed.")
        return ToolOutput.error(f"{head}\nFix the result and call {REPORT_RESULT} again.")

    def replay(self, ledger: Iterable[LedgerEntry]) -> None:
        """Judge again the calls a previous process recorded (those it answered itself)."""
        for entry in ledger:
            output = entry.output or ""
            if entry.tool == REPORT_RESULT and output.startswith(_JUDGED):
                self.judge(_arguments(entry.arguments))

    def failure(self, status: str, error: str | None) -> str:
        """Why the item failed, given how its worker ended without a valid result."""
        if self.tries >= self.max_tries:
            return f"{self.tries} invalid results: {self.last_problems}"
        if status == "completed":
            reason = f"the worker finished without calling {REPORT_RESULT}"
        else:
            reason = f"the worker ended {status}: {error or 'no reason given'}"
        if self.tries:
            reason += f" (after {self.tries} invalid results: {self.last_problems})"
        return reason


def _arguments(raw: str) -> dict[str, Any]:
    # Only calls the handler judged get here, and it judges JSON objects only.
    value = json.loads(raw) if raw.strip() else {}
    return value if isinstance(value, dict) else {}


def report_result_tool(slot: ResultSlot) -> Tool[AnyArguments]:
    """The `report_result` tool writing to `slot`."""

    async def handle(args: AnyArguments, ctx: ToolContext) -> ToolOutput:
        del ctx
        return slot.judge(dict(args.model_extra or {}))

    description = (
        "Hand in the result of your task. Call it once, when done; the arguments are checked "
        "against the required result format and any errors come back so you can fix them."
    )
    if slot.schema.wrapped:
        description += " Put the result under `result`."
    return Tool(
        name=REPORT_RESULT,
        description=description,
        args=AnyArguments,
        handler=handle,
        parallel=False,
        schema=slot.schema.parameters,
        side_effects=False,
    )
