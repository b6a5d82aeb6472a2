"""Supervisors and their workers in one process: the run runtime, the collab tools, real HTTP.

The scripted model server plays every agent. A request is the root's when it carries no
`<subagent_context>`; a worker's requests are told apart by the nickname in that context.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import (
    AgentsConfig,
    AgentStatus,
    BudgetConfig,
    CorralConfig,
    MemoryStore,
    RunnerHooks,
    RunRecord,
)
from corral.orchestrator._run import (
    AgentHandle,
    ClientPool,
    RunRuntime,
    RuntimeOptions,
    SpawnRefused,
    open_runtime,
)
from corral.orchestrator.model_server import RunningModelServer, serve_model_server
from corral.orchestrator.runs import build_root_spec
from corral.orchestrator.supervisor import (
    COLLAB_TOOL_NAMES,
    SpawnRequest,
    collab_tool_providers,
    spawn_child,
)
from corral.tools import SandboxMode, ToolCall

pytestmark = pytest.mark.anyio

WAIT = 30.0
WAIT_MS = int(WAIT * 1000)
RUN_ID = "run-supervised"
_CONTEXT = re.compile(r"<subagent_context>\nYou are (\S+) \(agent id (\S+)\)")

DEFAULT_AGENTS = AgentsConfig()
NO_BUDGETS = BudgetConfig()
Policy = Callable[[dict[str, Any]], Any]


# -- reading requests -------------------------------------------------------------------------


def messages(request: dict[str, Any]) -> list[tuple[str, str]]:
    found = []
    for item in request["input"]:
        if item.get("type") == "message":
            found.append((item["role"], "".join(p.get("text", "") for p in item["content"])))
    return found


def nickname_in(request: dict[str, Any]) -> str | None:
    for _, text in messages(request):
        match = _CONTEXT.match(text)
        if match:
            return match.group(1)
    return None


def outputs(request: dict[str, Any]) -> dict[str, str]:
    items = request["input"]
    return {i["call_id"]: i["output"] for i in items if i.get("type") == "function_call_output"}


def last_user_text(request: dict[str, Any]) -> str:
    return [text for role, text in messages(request) if role == "user"][-1]


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "type": "function_call",
        "call_id": call_id,
        "name": name,
        "arguments": json.dumps(arguments),
    }


def tool_names(request: dict[str, Any]) -> list[str]:
    return [tool["name"] for tool in request["tools"]]


# -- running a supervised run in process ------------------------------------------------------


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    return root


@asynccontextmanager
async def open_supervised_run(
    policy: Policy,
    workspace: Path,
    *,
    agents: AgentsConfig = DEFAULT_AGENTS,
    budgets: BudgetConfig = NO_BUDGETS,
    sandbox: SandboxMode = SandboxMode.WORKSPACE_WRITE,
    hooks: RunnerHooks | None = None,
    clients: ClientPool | None = None,
    store: MemoryStore | None = None,
) -> AsyncIterator[tuple[RunRuntime, RunningModelServer]]:
    """A supervised run against `policy`; with `store`, a run already journaled there."""
    async with serve_model_server(policy) as server:
        config = CorralConfig(
            base_url=server.base_url,
            home=workspace.parent / "home",
            agents=agents,
            budgets=budgets,
            sandbox_mode=sandbox,
        )
        if store is None:
            store = MemoryStore()
            await store.create_run(
                RunRecord(
                    run_id=RUN_ID,
                    kind="exec",
                    status="running",
                    created_at=0,
                    updated_at=0,
                    config={},
                )
            )
        clients = clients or ClientPool()
        options = RuntimeOptions(
            config=config,
            store=store,
            run_id=RUN_ID,
            clients=clients,
            hooks=hooks or RunnerHooks(),
            tool_providers=collab_tool_providers(),
        )
        try:
            async with open_runtime(options) as runtime:
                yield runtime, server
        finally:
            await clients.aclose()


class RootHeld:
    """`policy`, with the root's first model request held until `let_go` is set.

    A test that plays the root from outside (spawning its workers, calling its tools) does so
    while the root is in its turn, as the root's own tool calls would be. Unheld, a root whose
    turn ends before its first worker exists has nothing left to do and ends, and the run then
    refuses to start a worker under it.
    """

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.arrived = anyio.Event()
        self.let_go = anyio.Event()

    async def __call__(self, request: dict[str, Any]) -> Any:
        if nickname_in(request) is None and not self.arrived.is_set():
            self.arrived.set()
            with anyio.fail_after(WAIT):
                await self.let_go.wait()
        answer = self.policy(request)
        return await answer if inspect.isawaitable(answer) else answer


async def start_root(
    runtime: RunRuntime, workspace: Path, task: str, *, stay_open: bool = True
) -> AgentHandle:
    """The run's root supervisor, started on `task` (ending after one turn unless `stay_open`)."""
    spec = build_root_spec(
        runtime.config,
        cwd=workspace,
        env={},
        run_id=RUN_ID,
        role="supervisor",
        extra_tools=COLLAB_TOOL_NAMES,
    )
    return await runtime.start(spec, task, stay_open=stay_open)


async def run_to_end(runtime: RunRuntime, workspace: Path, task: str) -> AgentHandle:
    root = await start_root(runtime, workspace, task)
    with anyio.fail_after(WAIT):
        await root.ended.wait()
    return root


def requests_of(server: RunningModelServer, nickname: str | None) -> list[dict[str, Any]]:
    return [r["normalised"] for r in server.requests if nickname_in(r["normalised"]) == nickname]


# -- spawning, waiting, messaging -------------------------------------------------------------

FRUIT = {"count the apples": "3 apples", "count the pears": "5 pears"}


def counting_worker(request: dict[str, Any]) -> str:
    text = last_user_text(request)
    return "12 plums" if text == "now count the plums" else FRUIT[text]


def counting_supervisor(request: dict[str, Any]) -> Any:
    done = outputs(request)
    if not done:
        return [
            call("spawn-1", "spawn_agent", message="count the apples"),
            call("spawn-2", "spawn_agent", message="count the pears"),
        ]
    workers = [json.loads(done[c]) for c in ("spawn-1", "spawn-2")]
    first = workers[0]["agent_id"]
    if "wait-plums" in done:
        plums = json.loads(done["wait-plums"])["status"][first]["message"]
        return f"all counted: {plums}"
    if "send" in done:
        return [call("wait-plums", "wait_agent", targets=[first])]
    finished = set()
    for call_id, output in done.items():
        if call_id.startswith("wait-"):
            finished.update(json.loads(output)["status"])
    pending = [w["agent_id"] for w in workers if w["agent_id"] not in finished]
    if pending:
        return [call(f"wait-{len(done)}", "wait_agent", targets=pending, timeout_ms=10_000)]
    return [
        call("send", "send_input", target=workers[0]["nickname"], message="now count the plums")
    ]


def counting(request: dict[str, Any]) -> Any:
    if nickname_in(request) is None:
        return counting_supervisor(request)
    return counting_worker(request)


async def test_a_supervisor_spawns_two_workers_waits_for_them_and_hears_back_after_a_message(
    workspace: Path,
) -> None:
    async with open_supervised_run(counting, workspace) as (runtime, server):
        root = await run_to_end(runtime, workspace, "count the fruit")
        first, second = root.children
    assert root.status is AgentStatus.COMPLETED
    assert root.final_message == "all counted: 12 plums"
    assert (first.depth, second.depth) == (1, 1)
    assert [first.spec.parent_id, second.spec.parent_id] == [root.agent_id] * 2

    root_requests = requests_of(server, None)
    waited: dict[str, Any] = {}
    for request in root_requests:
        for call_id, output in outputs(request).items():
            if call_id.startswith("wait-") and call_id != "wait-plums":
                waited.update(json.loads(output)["status"])
    assert waited[first.agent_id] == {
        "status": "completed",
        "nickname": first.nickname,
        "message": "3 apples",
    }
    assert waited[second.agent_id]["message"] == "5 pears"

    told = requests_of(server, first.nickname)
    assert len(told) == 2 and last_user_text(told[1]) == "now count the plums"
    assert json.loads(outputs(root_requests[-1])["send"]) == {"delivered": True}


async def test_every_finished_worker_is_announced_in_the_supervisors_next_request(
    workspace: Path,
) -> None:
    async with open_supervised_run(counting, workspace) as (runtime, server):
        root = await run_to_end(runtime, workspace, "count the fruit")
        first, second = root.children
    notices = [
        json.loads(text.removeprefix("<subagent_notification>\n").split("\n")[0])
        for request in requests_of(server, None)
        for _, text in messages(request)
        if text.startswith("<subagent_notification>")
    ]
    announced = {(n["agent_id"], n["status"], n["message"]) for n in notices}
    assert (first.agent_id, "completed", "3 apples") in announced
    assert (second.agent_id, "completed", "5 pears") in announced
    assert (first.agent_id, "completed", "12 plums") in announced


def announcing(request: dict[str, Any]) -> Any:
    if nickname_in(request) is not None:
        return "3 apples"
    if not outputs(request):
        return [call("spawn", "spawn_agent", message="count the apples")]
    if "<subagent_notification>" in last_user_text(request):
        return "the worker reported"
    return "waiting for the worker"


async def test_a_finished_workers_notice_is_the_last_thing_its_supervisor_reads(
    workspace: Path,
) -> None:
    async with open_supervised_run(announcing, workspace) as (runtime, server):
        root = await run_to_end(runtime, workspace, "delegate the count")
        (worker,) = root.children
    assert root.final_message == "the worker reported"
    last = requests_of(server, None)[-1]
    notice = last_user_text(last)
    assert notice.startswith("<subagent_notification>")
    body = json.loads(notice.split("\n")[1])
    assert body == {
        "agent_id": worker.agent_id,
        "nickname": worker.nickname,
        "status": "completed",
        "message": "3 apples",
    }


# -- closing a subtree ------------------------------------------------------------------------


class Orchard:
    """Root spawns a supervisor, which spawns a leaf that stalls; root closes the supervisor."""

    def __init__(self) -> None:
        self.leaf_started = anyio.Event()
        self.release = anyio.Event()

    async def __call__(self, request: dict[str, Any]) -> Any:
        nickname = nickname_in(request)
        if nickname is None:
            return await self.root(request)
        if any("split the orchard" in text for _, text in messages(request)):
            return self.middle(request)
        self.leaf_started.set()
        with anyio.fail_after(WAIT):
            await self.release.wait()
        return "too late"

    async def root(self, request: dict[str, Any]) -> Any:
        done = outputs(request)
        if not done:
            return [call("spawn", "spawn_agent", message="split the orchard", role="supervisor")]
        if "close" not in done:
            with anyio.fail_after(WAIT):
                await self.leaf_started.wait()
            middle = json.loads(done["spawn"])["nickname"]
            return [call("close", "close_agent", target=middle)]
        if "list" not in done:
            return [call("list", "list_agents")]
        return "closed the orchard"

    def middle(self, request: dict[str, Any]) -> Any:
        done = outputs(request)
        if not done:
            return [call("spawn-leaf", "spawn_agent", message="pick every apple")]
        leaf = json.loads(done["spawn-leaf"])["agent_id"]
        return [call("wait-leaf", "wait_agent", targets=[leaf], timeout_ms=3_600_000)]


async def test_closing_a_worker_ends_it_and_the_worker_it_started(workspace: Path) -> None:
    orchard = Orchard()
    agents = AgentsConfig(max_depth=2)
    async with open_supervised_run(orchard, workspace, agents=agents) as (runtime, server):
        try:
            root = await run_to_end(runtime, workspace, "tend the orchard")
        finally:
            orchard.release.set()  # the leaf's answer now goes nowhere: it was closed
        (middle,) = root.children
        (leaf,) = middle.children
        assert middle.ended.is_set() and leaf.ended.is_set()
        assert middle.closed and leaf.closed
    last = requests_of(server, None)[-1]
    assert json.loads(outputs(last)["close"]) == {"previous_status": "running"}
    listed = json.loads(outputs(last)["list"])["agents"]
    assert [(a["nickname"], a["status"], a["depth"]) for a in listed] == [
        (middle.nickname, "closed", 1),
        (leaf.nickname, "closed", 2),
    ]
    assert listed[1]["parent"] == middle.agent_id and listed[1]["role"] == "general"
    assert "spawn_agent" in tool_names(requests_of(server, middle.nickname)[0])
    assert "spawn_agent" not in tool_names(requests_of(server, leaf.nickname)[0])


# -- limits -----------------------------------------------------------------------------------


class TwoAtOnce:
    """Root asks for two workers at once; the first stalls until root has seen both answers."""

    def __init__(self) -> None:
        self.release = anyio.Event()
        self.answers: dict[str, str] = {}

    async def __call__(self, request: dict[str, Any]) -> Any:
        if nickname_in(request) is not None:
            with anyio.fail_after(WAIT):
                await self.release.wait()
            return "slow work done"
        done = outputs(request)
        if not done:
            return [
                call("spawn-a", "spawn_agent", message="slow work"),
                call("spawn-b", "spawn_agent", message="more work"),
            ]
        self.answers = done
        self.release.set()
        return "one worker is enough"


async def test_a_spawn_past_max_threads_and_a_full_queue_is_refused_naming_both_limits(
    workspace: Path,
) -> None:
    script = TwoAtOnce()
    agents = AgentsConfig(max_threads=1, max_queued_spawns=0)
    async with open_supervised_run(script, workspace, agents=agents) as (runtime, _):
        root = await run_to_end(runtime, workspace, "start two")
    assert len(root.children) == 1
    assert json.loads(script.answers["spawn-a"])["capacity"] == {
        "running": 1,
        "queued": 0,
        "limit": 1,
    }
    refusal = script.answers["spawn-b"]
    assert "thread limit reached (agents.max_threads = 1)" in refusal
    assert "the spawn queue is full (agents.max_queued_spawns = 0)" in refusal
    assert "wait for one with wait_agent or close one with close_agent" in refusal


async def test_a_worker_at_max_depth_gets_no_collab_tools_and_may_not_spawn(
    workspace: Path,
) -> None:
    held = RootHeld(lambda r: "ok")
    async with open_supervised_run(held, workspace) as (runtime, _):
        root = await start_root(runtime, workspace, "lead")
        worker = await spawn_child(runtime, root, SpawnRequest("count the apples"))
        with pytest.raises(SpawnRefused) as refused:
            await spawn_child(runtime, worker, SpawnRequest("count the seeds"))
        held.let_go.set()
        await runtime.wait([worker], WAIT)
        with anyio.fail_after(WAIT):
            await root.ended.wait()
    assert str(refused.value) == (
        "depth limit reached (agents.max_depth = 1): do this task yourself"
    )
    assert not set(COLLAB_TOOL_NAMES) & set(worker.spec.tools)
    assert set(COLLAB_TOOL_NAMES) <= set(root.spec.tools)


async def test_no_worker_starts_once_the_run_budget_is_spent(workspace: Path) -> None:
    budgets = BudgetConfig(run_max_turns=1)
    async with open_supervised_run(lambda r: "ok", workspace, budgets=budgets) as (runtime, _):
        root = await run_to_end(runtime, workspace, "lead")
        with pytest.raises(SpawnRefused, match="run budget exceeded: 1 of 1 model requests"):
            await spawn_child(runtime, root, SpawnRequest("count the apples"))
    assert root.children == []


async def test_no_worker_starts_under_an_agent_that_has_ended(workspace: Path) -> None:
    async with open_supervised_run(lambda r: "ok", workspace) as (runtime, _):
        root = await run_to_end(runtime, workspace, "lead")
        with pytest.raises(SpawnRefused, match="has ended: a worker can only be started under"):
            await spawn_child(runtime, root, SpawnRequest("count the apples"))
        agents = runtime.agents
    assert root.children == [] and [a.agent_id for a in agents] == [root.agent_id]


async def test_a_worker_under_a_read_only_supervisor_is_told_it_is_read_only(
    workspace: Path,
) -> None:
    held = RootHeld(lambda r: "ok")
    async with open_supervised_run(held, workspace, sandbox=SandboxMode.READ_ONLY) as (
        runtime,
        server,
    ):
        root = await start_root(runtime, workspace, "lead")
        request = SpawnRequest("fix it", sandbox=SandboxMode.FULL_ACCESS)
        worker = await spawn_child(runtime, root, request)
        held.let_go.set()
        await runtime.wait([worker], WAIT)
        (sent,) = requests_of(server, worker.nickname)
    assert worker.spec.profile.sandbox is SandboxMode.READ_ONLY
    permissions = messages(sent)[0]
    assert permissions[0] == "developer" and "## Sandbox: read-only" in permissions[1]


# -- calling the tools directly ---------------------------------------------------------------

Dispatch = Callable[..., Awaitable[tuple[bool, str]]]


def dispatcher(runtime: RunRuntime, caller: AgentHandle) -> Dispatch:
    """Calls `caller`'s tools as its runner would, answering (success, text)."""
    registry = runtime.registry_for(caller.spec)

    async def dispatch(name: str, **arguments: Any) -> tuple[bool, str]:
        tool_call = ToolCall("c", name, json.dumps(arguments))
        output = await registry.dispatch(tool_call, caller.runner.tool_context)
        return output.success, output.text

    return dispatch


def root_says_ok(request: dict[str, Any]) -> Any:
    return "ok" if nickname_in(request) is None else counting_worker(request)


async def test_a_worker_sent_new_input_counts_as_running_until_it_answers_again(
    workspace: Path,
) -> None:
    held = RootHeld(root_says_ok)
    async with open_supervised_run(held, workspace) as (runtime, _):
        root = await start_root(runtime, workspace, "lead")
        worker = await spawn_child(runtime, root, SpawnRequest("count the apples"))
        await runtime.wait([worker], WAIT)
        dispatch = dispatcher(runtime, root)
        sent = await dispatch("send_input", target=worker.nickname, message="now count the plums")
        at_once = await dispatch("wait_agent", targets=[worker.agent_id], timeout_ms=0)
        later = await dispatch("wait_agent", targets=[worker.nickname], timeout_ms=WAIT_MS)
        held.let_go.set()
    assert sent == (True, '{"delivered": true}')
    assert json.loads(at_once[1]) == {"status": {}, "timed_out": True}, "no stale answer"
    assert json.loads(later[1]) == {
        "status": {
            worker.agent_id: {
                "status": "completed",
                "nickname": worker.nickname,
                "message": "12 plums",
            }
        },
        "timed_out": False,
    }


async def test_collab_tools_refuse_targets_that_are_not_the_callers_workers(
    workspace: Path,
) -> None:
    held = RootHeld(root_says_ok)
    async with open_supervised_run(held, workspace) as (runtime, _):
        root = await start_root(runtime, workspace, "lead")
        worker = await spawn_child(runtime, root, SpawnRequest("count the apples"))
        dispatch = dispatcher(runtime, root)
        unknown = await dispatch("send_input", target="Nobody", message="hi")
        negative = await dispatch("wait_agent", targets=[worker.nickname], timeout_ms=-1)
        upward = await dispatcher(runtime, worker)("close_agent", target=root.agent_id)
        held.let_go.set()
        await runtime.wait([worker], WAIT)
    assert unknown[0] is False
    assert "no worker of yours is called 'Nobody'" in unknown[1]
    assert f"your workers are: {worker.nickname} ({worker.agent_id}" in unknown[1]
    assert negative == (False, "timeout_ms must be 0 or more, not -1")
    assert upward[0] is False and "unknown tool 'close_agent'" in upward[1]


class StallsUntilInterrupted:
    """The worker's first model call hangs; after an interrupt its next turn answers."""

    def __init__(self) -> None:
        self.stalled = anyio.Event()
        self.release = anyio.Event()
        self.notified = anyio.Event()

    async def __call__(self, request: dict[str, Any]) -> Any:
        if nickname_in(request) is None:
            if any(t.startswith("<subagent_notification>") for _, t in messages(request)):
                self.notified.set()
            return "ok"
        if last_user_text(request) == "now count the plums":
            return "12 plums"
        self.stalled.set()
        with anyio.fail_after(WAIT):
            await self.release.wait()
        return "too late"


async def test_an_interrupting_message_replaces_the_workers_turn_without_a_notice_of_it(
    workspace: Path,
) -> None:
    script = StallsUntilInterrupted()
    held = RootHeld(script)
    async with open_supervised_run(held, workspace) as (runtime, server):
        try:
            root = await start_root(runtime, workspace, "lead")
            worker = await spawn_child(runtime, root, SpawnRequest("count the apples"))
            with anyio.fail_after(WAIT):
                await script.stalled.wait()
            dispatch = dispatcher(runtime, root)
            await dispatch(
                "send_input", target=worker.nickname, message="now count the plums", interrupt=True
            )
            answer = await dispatch("wait_agent", targets=[worker.agent_id], timeout_ms=WAIT_MS)
        finally:
            script.release.set()
            held.let_go.set()
        with anyio.fail_after(WAIT):
            await root.ended.wait()
        assert script.notified.is_set(), "the worker's notice reached the root in its turn"
    assert json.loads(answer[1])["status"][worker.agent_id]["message"] == "12 plums"
    notices = [
        text
        for request in requests_of(server, None)
        for _, text in messages(request)
        if text.startswith("<subagent_notification>")
    ]
    assert len(notices) == 1 and '"status": "completed"' in notices[0]
    assert "12 plums" in notices[0]
    retry = requests_of(server, worker.nickname)[-1]
    assert any(text.startswith("<turn_aborted>") for _, text in messages(retry))
