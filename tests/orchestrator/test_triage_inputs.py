"""Reading the issues and the label set of a triage: shapes accepted, and errors with positions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from corral.orchestrator.pipelines.triage import (
    IssuesFileError,
    LabelsFileError,
    parse_issues,
    parse_labels,
    read_issues,
    read_labels,
)
from corral.orchestrator.pipelines.triage.demo_policy import DEMO_ISSUES, DEMO_LABELS

GH_ISSUE = {
    "number": 7,
    "title": "Crash on start",
    "body": "It crashes.",
    "labels": [{"id": "L1", "name": "bug", "description": "", "color": "d73a4a"}],
    "author": {"id": "U1", "is_bot": False, "login": "ana", "name": "Ana"},
    "createdAt": "2025-01-02T10:00:00Z",
    "url": "https://example.test/issues/7",
}


def test_gh_issue_list_output_is_read_with_its_labels_and_author() -> None:
    (issue,) = parse_issues(json.dumps([GH_ISSUE], indent=2), source="issues.json")
    assert (issue.number, issue.title, issue.body) == (7, "Crash on start", "It crashes.")
    assert (issue.labels, issue.author, issue.created_at) == (
        ("bug",),
        "ana",
        "2025-01-02T10:00:00Z",
    )
    assert issue.position == "index 0, line 2"


def test_json_lines_are_read_and_blank_lines_keep_the_line_numbers() -> None:
    text = f"{json.dumps(GH_ISSUE)}\n\n" + json.dumps({"number": 8, "title": "Docs"}) + "\n"
    first, second = parse_issues(text)
    assert (first.number, second.number) == (7, 8)
    assert (second.body, second.labels, second.author) == ("", (), "")
    assert second.position == "index 1, line 3"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '[\n{"number": 1, "title": "a"},\n{"number": "2", "title": "b"}\n]',
            "the issue at index 1, line 3 is malformed: 'number': input should be a valid integer",
        ),
        (
            '[\n{"number": 1, "title": "a"},\n{"number": 2, "title": ""}\n]',
            "the issue at index 1, line 3 is malformed: 'title'",
        ),
        (
            '[\n{"number": 1, "title": "a"},\n\n  {"number": 2 "title": "b"}\n]',
            "the issue at index 1 (line 4) is not valid JSON: Expecting ',' delimiter",
        ),
        ('[{"number": 1, "title": "a"}, [1]]', "the issue at index 1, line 1 is a JSON array"),
        (
            '{"number": 1, "title": "a"}\n{"number": 2, "title": oops}\n',
            "the issue at index 1, line 2, is not valid JSON",
        ),
        (
            '{"number": 1, "title": "a"}\n{"number": 1, "title": "b"}\n',
            "issue number 1 appears twice (index 0, line 1, and index 1, line 2)",
        ),
        ('[{"number": 1, "title": "a"}] trailing', "unexpected text after the array at line 1"),
        ("[]", "holds no issues"),
        ("  \n", "is empty"),
    ],
)
def test_a_malformed_issues_file_names_the_position_to_fix(text: str, expected: str) -> None:
    with pytest.raises(IssuesFileError) as caught:
        parse_issues(text, source="issues.json")
    assert str(caught.value).startswith("issues.json")
    assert expected in str(caught.value)


def test_a_missing_issues_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(IssuesFileError, match=r"issues file .*nope\.json does not exist"):
        read_issues(tmp_path / "nope.json")


def test_labels_are_read_as_a_mapping_in_file_order() -> None:
    labels = parse_labels("# the set\nbug: Something is broken\nui:\n'on': Literal name\n")
    assert labels.names == ("bug", "ui", "on")
    assert [label.description for label in labels.labels] == [
        "Something is broken",
        "",
        "Literal name",
    ]
    assert [label.line for label in labels.labels] == [2, 3, 4]


def test_labels_are_read_as_the_list_gh_label_list_prints() -> None:
    gh = [
        {"name": "bug", "description": "Broken", "color": "d73a4a"},
        {"name": "docs", "description": "", "color": "0075ca"},
    ]
    labels = parse_labels(json.dumps(gh))
    assert labels.names == ("bug", "docs")
    assert "docs" in labels and "feature" not in labels


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "bug: Broken\nui: Web\nbug: Again\n",
            "label 'bug' is defined twice, at line 1 and line 3",
        ),
        (
            "- name: Bug\n  description: x\n- name: bug\n  description: y\n",
            "label 'Bug'/'bug' is defined twice, at line 1 and line 3",
        ),
        ("- description: nameless\n", "line 1: this entry has no name"),
        ("- bug\n", "line 1: a list entry must be an object"),
        ("bug: [a, b]\n", "line 1: the description of label 'bug' must be text"),
        (f"{'x' * 51}: too long\n", "is not a usable name"),
        ("bug: ok\n  bad: indent\n", "is not valid YAML"),
        ("just text\n", "holds no labels"),
        ("{}\n", "holds no labels"),
    ],
)
def test_a_malformed_labels_file_says_what_to_fix(text: str, expected: str) -> None:
    with pytest.raises(LabelsFileError) as caught:
        parse_labels(text, source="labels.yaml")
    assert str(caught.value).startswith("labels.yaml")
    assert expected in str(caught.value)


def test_the_bundled_demo_data_is_a_realistic_issue_set_and_label_set() -> None:
    issues = read_issues(DEMO_ISSUES)
    labels = read_labels(DEMO_LABELS)
    assert len(issues) >= 30
    assert all(issue.title and issue.body and issue.author for issue in issues)
    assert 8 <= len(labels.names) <= 12
    assert all(label.description for label in labels.labels)
