"""A rule-based stand-in for a reviewing model, for `corral demo`: not a model, and it says so.

It works the way a reviewer would: it reads the changed file with `read_file`, looks for a few
well-known defects line by line (a loop that stops one short, SQL built by concatenation, a file
opened and never closed, an exception swallowed whole), reports what it found through
`report_result`, and ends with a one-line summary. Every decision is a regular expression.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_TASK_PATH = re.compile(r"Review this change to `([^`]+)`")
_NUMBERED = re.compile(r"^L(\d+): ?(.*)$")


@dataclass(frozen=True)
class Rule:
    pattern: re.Pattern[str]
    severity: str
    category: str
    title: str
    explanation: str


RULES = (
    Rule(
        re.compile(r"range\(len\(\w[\w.]*\) - 1\)"),
        "high",
        "correctness",
        "Loop skips the last element",
        "`range(len(x) - 1)` stops one short, so the last element is never processed.",
    ),
    Rule(
        re.compile(r"""(SELECT|INSERT|UPDATE|DELETE)\b.*['"]\s*\+\s*\w+"""),
        "critical",
        "security",
        "SQL built by string concatenation",
        "User input is pasted into the SQL text, so a crafted value can change the query "
        "(SQL injection). Pass it as a parameter instead.",
    ),
    Rule(
        re.compile(r"^\s*\w+\s*=\s*open\("),
        "medium",
        "resource-leak",
        "File opened without being closed",
        "The handle is never closed, so the write may not be flushed; use `with open(...)`.",
    ),
    Rule(
        re.compile(r"^\s*except Exception:\s*$"),
        "medium",
        "error-handling",
        "Every error is swallowed",
        "Catching `Exception` and passing hides real failures (a missing or unreadable "
        "receipt looks like an empty one).",
    ),
)


def review_the_change(request: dict[str, Any]) -> Any:
    """One step of a rule-based review: read the file, then report, then sum up."""
    path = _task_path(request)
    calls = {i.get("name") for i in request["input"] if i.get("type") == "function_call"}
    outputs = [i for i in request["input"] if i.get("type") == "function_call_output"]
    if "read_file" not in calls:
        return [_call("read", "read_file", {"path": path})]
    if "report_result" not in calls:
        findings = scan(path, outputs[0]["output"])
        return [_call("report", "report_result", {"findings": findings})]
    return f"Reviewed {path} with corral's rule-based demo reviewer (not a model)."


def scan(path: str, numbered_text: str) -> list[dict[str, Any]]:
    """Findings for the lines of a `read_file` answer (`L12: text`) that a rule matches."""
    findings = []
    for raw in numbered_text.splitlines():
        match = _NUMBERED.match(raw)
        if match is None:
            continue
        line, text = int(match.group(1)), match.group(2)
        for rule in RULES:
            if rule.pattern.search(text):
                findings.append(_finding(path, line, rule))
    return findings


def _finding(path: str, line: int, rule: Rule) -> dict[str, Any]:
    return {
        "path": path,
        "start_line": line,
        "end_line": line,
        "severity": rule.severity,
        "category": rule.category,
        "title": rule.title,
        "explanation": rule.explanation,
    }


def _task_path(request: dict[str, Any]) -> str:
    for item in request["input"]:
        for part in item.get("content") or []:
            found = _TASK_PATH.search(str(part.get("text", "")))
            if found:
                return found.group(1)
    return ""


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    args = json.dumps(arguments)
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": args}
