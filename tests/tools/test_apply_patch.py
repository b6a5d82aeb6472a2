"""apply_patch: parsing, lenient matching, line endings, and all-or-nothing writes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from corral.tools import PermissionProfile, ToolContext
from corral.tools._apply_patch_tool import apply_patch_tool
from corral.tools._patch import (
    LocalDisk,
    PatchConflict,
    PatchParseError,
    PatchWriteFailed,
    UpdateFile,
    apply_patch_text,
    parse_patch,
)

from ._tree_snapshot import tree_snapshot


def _apply(root: Path, *lines: str) -> str:
    patch = "\n".join(["*** Begin Patch", *lines, "*** End Patch"])
    profile = PermissionProfile.for_workspace("workspace-write", root)
    return apply_patch_text(patch, cwd=root, profile=profile).summary()


def _parse_error(text: str) -> str:
    with pytest.raises(PatchParseError) as caught:
        parse_patch(text)
    return str(caught.value)


# -- parsing ----------------------------------------------------------------------------------


def test_patch_without_begin_marker_is_rejected() -> None:
    message = _parse_error("*** Update File: a\n@@\n-x\n+y\n*** End Patch")
    assert message == "invalid patch: the first line of the patch must be '*** Begin Patch'"


def test_patch_without_end_marker_is_rejected() -> None:
    message = _parse_error("*** Begin Patch\n*** Add File: a\n+x")
    assert message == "invalid patch: the last line of the patch must be '*** End Patch'"


def test_unknown_hunk_header_names_its_line() -> None:
    message = _parse_error("*** Begin Patch\n*** Add File: a\n+x\n*** Copy File: b\n*** End Patch")
    assert message.startswith("invalid hunk at line 4, '*** Copy File: b' is not a valid hunk")


def test_line_that_is_not_a_diff_line_names_its_line() -> None:
    message = _parse_error("*** Begin Patch\n*** Update File: a\n@@\n?oops\n*** End Patch")
    assert message.startswith("invalid hunk at line 4, unexpected line found in update hunk")


def test_heredoc_wrapper_and_crlf_patch_are_accepted() -> None:
    text = "apply_patch <<'EOF'\r\n*** Begin Patch\r\n*** Delete File: a.txt\r\n"
    text += "*** End Patch\r\nEOF\r\n"
    assert [h.path for h in parse_patch(text).hunks] == ["a.txt"]


def test_stacked_and_unified_style_context_headers_are_parsed() -> None:
    patch = parse_patch(
        "*** Begin Patch\n*** Update File: a.py\n@@ class A\n@@     def f(self):\n-x\n+y\n"
        "@@ -10,2 +10,2 @@ def g():\n-p\n+q\n*** End Patch"
    )
    hunk = patch.hunks[0]
    assert isinstance(hunk, UpdateFile)
    assert [c.contexts for c in hunk.chunks] == [("class A", "    def f(self):"), ("def g():",)]


# -- matching ---------------------------------------------------------------------------------


def test_context_that_differs_only_in_whitespace_still_matches(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():   \n        return 1\n")
    _apply(tmp_path, "*** Update File: a.py", "@@", " def f():", "-    return 1", "+    return 2")
    assert (tmp_path / "a.py").read_text() == "def f():   \n    return 2\n"


def test_unicode_punctuation_in_the_file_matches_ascii_in_the_patch(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("intro\nsee \u201cfoo\u201d \u2014 it\u2019s\u00a0here\nend\n")
    _apply(tmp_path, "*** Update File: a.txt", "@@", '-see "foo" - it\'s here', "+replaced")
    assert (tmp_path / "a.txt").read_text() == "intro\nreplaced\nend\n"


def test_loosely_matched_context_lines_are_left_as_the_file_has_them(tmp_path: Path) -> None:
    original = "see \u201cfoo\u201d \u2014 it\u2019s here  \nend\n"
    (tmp_path / "a.txt").write_text(original)
    _apply(tmp_path, "*** Update File: a.txt", "@@", ' see "foo" - it\'s here', "-end", "+END")
    assert (tmp_path / "a.txt").read_text() == original.replace("end", "END")


def test_end_of_file_anchor_edits_the_last_occurrence(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\ny\nx\ny\n")
    _apply(tmp_path, "*** Update File: a.txt", "@@", " x", "-y", "+Y", "*** End of File")
    assert (tmp_path / "a.txt").read_text() == "x\ny\nx\nY\n"


def test_context_header_picks_the_right_one_of_two_identical_blocks(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def a():\n    return 0\n\ndef b():\n    return 0\n")
    _apply(tmp_path, "*** Update File: a.py", "@@ def b():", "-    return 0", "+    return 1")
    assert (tmp_path / "a.py").read_text() == "def a():\n    return 0\n\ndef b():\n    return 1\n"


def test_pure_addition_under_a_context_header_goes_right_after_it(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("import os\ndef f():\n    pass\n")
    _apply(tmp_path, "*** Update File: a.py", "@@ import os", "+import sys")
    assert (tmp_path / "a.py").read_text() == "import os\nimport sys\ndef f():\n    pass\n"


def test_chunks_must_appear_in_file_order(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\n")
    with pytest.raises(PatchConflict, match=r"chunk 2"):
        _apply(tmp_path, "*** Update File: a.txt", "@@", "-three", "+3", "@@", "-one", "+1")
    assert (tmp_path / "a.txt").read_text() == "one\ntwo\nthree\n"


def test_unmatched_lines_are_shown_with_the_file_name(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\nbeta\n")
    with pytest.raises(PatchConflict) as caught:
        _apply(tmp_path, "*** Update File: a.txt", "@@", " alpha", "-gamma", "+delta")
    message = str(caught.value)
    assert message.startswith("failed to find the expected lines in a.txt (chunk 1, patch line 3)")
    assert "\nalpha\ngamma\n" in message
    assert "No file was changed" in message


# -- what is written --------------------------------------------------------------------------


def test_crlf_file_stays_crlf_under_an_lf_patch(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    _apply(tmp_path, "*** Update File: a.txt", "@@", " one", "-two", "+TWO", "+2.5")
    assert (tmp_path / "a.txt").read_bytes() == b"one\r\nTWO\r\n2.5\r\nthree\r\n"


def test_byte_order_mark_and_file_mode_are_kept(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_bytes("\ufeff#!/bin/sh\necho hi\n".encode())
    script.chmod(0o750)
    _apply(tmp_path, "*** Update File: run.sh", "@@", " #!/bin/sh", "-echo hi", "+echo bye")
    assert script.read_bytes() == "\ufeff#!/bin/sh\necho bye\n".encode()
    assert script.stat().st_mode & 0o777 == 0o750


def test_update_through_a_symlink_edits_the_target_and_keeps_the_link(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("old\n")
    (tmp_path / "alias.txt").symlink_to("real.txt")
    _apply(tmp_path, "*** Update File: alias.txt", "@@", "-old", "+new")
    assert (tmp_path / "alias.txt").is_symlink()
    assert (tmp_path / "real.txt").read_text() == "new\n"


def test_later_hunks_see_earlier_ones_and_the_summary_lists_each_file(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("keep\nchange\n")
    (tmp_path / "gone.txt").write_text("bye\n")
    summary = _apply(
        tmp_path,
        "*** Add File: new/made.txt",
        "+first",
        "*** Update File: new/made.txt",
        "@@",
        "-first",
        "+second",
        "*** Update File: old.txt",
        "*** Move to: moved/old.txt",
        "@@",
        " keep",
        "-change",
        "+changed",
        "*** Delete File: gone.txt",
    )
    assert summary == (
        "Success. Updated the following files:\n"
        "A new/made.txt\nM new/made.txt\nM moved/old.txt\nD gone.txt"
    )
    assert (tmp_path / "new/made.txt").read_text() == "second\n"
    assert (tmp_path / "moved/old.txt").read_text() == "keep\nchanged\n"
    assert not (tmp_path / "old.txt").exists()
    assert not (tmp_path / "gone.txt").exists()


def test_patch_that_fails_on_second_file_leaves_first_untouched(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    before = tree_snapshot(tmp_path)
    with pytest.raises(PatchConflict, match=r"cannot update missing\.txt: no such file"):
        _apply(
            tmp_path,
            "*** Update File: a.txt",
            "@@",
            "-a",
            "+A",
            "*** Update File: missing.txt",
            "@@",
            "-x",
            "+y",
        )
    assert tree_snapshot(tmp_path) == before


def test_file_added_then_moved_in_one_patch_lands_only_at_its_destination(
    tmp_path: Path,
) -> None:
    summary = _apply(
        tmp_path,
        "*** Add File: draft.txt",
        "+one",
        "*** Update File: draft.txt",
        "*** Move to: final/draft.txt",
        "@@",
        "+two",
    )
    assert summary.endswith("A draft.txt\nM final/draft.txt")
    assert tree_snapshot(tmp_path).keys() == {"final", "final/draft.txt"}
    assert (tmp_path / "final" / "draft.txt").read_text() == "one\ntwo\n"


class _DiskFailingOnWrite(LocalDisk):
    """A real disk whose n-th file write fails, as a full disk would."""

    def __init__(self, fail_on: int) -> None:
        self.writes = 0
        self.fail_on = fail_on

    def write_file(self, path: Path, data: bytes, mode: int | None) -> None:
        self.writes += 1
        if self.writes == self.fail_on:
            raise OSError(28, "No space left on device")
        super().write_file(path, data, mode)


def test_write_failure_midway_restores_everything_already_written(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "b.txt").write_text("b\n")
    (tmp_path / "link").symlink_to("b.txt")
    before = tree_snapshot(tmp_path)
    patch = "\n".join(
        [
            "*** Begin Patch",
            "*** Update File: a.txt\n@@\n-a\n+A",
            "*** Delete File: link",
            "*** Add File: deep/new/dir/c.txt\n+c",
            "*** Update File: b.txt\n@@\n-b\n+B",
            "*** End Patch",
        ]
    )
    profile = PermissionProfile.for_workspace("workspace-write", tmp_path)
    with pytest.raises(PatchWriteFailed) as caught:
        apply_patch_text(patch, cwd=tmp_path, profile=profile, disk=_DiskFailingOnWrite(3))
    assert "No space left on device" in str(caught.value)
    assert "the tree is as it was" in str(caught.value)
    assert tree_snapshot(tmp_path) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".corral-tmp")] == []


# -- the tool ---------------------------------------------------------------------------------


def test_apply_patch_tool_is_a_serial_mutating_function_with_one_input() -> None:
    tool = apply_patch_tool()
    assert (tool.name, tool.mutating, tool.parallel) == ("apply_patch", True, False)
    assert list(tool.parameters_schema()["properties"]) == ["input"]
    assert "@@ def" in tool.description and "3 lines of" in tool.description


@pytest.mark.anyio
async def test_tool_answers_the_summary_or_a_failed_output(tmp_path: Path) -> None:
    ctx = ToolContext(
        cwd=tmp_path, profile=PermissionProfile.for_workspace("workspace-write", tmp_path)
    )
    tool = apply_patch_tool()
    added = await tool.invoke(
        json.dumps({"input": "*** Begin Patch\n*** Add File: x.txt\n+x\n*** End Patch"}), ctx
    )
    refused = await tool.invoke(json.dumps({"input": "*** Begin Patch\n*** End Patch"}), ctx)
    assert (added.success, added.text) == (True, "Success. Updated the following files:\nA x.txt")
    assert not refused.success and refused.text.startswith("invalid patch: the patch has no file")
    assert os.listdir(tmp_path) == ["x.txt"]
