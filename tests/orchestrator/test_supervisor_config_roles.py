"""Roles of one's own (`[agents.roles.NAME]`) in a supervised run: offered to the model with what
each is for, used for a worker's instructions, model and sandbox, and refused when unknown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from corral.agents import AgentsConfig, RoleConfig, base_instructions
from corral.orchestrator._run import SpawnRefused
from corral.orchestrator.supervisor import SpawnRequest, spawn_child
from corral.orchestrator.supervisor._tools import spawn_args_for
from corral.tools import SandboxMode, strict_json_schema

from .test_supervisor import (
    WAIT,
    RootHeld,
    dispatcher,
    nickname_in,
    open_supervised_run,
    requests_of,
    start_root,
    tool_names,
    workspace,
)

pytestmark = pytest.mark.anyio
__all__ = ["workspace"]  # the fixture, used by name

AUDITOR = RoleConfig(
    description="checks licences and reports what it found",
    instructions="Read every LICENSE file and list the licences.",
    model="audit-model",
    sandbox_mode=SandboxMode.READ_ONLY,
)
ROLES = {"auditor": AUDITOR, "docs-writer": RoleConfig(instructions="Write docs only.")}
WITH_ROLES = AgentsConfig(roles=ROLES)


def says_done(request: dict[str, Any]) -> str:
    return "ok" if nickname_in(request) is None else "done"


def role_schema(agents: AgentsConfig) -> dict[str, Any]:
    role: dict[str, Any] = strict_json_schema(spawn_args_for(agents))["properties"]["role"]
    return role


def test_the_spawn_tool_offers_built_in_roles_then_the_configs_own_with_descriptions() -> None:
    role = role_schema(WITH_ROLES)
    (choices,) = [kind["enum"] for kind in role["anyOf"] if "enum" in kind]
    assert choices == [
        "general",
        "supervisor",
        "reviewer",
        "refactorer",
        "triager",
        "auditor",
        "docs-writer",
    ]
    assert "auditor: checks licences and reports what it found" in role["description"]
    assert "docs-writer: a role of this configuration" in role["description"]


def test_the_spawn_schema_is_the_same_object_for_the_same_roles_so_siblings_send_it_alike() -> None:
    same = AgentsConfig(roles=dict(reversed(ROLES.items())))
    assert spawn_args_for(WITH_ROLES) is spawn_args_for(same)


async def test_a_worker_of_a_config_role_gets_the_general_text_and_the_roles_part(
    workspace: Path,
) -> None:
    held = RootHeld(says_done)
    async with open_supervised_run(held, workspace, agents=WITH_ROLES) as (runtime, server):
        root = await start_root(runtime, workspace, "lead")
        request = SpawnRequest("audit the licences", role="auditor")
        worker = await spawn_child(runtime, root, request)
        held.let_go.set()
        await runtime.wait([worker], WAIT)
        (sent,) = requests_of(server, worker.nickname)
    general = base_instructions("audit-model", "general")
    assert sent["instructions"].startswith(general.rstrip() + "\n\n# Your role: auditor\n\n")
    assert sent["instructions"].endswith("Read every LICENSE file and list the licences.\n")
    assert sent["model"] == "audit-model"
    assert worker.spec.role == "auditor"
    assert worker.spec.profile.sandbox is SandboxMode.READ_ONLY


async def test_two_workers_of_one_config_role_send_byte_identical_instructions_and_tools(
    workspace: Path,
) -> None:
    held = RootHeld(says_done)
    async with open_supervised_run(held, workspace, agents=WITH_ROLES) as (runtime, server):
        root = await start_root(runtime, workspace, "lead")
        first = await spawn_child(runtime, root, SpawnRequest("docs for a", role="docs-writer"))
        second = await spawn_child(runtime, root, SpawnRequest("docs for b", role="docs-writer"))
        held.let_go.set()
        await runtime.wait([first], WAIT)
        await runtime.wait([second], WAIT)
        (one,) = requests_of(server, first.nickname)
        (two,) = requests_of(server, second.nickname)
    assert one["instructions"] == two["instructions"]
    assert one["tools"] == two["tools"]
    assert tool_names(one) == tool_names(two)


async def test_an_unknown_role_is_refused_with_every_role_the_run_knows(workspace: Path) -> None:
    held = RootHeld(says_done)
    async with open_supervised_run(held, workspace, agents=WITH_ROLES) as (runtime, _):
        root = await start_root(runtime, workspace, "lead")
        ok, answer = await dispatcher(runtime, root)("spawn_agent", message="do it", role="wizard")
        with pytest.raises(SpawnRefused) as refused:
            await spawn_child(runtime, root, SpawnRequest("do it", role="wizard"))
        held.let_go.set()
    assert ok is False
    assert "role: Input should be 'general', 'supervisor'" in answer
    assert "'triager', 'auditor' or 'docs-writer'" in answer
    assert str(refused.value) == (
        "unknown role 'wizard'; choose one of: general, supervisor, reviewer, refactorer, "
        "triager, auditor, docs-writer"
    )


async def test_a_role_that_fixes_the_model_refuses_another_model(workspace: Path) -> None:
    held = RootHeld(says_done)
    async with open_supervised_run(held, workspace, agents=WITH_ROLES) as (runtime, _):
        root = await start_root(runtime, workspace, "lead")
        asked = SpawnRequest("audit", role="auditor", model="other-model")
        with pytest.raises(SpawnRefused, match="role auditor always uses model audit-model"):
            await spawn_child(runtime, root, asked)
        held.let_go.set()
