"""grep: ripgrep and the pure-Python fallback answer the same searches the same way."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from corral.tools import PermissionProfile, ToolContext, ToolOutput
from corral.tools._grep import GREP_MAX_LINE_CHARS, grep_tool

BACKENDS = [
    pytest.param(True, id="ripgrep"),
    pytest.param(False, id="python"),
]


async def _grep(root: Path, use_ripgrep: bool, **args: Any) -> ToolOutput:
    if use_ripgrep and shutil.which("rg") is None:
        pytest.skip("ripgrep (rg) is not installed")
    profile = PermissionProfile.for_workspace("workspace-write", root)
    ctx = ToolContext(cwd=root, profile=profile)
    return await grep_tool(use_ripgrep=use_ripgrep).invoke(json.dumps(args), ctx)


def _make_tree(root: Path) -> None:
    (root / "src" / "sub").mkdir(parents=True)
    (root / "src" / "a.py").write_text("import os\ndef needle():\n    return 'needle'\n")
    (root / "src" / "sub" / "b.py").write_text("needle = 1\n")
    (root / "src" / "zz.txt").write_bytes(b"windows needle\r\n")
    (root / "src" / "latin.txt").write_bytes("caf\xe9 needle\n".encode("latin-1"))
    (root / ".hidden").mkdir()
    (root / ".hidden" / "h.txt").write_text("a needle in hiding\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("needle in git\n")
    (root / "blob.bin").write_bytes(b"needle\0\0\0")
    (root / "long.txt").write_text("needle " + "y" * 5000 + "\n")
    (root / "alias.py").symlink_to("src/a.py")


EXPECTED = [
    ".hidden/h.txt:1:a needle in hiding",
    "long.txt:1:" + ("needle " + "y" * 5000)[:GREP_MAX_LINE_CHARS] + "…",
    "src/a.py:2:def needle():",
    "src/a.py:3:    return 'needle'",
    "src/latin.txt:1:caf\ufffd needle",
    "src/sub/b.py:1:needle = 1",
    "src/zz.txt:1:windows needle",
]


@pytest.mark.anyio
@pytest.mark.parametrize("use_ripgrep", BACKENDS)
async def test_grep_lists_matches_by_path_skipping_git_binaries_and_symlinks(
    tmp_path: Path, use_ripgrep: bool
) -> None:
    _make_tree(tmp_path)
    out = await _grep(tmp_path, use_ripgrep, pattern="needle")
    assert out.success
    assert out.text.splitlines() == EXPECTED


@pytest.mark.anyio
@pytest.mark.parametrize("use_ripgrep", BACKENDS)
async def test_grep_narrows_by_include_glob_and_path(tmp_path: Path, use_ripgrep: bool) -> None:
    _make_tree(tmp_path)
    by_glob = await _grep(tmp_path, use_ripgrep, pattern=r"needle\b", include="*.py")
    by_path = await _grep(tmp_path, use_ripgrep, pattern="needle", path="src/sub")
    assert by_glob.text.splitlines() == [
        "src/a.py:2:def needle():",
        "src/a.py:3:    return 'needle'",
        "src/sub/b.py:1:needle = 1",
    ]
    assert by_path.text == "src/sub/b.py:1:needle = 1"


@pytest.mark.anyio
@pytest.mark.parametrize("use_ripgrep", BACKENDS)
async def test_grep_caps_results_with_a_note(tmp_path: Path, use_ripgrep: bool) -> None:
    (tmp_path / "many.txt").write_text("hit\n" * 50)
    out = await _grep(tmp_path, use_ripgrep, pattern="hit", limit=3)
    assert out.text.splitlines() == [
        "many.txt:1:hit",
        "many.txt:2:hit",
        "many.txt:3:hit",
        "[results cut at 3 matches; narrow the pattern, path or include]",
    ]


@pytest.mark.anyio
@pytest.mark.parametrize("use_ripgrep", BACKENDS)
async def test_grep_explains_bad_regexes_missing_paths_and_binary_files(
    tmp_path: Path, use_ripgrep: bool
) -> None:
    (tmp_path / "blob.bin").write_bytes(b"\0" * 10)
    bad = await _grep(tmp_path, use_ripgrep, pattern="(unclosed")
    missing = await _grep(tmp_path, use_ripgrep, pattern="x", path="nope")
    binary = await _grep(tmp_path, use_ripgrep, pattern="x", path="blob.bin")
    assert not bad.success and bad.text.startswith("invalid regex '(unclosed': ")
    assert not missing.success and missing.text.startswith("nope does not exist")
    assert (binary.success, binary.text) == (
        False,
        "blob.bin is a binary file (10 bytes); grep searches text only",
    )


@pytest.mark.anyio
@pytest.mark.parametrize("use_ripgrep", BACKENDS)
async def test_grep_with_no_match_says_so(tmp_path: Path, use_ripgrep: bool) -> None:
    (tmp_path / "a.txt").write_text("nothing here\n")
    out = await _grep(tmp_path, use_ripgrep, pattern="absent")
    assert (out.success, out.text) == (True, "No matches for 'absent' (searched .)")


@pytest.mark.anyio
@pytest.mark.parametrize("use_ripgrep", BACKENDS)
async def test_grep_never_reads_through_a_symlink_out_of_the_workspace(
    tmp_path: Path, use_ripgrep: bool
) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("password=hunter2\n")
    (workspace / "leak.txt").symlink_to(outside / "secret.txt")
    (workspace / "leakdir").symlink_to(outside)
    out = await _grep(workspace, use_ripgrep, pattern="password")
    assert (out.success, out.text) == (True, "No matches for 'password' (searched .)")
