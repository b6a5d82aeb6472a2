"""Reading a change from real git: ranges, their errors, and the reviewers' checkout."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.orchestrator.pipelines.review import (
    BadRange,
    NotARepository,
    PatchError,
    ReviewInputError,
    ReviewJob,
    read_change,
)
from corral.orchestrator.pipelines.review._git import checkout_at
from tests._git import git, topic_repo

pytestmark = pytest.mark.anyio


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return topic_repo(tmp_path / "repo")


async def test_a_two_dot_range_diffs_the_ends_and_three_dots_diff_from_the_merge_base(
    repo: Path,
) -> None:
    two = await read_change(ReviewJob(repo=repo, range="main..topic"))
    three = await read_change(ReviewJob(repo=repo, range="main...topic"))
    assert sorted(f.path for f in two.files) == ["b.txt", "c.txt"]
    assert [f.path for f in three.files] == ["b.txt"]
    assert three.files[0].hunks[0].added == (2,)
    assert three.source.head == git(repo, "rev-parse", "topic")
    assert three.source.base == git(repo, "merge-base", "main", "topic")


async def test_an_unknown_revision_is_named_with_gits_own_message(repo: Path) -> None:
    with pytest.raises(BadRange) as caught:
        await read_change(ReviewJob(repo=repo, range="main..nope"))
    message = str(caught.value)
    assert message.startswith("--range main..nope: git cannot find revision 'nope' in ")
    assert "(fatal: Needed a single revision)" in message


async def test_a_range_needs_two_dots_and_a_repository(repo: Path, tmp_path: Path) -> None:
    with pytest.raises(BadRange, match=r"is not a range; write BASE\.\.HEAD"):
        await read_change(ReviewJob(repo=repo, range="main"))
    elsewhere = tmp_path / "plain"
    elsewhere.mkdir()
    with pytest.raises(NotARepository, match="is not inside a git repository"):
        await read_change(ReviewJob(repo=elsewhere, range="main..HEAD"))
    with pytest.raises(ReviewInputError, match="exactly one of --range"):
        await read_change(ReviewJob(repo=repo))


async def test_a_patch_file_that_holds_no_diff_is_refused(repo: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("just some notes\n")
    with pytest.raises(PatchError, match=r"notes\.txt holds no unified diff; give the output of"):
        await read_change(ReviewJob(repo=repo, patch=notes))
    with pytest.raises(PatchError, match=r"patch file .*missing\.patch does not exist"):
        await read_change(ReviewJob(repo=repo, patch=tmp_path / "missing.patch"))


async def test_reviewers_get_the_repository_itself_when_it_is_at_the_head(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    async with checkout_at(repo, head) as tree:
        assert tree == repo


async def test_a_tree_with_local_edits_gets_a_temporary_worktree_that_is_removed(
    repo: Path,
) -> None:
    (repo / "a.txt").write_text("edited, not committed\n")
    head = git(repo, "rev-parse", "HEAD")
    async with checkout_at(repo, head) as tree:
        assert tree != repo
        assert (tree / "a.txt").read_text() == "one\n"
        assert len(git(repo, "worktree", "list").splitlines()) == 2
    assert not tree.exists()
    assert len(git(repo, "worktree", "list").splitlines()) == 1
    assert (repo / "a.txt").read_text() == "edited, not committed\n"
    assert git(repo, "status", "--porcelain") == "M a.txt"
