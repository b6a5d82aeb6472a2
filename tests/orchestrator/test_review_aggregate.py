"""Aggregating reviewers' findings: only the change's lines, near-duplicates merged, sorted."""

from __future__ import annotations

from dataclasses import replace

from corral.orchestrator.pipelines.review import (
    ChangeMap,
    Finding,
    Fix,
    Severity,
    aggregate,
    findings_from_result,
    fingerprint,
    parse_unified_diff,
    similar_titles,
)

DIFF = (
    "--- a/api/users.py\n+++ b/api/users.py\n@@ -40,3 +40,5 @@\n"
    " def lookup(name):\n+    sql = 'SELECT * FROM users WHERE name = ' + name\n"
    "+    return db.run(sql)\n     pass\n     pass\n"
    "--- a/api/pages.py\n+++ b/api/pages.py\n@@ -10,2 +10,2 @@\n"
    "-    return items[start:end]\n+    return items[start:end + 1]\n     # end\n"
)
CHANGE = ChangeMap(parse_unified_diff(DIFF))


def finding(
    path: str = "api/users.py",
    start: int = 41,
    end: int = 41,
    severity: Severity = Severity.HIGH,
    title: str = "SQL injection through string concatenation",
    category: str = "security",
) -> Finding:
    return Finding(path, start, end, severity, category, title, "because")


def test_findings_outside_the_changed_lines_or_files_are_dropped_with_the_reason() -> None:
    kept = finding()
    far = finding(start=80, end=81, title="Unused import")
    other = finding(path="api/other.py", title="Dead code")
    result = aggregate([kept, far, other], CHANGE)
    assert result.kept == (kept,)
    assert [d.reason for d in result.dropped] == [
        "lines 80-81 are more than 3 lines away from any line the change touches",
        "api/other.py is not among the files the change touches",
    ]


def test_near_duplicates_merge_into_the_more_severe_with_the_wider_range() -> None:
    first = finding(start=41, end=41, severity=Severity.HIGH)
    fix = Fix(41, 42, "    return db.run('... = ?', (name,))")
    second = replace(
        finding(start=41, end=42, severity=Severity.CRITICAL),
        title="SQL query built by string concatenation allows injection",
        fix=fix,
    )
    (merged,) = aggregate([first, second], CHANGE).kept
    assert (merged.severity, merged.start_line, merged.end_line) == (Severity.CRITICAL, 41, 42)
    assert merged.title == "SQL query built by string concatenation allows injection"
    assert (merged.merged, merged.fix) == (2, fix)


def test_different_problems_on_the_same_lines_stay_apart() -> None:
    sql = finding()
    leak = finding(title="Database connection is never closed", category="resource-leak")
    assert aggregate([sql, leak], CHANGE).kept == (sql, leak)


def test_the_same_title_on_lines_that_do_not_overlap_stays_apart() -> None:
    one = finding(start=40, end=40)
    two = finding(start=42, end=42)
    assert len(aggregate([one, two], CHANGE).kept) == 2


def test_findings_are_sorted_by_severity_then_path_then_line() -> None:
    low = finding(path="api/pages.py", start=10, end=10, severity=Severity.LOW, title="a b")
    high_users = finding(start=42, end=42, title="Off by one in loop")
    high_pages = finding(path="api/pages.py", start=10, end=10, title="Off by one slice end")
    critical = finding(severity=Severity.CRITICAL, start=41, title="Injection")
    kept = aggregate([low, high_users, high_pages, critical], CHANGE).kept
    assert kept == (critical, high_pages, high_users, low)


def test_titles_match_on_their_meaningful_words() -> None:
    assert similar_titles("Missing None check", "missing none-checks!")
    assert similar_titles("Off-by-one in the loop bound", "Loop bound is off by one")
    assert not similar_titles("Off-by-one in the loop bound", "Loop never terminates")
    assert not similar_titles("Bug", "Another bug here"), "one shared word is not enough"


def test_a_reviewer_result_is_read_with_paths_made_relative_to_the_repository() -> None:
    result = {
        "findings": [
            {**_raw(), "path": "/tmp/worktree/api/users.py", "start_line": 42, "end_line": 41},
            {**_raw(), "path": "./api/pages.py", "suggested_patch": "fixed\n"},
            {**_raw(), "path": "b/api/users.py"},
        ]
    }
    found = findings_from_result(
        result, unit="api/users.py", roots=["/tmp/worktree"], known=CHANGE.paths
    )
    assert [(f.path, f.start_line, f.end_line) for f in found] == [
        ("api/users.py", 41, 42),
        ("api/pages.py", 10, 10),
        ("api/users.py", 10, 10),
    ]
    assert found[1].fix == Fix(10, 10, "fixed")
    assert found[0].fix is None and found[0].severity is Severity.MEDIUM


def _raw() -> dict[str, object]:
    return {
        "path": "x",
        "start_line": 10,
        "end_line": 10,
        "severity": "medium",
        "category": "correctness",
        "title": "Slice end is one past",
        "explanation": "It takes one item too many.",
    }


def test_a_fingerprint_survives_a_line_move_but_not_a_different_line() -> None:
    at_41 = finding(start=41, end=41)
    at_90 = finding(start=90, end=90)
    code = "sql = 'SELECT * FROM users WHERE name = ' + name"
    assert fingerprint(at_41, code) == fingerprint(at_90, f"  {code}")
    assert fingerprint(at_41, code) != fingerprint(at_41, "return db.run(sql)")
