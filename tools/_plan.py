"""The `update_plan` tool: the agent's running checklist, shown in its event stream.

The plan is kept nowhere: the tool checks it and emits a `plan_updated` event, so whoever
watches the agent (a UI, the journal) can render it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ._registry import Tool, ToolContext, ToolOutput

PlanStatus = Literal["pending", "in_progress", "completed"]


class PlanStep(BaseModel):
    model_config = ConfigDict(extra="forbid")

    step: str = Field(description="What this step does, in a short sentence.")
    status: PlanStatus = Field(description="pending, in_progress or completed.")


class UpdatePlanArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    explanation: str | None = Field(default=None, description="Why the plan changed, if it did.")
    plan: list[PlanStep] = Field(description="Every step of the plan, in order.")


def update_plan_tool() -> Tool[UpdatePlanArgs]:
    return Tool(
        name="update_plan",
        description=(
            "Keep a short step-by-step plan for a task and update it as you go. Send the whole "
            "plan each time; each step is pending, in_progress or completed, and at most one "
            "step may be in_progress."
        ),
        args=UpdatePlanArgs,
        handler=_update_plan,
        mutating=False,
        parallel=False,
        side_effects=False,
    )


async def _update_plan(args: UpdatePlanArgs, ctx: ToolContext) -> ToolOutput:
    problem = _problem(args)
    if problem:
        return ToolOutput.error(f"update_plan: {problem}; the plan was not changed")
    ctx.events.emit(
        "plan_updated",
        {"explanation": args.explanation, "plan": [step.model_dump() for step in args.plan]},
    )
    return ToolOutput("Plan updated")


def _problem(args: UpdatePlanArgs) -> str:
    blank = [n for n, step in enumerate(args.plan, start=1) if not step.step.strip()]
    if blank:
        return f"step {blank[0]} has no text"
    active = [step.step for step in args.plan if step.status == "in_progress"]
    if len(active) > 1:
        names = ", ".join(repr(s) for s in active)
        return f"at most one step may be in_progress, but {len(active)} are: {names}"
    return ""
