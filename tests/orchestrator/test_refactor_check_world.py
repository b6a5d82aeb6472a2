"""`refactor --check` in its sandbox: a program it cannot find there is reported as such.

A check run from a virtual environment under /tmp exits 127 inside the sandbox, which cannot see
/tmp; that is not "the check already fails", and the message says what the check can see.
Real git and bubblewrap.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.agents import CorralConfig
from corral.orchestrator.pipelines.refactor import CheckFailsAtHead, RefactorJob, run_refactor
from corral.orchestrator.runs import RunSetup
from tests._git import init_repo

pytestmark = pytest.mark.anyio


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return init_repo(tmp_path / "repo", {"pkg/a.py": "A = 1\n"})


async def test_a_check_whose_program_is_missing_in_the_sandbox_says_so(
    repo: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "venv" / "bin" / "pytest"  # under /tmp: not in the sandbox
    outside.parent.mkdir(parents=True)
    outside.write_text("#!/bin/sh\nexit 0\n")
    outside.chmod(0o755)
    config = CorralConfig(home=tmp_path / "home", base_url="http://127.0.0.1:9/v1")
    trees = tmp_path / "trees"
    trees.mkdir()
    request = RefactorJob(
        repo=repo, instruction="rename A", check=f"{outside} -q", worktrees_dir=trees
    )
    with pytest.raises(CheckFailsAtHead) as caught:
        await run_refactor(config, request, setup=RunSetup(env={}))
    message = str(caught.value)
    assert "cannot run: a command it names was not found in the sandbox (exit 127)" in message
    assert "already fails" not in message
    assert "not /tmp" in message and "the worktree" in message
