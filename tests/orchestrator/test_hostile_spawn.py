"""A supervisor that the model steers asks for wider workers in every way it can; each worker's
profile comes out no wider than its parent's, or the spawn is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.orchestrator._run import SpawnRefused
from corral.orchestrator.supervisor import child_profile
from corral.tools import ApprovalPolicy, PermissionProfile, SandboxMode

pytestmark = pytest.mark.hostile


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "sub" / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (root / "escape").symlink_to(tmp_path / "outside")
    return root


def parent_of(workspace: Path, mode: str = "workspace-write") -> PermissionProfile:
    home = workspace / ".home"
    return PermissionProfile.for_workspace(mode, workspace).model_copy(
        update={"hidden_roots": (home.resolve(),), "approval": ApprovalPolicy.UNTRUSTED}
    )


@pytest.mark.parametrize(
    "write_set",
    [
        ["../outside/x"],
        ["/etc/passwd"],
        ["/tmp"],
        ["escape/planted"],
        ["src", "../../outside"],
        [".git/hooks/pre-commit"],
        ["sub/.git/hooks/post-checkout"],
        [".corral/config.toml"],
        [".codex/config.toml"],
        [".agents/skills/evil/SKILL.md"],
        ["src/../.corral"],
        [".home/config.toml"],
        [".home"],
    ],
)
def test_a_write_set_reaching_past_what_the_parent_may_write_is_refused(
    workspace: Path, write_set: list[str]
) -> None:
    with pytest.raises(SpawnRefused, match="write set outside your writable roots"):
        child_profile(parent_of(workspace), cwd=workspace, write_set=write_set)


@pytest.mark.parametrize("asked", list(SandboxMode))
@pytest.mark.parametrize("parent_mode", ["read-only", "workspace-write"])
def test_a_worker_never_gets_a_wider_sandbox_than_its_parent(
    workspace: Path, asked: SandboxMode, parent_mode: str
) -> None:
    parent = parent_of(workspace, parent_mode)
    child = child_profile(parent, cwd=workspace, sandbox=asked)
    rank = [SandboxMode.READ_ONLY, SandboxMode.WORKSPACE_WRITE, SandboxMode.FULL_ACCESS]
    assert rank.index(child.sandbox) <= rank.index(parent.sandbox)
    assert set(child.writable_roots) <= set(parent.writable_roots)


@pytest.mark.parametrize("asked", list(SandboxMode))
def test_a_worker_keeps_its_parents_hidden_home_and_approval_policy(
    workspace: Path, asked: SandboxMode
) -> None:
    parent = parent_of(workspace)
    child = child_profile(parent, cwd=workspace, sandbox=asked)
    assert child.hidden_roots == parent.hidden_roots
    assert child.approval is ApprovalPolicy.UNTRUSTED
    assert not child.can_read(workspace / ".home" / "api-token")


def test_a_grandchild_is_no_wider_than_the_narrowed_child(workspace: Path) -> None:
    child = child_profile(parent_of(workspace), cwd=workspace, write_set=["src"])
    grandchild = child_profile(child, cwd=workspace, sandbox=SandboxMode.FULL_ACCESS)
    assert grandchild.sandbox is SandboxMode.WORKSPACE_WRITE
    assert grandchild.writable_roots == (workspace / "src",)
    with pytest.raises(SpawnRefused):
        child_profile(child, cwd=workspace, write_set=["sub"])
