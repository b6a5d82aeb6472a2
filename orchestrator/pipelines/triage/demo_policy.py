"""A rule-based stand-in for a triage model, for the offline demo. It is NOT a model.

`triage_demo_policy` is a policy of the scripted model server: a plain, deterministic function of
the request. It reads the issue and its candidate duplicates from the task text and the label set
from the `report_result` tool's schema, picks labels, type and priority by keyword rules,
confirms a candidate as a duplicate when the two titles share most of their words, and calls
`report_result`; once that is answered, it ends with a one-line message. Its reasons say they
come from keyword rules, so nobody mistakes its output for a model's judgement.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._task import TASK_HEADING

RULE_NOTE = "(keyword rules, not a model)"
DEMO_DATA = Path(__file__).resolve().parents[2] / "demo" / "data"
DEMO_ISSUES = DEMO_DATA / "issues.json"
"""40 issues of pocketlog, a fictional expense tracker, in `gh issue list --json` shape."""
DEMO_LABELS = DEMO_DATA / "labels.yaml"
_HEADING = re.compile(r"^# Issue #(\d+): (.*)$", re.MULTILINE)
_CANDIDATE = re.compile(r"^- #(\d+): (.*) \(similarity [-\d.]+\)$", re.MULTILINE)
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    _WORD.findall(
        "a an and are as at be by can do for from has have how i in is it its my of on or the "
        "there to use when with without"
    )
)
DUPLICATE_OVERLAP = 0.5
"""Share of the shorter title's words that the other title must also have."""

# Each rule: a name and the "|"-separated phrases that pick it; the first rule that matches wins.
_TYPE_RULES = (
    ("docs", "readme|document|typo|contributing|help text|guide"),
    ("chore", "bump |migrate the test| ci|deprecated|refactor|upgrade flask"),
    (
        "bug",
        "crash|error|fails|fail |broken|wrong|off by|twice|ignores|not render|deletes|500|"
        "not marked|links to localhost|doesn't work|puts everything|takes more than|keeps growing",
    ),
    ("feature", "add |support|export to|split |attach|shortcut|dark mode|sync with"),
    ("question", "?|how do|can i|where |is there"),
)
_LABEL_RULES = (
    ("ui", "web ui|web interface|dark|theme|chart|date picker|dashboard|keyboard|page"),
    ("import-export", "csv|import|export|ofx|qif|mint"),
    ("sync", "sync"),
    ("performance", "slow|seconds to load|takes more than|memory|swapping"),
    ("packaging", "docker|raspberry|arm64|pip install|requires-python"),
    ("security", "cookie|password|secure|leak|token"),
    ("good-first-issue", "typo|--json"),
)
_TYPE_LABEL = {
    "bug": "bug",
    "feature": "enhancement",
    "question": "question",
    "docs": "documentation",
}
_URGENT = "deleted with it|lost data|data loss|not marked secure|cookie could leak"
_SERIOUS = "crash|traceback|refuses to start|twice|500|cannot reset|fails"


@dataclass(frozen=True)
class _Issue:
    number: int
    title: str
    body: str
    candidates: tuple[tuple[int, str], ...]


def triage_demo_policy(request: dict[str, Any]) -> Any:
    """Report a rule-based triage of the request's issue, then end the turn."""
    issue = _read_issue(request)
    if issue is None:
        return "There is no issue in this task to triage."
    if any(item.get("type") == "function_call_output" for item in request["input"]):
        return f"Triaged issue #{issue.number} {RULE_NOTE}."
    result = triage_by_rules(
        issue.title, issue.body, issue.number, issue.candidates, _labels(request)
    )
    return [
        {
            "type": "function_call",
            "call_id": f"triage-{issue.number}",
            "name": "report_result",
            "arguments": json.dumps(result),
        }
    ]


def triage_by_rules(
    title: str,
    body: str,
    number: int,
    candidates: tuple[tuple[int, str], ...],
    label_set: tuple[str, ...],
) -> dict[str, Any]:
    """The `report_result` arguments the rules give for one issue."""
    kind = _first_match(_TYPE_RULES, title.lower()) or _first_match(_TYPE_RULES, body.lower())
    kind = kind or "bug"
    labels = _labels_for(title, body, kind, label_set)
    priority = _priority(kind, f"{title}\n{body}".lower())
    duplicate, duplicate_reason = _duplicate(number, title, candidates)
    matched = ", ".join(labels) or "no label"
    return {
        "labels": labels,
        "labels_reason": f"The title's keywords match {matched} {RULE_NOTE}.",
        "type": kind,
        "type_reason": f"The wording reads as a {kind} {RULE_NOTE}.",
        "priority": priority,
        "priority_reason": f"{_PRIORITY_WHY[priority]} {RULE_NOTE}.",
        "duplicate_of": duplicate,
        "duplicate_reason": duplicate_reason,
        "confidence": 0.5 if len(body.split()) < 15 else 0.7,
    }


_PRIORITY_WHY = {
    "p0": "It reports data loss or a security problem",
    "p1": "It reports a crash or a failure without an easy workaround",
    "p2": "An ordinary bug or a feature request",
    "p3": "A question, documentation, housekeeping or a cosmetic problem",
}


def _first_match(rules: tuple[tuple[str, str], ...], text: str) -> str | None:
    return next((name for name, phrases in rules if _mentions(text, phrases)), None)


def _mentions(text: str, phrases: str) -> bool:
    padded = f" {text} "
    return any(phrase in padded for phrase in phrases.split("|"))


def _labels_for(title: str, body: str, kind: str, label_set: tuple[str, ...]) -> list[str]:
    # Topic labels come from the title alone: bodies mention too much in passing.
    chosen = [_TYPE_LABEL[kind]] if kind in _TYPE_LABEL else []
    chosen += [name for name, phrases in _LABEL_RULES if _mentions(title.lower(), phrases)]
    if kind == "bug" and len(body.split()) < 15:
        chosen.append("needs-info")
    return [name for name in dict.fromkeys(chosen) if name in label_set]


def _priority(kind: str, text: str) -> str:
    if _mentions(text, _URGENT):
        return "p0"
    if kind == "bug" and _mentions(text, _SERIOUS):
        return "p1"
    if kind in ("bug", "feature") and "cosmetic" not in text:
        return "p2"
    return "p3"


def _duplicate(
    number: int, title: str, candidates: tuple[tuple[int, str], ...]
) -> tuple[int | None, str]:
    if not candidates:
        return None, "No candidates were listed."
    reasons: list[str] = []
    confirmed: int | None = None
    for other, other_title in candidates:
        overlap = _overlap(title, other_title)
        same = overlap >= DUPLICATE_OVERLAP
        if same and other < number and confirmed is None:
            confirmed = other
            verdict = "same report (duplicate)"
        elif same:
            verdict = "same report, but this issue is the older one"
        else:
            verdict = "different problem"
        reasons.append(f"#{other}: {verdict}, titles share {overlap:.0%} of their words")
    return confirmed, "; ".join(reasons) + f" {RULE_NOTE}."


def _overlap(a: str, b: str) -> float:
    words_a, words_b = _words(a), _words(b)
    if not words_a or not words_b:
        return 0.0
    return len(words_a & words_b) / min(len(words_a), len(words_b))


def _words(text: str) -> set[str]:
    return {_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP}


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _read_issue(request: dict[str, Any]) -> _Issue | None:
    for text in reversed(_user_texts(request)):
        if TASK_HEADING in text:
            return _parse_task(text)
    return None


def _parse_task(text: str) -> _Issue | None:
    heading = _HEADING.search(text)
    if heading is None:
        return None
    issue_part, _, duplicates = text[heading.end() :].partition("\n## Possible duplicates")
    candidates = tuple((int(n), t) for n, t in _CANDIDATE.findall(duplicates))
    first, _, rest = issue_part.strip().partition("\n")
    body = rest if first.startswith("(") and first.endswith(")") else issue_part
    return _Issue(int(heading.group(1)), heading.group(2), body.strip(), candidates)


def _user_texts(request: dict[str, Any]) -> list[str]:
    texts = []
    for item in request.get("input", []):
        if item.get("type") == "message" and item.get("role") == "user":
            parts = item.get("content") or []
            texts.append("".join(p.get("text", "") for p in parts if isinstance(p, dict)))
    return texts


def _labels(request: dict[str, Any]) -> tuple[str, ...]:
    """The label set, read off `report_result`'s schema as a model would see it."""
    for tool in request.get("tools", []):
        if isinstance(tool, dict) and tool.get("name") == "report_result":
            labels = (tool.get("parameters") or {}).get("properties", {}).get("labels", {})
            return tuple(labels.get("items", {}).get("enum", []))
    return ()
