"""A worker's permission profile: narrowed from its parent's, refused where it would widen."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest

from corral.agents import ROLES, AgentsConfig
from corral.orchestrator._run import SpawnRefused
from corral.orchestrator.supervisor import child_profile, write_set_of
from corral.orchestrator.supervisor._tools import spawn_args_for
from corral.tools import PermissionProfile, SandboxMode


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    return root


def writer(workspace: Path, *, network: bool = True) -> PermissionProfile:
    return PermissionProfile.for_workspace("workspace-write", workspace, network=network)


def test_a_child_asking_for_full_access_under_a_read_only_parent_gets_read_only(
    workspace: Path,
) -> None:
    parent = PermissionProfile.for_workspace("read-only", workspace)
    child = child_profile(parent, cwd=workspace, sandbox=SandboxMode.FULL_ACCESS)
    assert child.sandbox is SandboxMode.READ_ONLY
    assert child.writable_roots == ()


def test_a_child_asking_for_full_access_under_a_writer_keeps_the_writers_roots(
    workspace: Path,
) -> None:
    child = child_profile(writer(workspace), cwd=workspace, sandbox=SandboxMode.FULL_ACCESS)
    assert child.sandbox is SandboxMode.WORKSPACE_WRITE
    assert child.writable_roots == (workspace,)
    assert child.network, "network is inherited, never added"


def test_a_write_set_confines_the_child_to_those_paths_resolved_against_the_cwd(
    workspace: Path,
) -> None:
    child = child_profile(writer(workspace), cwd=workspace, write_set=["src", "./README.md"])
    assert child.sandbox is SandboxMode.WORKSPACE_WRITE
    assert child.writable_roots == (workspace / "README.md", workspace / "src")
    assert write_set_of(child) == child.writable_roots


def test_a_write_set_outside_the_parents_roots_is_refused_naming_the_path_and_the_roots(
    workspace: Path,
) -> None:
    with pytest.raises(SpawnRefused) as refused:
        child_profile(writer(workspace), cwd=workspace / "src", write_set=["../../elsewhere"])
    message = str(refused.value)
    assert f"write set outside your writable roots: {workspace.parent / 'elsewhere'}" in message
    assert f"your writable roots are {workspace}" in message


def test_a_write_set_inside_git_is_refused_when_the_parent_may_not_write_git(
    workspace: Path,
) -> None:
    with pytest.raises(SpawnRefused, match=r"\.git folders inside them stay read-only"):
        child_profile(writer(workspace), cwd=workspace, write_set=[".git/config"])


def test_a_write_set_under_a_read_only_parent_is_refused(workspace: Path) -> None:
    parent = PermissionProfile.for_workspace("read-only", workspace)
    with pytest.raises(SpawnRefused, match="your own sandbox is read-only"):
        child_profile(parent, cwd=workspace, write_set=["src"])


def test_a_write_set_with_an_explicit_read_only_sandbox_is_refused(workspace: Path) -> None:
    with pytest.raises(SpawnRefused, match="needs sandbox workspace-write"):
        child_profile(
            writer(workspace), cwd=workspace, sandbox=SandboxMode.READ_ONLY, write_set=["src"]
        )


def test_without_a_write_set_a_writer_child_gets_its_parents_roots(workspace: Path) -> None:
    parent = PermissionProfile(
        sandbox=SandboxMode.WORKSPACE_WRITE, writable_roots=(workspace / "src", workspace.parent)
    )
    assert child_profile(parent, cwd=workspace).writable_roots == parent.writable_roots


def test_under_a_full_access_parent_a_workspace_write_child_gets_the_cwd(workspace: Path) -> None:
    parent = PermissionProfile.for_workspace("full-access", workspace)
    child = child_profile(parent, cwd=workspace, sandbox=SandboxMode.WORKSPACE_WRITE)
    assert child.writable_roots == (workspace,)
    assert write_set_of(parent) == (Path("/"),), "full access writes everywhere"


def test_the_role_choices_offered_to_the_model_are_the_agents_roles() -> None:
    role = spawn_args_for(AgentsConfig()).model_fields["role"].annotation
    assert get_args(get_args(role)[0]) == ROLES
