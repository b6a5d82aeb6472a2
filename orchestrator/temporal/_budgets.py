"""The run's budget on Temporal: the run's workflow keeps the tally, its agents report to it.

After each model call an agent's workflow signals what it spent (`run_charge`) to the run's
workflow (whose id is the run id) and waits for the answer (`run_verdict`): the charge that
exhausts the run stops that agent at once, as locally, and every agent that charged before is
told to stop at its next step. The run's wall-time budget is a deadline every agent's driver
keeps with a durable timer; the fan-out starts no item once either is spent.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.exceptions import FailureError

with workflow.unsafe.imports_passed_through():
    from corral.agents import BudgetConfig, Usage

    from .._run import RunBudget, wall_time_reason
    from ._wire import RunCharge, RunLimits, RunTerms, RunVerdict

RUN_CHARGE_SIGNAL = "run_charge"
RUN_VERDICT_SIGNAL = "run_verdict"


def run_terms(limits: RunLimits) -> RunTerms | None:
    """What the run's agents are told of its limits, the deadline counted from now."""
    if not limits.any_set:
        return None
    wall = limits.run_max_wall_time_s
    deadline = None if wall is None else workflow.now().timestamp() + wall
    return RunTerms(limits=limits, deadline=deadline)


class RunLink:
    """An agent's workflow's side of its run's budget; it outlives the agent's driver."""

    def __init__(self, run_id: str, terms: RunTerms) -> None:
        self.run_id = run_id
        self.terms = terms
        self.answered: set[str] = set()
        self.stop: str | None = None

    def heard(self, verdict: RunVerdict) -> None:
        """The `run_verdict` signal."""
        if verdict.token is not None:
            self.answered.add(verdict.token)
        if verdict.stop is not None and self.stop is None:
            self.stop = verdict.stop

    def deadline_left(self) -> float | None:
        """Seconds until the run's deadline (0 once passed), or None without one."""
        deadline = self.terms.deadline
        if deadline is None:
            return None
        return max(deadline - workflow.now().timestamp(), 0.0)

    def wall_reason(self) -> str:
        limit = self.terms.limits.run_max_wall_time_s
        assert limit is not None
        return wall_time_reason(limit)

    async def charge(self, usage: dict[str, Any], cost: float, tool_calls: int) -> str | None:
        """Report one model call; answer why the run's budget is exhausted, or None."""
        if not self.terms.limits.counted:
            return self.stop
        token = str(workflow.uuid4())
        charge = RunCharge(
            workflow_id=workflow.info().workflow_id,
            token=token,
            usage=usage,
            cost_usd=cost,
            tool_calls=tool_calls,
        )
        try:
            await workflow.get_external_workflow_handle(self.run_id).signal(
                RUN_CHARGE_SIGNAL, charge
            )
        except FailureError as exc:  # the run's workflow has ended: nobody keeps the tally
            workflow.logger.warning("could not charge run %s: %s", self.run_id, exc)
            return self.stop
        await workflow.wait_condition(lambda: token in self.answered or self.stop is not None)
        return self.stop


class RunBook:
    """The run's tally, kept by the run's workflow: it answers every charge in the order they
    came, and tells every agent that charged before once the budget is exhausted."""

    def __init__(self, limits: RunLimits, charges: list[RunCharge]) -> None:
        self.limits = limits
        self.budget = RunBudget(BudgetConfig(**limits.model_dump()))
        self.charges = charges
        """Filled by the workflow's `run_charge` signal handler."""
        self.agents: dict[str, None] = {}
        """The workflows that charged the run, in order."""
        self.terms = run_terms(limits)
        """What each agent is told (None for a run without limits)."""

    def exhausted(self) -> str | None:
        """Why no more work may start: the tally or the deadline, or None."""
        if self.budget.exhausted is not None:
            return self.budget.exhausted
        wall = self.limits.run_max_wall_time_s
        deadline = None if self.terms is None else self.terms.deadline
        if wall is not None and deadline is not None and workflow.now().timestamp() >= deadline:
            return wall_time_reason(wall)
        return None

    async def serve(self) -> None:
        """Answer charges until cancelled (when the run's workflow ends)."""
        while True:
            await workflow.wait_condition(lambda: bool(self.charges))
            charge = self.charges.pop(0)
            before = self.budget.exhausted
            usage = Usage.model_validate(charge.usage)
            stop = self.budget.charge(usage, charge.cost_usd, charge.tool_calls)
            self.agents[charge.workflow_id] = None
            await _tell(charge.workflow_id, RunVerdict(token=charge.token, stop=stop))
            if stop is not None and before is None:
                for workflow_id in self.agents:
                    if workflow_id != charge.workflow_id:
                        await _tell(workflow_id, RunVerdict(stop=stop))


async def _tell(workflow_id: str, verdict: RunVerdict) -> None:
    try:
        await workflow.get_external_workflow_handle(workflow_id).signal(RUN_VERDICT_SIGNAL, verdict)
    except FailureError as exc:  # the agent has ended meanwhile: it needs no answer
        workflow.logger.info("could not tell %s: %s", workflow_id, exc)
