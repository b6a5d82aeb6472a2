"""The Markdown summary of a triage: a table of every issue, counts, duplicates, and the reasons.

The table is ordered by priority (most urgent first), then by issue number. Titles and reasons
come from the tracker and the model, so table cells are escaped and kept on one line.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from ._report import TriagedIssue, TriageReport
from ._schema import PRIORITIES, TYPES

_TABLE_HEAD = (
    "| # | Title | Type | Priority | Labels | Duplicate of | Confidence |\n"
    "|---:|---|---|---|---|---|---:|"
)


def render_markdown(report: TriageReport) -> str:
    """The whole `triage.md`."""
    parts = [
        f"# Triage of {report.totals()['issues']} issues",
        f"Run `{report.run_id}`: {report.summary_line()}.",
        _issue_table(report.issues),
        _counts(report),
        _duplicates(report),
        _failures(report),
        _reasons(report.issues),
    ]
    return "\n\n".join(part for part in parts if part) + "\n"


def _issue_table(issues: Iterable[TriagedIssue]) -> str:
    ordered = sorted(issues, key=lambda i: (PRIORITIES.index(i.priority), i.number))
    if not ordered:
        return "## Issues\n\nNo issue was triaged."
    rows = [
        f"| #{i.number} | {_cell(i.title)} | {i.type} | {i.priority} | "
        f"{_cell(', '.join(i.labels)) or '-'} | "
        f"{f'#{i.duplicate_of}' if i.duplicate_of is not None else '-'} | {i.confidence:.2f} |"
        for i in ordered
    ]
    return "## Issues\n\n" + "\n".join([_TABLE_HEAD, *rows])


def _counts(report: TriageReport) -> str:
    if not report.issues:
        return ""
    by_type = Counter(i.type for i in report.issues)
    by_priority = Counter(i.priority for i in report.issues)
    by_label = Counter(label for i in report.issues for label in i.labels)
    return "\n\n".join(
        [
            "## Counts",
            _count_table("Type", [(t, by_type[t]) for t in TYPES if by_type[t]]),
            _count_table("Priority", [(p, by_priority[p]) for p in PRIORITIES if by_priority[p]]),
            _count_table(
                "Label", [(name, by_label[name]) for name in report.labels if by_label[name]]
            ),
        ]
    )


def _count_table(heading: str, rows: list[tuple[str, int]]) -> str:
    lines = [f"| {heading} | Issues |", "|---|---:|"]
    lines += [f"| {_cell(name)} | {count} |" for name, count in rows]
    if not rows:
        lines.append("| (none) | 0 |")
    return "\n".join(lines)


def _duplicates(report: TriageReport) -> str:
    titles = {i.number: i.title for i in report.issues} | {f.number: f.title for f in report.failed}
    lines = [
        f"- #{i.number} ({_one_line(i.title)}) duplicates #{i.duplicate_of} "
        f"({_one_line(titles.get(i.duplicate_of or 0, ''))}): {_one_line(i.duplicate_reason)}"
        for i in report.duplicates
    ]
    return "## Duplicates\n\n" + ("\n".join(lines) if lines else "None found.")


def _failures(report: TriageReport) -> str:
    if not report.failed:
        return ""
    lines = [f"- #{f.number} ({_one_line(f.title)}): {_one_line(f.error)}" for f in report.failed]
    return "## Not triaged\n\n" + "\n".join(lines)


def _reasons(issues: Iterable[TriagedIssue]) -> str:
    blocks = [
        f"### #{i.number}: {_one_line(i.title)}\n\n"
        f"- Labels ({', '.join(i.labels) or 'none'}): {_one_line(i.rationale['labels'])}\n"
        f"- Type ({i.type}): {_one_line(i.rationale['type'])}\n"
        f"- Priority ({i.priority}): {_one_line(i.rationale['priority'])}\n"
        f"- Duplicates: {_one_line(i.duplicate_reason)}"
        for i in sorted(issues, key=lambda i: i.number)
    ]
    return "## Reasons\n\n" + "\n\n".join(blocks) if blocks else ""


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _cell(text: str) -> str:
    return _one_line(text).replace("\\", "\\\\").replace("|", "\\|")
