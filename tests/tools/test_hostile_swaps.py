"""A folder checked as inside the workspace is a symlink to the outside by the time it is used.

The race of `test_hostile_patch_race`, made deterministic: the swap happens between the check and
the disk operation, either right before a `LocalDisk` call on a path that was checked, or inside
a patch, after every hunk was planned and before the first write. The operation must fail and
leave the outside folder exactly as it was.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from corral.tools import PermissionProfile
from corral.tools._patch import LocalDisk, PatchWriteFailed, apply_patch_text

from ._tree_snapshot import tree_snapshot

pytestmark = pytest.mark.hostile

Operation = Callable[[LocalDisk, Path], None]

OPERATIONS: dict[str, tuple[str, Operation]] = {
    "write-over-file": ("x", lambda disk, path: disk.write_file(path, b"evil\n", None)),
    "write-new-file": ("new", lambda disk, path: disk.write_file(path, b"evil\n", 0o644)),
    "remove-file": ("x", lambda disk, path: disk.remove(path)),
    "make-dir": ("newdir", lambda disk, path: disk.make_dir(path)),
    "remove-dir": ("d", lambda disk, path: disk.remove_dir(path)),
    "make-symlink": ("link", lambda disk, path: disk.make_symlink(path, "/etc/passwd")),
}


def _layout(tmp: Path) -> tuple[Path, Path]:
    workspace, outside = tmp / "ws", tmp / "outside"
    for base in (workspace / "box", outside):
        (base / "d").mkdir(parents=True)
        (base / "sub" / "d").mkdir(parents=True)
        (base / "x").write_text("x\n")
        (base / "sub" / "x").write_text("x\n")
    return workspace, outside


def _swap(workspace: Path, outside: Path) -> None:
    os.rename(workspace / "box", workspace / "box.real")
    (workspace / "box").symlink_to(outside)


@pytest.mark.parametrize("depth", ["box", "box/sub"])
@pytest.mark.parametrize("operation", OPERATIONS.values(), ids=OPERATIONS.keys())
def test_disk_operation_on_a_checked_path_refuses_a_folder_swapped_for_a_symlink(
    operation: tuple[str, Operation], depth: str, tmp_path: Path
) -> None:
    workspace, outside = _layout(tmp_path)
    name, act = operation
    checked = workspace / depth / name  # resolved and allowed while box was a folder
    _swap(workspace, outside)
    before = tree_snapshot(outside)

    with pytest.raises(OSError, match="is a symlink where the checked path had none"):
        act(LocalDisk(), checked)

    assert tree_snapshot(outside) == before


class _DiskSwappedBeforeItsFirstCall(LocalDisk):
    """The real disk, with the folder swapped once every hunk has been checked and planned."""

    def __init__(self, workspace: Path, outside: Path) -> None:
        self.workspace, self.outside = workspace, outside
        self.swapped = False

    def _first(self) -> None:
        if not self.swapped:
            self.swapped = True
            _swap(self.workspace, self.outside)

    def make_dir(self, path: Path) -> None:
        self._first()
        super().make_dir(path)

    def write_file(self, path: Path, data: bytes, mode: int | None) -> None:
        self._first()
        super().write_file(path, data, mode)

    def remove(self, path: Path) -> None:
        self._first()
        super().remove(path)


PATCHES = {
    "add": ["*** Add File: box/new.txt", "+evil"],
    "add-in-new-folder": ["*** Add File: box/deep/new.txt", "+evil"],
    "update": ["*** Update File: box/x", "@@", "-x", "+evil"],
    "delete": ["*** Delete File: box/x"],
    "move-within": ["*** Update File: box/x", "*** Move to: box/moved", "@@", "-x", "+evil"],
    "move-in-from-top": [
        "*** Add File: top.txt",
        "+t",
        "*** Update File: top.txt",
        "*** Move to: box/sub/top.txt",
        "@@",
        "+evil",
    ],
}


@pytest.mark.parametrize("lines", PATCHES.values(), ids=PATCHES.keys())
def test_patch_whose_folder_is_swapped_after_planning_writes_nothing_outside(
    lines: list[str], tmp_path: Path
) -> None:
    workspace, outside = _layout(tmp_path)
    before = tree_snapshot(outside)
    patch = "\n".join(["*** Begin Patch", *lines, "*** End Patch"])
    profile = PermissionProfile.for_workspace("workspace-write", workspace)
    disk = _DiskSwappedBeforeItsFirstCall(workspace, outside)

    with pytest.raises(PatchWriteFailed, match="is a symlink where the checked path had none"):
        apply_patch_text(patch, cwd=workspace, profile=profile, disk=disk)

    assert disk.swapped
    assert tree_snapshot(outside) == before
