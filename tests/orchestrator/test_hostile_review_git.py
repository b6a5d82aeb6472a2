"""Attacks on `corral review` through the git configuration of the repository it reviews.

corral runs git on the host, outside the sandbox, in the repository it was pointed at. A
repository handed over as an archive (not cloned) brings its own `.git/config`, and
`core.fsmonitor` there names a program that `git status` and `git diff` run. Review's git
calls turn it off, as they turn hooks off.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.orchestrator.pipelines.review._git import checkout_at, range_diff, resolve_range
from tests._git import git, topic_repo

pytestmark = [pytest.mark.anyio, pytest.mark.hostile]


@pytest.fixture
def planted(tmp_path: Path) -> tuple[Path, Path]:
    """A repository whose config names an fsmonitor program that leaves a marker behind."""
    repo, marker = topic_repo(tmp_path / "repo"), tmp_path / "ran"
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
    assert "+new on main" in await range_diff(repo, span)
    async with checkout_at(repo, span.head) as tree:
        assert (tree / "c.txt").read_text() == "new on main\n"
    async with checkout_at(repo, span.base) as tree:
        assert not (tree / "c.txt").exists()
    assert not marker.exists()
