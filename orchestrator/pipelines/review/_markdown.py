"""The review as Markdown: a summary, a table of findings, each finding in full, and what was
left out (findings outside the change, files and units that were not reviewed)."""

from __future__ import annotations

from pathlib import PurePosixPath

from ._findings import Finding, Severity
from ._report import ReviewReport
from ._units import CONTEXT_TOLERANCE, fence_for

_LANGUAGES = {
    ".py": "python",
    ".js": "javascript",
    ".ts": "typescript",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".rb": "ruby",
    ".c": "c",
    ".h": "c",
    ".cpp": "cpp",
    ".sh": "bash",
}
"""Info strings for the fence of a suggested replacement, so viewers highlight it."""


def render_markdown(report: ReviewReport, fail_on: Severity | None) -> str:
    parts = [_head(report, fail_on), _table(report.findings)]
    parts.extend(_finding(n, f) for n, f in enumerate(report.findings, start=1))
    parts.append(_left_out(report))
    return "\n\n".join(p for p in parts if p).rstrip() + "\n"


def _head(report: ReviewReport, fail_on: Severity | None) -> str:
    source = report.source
    where = f"`{source.label}`"
    if source.base and source.head:
        where += f" ({source.base[:12]}..{source.head[:12]})"
    lines = [
        f"# corral review: {_escape(source.label)}",
        "",
        f"Change: {where} in `{report.root}`.",
        f"Result: {report.summary_line()}.",
    ]
    if fail_on is not None:
        failing = len(report.at_or_above(fail_on))
        lines.append(f"At or above `{fail_on}`: {failing}.")
    if not report.complete:
        failed = len(report.failed_units)
        noun = "unit was" if failed == 1 else "units were"
        lines.append(f"**Incomplete:** {failed} {noun} not reviewed.")
    lines.append("Line numbers are those of the new version of each file.")
    return "\n".join(lines)


def _table(findings: tuple[Finding, ...]) -> str:
    if not findings:
        return "No findings."
    rows = ["| # | severity | where | category | title |", "|---|---|---|---|---|"]
    for number, f in enumerate(findings, start=1):
        rows.append(
            f"| {number} | {f.severity} | `{f.path}:{f.lines}` | {_cell(f.category)} | "
            f"{_cell(f.title)} |"
        )
    return "\n".join(rows)


def _finding(number: int, f: Finding) -> str:
    merged = f"; merged from {f.merged} reports" if f.merged > 1 else ""
    lines = [
        f"## {number}. [{f.severity}] {_escape(f.title)}",
        "",
        f"`{f.path}` {f.span} · {_escape(f.category)}{merged}",
        "",
        f.explanation,
    ]
    if f.fix is not None:
        fence = fence_for(f.fix.text)
        opening = fence + _LANGUAGES.get(PurePosixPath(f.path).suffix, "")
        lines += ["", f"Suggested replacement for {f.fix.span}:", "", opening, f.fix.text, fence]
    return "\n".join(lines)


def _left_out(report: ReviewReport) -> str:
    lines: list[str] = []
    if report.dropped:
        lines += [
            "## Left out",
            "",
            f"Findings outside the change (more than {CONTEXT_TOLERANCE} lines from any changed "
            "line, or in a file it does not touch) are not kept:",
            "",
        ]
        lines += [
            f"- `{d.finding.path}:{d.finding.lines}` {_escape(d.finding.title)}: {d.reason}"
            for d in report.dropped
        ]
    not_reviewed = [f"- {u.label}: {u.error or u.status}" for u in report.failed_units]
    not_reviewed += [f"- `{path}`: {reason}" for path, reason in report.skipped]
    if not_reviewed:
        lines += ["", "## Not reviewed", "", *not_reviewed]
    return "\n".join(lines).strip()


def _cell(text: str) -> str:
    return _escape(text).replace("|", "\\|")


def _escape(text: str) -> str:
    return " ".join(text.split())
