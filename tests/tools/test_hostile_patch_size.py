"""apply_patch never reads a file past 64 MiB to change or delete it: the model makes the size
(a sparse `truncate -s 100G` costs no disk), and the whole file was held in corral's memory to
be patched. It is refused in one line and nothing is changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.tools import PermissionProfile
from corral.tools._patch import PatchConflict, apply_patch_text
from corral.tools._patch._changeset import MAX_PATCHED_FILE_BYTES

pytestmark = pytest.mark.hostile

HUNKS = {
    "update": ["*** Update File: big.txt", "@@", "-first", "+changed"],
    "delete": ["*** Delete File: big.txt"],
    "move": ["*** Update File: big.txt", "*** Move to: moved.txt", "@@", "-first", "+changed"],
}


@pytest.mark.parametrize("extra", [1, 1 << 20], ids=["one-byte-over", "a-sparse-mib-over"])
@pytest.mark.parametrize("kind", sorted(HUNKS))
def test_a_file_past_the_cap_is_refused_unread(tmp_path: Path, kind: str, extra: int) -> None:
    big = tmp_path / "big.txt"
    with big.open("wb") as handle:
        handle.write(b"first\n")
        handle.truncate(MAX_PATCHED_FILE_BYTES + extra)  # a hole: no disk is used
    patch = "\n".join(["*** Begin Patch", *HUNKS[kind], "*** End Patch"])
    profile = PermissionProfile.for_workspace("workspace-write", tmp_path)
    with pytest.raises(PatchConflict) as refused:
        apply_patch_text(patch, cwd=tmp_path, profile=profile)
    assert str(refused.value) == (
        f"cannot patch {big}: it is larger than 64 MiB; change it with the shell instead. "
        "No file was changed."
    )
    assert big.stat().st_size == MAX_PATCHED_FILE_BYTES + extra
    assert not (tmp_path / "moved.txt").exists()
