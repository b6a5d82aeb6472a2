"""Which project a folder belongs to: its repository root, a linked worktree's main one."""

from __future__ import annotations

import subprocess
from pathlib import Path

from corral.orchestrator.memory import project_of


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_a_subfolder_belongs_to_its_repository_root(tmp_path: Path) -> None:
    git("init", "-q", str(tmp_path / "repo"), cwd=tmp_path)
    (tmp_path / "repo" / "src" / "pkg").mkdir(parents=True)
    assert project_of(tmp_path / "repo" / "src" / "pkg") == str((tmp_path / "repo").resolve())


def test_a_linked_worktree_belongs_to_its_main_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    git("init", "-q", str(repo), cwd=tmp_path)
    git(
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "x",
        cwd=repo,
    )
    git("worktree", "add", "-q", str(tmp_path / "linked"), cwd=repo)
    assert project_of(tmp_path / "linked") == str(repo.resolve())


def test_a_folder_outside_any_repository_is_its_own_project(tmp_path: Path) -> None:
    assert project_of(tmp_path) == str(tmp_path.resolve())
