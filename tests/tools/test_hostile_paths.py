"""Hostile paths: corral's home seen through a parent folder, /proc, git dirs of any name, and
`corral apply-patch` asked to write outside the current folder.

The tree: a user's home `~` holding corral's home `~/.corral` (token, journal, config) and a
project `~/proj` with a separate git dir, a bare repository, a worktree's git dir and symlinks
back up to `~`. Every case fails on a main whose tools walked by path and knew no git dir but
`.git`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from corral.tools import PermissionProfile, SandboxMode, ToolCall, ToolContext, ToolRegistry
from corral.tools._file_tools import file_tools

from ._tree_snapshot import tree_snapshot

pytestmark = pytest.mark.hostile

TOKEN = "corral-token-5c1e"
HOME_NAMES = ("api-token", "journal.sqlite", "config.toml", TOKEN)
GIT_DIR_RULE = "is a git directory (it holds HEAD and objects)"
PROC_RULE = "/proc shows live processes"
CLI_DEADLINE_SECONDS = 30


@dataclass(frozen=True)
class Case:
    id: str
    tool: str
    args: dict[str, Any]
    cwd: str = "proj"  # "proj" (~/proj) or "user" (~: a working folder above corral's home)
    error: str | None = None  # None: may answer, but must show nothing of corral's home


def _build(tmp: Path) -> dict[str, Path]:
    user = tmp / "user"
    home, proj, state = user / ".corral", user / "proj", user / "proj" / ".state"
    for folder in (home / "runs", proj / "src", state):
        folder.mkdir(parents=True)
    (home / "api-token").write_text(f"{TOKEN}\n")
    (home / "journal.sqlite").write_text(f"task: find {TOKEN}\n")
    (home / "config.toml").write_text(f'model = "{TOKEN}"\n')
    (home / "runs" / "r1.txt").write_text(f"{TOKEN}\n")
    (state / "api-token").write_text(f"{TOKEN}\n")
    (proj / "src" / "app.py").write_text("print('hi')\n")
    (proj / "up").symlink_to(user)
    (proj / "homelink").symlink_to(home)
    for git_dir, marker in (("sep", "objects"), ("repo.git", "objects"), ("meta", "commondir")):
        (proj / git_dir / "hooks").mkdir(parents=True)
        (proj / git_dir / "HEAD").write_text("ref: refs/heads/main\n")
        (proj / git_dir / "config").write_text("[core]\n")
        if marker == "objects":
            (proj / git_dir / "objects").mkdir()
        else:
            (proj / git_dir / "commondir").write_text("../sep\n")
    (proj / "wt").mkdir()
    (proj / "wt" / ".git").write_text("gitdir: ../meta\n")
    (proj / "gl").symlink_to("sep")
    return {"user": user, "home": home, "proj": proj, "state": state}


def _profile(paths: dict[str, Path], cwd: str) -> PermissionProfile:
    return PermissionProfile(
        sandbox=SandboxMode.WORKSPACE_WRITE,
        writable_roots=(paths[cwd],),
        hidden_roots=(paths["home"], paths["state"]),
    )


def _patch(*lines: str) -> dict[str, Any]:
    return {"input": "\n".join(["*** Begin Patch", *lines, "*** End Patch"])}


WALKS = [
    Case("grep-cd-home", "grep", {"pattern": "corral-token"}, cwd="user"),
    Case("grep-cd-home-include-toml", "grep", {"pattern": ".", "include": "*.toml"}, cwd="user"),
    Case("grep-cd-home-include-name", "grep", {"pattern": ".", "include": "api-token"}, "user"),
    Case("grep-parent-dotdot", "grep", {"pattern": "corral-token", "path": ".."}),
    Case("grep-parent-absolute", "grep", {"pattern": "corral-token", "path": "{user}"}),
    Case("grep-through-symlink-up", "grep", {"pattern": "corral-token", "path": "up"}),
    Case("grep-home-inside-workspace", "grep", {"pattern": "corral-token"}),
    Case("list-cd-home", "list_dir", {"path": ".", "depth": 3}, cwd="user"),
    Case("list-parent-dotdot", "list_dir", {"path": "..", "depth": 3}),
    Case("list-parent-absolute", "list_dir", {"path": "{user}", "depth": 3}),
    Case("list-through-symlink-up", "list_dir", {"path": "up", "depth": 3}),
    Case("list-home-inside-workspace", "list_dir", {"path": ".", "depth": 2}),
    Case("list-dotdot-spelling", "list_dir", {"path": "src/../../", "depth": 2}),
]

PROC = [
    Case("read-proc-self-environ", "read_file", {"path": "/proc/self/environ"}, error=PROC_RULE),
    Case("read-proc-pid-environ", "read_file", {"path": "/proc/{pid}/environ"}, error=PROC_RULE),
    Case(
        "read-proc-thread-self",
        "read_file",
        {"path": "/proc/thread-self/environ"},
        "proj",
        PROC_RULE,
    ),
    Case("read-proc-self-status", "read_file", {"path": "/proc/self/status"}, error=PROC_RULE),
    Case("list-proc-self", "list_dir", {"path": "/proc/self"}, error=PROC_RULE),
    Case(
        "grep-proc-self", "grep", {"pattern": "KEY", "path": "/proc/self/status"}, error=PROC_RULE
    ),
]

GIT_DIRS = [
    Case(
        "add-separate-gitdir-hook",
        "apply_patch",
        _patch("*** Add File: sep/hooks/pre-commit", "+#!/bin/sh"),
        error=GIT_DIR_RULE,
    ),
    Case(
        "update-separate-gitdir-config",
        "apply_patch",
        _patch("*** Update File: sep/config", "@@", "+\tfsmonitor = evil"),
        error=GIT_DIR_RULE,
    ),
    Case(
        "delete-separate-gitdir-head",
        "apply_patch",
        _patch("*** Delete File: sep/HEAD"),
        error=GIT_DIR_RULE,
    ),
    Case(
        "add-bare-repo-hook",
        "apply_patch",
        _patch("*** Add File: repo.git/hooks/post-update", "+x"),
        error=GIT_DIR_RULE,
    ),
    Case(
        "add-worktree-gitdir-hook",
        "apply_patch",
        _patch("*** Add File: meta/hooks/post-checkout", "+x"),
        error=GIT_DIR_RULE,
    ),
    Case(
        "move-into-gitdir-hooks",
        "apply_patch",
        _patch("*** Update File: src/app.py", "*** Move to: sep/hooks/pre-push", "@@", "+x"),
        error=GIT_DIR_RULE,
    ),
    Case(
        "add-gitdir-through-symlink",
        "apply_patch",
        _patch("*** Add File: gl/hooks/pre-commit", "+x"),
        error=GIT_DIR_RULE,
    ),
    Case(
        "add-gitdir-dotdot-spelling",
        "apply_patch",
        _patch("*** Add File: src/../sep/hooks/x", "+x"),
        error=GIT_DIR_RULE,
    ),
]


def _arguments(case: Case, paths: dict[str, Path]) -> str:
    text = json.dumps(case.args).replace("{user}", str(paths["user"]))
    return text.replace("{pid}", str(os.getpid()))


@pytest.mark.anyio
@pytest.mark.parametrize("case", WALKS + PROC + GIT_DIRS, ids=lambda case: case.id)
async def test_hostile_path_shows_nothing_hidden_and_changes_nothing(
    case: Case, tmp_path: Path
) -> None:
    paths = _build(tmp_path)
    before = tree_snapshot(tmp_path)
    ctx = ToolContext(cwd=paths[case.cwd], profile=_profile(paths, case.cwd))
    call = ToolCall("c1", case.tool, _arguments(case, paths))

    out = await ToolRegistry(file_tools()).dispatch(call, ctx)

    if case.error is not None:
        assert not out.success and case.error in out.text, out.text
    assert [name for name in HOME_NAMES if name in out.text] == [], out.text
    assert tree_snapshot(tmp_path) == before


# -- corral apply-patch, the user's own command -----------------------------------------------

CLI_PATCHES = {
    "cli-add-dotdot": ["*** Add File: ../escaped.txt", "+x"],
    "cli-add-absolute": ["*** Add File: {outside}/escaped.txt", "+x"],
    "cli-add-through-symlink": ["*** Add File: out/escaped.txt", "+x"],
    "cli-add-dotdot-inside": ["*** Add File: sub/../../escaped.txt", "+x"],
    "cli-update-symlinked-file": ["*** Update File: alias.txt", "@@", "-keep", "+changed"],
    "cli-delete-dotdot": ["*** Delete File: ../outside/keep.txt"],
    "cli-move-to-dotdot": [
        "*** Add File: a.txt",
        "+a",
        "*** Update File: a.txt",
        "*** Move to: ../escaped.txt",
        "@@",
        "+b",
    ],
}


@pytest.mark.parametrize("lines", CLI_PATCHES.values(), ids=CLI_PATCHES.keys())
def test_cli_refuses_paths_outside_the_current_folder(lines: list[str], tmp_path: Path) -> None:
    cwd, outside = tmp_path / "cwd", tmp_path / "outside"
    (cwd / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "keep.txt").write_text("keep\n")
    (cwd / "out").symlink_to(outside)
    (cwd / "alias.txt").symlink_to(outside / "keep.txt")
    before = tree_snapshot(tmp_path)
    patch = "\n".join(["*** Begin Patch", *lines, "*** End Patch", ""])
    done = subprocess.run(
        [sys.executable, "-m", "corral", "apply-patch"],
        cwd=cwd,
        input=patch.replace("{outside}", str(outside)).encode(),
        capture_output=True,
        timeout=CLI_DEADLINE_SECONDS,
        check=False,
    )
    stderr = done.stderr.decode()
    assert done.returncode == 2, stderr
    assert stderr.startswith("corral apply-patch: error: ") and stderr.count("\n") == 1
    assert "is not allowed" in stderr and "--unsafe-paths" in stderr
    assert tree_snapshot(tmp_path) == before
