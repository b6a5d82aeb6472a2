"""`corral triage` end to end: the real CLI, the real SDK, WordLlama, the scripted server.

Input mistakes stop the command before any model or embedding is touched, so those tests call
the CLI's entry point in this process instead of paying for a subprocess.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from corral.orchestrator.cli import main
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.pipelines.triage import triage_json_schema
from corral.orchestrator.pipelines.triage.demo_policy import (
    DEMO_ISSUES,
    DEMO_LABELS,
    triage_demo_policy,
)

from ._cli import corral_env, run_corral

LABELS_YAML = """\
bug: Something is broken
enhancement: A new feature or an improvement
question: A usage question
sync: Fetching data from the server
docs: Documentation
"""
ISSUES = [
    {
        "number": 11,
        "title": "Sync crashes with a traceback when the laptop is offline",
        "body": "Running `notes sync` without network prints a ConnectionError traceback "
        "instead of a message saying the server cannot be reached.",
        "labels": [],
        "author": {"login": "ana", "name": "Ana", "id": "U1", "is_bot": False},
        "createdAt": "2025-01-02T10:00:00Z",
    },
    {
        "number": 12,
        "title": "How do I change where notes are stored?",
        "body": "I want my notes on another disk. Is there a setting for the data folder?",
        "labels": [{"id": "L3", "name": "question", "description": "", "color": "ffffff"}],
        "author": {"login": "ben", "name": "", "id": "U2", "is_bot": False},
        "createdAt": "2025-01-03T10:00:00Z",
    },
    {
        "number": 13,
        "title": "Add tags to notes",
        "body": "It would be great to tag notes and filter the list by tag.",
        "labels": [],
        "author": {"login": "cy", "name": "Cy", "id": "U3", "is_bot": False},
        "createdAt": "2025-01-04T10:00:00Z",
    },
    {
        "number": 14,
        "title": "Sync crashes when offline instead of printing an error",
        "body": "On a train without wifi, `notes sync` dies with a long ConnectionError "
        "traceback. A short message would be better.",
        "labels": [],
        "author": {"login": "dee", "name": "Dee", "id": "U4", "is_bot": False},
        "createdAt": "2025-01-05T10:00:00Z",
    },
]
PLANTED_DUPLICATE = (14, 11)
_HEADING = re.compile(r"^# Issue #(\d+): (.*)$", re.MULTILINE)
_CANDIDATE = re.compile(r"^- #(\d+): (.*) \(similarity", re.MULTILINE)


def task_of(request: dict[str, Any]) -> str:
    texts = [
        part.get("text", "")
        for item in request["input"]
        if item.get("type") == "message" and item.get("role") == "user"
        for part in item["content"]
    ]
    return str(next(text for text in reversed(texts) if "# Issue #" in text))


def label_enum(request: dict[str, Any]) -> list[str]:
    (tool,) = [t for t in request["tools"] if t.get("name") == "report_result"]
    enum: list[str] = tool["parameters"]["properties"]["labels"]["items"]["enum"]
    return enum


def developer_text(request: dict[str, Any]) -> str:
    return "\n".join(
        part.get("text", "")
        for item in request["input"]
        if item.get("type") == "message" and item.get("role") == "developer"
        for part in item["content"]
    )


def outputs(request: dict[str, Any]) -> list[str]:
    return [i["output"] for i in request["input"] if i.get("type") == "function_call_output"]


def words(title: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", title.lower()) if len(w) > 3}


def triager(request: dict[str, Any]) -> Any:
    """Triages like a model: reads its issue, the candidates and the label set, then reports.

    For the issue that mentions a traceback it first reports a label outside the set, and fixes
    the result when `report_result` answers with the error. It never reports on "tags" issues
    when told to stay silent (`SILENT` in the body).
    """
    task = task_of(request)
    heading = _HEADING.search(task)
    assert heading is not None
    number, title = int(heading.group(1)), heading.group(2)
    seen = outputs(request)
    if seen and seen[-1].startswith("result recorded"):
        return f"Triaged #{number}."
    if "SILENT" in task:
        return "I cannot decide."
    allowed = label_enum(request)
    labels: list[str] = [
        name for name in ("bug", "sync") if name in allowed and "crash" in title.lower()
    ]
    labels = labels or (["question"] if "?" in title else ["enhancement"])
    if "traceback" in title.lower() and not seen:
        labels = ["urgent", *labels]
    duplicate_of, reason = None, "No candidate reports the same problem."
    for other, other_title in _CANDIDATE.findall(task.partition("## Possible duplicates")[2]):
        if int(other) < number and len(words(title) & words(other_title)) >= 3:
            duplicate_of, reason = int(other), f"#{other} reports the same offline sync crash."
    result = {
        "labels": labels,
        "labels_reason": "The issue is about these areas.",
        "type": "bug" if "crash" in title.lower() else "question" if "?" in title else "feature",
        "type_reason": "From what the issue describes.",
        "priority": "p1" if "crash" in title.lower() else "p3",
        "priority_reason": "A crash without a workaround ranks high.",
        "duplicate_of": duplicate_of,
        "duplicate_reason": reason,
        "confidence": 0.8,
    }
    call = {"type": "function_call", "name": "report_result", "arguments": json.dumps(result)}
    return [call]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "labels.yaml").write_text(LABELS_YAML)
    (root / "issues.json").write_text(json.dumps(ISSUES, indent=2))
    return root


TRIAGE = ["triage", "--issues", "issues.json", "--labels", "labels.yaml"]


@pytest.mark.anyio
async def test_triage_writes_a_valid_report_with_labels_from_the_set_and_the_duplicate(
    workspace: Path, tmp_path: Path
) -> None:
    async with serve_model_server(triager) as server:
        env = corral_env(tmp_path / "home", server.base_url)
        result = await run_corral([*TRIAGE, "--run-id", "run-tri"], env=env, cwd=workspace)
        requests = [r["normalised"] for r in server.requests]
    assert result.code == 0, result.stderr
    assert "corral triage: run run-tri (4 items)" in result.stderr
    assert "4 triaged, 0 failed of 4 issues; 1 duplicates" in result.stderr
    assert result.stderr.count(" completed · ") == 4, "one progress line per issue"
    assert re.search(r"\] #\d+ completed · ", result.stderr), "each names its issue"
    out = workspace / "corral-triage"
    report = json.loads((out / "triage.json").read_text())
    Draft202012Validator(triage_json_schema()).validate(report)
    by_number = {issue["number"]: issue for issue in report["issues"]}
    assert set(by_number) == {11, 12, 13, 14}
    assert all(set(i["labels"]) <= set(report["labels"]) for i in report["issues"])
    assert by_number[11]["labels"] == ["bug", "sync"], "the unknown label was fixed"
    duplicate, original = PLANTED_DUPLICATE
    assert by_number[duplicate]["duplicate_of"] == original
    assert by_number[original]["duplicate_of"] is None
    assert original in [c["number"] for c in by_number[duplicate]["candidates"]]
    refusals = {o for r in requests for o in outputs(r) if o.startswith("invalid result")}
    assert len(refusals) == 1 and "$.labels[0]: 'urgent' is not one of" in refusals.pop()
    assert {t["name"] for r in requests for t in r["tools"]} == {"report_result"}
    developer = {developer_text(r) for r in requests}
    assert len(developer) == 1, "every worker shares the same developer instructions"
    shared = developer.pop()
    assert "## Sandbox: read-only" in shared
    assert "- `sync`: Fetching data from the server" in shared
    markdown = (out / "triage.md").read_text()
    assert "| # | Title | Type | Priority | Labels | Duplicate of | Confidence |" in markdown
    assert "| #11 | Sync crashes with a traceback when the laptop is offline | bug | p1 |" in (
        markdown
    )
    assert "- #14 (Sync crashes when offline instead of printing an error) duplicates #11" in (
        markdown
    )


@pytest.mark.anyio
async def test_jsonl_input_is_read_and_an_issue_left_untriaged_fails_the_exit_code(
    workspace: Path, tmp_path: Path
) -> None:
    issues = [dict(ISSUES[1]), dict(ISSUES[2], body="SILENT please.")]
    (workspace / "issues.jsonl").write_text("".join(json.dumps(i) + "\n" for i in issues))
    args = ["triage", "--issues", "issues.jsonl", "--labels", "labels.yaml", "--out", "rep"]
    async with serve_model_server(triager) as server:
        result = await run_corral(
            args, env=corral_env(tmp_path / "home", server.base_url), cwd=workspace
        )
    assert result.code == 1, result.stderr
    assert "1 triaged, 1 failed of 2 issues" in result.stderr
    assert "#13 not triaged: the worker finished without calling report_result" in result.stderr
    report = json.loads((workspace / "rep" / "triage.json").read_text())
    Draft202012Validator(triage_json_schema()).validate(report)
    assert [i["number"] for i in report["issues"]] == [12]
    assert report["failed"][0]["number"] == 13
    assert "## Not triaged" in (workspace / "rep" / "triage.md").read_text()


def test_a_malformed_issue_record_is_named_by_its_position_and_nothing_runs(
    workspace: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    broken = [ISSUES[0], ISSUES[1], {"title": "no number here", "body": ""}]
    one_per_line = ",\n".join(json.dumps(issue) for issue in broken)
    (workspace / "issues.json").write_text(f"[\n{one_per_line}\n]\n")
    home = in_workspace(monkeypatch, workspace, tmp_path)
    assert main(TRIAGE) == 2
    stderr = capsys.readouterr().err
    assert "issues.json: the issue at index 2, line 4 is malformed: it has no 'number'" in stderr
    assert "Traceback" not in stderr
    assert not (home / "journal.sqlite").exists(), "no run was journaled"
    assert not (workspace / "corral-triage").exists()


def test_a_label_defined_twice_is_refused_with_both_lines(
    workspace: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (workspace / "labels.yaml").write_text(LABELS_YAML + "Bug: Broken again\n")
    home = in_workspace(monkeypatch, workspace, tmp_path)
    assert main(TRIAGE) == 2
    stderr = capsys.readouterr().err
    assert "labels.yaml: label 'bug'/'Bug' is defined twice, at line 1 and line 6" in stderr
    assert not (home / "journal.sqlite").exists(), "no run was journaled"


def in_workspace(monkeypatch: pytest.MonkeyPatch, workspace: Path, tmp_path: Path) -> Path:
    """Run `main` in `workspace` with its own corral home (returned) and a dead endpoint."""
    for name, value in corral_env(tmp_path / "home", "http://127.0.0.1:9/v1").items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(workspace)
    return tmp_path / "home"


@pytest.mark.anyio
async def test_the_demo_policy_triages_the_bundled_issues_and_finds_the_planted_duplicates(
    tmp_path: Path,
) -> None:
    args = ["triage", "--issues", str(DEMO_ISSUES), "--labels", str(DEMO_LABELS)]
    async with serve_model_server(triage_demo_policy) as server:
        env = corral_env(tmp_path / "home", server.base_url)
        result = await run_corral([*args, "--out", "out"], env=env, cwd=tmp_path)
    assert result.code == 0, result.stderr
    report = json.loads((tmp_path / "out" / "triage.json").read_text())
    Draft202012Validator(triage_json_schema()).validate(report)
    assert report["totals"]["triaged"] == report["totals"]["issues"] >= 30
    found = {(i["number"], i["duplicate_of"]) for i in report["issues"] if i["duplicate_of"]}
    assert found == {(121, 103), (127, 108), (136, 111), (140, 119)}
    assert all("keyword rules, not a model" in i["rationale"]["type"] for i in report["issues"])
