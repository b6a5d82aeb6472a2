"""Attacks on `corral review` through the git configuration of the repository it reviews.

corral runs git on the host, outside the sandbox, in the repository it was pointed at. A
repository handed over as an archive (not cloned) brings its own `.git/config`, and
`core.fsmonitor` there names a program that `git status` and `git diff` run. Review's git
calls turn it off, as they turn hooks off.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from corral.orchestrator.pipelines.review._git import checkout_at, range_diff, resolve_range

pytestmark = [pytest.mark.anyio, pytest.mark.hostile]


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


@pytest.fixture
def planted(tmp_path: Path) -> tuple[Path, Path]:
    """A repository whose config names an fsmonitor program that leaves a marker behind."""
    repo, marker = tmp_path / "repo", tmp_path / "ran"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "a.txt").write_text("one\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    (repo / "a.txt").write_text("one\ntwo\n")
    git(repo, "commit", "-q", "-am", "second")
    program = tmp_path / "fsmonitor.sh"
    program.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    program.chmod(0o755)
    git(repo, "config", "core.fsmonitor", str(program))
    return repo, marker


async def test_reviewing_a_repository_never_runs_its_fsmonitor_program(
    planted: tuple[Path, Path],
) -> None:
    repo, marker = planted
    span = await resolve_range(repo, "HEAD~1..HEAD")
    assert "+two" in await range_diff(repo, span)
    async with checkout_at(repo, span.head) as tree:
        assert (tree / "a.txt").read_text() == "one\ntwo\n"
    async with checkout_at(repo, span.base) as tree:
        assert (tree / "a.txt").read_text() == "one\n"
    assert not marker.exists()
