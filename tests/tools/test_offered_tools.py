"""Which tools an agent is offered follows from its profile and the host, nothing else."""

from __future__ import annotations

from pathlib import Path

from corral.tools import (
    HostAbilities,
    PermissionProfile,
    SandboxMode,
    core_tool_names,
    offered_tool_names,
)

SANDBOXED = HostAbilities(sandbox=True)
NO_SANDBOX = HostAbilities(sandbox=False)
ALL = (*core_tool_names(), "report_result")


def test_a_workspace_write_agent_on_a_sandboxed_host_is_offered_everything() -> None:
    profile = PermissionProfile(sandbox=SandboxMode.WORKSPACE_WRITE)
    assert offered_tool_names(ALL, profile, SANDBOXED) == ALL


def test_a_read_only_agent_is_not_offered_apply_patch_and_keeps_the_order() -> None:
    offered = offered_tool_names(ALL, PermissionProfile(), SANDBOXED)
    assert "apply_patch" not in offered
    assert offered == tuple(n for n in ALL if n != "apply_patch")


def test_command_tools_are_withheld_only_where_no_sandbox_could_confine_them() -> None:
    confined = PermissionProfile(sandbox=SandboxMode.WORKSPACE_WRITE)
    assert "shell" not in offered_tool_names(ALL, confined, NO_SANDBOX)
    full = PermissionProfile(sandbox=SandboxMode.FULL_ACCESS)
    assert "shell" in offered_tool_names(ALL, full, NO_SANDBOX)


def test_siblings_whose_write_sets_differ_are_offered_the_same_tools(tmp_path: Path) -> None:
    first = PermissionProfile(sandbox=SandboxMode.WORKSPACE_WRITE, writable_roots=(tmp_path / "a",))
    second = PermissionProfile(
        sandbox=SandboxMode.WORKSPACE_WRITE, writable_roots=(tmp_path / "b",)
    )
    assert offered_tool_names(ALL, first, SANDBOXED) == offered_tool_names(ALL, second, SANDBOXED)
