"""Real git for the tests of review and refactor: one runner with a fixed identity, and the
small repositories they read. The pipelines' own git calls are theirs; these only set up."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

IDENTITY = ("-c", "user.name=t", "-c", "user.email=t@example.com")
"""Commits work on a machine with no git identity configured."""


def git(repo: Path, *args: str) -> str:
    """Run git in `repo`; its output without the surrounding white space."""
    done = subprocess.run(
        ["git", *IDENTITY, *args], cwd=repo, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def write(repo: Path, files: Mapping[str, str]) -> None:
    """Write each file (a path relative to `repo`, and its text), making its folders."""
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)


def init_repo(root: Path, files: Mapping[str, str], *, message: str = "start") -> Path:
    """A repository at `root` on branch `main` whose one commit holds `files`."""
    write(root, files)
    git(root.parent, "init", "-q", "-b", "main", str(root))
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", message)
    return root


def topic_repo(root: Path) -> Path:
    """main: a.txt and b.txt; topic (from main): b.txt changed; main then moves on with c.txt,
    and is checked out."""
    init_repo(root, {"a.txt": "one\n", "b.txt": "two\n"}, message="base")
    git(root, "checkout", "-q", "-b", "topic")
    (root / "b.txt").write_text("two\nthree\n")
    git(root, "commit", "-q", "-am", "topic")
    git(root, "checkout", "-q", "main")
    write(root, {"c.txt": "new on main\n"})
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "main moves on")
    return root
