from pathlib import Path

import pytest

from corral.agents._fragments import PERMISSIONS, fragment_kind_of
from corral.agents._permissions_fragment import render_permissions
from corral.tools._permissions import ApprovalPolicy, PermissionProfile, SandboxMode

SANDBOX_HEADINGS = {
    SandboxMode.READ_ONLY: "## Sandbox: read-only",
    SandboxMode.WORKSPACE_WRITE: "## Sandbox: workspace-write",
    SandboxMode.FULL_ACCESS: "## Sandbox: full access",
}
APPROVAL_SIGNS = {
    ApprovalPolicy.NEVER: "refused",
    ApprovalPolicy.ON_REQUEST: "`escalate` set to true and a `justification`",
    ApprovalPolicy.ON_FAILURE: "If the sandbox denies a command, the user is asked",
    ApprovalPolicy.UNTRUSTED: "known to be safe and read-only",
}


@pytest.mark.parametrize("mode", list(SandboxMode))
@pytest.mark.parametrize("approval", list(ApprovalPolicy))
@pytest.mark.parametrize("network", [True, False])
def test_each_combination_describes_its_mode_approval_and_network(
    mode: SandboxMode, approval: ApprovalPolicy, network: bool, tmp_path: Path
) -> None:
    profile = PermissionProfile.for_workspace(mode, tmp_path, network=network, approval=approval)

    text = render_permissions(profile)

    assert fragment_kind_of(text) is PERMISSIONS
    assert text.startswith("<permissions instructions>\n## Sandbox")
    assert text.endswith("\n</permissions instructions>")
    assert SANDBOX_HEADINGS[mode] in text
    assert APPROVAL_SIGNS[approval] in text
    assert text.index("## Sandbox") < text.index("## Approvals")
    expected_network = "enabled" if network else "restricted"
    assert f"network access is {expected_network}" in " ".join(text.lower().split())
    assert "{{" not in text
    for other, sign in APPROVAL_SIGNS.items():
        if other is not approval:
            assert sign not in text


def test_single_writable_root_is_named_in_the_singular(tmp_path: Path) -> None:
    profile = PermissionProfile.for_workspace(SandboxMode.WORKSPACE_WRITE, tmp_path)

    text = render_permissions(profile)

    assert f"The writable root is `{tmp_path.resolve()}`. `.git` folders" in text
    assert text.endswith("folders inside it stay read-only.\n</permissions instructions>")


def test_several_writable_roots_are_listed_in_the_plural(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    profile = PermissionProfile(
        sandbox=SandboxMode.WORKSPACE_WRITE, writable_roots=(second, first), git_writable=True
    )
    guarded = profile.model_copy(update={"git_writable": False})

    text = render_permissions(profile)

    assert "folders inside them stay read-only." in render_permissions(guarded)
    assert text.endswith(
        f"The writable roots are `{first}`, `{second}`.\n</permissions instructions>"
    )


def test_read_only_and_full_access_name_no_writable_root(tmp_path: Path) -> None:
    for mode in (SandboxMode.READ_ONLY, SandboxMode.FULL_ACCESS):
        text = render_permissions(PermissionProfile.for_workspace(mode, tmp_path))
        assert "writable root" not in text


def test_workspace_write_without_roots_says_every_write_fails() -> None:
    text = render_permissions(PermissionProfile(sandbox=SandboxMode.WORKSPACE_WRITE))

    assert "There are no writable roots, so every write will fail." in text


def test_limited_reads_are_described(tmp_path: Path) -> None:
    profile = PermissionProfile(sandbox=SandboxMode.READ_ONLY, readable_roots=(tmp_path,))

    assert f"The file tools read only inside `{tmp_path}`." in render_permissions(profile)
