"""`corral apply-patch`, run as a real subprocess with the patch on stdin."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ._tree_snapshot import tree_snapshot

DEADLINE_SECONDS = 30


def _run(cwd: Path, patch: str | bytes, *flags: str) -> subprocess.CompletedProcess[str]:
    data = patch.encode() if isinstance(patch, str) else patch
    done = subprocess.run(
        [sys.executable, "-m", "corral", "apply-patch", *flags],
        cwd=cwd,
        input=data,
        capture_output=True,
        timeout=DEADLINE_SECONDS,
        check=False,
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


def _patch(*lines: str) -> str:
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch", ""])


def test_move_with_an_edit_prints_the_summary(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "old.py").write_text("a = 1\nb = 2\n")
    done = _run(
        tmp_path,
        _patch(
            "*** Update File: src/old.py",
            "*** Move to: lib/new.py",
            "@@",
            " a = 1",
            "-b = 2",
            "+b = 3",
        ),
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == "Success. Updated the following files:\nM lib/new.py\n"
    assert (tmp_path / "lib" / "new.py").read_text() == "a = 1\nb = 3\n"
    assert not (tmp_path / "src" / "old.py").exists()


def test_end_of_file_anchor_edits_the_tail(tmp_path: Path) -> None:
    (tmp_path / "log.txt").write_text("end\nmiddle\nend\n")
    done = _run(
        tmp_path, _patch("*** Update File: log.txt", "@@", "-end", "+END", "*** End of File")
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "log.txt").read_text() == "end\nmiddle\nEND\n"


def test_add_of_an_existing_file_replaces_it(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("old\n")
    done = _run(tmp_path, _patch("*** Add File: notes.md", "+new"))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Success. Updated the following files:\nA notes.md\n"
    assert (tmp_path / "notes.md").read_text() == "new\n"


def test_delete_of_a_missing_file_fails_and_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("keep\n")
    before = tree_snapshot(tmp_path)
    done = _run(
        tmp_path,
        _patch("*** Update File: keep.txt", "@@", "-keep", "+kept", "*** Delete File: gone.txt"),
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        "corral apply-patch: error: cannot delete gone.txt: no such file. No file was changed.\n"
    )
    assert tree_snapshot(tmp_path) == before


def test_crlf_files_keep_their_line_endings(tmp_path: Path) -> None:
    (tmp_path / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    done = _run(
        tmp_path,
        _patch("*** Update File: win.txt", "@@", " one", "-two", "+2").replace("\n", "\r\n"),
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "win.txt").read_bytes() == b"one\r\n2\r\n"


def test_empty_stdin_is_an_error_that_says_what_to_pipe(tmp_path: Path) -> None:
    done = _run(tmp_path, b"")
    assert done.returncode == 2
    assert done.stderr.startswith("corral apply-patch: error: invalid patch: nothing on stdin")
    assert "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_paths_outside_the_current_folder_need_unsafe_paths(tmp_path: Path) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    patch = _patch("*** Add File: inside.txt", "+in", "*** Add File: ../outside.txt", "+out")
    refused = _run(cwd, patch)
    assert refused.returncode == 2
    assert refused.stderr == (
        "corral apply-patch: error: writing ../outside.txt is not allowed: it is outside "
        f"{cwd}, the only folder this patch may change; nothing was changed "
        "(pass --unsafe-paths to change files outside it)\n"
    )
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["cwd"]
    allowed = _run(cwd, patch, "--unsafe-paths")
    assert allowed.returncode == 0, allowed.stderr
    assert (tmp_path / "outside.txt").read_text() == "out\n"
    assert (cwd / "inside.txt").read_text() == "in\n"
