"""Permission profiles: a child is never wider than its parent; checks see through symlinks."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from corral.tools import ApprovalPolicy, PermissionDenied, PermissionProfile, SandboxMode

MODES = list(SandboxMode)
APPROVALS = list(ApprovalPolicy)
RANK = {SandboxMode.READ_ONLY: 0, SandboxMode.WORKSPACE_WRITE: 1, SandboxMode.FULL_ACCESS: 2}
STRICTNESS = {
    ApprovalPolicy.ON_FAILURE: 0,
    ApprovalPolicy.ON_REQUEST: 1,
    ApprovalPolicy.UNTRUSTED: 2,
    ApprovalPolicy.NEVER: 3,
}
# How the requested roots relate to the parent's: (parent roots, requested roots), under a base.
ROOT_RELATIONS = {
    "equal": (["a"], ["a"]),
    "nested": (["a"], ["a/inner"]),
    "wider": (["a/inner"], ["a"]),
    "disjoint": (["a"], ["b"]),
    "partly-overlapping": (["a", "c"], ["a/inner", "b"]),
    "none-requested": (["a"], []),
}
PROBES = ["", "a", "a/file", "a/inner", "a/inner/deep", "a/.git/config", "b/file", "c", "elsewhere"]


def profile(
    base: Path,
    mode: SandboxMode,
    roots: list[str],
    *,
    approval: ApprovalPolicy = ApprovalPolicy.NEVER,
    network: bool = False,
    readable: list[str] | None = None,
    git_writable: bool = False,
) -> PermissionProfile:
    return PermissionProfile(
        sandbox=mode,
        writable_roots=tuple(base / r for r in roots),
        readable_roots=None if readable is None else tuple(base / r for r in readable),
        network=network,
        approval=approval,
        git_writable=git_writable,
    )


def assert_never_wider(parent: PermissionProfile, child: PermissionProfile, base: Path) -> None:
    assert RANK[child.sandbox] <= RANK[parent.sandbox]
    assert STRICTNESS[child.approval] >= STRICTNESS[parent.approval]
    assert child.network <= parent.network
    assert child.git_writable <= parent.git_writable
    for probe in PROBES:
        path = base / probe
        assert child.can_write(path) <= parent.can_write(path), f"child may write {probe}"
        assert child.can_read(path) <= parent.can_read(path), f"child may read {probe}"


@pytest.mark.parametrize("relation", sorted(ROOT_RELATIONS))
@pytest.mark.parametrize("parent_mode", MODES)
def test_child_profile_is_never_wider_than_parent_or_request_across_the_table(
    tmp_path: Path, parent_mode: SandboxMode, relation: str
) -> None:
    parent_roots, child_roots = ROOT_RELATIONS[relation]
    dimensions = itertools.product(MODES, APPROVALS, APPROVALS, [False, True], [False, True])
    for child_mode, parent_approval, child_approval, parent_net, child_net in dimensions:
        parent = profile(
            tmp_path, parent_mode, parent_roots, approval=parent_approval, network=parent_net
        )
        requested = profile(
            tmp_path, child_mode, child_roots, approval=child_approval, network=child_net
        )
        child = parent.intersect(requested)
        assert_never_wider(parent, child, tmp_path)
        assert_never_wider(requested, child, tmp_path)
        assert RANK[child.sandbox] == min(RANK[parent.sandbox], RANK[requested.sandbox])
        assert child.network == (parent_net and child_net)
        assert all(parent.can_write(root) for root in child.writable_roots)


@pytest.mark.parametrize(
    ("parent_readable", "child_readable"),
    [(None, None), (None, ["a"]), (["a"], None), (["a"], ["a/inner"]), (["a"], ["b"])],
)
@pytest.mark.parametrize("relation", ["equal", "nested", "disjoint"])
def test_child_reads_no_more_than_the_parent(
    tmp_path: Path,
    parent_readable: list[str] | None,
    child_readable: list[str] | None,
    relation: str,
) -> None:
    parent_roots, child_roots = ROOT_RELATIONS[relation]
    for parent_mode, child_mode in itertools.product(MODES, MODES):
        parent = profile(tmp_path, parent_mode, parent_roots, readable=parent_readable)
        requested = profile(tmp_path, child_mode, child_roots, readable=child_readable)
        assert_never_wider(parent, parent.intersect(requested), tmp_path)


def test_child_profile_never_wider_than_parent(tmp_path: Path) -> None:
    parent = profile(
        tmp_path, SandboxMode.WORKSPACE_WRITE, ["a"], approval=ApprovalPolicy.UNTRUSTED
    )
    greedy = profile(
        tmp_path,
        SandboxMode.FULL_ACCESS,
        ["a", "b"],
        approval=ApprovalPolicy.ON_FAILURE,
        network=True,
        git_writable=True,
    )
    child = parent.intersect(greedy)
    assert child == profile(
        tmp_path, SandboxMode.WORKSPACE_WRITE, ["a"], approval=ApprovalPolicy.UNTRUSTED
    )


def test_child_of_a_read_only_parent_is_read_only(tmp_path: Path) -> None:
    parent = profile(tmp_path, SandboxMode.READ_ONLY, [])
    child = parent.intersect(profile(tmp_path, SandboxMode.WORKSPACE_WRITE, ["a"]))
    assert (child.sandbox, child.writable_roots) == (SandboxMode.READ_ONLY, ())


def test_child_may_narrow_a_full_access_parent_to_its_own_roots(tmp_path: Path) -> None:
    parent = profile(tmp_path, SandboxMode.FULL_ACCESS, [], network=True)
    child = parent.intersect(profile(tmp_path, SandboxMode.WORKSPACE_WRITE, ["a/inner"]))
    assert child.writable_roots == (tmp_path / "a" / "inner",)
    assert child.can_write(tmp_path / "a" / "inner" / "f")
    assert not child.can_write(tmp_path / "a" / "f")
    assert not child.network


def test_child_asking_for_a_wider_root_than_the_parent_gets_none(tmp_path: Path) -> None:
    parent = profile(tmp_path, SandboxMode.WORKSPACE_WRITE, ["a/inner"])
    child = parent.intersect(profile(tmp_path, SandboxMode.WORKSPACE_WRITE, ["a"]))
    assert child.writable_roots == ()
    assert not child.can_write(tmp_path / "a" / "inner" / "f")


# -- path checks -----------------------------------------------------------------------------


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (ws / "out-link").symlink_to(tmp_path / "outside")
    (ws / "git-link").symlink_to(ws / ".git")
    (tmp_path / "in-link").symlink_to(ws)
    return ws


def test_write_through_a_symlink_that_leaves_the_root_is_denied(workspace: Path) -> None:
    ws_profile = PermissionProfile.for_workspace("workspace-write", workspace)
    with pytest.raises(PermissionDenied, match="writing out-link/x is not allowed"):
        ws_profile.check_write("out-link/x", cwd=workspace)
    with pytest.raises(PermissionDenied):
        ws_profile.check_write("../outside/x", cwd=workspace)


def test_write_through_a_symlink_into_git_is_denied(workspace: Path) -> None:
    ws_profile = PermissionProfile.for_workspace("workspace-write", workspace)
    with pytest.raises(PermissionDenied, match=r"\.git folders inside them are read-only"):
        ws_profile.check_write("git-link/config", cwd=workspace)


def test_write_through_a_symlink_that_points_into_the_root_is_allowed(workspace: Path) -> None:
    ws_profile = PermissionProfile.for_workspace("workspace-write", workspace)
    outside_cwd = workspace.parent
    assert ws_profile.check_write("in-link/new.txt", cwd=outside_cwd) == workspace / "new.txt"


def test_roots_given_through_a_symlink_are_resolved(workspace: Path) -> None:
    linked = PermissionProfile.for_workspace("workspace-write", workspace.parent / "in-link")
    assert linked.writable_roots == (workspace,)
    assert linked.check_write("ws/a.txt", cwd=workspace.parent) == workspace / "a.txt"


def test_read_through_a_symlink_that_leaves_the_readable_roots_is_denied(
    workspace: Path,
) -> None:
    reader = PermissionProfile(readable_roots=(workspace,))
    assert reader.check_read("git-link", cwd=workspace) == workspace / ".git"
    with pytest.raises(PermissionDenied, match="reading out-link/secret is not allowed"):
        reader.check_read("out-link/secret", cwd=workspace)
