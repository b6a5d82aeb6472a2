"""A refactor run leaves nothing behind when it is refused late or cancelled midway.

Real git and bubblewrap; the model is the scripted server, stalled on purpose for the cancel.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from corral.agents import CorralConfig, open_sqlite_store
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.pipelines.refactor import CheckFailsAtHead, RefactorJob, run_refactor
from corral.orchestrator.runs import RunSetup, journal_path
from tests._git import git, init_repo

pytestmark = pytest.mark.anyio

WAIT = 30.0


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return init_repo(tmp_path / "repo", {"pkg/a.py": "A = 1\n", "lib/b.py": "B = 2\n"})


def left_behind(repo: Path, trees: Path) -> tuple[int, str, list[Path]]:
    """Worktrees git knows, corral branches, and what is left in the worktrees' folder."""
    worktrees = git(repo, "worktree", "list", "--porcelain").count("worktree ")
    return worktrees, git(repo, "branch", "--list", "corral/*"), list(trees.iterdir())


async def test_a_check_failing_before_any_change_is_refused_and_leaves_nothing(
    repo: Path, tmp_path: Path
) -> None:
    trees = tmp_path / "trees"
    trees.mkdir()
    config = CorralConfig(home=tmp_path / "home", base_url="http://127.0.0.1:9/v1")
    request = RefactorJob(
        repo=repo, instruction="rename A", check="echo broken; exit 3", worktrees_dir=trees
    )
    with pytest.raises(CheckFailsAtHead) as caught:
        await run_refactor(config, request, setup=RunSetup(env={}))
    message = str(caught.value)
    assert "`echo broken; exit 3` already fails on the unchanged HEAD (failed (exit 3))" in message
    assert message.endswith("Its last lines:\nbroken")
    assert left_behind(repo, trees) == (1, "", [])
    assert not journal_path(config).exists(), "no run was journaled"


async def test_a_cancelled_run_removes_its_worktrees_and_unused_branches(
    repo: Path, tmp_path: Path
) -> None:
    trees = tmp_path / "trees"
    trees.mkdir()
    asked, release = anyio.Event(), anyio.Event()

    async def stall(request: object) -> str:
        asked.set()
        await release.wait()
        return "too late"

    request = RefactorJob(
        repo=repo, instruction="rename", check="true", worktrees_dir=trees, run_id="run-stop"
    )
    async with serve_model_server(stall) as server:
        config = CorralConfig(home=tmp_path / "home", base_url=server.base_url)
        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: run_refactor(config, request, setup=RunSetup(env={})))
                await asked.wait()
                assert len(list(trees.iterdir())) == 1, "the run's worktrees exist while it runs"
                tg.cancel_scope.cancel()
        release.set()
    assert left_behind(repo, trees) == (1, "", [])
    async with open_sqlite_store(journal_path(config)) as store:
        run = await store.get_run("run-stop")
    assert run is not None and run.status == "interrupted"
