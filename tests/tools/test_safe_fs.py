"""_safe_fs: reaching a checked path by directory handles, never through a symlink."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from corral.tools import _safe_fs as safe_fs


def test_write_atomic_replaces_the_file_keeps_its_mode_and_leaves_no_temporary(
    tmp_path: Path,
) -> None:
    target = tmp_path / "a.txt"
    target.write_text("old\n")
    target.chmod(0o640)
    safe_fs.write_atomic(target, b"new\n", target.stat().st_mode)
    assert target.read_text() == "new\n"
    assert target.stat().st_mode & 0o777 == 0o640
    assert os.listdir(tmp_path) == ["a.txt"]


def test_a_fifo_is_refused_at_once_instead_of_waiting_for_a_writer(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(OSError, match="not a regular file"):
        safe_fs.read_bytes(tmp_path / "pipe")


def test_lstat_answers_none_for_a_missing_path_and_does_not_follow_a_symlink(
    tmp_path: Path,
) -> None:
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    assert safe_fs.lstat(tmp_path / "missing" / "x") is None
    info = safe_fs.lstat(tmp_path / "link")
    assert info is not None and (info.st_mode & 0o170000) == 0o120000


@pytest.mark.parametrize("path", ["relative/x", "/a/../x", "../x"])
def test_a_path_that_is_not_resolved_is_refused(path: str) -> None:
    with pytest.raises(ValueError, match="is not a resolved absolute path"):
        safe_fs.lstat(Path(path))


def test_a_leaf_symlink_is_never_opened_for_reading(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("x\n")
    (tmp_path / "alias.txt").symlink_to("real.txt")
    with pytest.raises(OSError, match="is a symlink where the checked path had none"):
        safe_fs.read_bytes(tmp_path / "alias.txt")


def test_a_file_below_an_open_folder_is_reached_only_by_plain_names(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "f.txt").write_text("f\n")
    with safe_fs.open_listing(tmp_path) as fd:
        with safe_fs.open_file_below(fd, ("sub", "f.txt"), tmp_path / "sub" / "f.txt") as handle:
            assert handle.read() == b"f\n"
        with pytest.raises(ValueError, match="is not a path below the folder searched"):
            safe_fs.open_file_below(fd, ("..", "f.txt"), tmp_path / "f.txt")
