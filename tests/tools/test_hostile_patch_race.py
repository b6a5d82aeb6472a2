"""Two agents race: one swaps a folder for a symlink to the outside, the other patches into it.

The swapper is a thread doing renames in a tight loop; the patcher sends well over 1,000
patches (add, update, move, delete, and deletes of bait that exists only outside) through the
real `apply_patch` tool. Whatever each patch answers, nothing outside the workspace may change.
A reader racing the same swapper through `read_file`, `grep` and `list_dir` never sees a byte
or a file name from outside its readable root.
"""

from __future__ import annotations

import json
import os
import threading
from contextlib import suppress
from pathlib import Path

import anyio
import pytest

from corral.tools import PermissionProfile, ToolContext
from corral.tools._apply_patch_tool import apply_patch_tool
from corral.tools._file_tools import file_tools

from ._tree_snapshot import tree_snapshot

pytestmark = pytest.mark.hostile

ROUNDS = 220  # five patches a round: 1,100 attempts
DEADLINE_SECONDS = 240
JOIN_SECONDS = 10


def _patch(*lines: str) -> str:
    return json.dumps({"input": "\n".join(["*** Begin Patch", *lines, "*** End Patch"])})


def _round(i: int) -> list[str]:
    return [
        _patch(f"*** Add File: box/f{i}.txt", f"+made {i}"),
        _patch(f"*** Update File: box/f{i}.txt", f"*** Move to: box/g{i}.txt", "@@", f"+moved {i}"),
        _patch("*** Update File: box/victim.txt", "@@", f"+line {i}"),
        _patch(f"*** Delete File: box/g{i}.txt", "*** Delete File: box/bait.txt"),
        _patch(
            f"*** Add File: top{i}.txt",
            "+top",
            f"*** Update File: top{i}.txt",
            f"*** Move to: box/top{i}.txt",
            "@@",
            "+into the box",
        ),
    ]


class _Swapper:
    """Swaps `box` for a symlink to `outside` and back until told to stop."""

    def __init__(self, workspace: Path, outside: Path) -> None:
        self.box, self.real, self.outside = workspace / "box", workspace / "box.real", outside
        self.stop = threading.Event()
        self.swaps = 0

    def run(self) -> None:
        while not self.stop.is_set():
            with suppress(OSError):
                os.rename(self.box, self.real)
            with suppress(OSError):
                os.symlink(self.outside, self.box)
                self.swaps += 1
            self._restore()

    def _restore(self) -> None:
        with suppress(OSError):
            if self.box.is_symlink():
                os.unlink(self.box)
            elif self.box.is_dir() and self.real.is_dir():
                # A patch recreated `box` while it was away: keep it, inside the workspace.
                os.rename(self.box, self.box.with_name(f"box.spare{self.swaps}"))
        with suppress(OSError):
            os.rename(self.real, self.box)


@pytest.mark.anyio
async def test_symlink_swaps_during_a_thousand_patches_land_nothing_outside(
    tmp_path: Path,
) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    (workspace / "box").mkdir(parents=True)
    (workspace / "box" / "victim.txt").write_text("v\n")
    outside.mkdir()
    (outside / "victim.txt").write_text("v\n")
    (outside / "bait.txt").write_text("only outside\n")
    before = tree_snapshot(outside)
    ctx = ToolContext(
        cwd=workspace, profile=PermissionProfile.for_workspace("workspace-write", workspace)
    )
    tool, swapper = apply_patch_tool(), _Swapper(workspace, outside)
    thread = threading.Thread(target=swapper.run, daemon=True)
    answers: list[bool] = []
    thread.start()
    try:
        with anyio.fail_after(DEADLINE_SECONDS):
            for i in range(ROUNDS):
                for patch in _round(i):
                    answers.append((await tool.invoke(patch, ctx)).success)
    finally:
        swapper.stop.set()
        thread.join(JOIN_SECONDS)

    assert not thread.is_alive()
    assert len(answers) >= 1000
    assert swapper.swaps > 0 and any(answers)
    assert tree_snapshot(outside) == before


READ_ROUNDS = 150
SECRET = "outside-secret-7f3a"


def _reads(i: int) -> list[tuple[str, str]]:
    return [
        ("read_file", json.dumps({"path": "box/victim.txt"})),
        ("grep", json.dumps({"pattern": "secret|v", "path": "box"})),
        ("grep", json.dumps({"pattern": "secret|v"})),
        ("list_dir", json.dumps({"path": "box", "depth": 2})),
        ("list_dir", json.dumps({"path": ".", "depth": 3 + i % 2})),
    ]


@pytest.mark.anyio
async def test_symlink_swaps_during_reads_never_show_what_lies_outside(tmp_path: Path) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    (workspace / "box").mkdir(parents=True)
    (workspace / "box" / "victim.txt").write_text("v\n")
    (outside / "nested").mkdir(parents=True)
    (outside / "victim.txt").write_text(f"{SECRET}\n")
    (outside / "nested" / f"{SECRET}.txt").write_text(f"{SECRET}\n")
    profile = PermissionProfile.for_workspace("workspace-write", workspace)
    limited = profile.model_copy(update={"readable_roots": (workspace,)})
    ctx = ToolContext(cwd=workspace, profile=limited)
    tools = {tool.name: tool for tool in file_tools()}
    swapper = _Swapper(workspace, outside)
    thread = threading.Thread(target=swapper.run, daemon=True)
    shown: list[str] = []
    thread.start()
    try:
        with anyio.fail_after(DEADLINE_SECONDS):
            for i in range(READ_ROUNDS):
                for name, arguments in _reads(i):
                    shown.append((await tools[name].invoke(arguments, ctx)).text)
    finally:
        swapper.stop.set()
        thread.join(JOIN_SECONDS)

    assert not thread.is_alive() and swapper.swaps > 0
    assert len(shown) == READ_ROUNDS * 5
    assert [text for text in shown if SECRET in text] == []
