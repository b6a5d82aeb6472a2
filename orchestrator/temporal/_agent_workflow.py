"""The workflows of an exec run: `RunWorkflow` for the run, `AgentWorkflow` for each agent.

The run journals itself, holds its root agent as a child workflow and journals how it ended
(`interrupted` when it was cancelled); a completed run then extracts its memories once, on its
root's host. An agent's workflow holds its `AgentDriver`: it claims a
host, works turn after turn (a new turn per message its parent sends or per worker that ends
while it is idle), reports each turn's end to its parent by signal, and stays open for more
until it is cancelled (its parent closed it, or the run ended). The root ends once its turn is
done and none of its workers runs. Cancellation reaches every worker before the agent
journals itself `interrupted`. Each later prompt and each turn's end fire the user's hooks
(`_lifecycle_flow`). Approvals are the `approve` update, with a validator. A long
history continues as new mid-turn, carrying the agent over, as long as the agent has no
workers (they are children of the run that started them).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ChildWorkflowError, FailureError

with workflow.unsafe.imports_passed_through():
    from corral.agents import (
        INTERRUPTED_FOR_INPUT,
        RUN_CANCELLED,
        AgentStatus,
        Finish,
        Interrupt,
        Notify,
        TurnContext,
        UserInput,
    )

    from ._approvals import ApprovalBook, ApprovalHandlers
    from ._budgets import RUN_CHARGE_SIGNAL, RUN_VERDICT_SIGNAL, RunBook, RunLink
    from ._collab import (
        AGENT_WORKFLOW,
        ENDED_SIGNAL,
        SEND_INPUT_SIGNAL,
        WorkflowCollab,
        cancelled_error,
    )
    from ._drive import AgentDriver, ContinueAsNewSuggested, HostLost
    from ._lifecycle_flow import fire_finish_hooks, fire_prompt_hooks
    from ._wire import (
        AgentEndedInput,
        AgentInput,
        AgentOutput,
        ExecOutput,
        ExecRunInput,
        PrepareSpecInput,
        RememberInput,
        RunCharge,
        RunStatusInput,
        RunVerdict,
        SendInput,
        TurnContextInput,
        agent_workflow_id,
        host_queue,
    )

CONTEXT_TIMEOUT = timedelta(minutes=5)
REMEMBER_PATCH = "corral.remember-run"
"""The `workflow.patched` id of a completed run's memory extraction."""


def _options(agent: AgentInput) -> dict[str, Any]:
    return {
        "start_to_close_timeout": timedelta(seconds=agent.policy.journal_timeout_s),
        "retry_policy": RetryPolicy(maximum_attempts=agent.policy.journal_attempts),
    }


@workflow.defn(name=AGENT_WORKFLOW)
class AgentWorkflow(ApprovalHandlers):
    """One agent of an exec run: the root, or a worker spawned by its parent."""

    def __init__(self) -> None:
        self.book = ApprovalBook()
        self.inbox: list[str] = []
        self.interrupting = False
        self.collab: WorkflowCollab | None = None
        self.run_link: RunLink | None = None

    # -- handlers ---------------------------------------------------------------------------

    @workflow.signal(name=SEND_INPUT_SIGNAL)
    def send_input(self, sent: SendInput) -> None:
        self.inbox.append(sent.message)
        self.interrupting = self.interrupting or sent.interrupt

    @workflow.signal(name=RUN_VERDICT_SIGNAL)
    def run_verdict(self, verdict: RunVerdict) -> None:
        if self.run_link is not None:
            self.run_link.heard(verdict)

    @workflow.signal(name=ENDED_SIGNAL)
    async def worker_ended(self, ended: AgentOutput) -> None:
        if ended.run_stop is not None and self.run_link is not None:
            # Heard before any queued worker is admitted, whichever signal came first.
            self.run_link.heard(RunVerdict(stop=ended.run_stop))
        if self.collab is not None:
            self.collab.ended(ended)
            await self.collab.admit_waiting()  # its slot may have freed

    # -- the agent --------------------------------------------------------------------------

    @workflow.run
    async def run(self, agent: AgentInput) -> AgentOutput:
        agent_id = agent.spec.agent_id
        if agent.run_terms is not None:
            self.run_link = RunLink(agent.run_id, agent.run_terms)
        host = agent.carry.host if agent.carry is not None else await self._claim(agent)
        shared = workflow.info().task_queue
        driver = AgentDriver(agent_id, agent.policy, host_queue(host), shared, self.book)
        driver.mail = self._mail
        driver.run = self.run_link
        # Workers are child workflows of this run: it may hand over only an agent without any.
        driver.may_continue_as_new = lambda: self.collab is None or not self.collab.workers
        if set(agent.spec.tools) & WorkflowCollab.names:
            self.collab = driver.collab = WorkflowCollab(agent, driver)
        self.inbox.extend(agent.inbox)
        try:
            finish = await self._live(agent, driver)
        except ContinueAsNewSuggested:
            await workflow.wait_condition(workflow.all_handlers_finished)
            carry = driver.carry(host)
            inbox = tuple(self._take_messages())
            workflow.continue_as_new(agent.model_copy(update={"carry": carry, "inbox": inbox}))
        except (asyncio.CancelledError, ActivityError, ChildWorkflowError) as exc:
            if cancelled_error(exc):
                await self._cancelled(agent, driver)
            raise
        if self.collab is not None:
            await self._wind_down(self.collab)
            await self.collab.stop_all()
        return AgentOutput(
            agent_id=agent_id,
            status=str(finish.status),
            message=finish.message,
            error=finish.error,
            host=host,
        )

    async def _wind_down(self, collab: WorkflowCollab) -> None:
        """When the run's budget stopped this agent, tell its running workers and let each
        end at its next step (journaling why), rather than cancel them mid-step."""
        link = self.run_link
        if link is None or link.stop is None:
            return
        verdict = RunVerdict(stop=link.stop)
        for worker in [w for w in collab.workers.values() if w.running]:
            if worker.handle is None:  # queued: it ends unstarted once admitted
                continue
            try:
                await worker.handle.signal(RUN_VERDICT_SIGNAL, verdict)
            except FailureError as exc:  # it ended meanwhile
                workflow.logger.info("could not stop %s: %s", worker.spec.agent_id, exc)
        await collab.admit_waiting()
        await workflow.wait_condition(lambda: not collab.running())

    async def _claim(self, agent: AgentInput) -> str:
        host: str = await workflow.execute_activity(
            "corral.claim_host", result_type=str, **_options(agent)
        )
        return host

    async def _live(self, agent: AgentInput, driver: AgentDriver) -> Finish:
        try:
            finish = await driver.drive(await self._first_actions(agent, driver))
            while True:
                if not (finish.status is AgentStatus.INTERRUPTED and self.inbox):
                    await self._ended(agent, driver, finish)
                stopped = self.run_link is not None and self.run_link.stop is not None
                if stopped or not await self._more_to_do(agent):
                    return finish  # a run out of budget takes no more turns
                finish = await self._turn(driver, await self._next_input(agent, driver))
        except HostLost as lost:
            finish = Finish(status=AgentStatus.FAILED, error=f"its host stopped answering: {lost}")
            await self._ended(agent, driver, finish, hooks=False)  # they would run on that host
            return finish

    async def _turn(self, driver: AgentDriver, message: UserInput) -> Finish:
        """A turn on `message`, as its UserPromptSubmit hooks leave it; one that a hook
        blocked ends before it starts, with the reason as its error."""
        opened = await fire_prompt_hooks(driver, message)
        if isinstance(opened, str):
            return Finish(status=AgentStatus.FAILED, error=opened)
        return await driver.drive(driver.feed(opened))

    async def _first_actions(self, agent: AgentInput, driver: AgentDriver) -> list[Any]:
        """The agent's task on a fresh host, or the turn an earlier run handed over."""
        if agent.carry is not None:
            return await driver.resume(agent.carry)
        prepare = PrepareSpecInput(
            spec=agent.spec,
            task=agent.task,
            subagent_context=agent.subagent_context,
            limits=agent.limits,
        )
        return await driver.prepare("corral.prepare_spec", prepare)

    def _mail(self) -> list[Any]:
        """What the core should see now, mid-turn: an interrupt, or the notifications (and
        messages) that came in; an interrupt leaves the messages for the next turn."""
        if self.interrupting:
            self.interrupting = False
            return [Interrupt(reason=INTERRUPTED_FOR_INPUT)]
        texts = self._take_messages()
        return [Notify(text=text) for text in texts]

    def _take_messages(self) -> list[str]:
        texts = [*(self.collab.messages if self.collab else []), *self.inbox]
        if self.collab is not None:
            self.collab.messages.clear()
        self.inbox.clear()
        return texts

    async def _more_to_do(self, agent: AgentInput) -> bool:
        """Wait for a message; the root stops waiting once none of its workers runs."""
        root = agent.parent_workflow_id is None
        collab = self.collab

        def ready() -> bool:
            waiting = bool(self.inbox) or bool(collab is not None and collab.messages)
            return waiting or (root and not (collab is not None and collab.running()))

        await workflow.wait_condition(ready)
        self.interrupting = False
        return bool(self.inbox) or bool(collab is not None and collab.messages)

    async def _next_input(self, agent: AgentInput, driver: AgentDriver) -> UserInput:
        # The messages waiting now are the query memory is recalled for; they are taken after
        # the activity, as before, so one arriving meanwhile still joins this turn.
        pending = [*(self.collab.messages if self.collab else []), *self.inbox]
        turn = TurnContextInput(
            spec=driver.spec, subagent_context=agent.subagent_context, query="\n\n".join(pending)
        )
        context: dict[str, Any] = await workflow.execute_activity(
            "corral.turn_context",
            turn,
            task_queue=driver.host_queue,
            result_type=dict[str, Any],
            start_to_close_timeout=CONTEXT_TIMEOUT,
            schedule_to_start_timeout=timedelta(seconds=agent.policy.host_start_s),
        )
        text = "\n\n".join(self._take_messages())
        return UserInput(text=text, context=TurnContext.model_validate(context))

    async def _ended(
        self, agent: AgentInput, driver: AgentDriver, finish: Finish, *, hooks: bool = True
    ) -> None:
        """Fire the Stop (or SubagentStop) hooks, journal the turn's end, tell the parent."""
        if hooks:
            await fire_finish_hooks(driver, finish)
        core = driver.core
        ended = AgentEndedInput(
            agent_id=driver.agent_id,
            status=str(finish.status),
            message=finish.message,
            error=finish.error,
            usage=core.total_usage.model_dump(mode="json") if core is not None else {},
            cost_usd=driver.cost,
            journal=driver.take_journal(),
        )
        await workflow.execute_activity("corral.agent_ended", ended, **_options(agent))
        if agent.parent_workflow_id is not None:
            parent = workflow.get_external_workflow_handle(agent.parent_workflow_id)
            output = AgentOutput(
                agent_id=driver.agent_id,
                status=str(finish.status),
                message=finish.message,
                error=finish.error,
                run_stop=self.run_link.stop if self.run_link is not None else None,
            )
            try:
                await parent.signal(ENDED_SIGNAL, output)
            except FailureError as exc:  # the parent has ended: nobody is left to tell
                workflow.logger.warning("could not tell %s: %s", agent.parent_workflow_id, exc)

    async def _cancelled(self, agent: AgentInput, driver: AgentDriver) -> None:
        """Cancel every worker first, then journal this agent interrupted if it was working."""
        if self.collab is not None:
            await self.collab.stop_all()
        if driver.busy:
            finish = driver.finish_now(Interrupt(reason=RUN_CANCELLED))
            core = driver.core
            ended = AgentEndedInput(
                agent_id=driver.agent_id,
                status=str(finish.status),
                error=finish.error,
                usage=core.total_usage.model_dump(mode="json") if core is not None else {},
                cost_usd=driver.cost,
                journal=driver.take_journal(),
            )
            await workflow.execute_activity("corral.agent_ended", ended, **_options(agent))


@workflow.defn(name="corral.RunWorkflow")
class RunWorkflow:
    """An exec run: its record, its root agent as a child workflow, how it ended, and the
    tally of its budget that every agent charges."""

    def __init__(self) -> None:
        self.charges: list[RunCharge] = []

    @workflow.signal(name=RUN_CHARGE_SIGNAL)
    def run_charge(self, charge: RunCharge) -> None:
        self.charges.append(charge)

    @workflow.run
    async def run(self, run: ExecRunInput) -> ExecOutput:
        options = _options(run.root)
        await workflow.execute_activity("corral.begin_exec", run, **options)
        agent_id = run.root.spec.agent_id
        book = RunBook(run.run_limits, self.charges)
        serving = asyncio.create_task(book.serve()) if run.run_limits.counted else None
        try:
            root: AgentOutput = await workflow.execute_child_workflow(
                AGENT_WORKFLOW,
                run.root.model_copy(update={"run_terms": book.terms}),
                id=agent_workflow_id(run.run_id, agent_id),
                result_type=AgentOutput,
            )
        except (asyncio.CancelledError, ChildWorkflowError) as exc:
            # The subtree has ended (cancelled, or the root failed): the journal says how.
            ended = AgentStatus.INTERRUPTED if cancelled_error(exc) else AgentStatus.FAILED
            status = RunStatusInput(run_id=run.run_id, status=str(ended))
            await workflow.execute_activity("corral.set_run_status", status, **options)
            raise
        finally:
            if serving is not None:
                serving.cancel()
        status = RunStatusInput(run_id=run.run_id, status=root.status)
        await workflow.execute_activity("corral.set_run_status", status, **options)
        # Histories recorded before runs on Temporal extracted memories replay without it.
        if workflow.patched(REMEMBER_PATCH) and root.status == str(AgentStatus.COMPLETED):
            await _remember(run, root)
        return ExecOutput(run_id=run.run_id, root=root)


async def _remember(run: ExecRunInput, root: AgentOutput) -> None:
    """Memory's extraction for a completed run, once, on its root's host; the run's result
    stands whatever becomes of it (a host gone, a worker without memory on)."""
    if root.host is None:
        return
    remember = RememberInput(spec=run.root.spec, task=run.root.task, limits=run.root.limits)
    policy = run.root.policy
    try:
        await workflow.execute_activity(
            "corral.remember_run",
            remember,
            task_queue=host_queue(root.host),
            start_to_close_timeout=timedelta(seconds=policy.model_timeout_s),
            schedule_to_start_timeout=timedelta(seconds=policy.host_start_s),
            heartbeat_timeout=timedelta(seconds=policy.heartbeat_s),
            retry_policy=RetryPolicy(maximum_attempts=1),
        )
    except ActivityError as exc:
        workflow.logger.warning("run %s: memory extraction did not run: %s", run.run_id, exc)
