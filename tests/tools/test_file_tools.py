"""read_file and list_dir: what the model sees for normal files, big files, and mistakes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from corral.tools import PermissionProfile, ToolContext, ToolOutput
from corral.tools._file_tools import READ_FILE_MAX_BYTES, file_tools, list_dir_tool, read_file_tool


def _ctx(root: Path) -> ToolContext:
    return ToolContext(cwd=root, profile=PermissionProfile.for_workspace("workspace-write", root))


async def _read(root: Path, **args: Any) -> ToolOutput:
    return await read_file_tool().invoke(json.dumps(args), _ctx(root))


async def _list(root: Path, **args: Any) -> ToolOutput:
    return await list_dir_tool().invoke(json.dumps(args), _ctx(root))


def test_file_tools_come_in_a_fixed_order_with_their_flags() -> None:
    flags = [(t.name, t.mutating, t.parallel) for t in file_tools()]
    assert flags == [
        ("read_file", False, True),
        ("list_dir", False, True),
        ("grep", False, True),
        ("apply_patch", True, False),
        ("update_plan", False, False),
    ]


# -- read_file --------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_read_file_numbers_lines_and_drops_line_endings(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"first\r\nsecond\n\nlast")
    out = await _read(tmp_path, path="a.txt")
    assert (out.success, out.text) == (True, "L1: first\nL2: second\nL3: \nL4: last")


@pytest.mark.anyio
async def test_read_file_window_says_where_to_continue(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    out = await _read(tmp_path, path="a.txt", offset=3, limit=2)
    assert out.text == "L3: line 3\nL4: line 4\n[showing lines 3-4 of 10; continue with offset=5]"


@pytest.mark.anyio
async def test_read_file_cuts_output_at_the_byte_cap(tmp_path: Path) -> None:
    line = "x" * 999
    (tmp_path / "big.txt").write_text(f"{line}\n" * 100)
    out = await _read(tmp_path, path="big.txt")
    assert len(out.text.encode()) <= READ_FILE_MAX_BYTES + 200
    shown = READ_FILE_MAX_BYTES // (len(line) + 6)
    assert out.text.endswith(
        f"[output cut at {READ_FILE_MAX_BYTES} bytes; showing lines 1-{shown} of 100; "
        f"continue with offset={shown + 1}]"
    )


@pytest.mark.anyio
async def test_read_file_cuts_a_single_huge_line(tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("é" * READ_FILE_MAX_BYTES + "\nnext\n")
    out = await _read(tmp_path, path="min.js")
    body, note = out.text.rsplit("\n", 1)
    assert body.startswith("L1: éé") and len(body.encode()) <= READ_FILE_MAX_BYTES
    assert note.startswith(f"[line 1 is longer than {READ_FILE_MAX_BYTES} bytes and was cut")


@pytest.mark.anyio
async def test_read_file_refuses_binary_files_with_their_size(tmp_path: Path) -> None:
    (tmp_path / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(2000))
    (tmp_path / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    png = await _read(tmp_path, path="img.png")
    latin = await _read(tmp_path, path="latin1.txt")
    assert not png.success
    assert png.text == "img.png is a binary file (2.0 KiB); read_file shows UTF-8 text only"
    assert not latin.success
    assert latin.text == (
        "latin1.txt is a binary file (5 bytes) (line 1 is not valid UTF-8); "
        "read_file shows UTF-8 text only"
    )


@pytest.mark.anyio
async def test_read_file_explains_missing_files_directories_and_bad_offsets(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    (tmp_path / "short.txt").write_text("one\n")
    (tmp_path / "empty.txt").write_text("")
    missing = await _read(tmp_path, path="nope.txt")
    directory = await _read(tmp_path, path="dir")
    past = await _read(tmp_path, path="short.txt", offset=5)
    empty = await _read(tmp_path, path="empty.txt")
    assert missing.text == f"nope.txt does not exist (looked for {tmp_path / 'nope.txt'})"
    assert directory.text == "dir is a directory; use list_dir to see what it holds"
    assert past.text == "offset 5 is past the end of short.txt, which has 1 line"
    assert [missing.success, directory.success, past.success] == [False, False, False]
    assert (empty.success, empty.text) == (True, "[empty.txt is empty]")


# -- list_dir ---------------------------------------------------------------------------------


def _make_tree(root: Path) -> None:
    (root / "src" / "pkg" / "deep").mkdir(parents=True)
    (root / "src" / "pkg" / "deep" / "hidden.py").write_text("")
    (root / "src" / "pkg" / "mod.py").write_text("")
    (root / "src" / "main.py").write_text("")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref\n")
    (root / "README.md").write_text("")
    (root / "docs").symlink_to("src")


@pytest.mark.anyio
async def test_list_dir_shows_a_sorted_tree_marking_dirs_and_symlinks(tmp_path: Path) -> None:
    _make_tree(tmp_path)
    out = await _list(tmp_path)
    assert out.text == "\n".join(
        [f"./ ({tmp_path})", "  README.md", "  docs@", "  src/", "    main.py", "    pkg/"]
    )


@pytest.mark.anyio
async def test_list_dir_goes_as_deep_as_asked_and_notes_a_cut(tmp_path: Path) -> None:
    _make_tree(tmp_path)
    deep = await _list(tmp_path, path="src", depth=3)
    cut = await _list(tmp_path, limit=3)
    assert deep.text.splitlines()[1:] == [
        "  main.py",
        "  pkg/",
        "    deep/",
        "      hidden.py",
        "    mod.py",
    ]
    assert cut.text.splitlines()[-1] == (
        "[listing cut at 3 entries; list a subdirectory or lower depth]"
    )


@pytest.mark.anyio
async def test_list_dir_explains_files_and_missing_paths(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("")
    (tmp_path / "empty").mkdir()
    file = await _list(tmp_path, path="a.txt")
    missing = await _list(tmp_path, path="nope")
    empty = await _list(tmp_path, path="empty")
    assert (file.success, file.text) == (
        False,
        "a.txt is a file, not a directory; use read_file to read it",
    )
    assert not missing.success and missing.text.startswith("nope does not exist")
    assert empty.text.splitlines()[1:] == ["  (empty)"]
