"""The triage report: the workers' results gathered per issue, checked, and written as files.

A worker's `duplicate_of` is kept only when it names another issue of the set; two issues that
name each other keep the older one as the original. The report is written as `triage.json`
(conforming to `triage.schema.json`) and `triage.md`, each whole or not at all.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from corral.agents import format_cost

from ...fanout import FanoutOutcome
from ...runs import Issue
from ._index import DuplicateIndex

REPORT_VERSION = 1
JSON_NAME = "triage.json"
MARKDOWN_NAME = "triage.md"


@dataclass(frozen=True)
class TriagedIssue:
    number: int
    title: str
    labels: tuple[str, ...]
    type: str
    priority: str
    duplicate_of: int | None
    duplicate_reason: str
    confidence: float
    rationale: dict[str, str]
    """Why these labels, this type and this priority (the duplicate's reason is its own field)."""
    candidates: tuple[tuple[int, float], ...]
    """The (number, similarity) of each possible duplicate the worker was shown."""

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "title": self.title,
            "labels": list(self.labels),
            "type": self.type,
            "priority": self.priority,
            "duplicate_of": self.duplicate_of,
            "duplicate_reason": self.duplicate_reason,
            "confidence": self.confidence,
            "rationale": {**self.rationale, "duplicate": self.duplicate_reason},
            "candidates": [{"number": n, "similarity": s} for n, s in self.candidates],
        }


@dataclass(frozen=True)
class FailedIssue:
    number: int
    title: str
    error: str


@dataclass(frozen=True)
class TriageReport:
    """Every issue, triaged or failed, in input order; totals from the fan-out."""

    run_id: str
    labels: tuple[str, ...]
    issues: tuple[TriagedIssue, ...]
    failed: tuple[FailedIssue, ...]
    usage: dict[str, Any]

    @property
    def ok(self) -> bool:
        return not self.failed

    @property
    def duplicates(self) -> tuple[TriagedIssue, ...]:
        return tuple(issue for issue in self.issues if issue.duplicate_of is not None)

    def totals(self) -> dict[str, Any]:
        return {
            "issues": len(self.issues) + len(self.failed),
            "triaged": len(self.issues),
            "failed": len(self.failed),
            "duplicates": len(self.duplicates),
            "input_tokens": int(self.usage.get("input_tokens", 0)),
            "cached_tokens": int(self.usage.get("cached_tokens", 0)),
            "output_tokens": int(self.usage.get("output_tokens", 0)),
            "cost_usd": float(self.usage.get("cost_usd", 0.0)),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "version": REPORT_VERSION,
            "run_id": self.run_id,
            "labels": list(self.labels),
            "issues": [issue.to_json() for issue in self.issues],
            "failed": [
                {"number": f.number, "title": f.title, "error": f.error} for f in self.failed
            ],
            "totals": self.totals(),
        }

    def summary_line(self) -> str:
        t = self.totals()
        return (
            f"{t['triaged']} triaged, {t['failed']} failed of {t['issues']} issues; "
            f"{t['duplicates']} duplicates; {t['input_tokens']:,} input tokens "
            f"({t['cached_tokens']:,} cached), {t['output_tokens']:,} output tokens; "
            f"{format_cost(t['cost_usd'])}"
        )


def build_report(
    issues: Sequence[Issue],
    labels: Sequence[str],
    index: DuplicateIndex,
    outcome: FanoutOutcome,
) -> TriageReport:
    """The report of a finished fan-out whose item `i` triaged `issues[i]`."""
    triaged: list[TriagedIssue] = []
    failed: list[FailedIssue] = []
    for issue, item in zip(issues, outcome.items, strict=True):
        if item.status == "done" and isinstance(item.result, dict):
            triaged.append(_triaged(issue, item.result, index))
        else:
            failed.append(FailedIssue(issue.number, issue.title, item.error or item.status))
    known = {issue.number for issue in issues}
    checked = _settle_duplicates([_known_duplicate(t, known) for t in triaged])
    return TriageReport(
        run_id=outcome.run_id,
        labels=tuple(labels),
        issues=tuple(checked),
        failed=tuple(failed),
        usage=outcome.totals(),
    )


def _triaged(issue: Issue, result: dict[str, Any], index: DuplicateIndex) -> TriagedIssue:
    return TriagedIssue(
        number=issue.number,
        title=issue.title,
        labels=tuple(result["labels"]),
        type=result["type"],
        priority=result["priority"],
        duplicate_of=result["duplicate_of"],
        duplicate_reason=result["duplicate_reason"],
        confidence=float(result["confidence"]),
        rationale={
            "labels": result["labels_reason"],
            "type": result["type_reason"],
            "priority": result["priority_reason"],
        },
        candidates=tuple((c.number, c.similarity) for c in index.candidates(issue.number)),
    )


def _known_duplicate(issue: TriagedIssue, known: set[int]) -> TriagedIssue:
    """`issue` without a `duplicate_of` that names itself or no issue of the set."""
    target = issue.duplicate_of
    if target is None or (target in known and target != issue.number):
        return issue
    why = "itself" if target == issue.number else "no issue of this set"
    note = f"{issue.duplicate_reason} [duplicate_of #{target} dropped: it names {why}]"
    return replace(issue, duplicate_of=None, duplicate_reason=note.strip())


def _settle_duplicates(issues: list[TriagedIssue]) -> list[TriagedIssue]:
    """Of two issues naming each other as duplicates, the older stays the original."""
    pointer = {issue.number: issue.duplicate_of for issue in issues}
    settled = []
    for issue in issues:
        target = issue.duplicate_of
        if target is not None and target > issue.number and pointer.get(target) == issue.number:
            note = f"{issue.duplicate_reason} [kept as the original: #{target} duplicates it]"
            issue = replace(issue, duplicate_of=None, duplicate_reason=note)
        settled.append(issue)
    return settled


def write_text_atomically(path: Path, text: str) -> None:
    """Write `text` to `path` whole or not at all (blocking; run it in a thread)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


def report_json_text(report: TriageReport) -> str:
    return json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n"
