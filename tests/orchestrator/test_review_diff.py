"""Reading a unified diff, mapping its lines to the new file, and cutting it into review units."""

from __future__ import annotations

import pytest

from corral.orchestrator.pipelines.review import (
    ChangeMap,
    PatchError,
    parse_unified_diff,
    split_units,
)

GIT_DIFF = """\
diff --git a/app/calc.py b/app/calc.py
index 1111111..2222222 100644
--- a/app/calc.py
+++ b/app/calc.py
@@ -1,5 +1,7 @@
 def mean(xs):
-    return sum(xs) / len(xs)
+    if not xs:
+        return 0
+    return sum(xs) / len(xs)


 def spread(xs):
@@ -20,4 +21,3 @@ def spread(xs):
     low = min(xs)
--- a removed line that looks like a file header
     high = max(xs)
     return high - low
diff --git a/new.txt b/new.txt
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/new.txt
@@ -0,0 +1,2 @@
+hello
+world
\\ No newline at end of file
diff --git a/old.txt b/old.txt
deleted file mode 100644
index 4444444..0000000
--- a/old.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
diff --git a/logo.png b/logo.png
index 5555555..6666666 100644
Binary files a/logo.png and b/logo.png differ
diff --git a/src/a.py b/src/b.py
similarity index 100%
rename from src/a.py
rename to src/b.py
"""


def test_git_diff_is_read_into_files_with_their_hunks_and_new_line_numbers() -> None:
    files = parse_unified_diff(GIT_DIFF)
    assert [f.path for f in files] == ["app/calc.py", "new.txt", "old.txt", "logo.png", "src/b.py"]
    calc = files[0]
    assert [(h.new_start, h.new_count) for h in calc.hunks] == [(1, 7), (21, 3)]
    assert calc.hunks[0].added == (2, 3, 4)
    assert calc.hunks[1].added == ()
    assert calc.hunks[1].lines[1] == "--- a removed line that looks like a file header"
    assert files[1].hunks[0].added == (1, 2)
    assert [f.skip_reason for f in files] == [
        None,
        None,
        "file deleted",
        "binary file",
        "no text changes (mode or rename only)",
    ]
    assert files[4].old_path == "src/a.py"


def test_a_removal_marks_the_new_lines_on_both_sides_of_it() -> None:
    (calc, *_) = parse_unified_diff(GIT_DIFF)
    assert calc.hunks[1].anchors == (21, 22)


def test_plain_diff_u_output_with_timestamps_and_a_preamble_is_read() -> None:
    text = (
        "Subject: fix it\n\nSome commit message.\n"
        "--- lib/util.c\t2024-01-01 10:00:00.000000000 +0000\n"
        "+++ lib/util.c\t2024-01-02 10:00:00.000000000 +0000\n"
        "@@ -3,2 +3,2 @@\n"
        " int x;\n"
        "-int y;\n"
        "+long y;\n"
        "-- \n2.39.5\n"
    )
    (util,) = parse_unified_diff(text)
    assert (util.path, util.hunks[0].added) == ("lib/util.c", (4,))


def test_a_form_feed_inside_a_changed_line_does_not_split_it() -> None:
    text = "--- a/x.py\n+++ b/x.py\n@@ -1 +1,2 @@\n a = 1\n+\x0c# section\n"
    (x,) = parse_unified_diff(text)
    assert x.hunks[0].added == (2,)


def test_git_quoted_paths_are_unquoted() -> None:
    text = (
        'diff --git "a/caf\\303\\251 menu.txt" "b/caf\\303\\251 menu.txt"\n'
        '--- "a/caf\\303\\251 menu.txt"\n'
        '+++ "b/caf\\303\\251 menu.txt"\n'
        "@@ -1 +1 @@\n-tea\n+coffee\n"
    )
    (menu,) = parse_unified_diff(text)
    assert menu.path == "café menu.txt"


def test_a_hunk_shorter_than_its_header_says_is_refused_with_its_line() -> None:
    text = "--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n"
    with pytest.raises(PatchError, match=r"fix\.patch line 7: a hunk ends early"):
        parse_unified_diff(text, source="fix.patch")


def test_a_malformed_hunk_header_is_refused() -> None:
    with pytest.raises(PatchError, match="line 3: malformed hunk header '@@ nonsense'"):
        parse_unified_diff("--- a/x\n+++ b/x\n@@ nonsense\n")


def test_findings_within_three_lines_of_a_change_are_covered_and_farther_ones_are_not() -> None:
    change = ChangeMap(parse_unified_diff(GIT_DIFF))
    assert change.paths == {"app/calc.py", "new.txt"}
    assert change.covers("app/calc.py", 7, 7)  # 3 below the last added line, 4
    assert not change.covers("app/calc.py", 8, 9)
    assert change.covers("app/calc.py", 25, 25)  # 3 below the removal at 21-22
    assert not change.covers("app/calc.py", 26, 40)
    assert change.covers("app/calc.py", 8, 30), "a wide range around the removal is in it"
    assert not change.covers("old.txt", 1, 1)
    assert change.line_text("app/calc.py", 3) == "        return 0"


def _hunk(old: int, new: int, changed: int) -> str:
    body = "".join(f"-old {i}\n" for i in range(changed)) + "".join(
        f"+new {i}\n" for i in range(changed)
    )
    return f"@@ -{old},{changed} +{new},{changed} @@\n{body}"


def test_a_large_file_is_split_between_hunks_and_a_huge_hunk_stays_whole() -> None:
    hunks = [_hunk(10, 10, 40), _hunk(100, 100, 40), _hunk(200, 200, 300), _hunk(900, 900, 5)]
    text = "--- a/big.py\n+++ b/big.py\n" + "".join(hunks) + "--- a/small.py\n+++ b/small.py\n"
    text += _hunk(1, 1, 2)
    units = split_units(parse_unified_diff(text), max_changed_lines=200)
    assert [(u.path, u.part, u.parts, [h.new_start for h in u.hunks]) for u in units] == [
        ("big.py", 1, 3, [10, 100]),
        ("big.py", 2, 3, [200]),
        ("big.py", 3, 3, [900]),
        ("small.py", 1, 1, [1]),
    ]
    assert units[2].label == "big.py (part 3 of 3)"
    assert units[0].changed_ranges() == "10-49, 100-139"
    assert units[0].diff.startswith("--- a/big.py\n+++ b/big.py\n@@ -10,40 +10,40 @@\n")
    assert "@@ -200,300" not in units[0].diff


def test_a_unit_item_fences_its_diff_longer_than_any_backticks_in_it() -> None:
    text = "--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-old\n+````python\n"
    (unit,) = split_units(parse_unified_diff(text))
    item = unit.item("here")
    assert item["fence"] == "`````"
    assert (item["path"], item["changed"], item["where"]) == ("README.md", "1", "here")
