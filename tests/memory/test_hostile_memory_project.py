"""Attacks on a run's project identity: a `.git` file that claims another repository.

A project's memories are recalled into every run in it, so a repository that could make its
runs count as another project would read that project's memories (and write its own among
them). A linked worktree's `.git` file names its admin folder inside the main repository's git
dir; the admin folder's `gitdir` file must point back. A hostile `.git` file reaches a folder
it controls *through* the victim's git dir with `..`, so the text names the victim while the
files read are the attacker's.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from corral.orchestrator.memory import project_of

pytestmark = pytest.mark.hostile


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def victim_with_a_worktree(tmp_path: Path) -> Path:
    victim = tmp_path / "victim"
    git("init", "-q", str(victim), cwd=tmp_path)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x",
        cwd=victim)  # fmt: skip
    git("worktree", "add", "-q", str(tmp_path / "linked"), cwd=victim)
    return victim


def plant(attacker: Path, admin: Path) -> None:
    """An admin folder the attacker owns, whose `gitdir` points back at the attacker's `.git`."""
    admin.mkdir(parents=True)
    (admin / "gitdir").write_text(f"{attacker / '.git'}\n")


@pytest.mark.parametrize("spelling", ["absolute", "relative"])
@pytest.mark.parametrize("depth", [0, 1])
def test_a_git_file_climbing_out_of_another_repositorys_git_dir_is_not_that_project(
    tmp_path: Path, spelling: str, depth: int
) -> None:
    victim = victim_with_a_worktree(tmp_path)
    attacker = tmp_path / "attacker"
    attacker.mkdir()
    admin = attacker / "own" / ".git" / "worktrees" / "y"
    plant(attacker, admin)
    # victim/.git/worktrees/<linked>/.. (depth 1) or victim/.git/worktrees/.. (depth 0),
    # then up to tmp_path and down into the attacker's folder.
    inside = victim / ".git" / "worktrees" / ("linked/.." if depth else "")
    climb = Path(str(inside).rstrip("/") + "/../../../attacker/own/.git/worktrees/y")
    named = str(climb) if spelling == "absolute" else "../" + str(climb.relative_to(tmp_path))
    (attacker / ".git").write_text(f"gitdir: {named}\n")
    assert project_of(attacker) == str(attacker.resolve())


def test_a_real_linked_worktree_still_belongs_to_its_main_repository(tmp_path: Path) -> None:
    victim = victim_with_a_worktree(tmp_path)
    assert project_of(tmp_path / "linked") == str(victim.resolve())


def test_a_linked_worktree_of_a_repository_whose_git_dir_is_a_link_still_resolves(
    tmp_path: Path,
) -> None:
    victim = victim_with_a_worktree(tmp_path)
    moved = tmp_path / "gitdirs" / "victim.git"
    moved.parent.mkdir()
    (victim / ".git").rename(moved)
    (victim / ".git").symlink_to(moved)
    assert project_of(tmp_path / "linked") == str(victim.resolve())
