"""The triage report: results checked and gathered, the JSON schema, the Markdown summary."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from corral.orchestrator.fanout import FanoutOutcome, ItemOutcome, ResultSchema
from corral.orchestrator.pipelines.triage import (
    DuplicateIndex,
    Issue,
    TriageReport,
    build_report,
    parse_labels,
    render_markdown,
    report_schema,
    triage_json_schema,
)
from corral.orchestrator.services import HashingEmbedder

LABELS = parse_labels("bug: Broken\nui: The web interface\nsync: Bank sync\n")
ISSUES = [
    Issue(1, "Sync crashes offline", "traceback"),
    Issue(2, "Sync crashes when offline | again", "traceback again"),
    Issue(3, "Dark mode", "please"),
    Issue(4, "Typo", "teh"),
]


def result(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "labels": ["bug", "sync"],
        "labels_reason": "A sync bug.",
        "type": "bug",
        "type_reason": "It crashes.",
        "priority": "p1",
        "priority_reason": "No workaround.",
        "duplicate_of": None,
        "duplicate_reason": "No candidates.",
        "confidence": 0.9,
    }
    return base | changes


def done(index: int, value: dict[str, Any]) -> ItemOutcome:
    usage = {"input_tokens": 100, "output_tokens": 10, "cached_tokens": 50}
    return ItemOutcome(index, "done", value, None, usage, 0.001, f"agent-{index}")


def outcome(*items: ItemOutcome) -> FanoutOutcome:
    return FanoutOutcome(run_id="run-x", items=items, journal="journal.sqlite")


def report_of(*items: ItemOutcome) -> TriageReport:
    index = DuplicateIndex.build(ISSUES, HashingEmbedder(), floor=0.3)
    return build_report(ISSUES, LABELS.names, index, outcome(*items))


def sample_report() -> TriageReport:
    return report_of(
        done(0, result(duplicate_of=2, duplicate_reason="Same crash.")),
        done(1, result(duplicate_of=1, duplicate_reason="Same crash as #1.")),
        done(2, result(labels=["ui"], type="feature", priority="p0", duplicate_of=42)),
        ItemOutcome(3, "failed", None, "3 invalid results: $.labels[0]", {}, 0.0, "agent-3"),
    )


def test_two_issues_naming_each_other_keep_the_older_as_the_original() -> None:
    first, second, _ = sample_report().issues
    assert (first.number, first.duplicate_of) == (1, None)
    assert first.duplicate_reason == "Same crash. [kept as the original: #2 duplicates it]"
    assert (second.number, second.duplicate_of) == (2, 1)


def test_a_duplicate_of_an_issue_outside_the_set_is_dropped_with_a_note() -> None:
    third = sample_report().issues[2]
    assert third.duplicate_of is None
    assert third.duplicate_reason.endswith(
        "[duplicate_of #42 dropped: it names no issue of this set]"
    )
    itself = report_of(done(0, result(duplicate_of=1)), *[done(i, result()) for i in (1, 2, 3)])
    assert itself.issues[0].duplicate_of is None
    assert "it names itself" in itself.issues[0].duplicate_reason


def test_an_issue_without_a_result_is_listed_as_failed_and_the_report_is_not_ok() -> None:
    report = sample_report()
    assert not report.ok
    assert [(f.number, f.error) for f in report.failed] == [(4, "3 invalid results: $.labels[0]")]
    assert report.totals() == {
        "issues": 4,
        "triaged": 3,
        "failed": 1,
        "duplicates": 1,
        "input_tokens": 300,
        "cached_tokens": 150,
        "output_tokens": 30,
        "cost_usd": pytest.approx(0.003),
    }


def test_the_report_json_conforms_to_the_shipped_schema_and_the_schema_has_teeth() -> None:
    validator = Draft202012Validator(triage_json_schema())
    data = sample_report().to_json()
    validator.validate(data)
    assert data["issues"][1]["rationale"] == {
        "labels": "A sync bug.",
        "type": "It crashes.",
        "priority": "No workaround.",
        "duplicate": "Same crash as #1.",
    }
    data["issues"][0]["priority"] = "urgent"
    del data["totals"]["duplicates"]
    problems = sorted(e.message for e in validator.iter_errors(data))
    assert problems == [
        "'duplicates' is a required property",
        "'urgent' is not one of ['p0', 'p1', 'p2', 'p3']",
    ]


def test_a_label_outside_the_set_is_refused_by_the_result_schema() -> None:
    schema = ResultSchema(report_schema(LABELS))
    assert schema.problems(result()) == []
    assert schema.problems(result(labels=["bug", "urgent"])) == [
        "$.labels[1]: 'urgent' is not one of ['bug', 'ui', 'sync']"
    ]
    assert schema.problems(result(labels=["bug", "bug"])) == [
        "$.labels: ['bug', 'bug'] has non-unique elements"
    ]
    assert schema.problems(result(type="epic", confidence=2))[0].startswith("$.confidence")


def test_the_markdown_has_the_table_by_priority_counts_duplicates_and_failures() -> None:
    markdown = render_markdown(sample_report())
    assert markdown.startswith("# Triage of 4 issues\n\nRun `run-x`: 3 triaged, 1 failed")
    table = [line for line in markdown.splitlines() if line.startswith("| #")]
    assert table == [
        "| # | Title | Type | Priority | Labels | Duplicate of | Confidence |",
        "| #3 | Dark mode | feature | p0 | ui | - | 0.90 |",
        "| #1 | Sync crashes offline | bug | p1 | bug, sync | - | 0.90 |",
        "| #2 | Sync crashes when offline \\| again | bug | p1 | bug, sync | #1 | 0.90 |",
    ]
    assert "| bug | 2 |\n| feature | 1 |" in markdown
    assert "| p0 | 1 |\n| p1 | 2 |" in markdown
    assert "| bug | 2 |\n| ui | 1 |\n| sync | 2 |" in markdown
    assert "- #2 (Sync crashes when offline | again) duplicates #1 (Sync crashes offline): " in (
        markdown
    )
    assert "## Not triaged\n\n- #4 (Typo): 3 invalid results: $.labels[0]" in markdown
    assert "### #3: Dark mode\n\n- Labels (ui): A sync bug." in markdown
