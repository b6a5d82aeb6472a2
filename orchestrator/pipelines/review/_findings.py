"""A review finding: the schema reviewers report it through, and the value the report is made of.

`FINDINGS_SCHEMA` is the fan-out's result schema, so a malformed finding goes back to the
reviewer with the error. `findings_from_result` reads one reviewer's result into `Finding`s,
with paths normalised to the repository root (reviewers may write `./x`, `b/x` or an absolute
path inside their checkout).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import PurePosixPath
from typing import Any


class Severity(StrEnum):
    """How much a finding matters, most first."""

    CRITICAL = "critical"
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"
    INFO = "info"

    @property
    def rank(self) -> int:
        """0 for critical, growing as it matters less."""
        return list(Severity).index(self)

    def at_least(self, other: Severity) -> bool:
        return self.rank <= other.rank


_FINDING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1, "description": "From the repository root."},
        "start_line": {"type": "integer", "minimum": 1, "description": "In the NEW file."},
        "end_line": {"type": "integer", "minimum": 1, "description": "In the NEW file."},
        "severity": {"enum": [s.value for s in Severity]},
        "category": {
            "type": "string",
            "minLength": 1,
            "description": "e.g. correctness, security, error-handling, performance",
        },
        "title": {"type": "string", "minLength": 1, "description": "One line."},
        "explanation": {
            "type": "string",
            "minLength": 1,
            "description": "What triggers the failure and what goes wrong.",
        },
        "suggested_patch": {
            "type": "string",
            "description": "Optional: the code that should replace lines start_line..end_line "
            "(the new text itself, not a diff).",
        },
    },
    "required": ["path", "start_line", "end_line", "severity", "category", "title", "explanation"],
    "additionalProperties": False,
}

FINDINGS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"findings": {"type": "array", "items": _FINDING_SCHEMA}},
    "required": ["findings"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class Fix:
    """A suggested replacement for whole lines `start_line`-`end_line` of the new file."""

    start_line: int
    end_line: int
    text: str

    @property
    def span(self) -> str:
        return _span(self.start_line, self.end_line)


@dataclass(frozen=True)
class Finding:
    """One problem at lines `start_line`-`end_line` of `path` (new file, from the repo root)."""

    path: str
    start_line: int
    end_line: int
    severity: Severity
    category: str
    title: str
    explanation: str
    fix: Fix | None = None
    unit: str = ""
    """The unit whose reviewer reported it (for the report, and to explain a drop)."""
    merged: int = 1
    """How many reported findings this one stands for, once near-duplicates are merged."""

    @property
    def lines(self) -> str:
        if self.start_line == self.end_line:
            return str(self.start_line)
        return f"{self.start_line}-{self.end_line}"

    @property
    def span(self) -> str:
        return _span(self.start_line, self.end_line)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "severity": self.severity.value,
            "category": self.category,
            "title": self.title,
            "explanation": self.explanation,
            "suggested_patch": self.fix.text if self.fix is not None else None,
            "merged": self.merged,
            "unit": self.unit,
        }


def _span(start: int, end: int) -> str:
    """`line 7` or `lines 7-9`, for sentences."""
    return f"line {start}" if start == end else f"lines {start}-{end}"


def findings_from_result(
    result: Any, *, unit: str, roots: Sequence[str], known: Iterable[str]
) -> list[Finding]:
    """The findings of one schema-valid reviewer result."""
    known_paths = frozenset(known)
    raw: Sequence[Mapping[str, Any]] = (
        result.get("findings", []) if isinstance(result, dict) else []
    )
    return [_finding(entry, unit, roots, known_paths) for entry in raw]


def _finding(
    entry: Mapping[str, Any], unit: str, roots: Sequence[str], known: frozenset[str]
) -> Finding:
    start, end = int(entry["start_line"]), int(entry["end_line"])
    start, end = min(start, end), max(start, end)
    patch = entry.get("suggested_patch")
    fix = Fix(start, end, patch.rstrip("\n")) if isinstance(patch, str) and patch.strip() else None
    return Finding(
        path=normalise_path(str(entry["path"]), roots, known),
        start_line=start,
        end_line=end,
        severity=Severity(entry["severity"]),
        category=" ".join(str(entry["category"]).split()),
        title=" ".join(str(entry["title"]).split()),
        explanation=str(entry["explanation"]).strip(),
        fix=fix,
        unit=unit,
    )


def normalise_path(raw: str, roots: Sequence[str], known: frozenset[str]) -> str:
    """`raw` made relative to the repository: checkout roots, `./` and diff prefixes removed."""
    path = raw.strip().replace("\\", "/")
    for root in roots:
        prefix = root.rstrip("/") + "/"
        if path.startswith(prefix):
            path = path[len(prefix) :]
            break
    path = str(PurePosixPath(path)) if path else path
    if path not in known and path[:2] in ("a/", "b/") and path[2:] in known:
        path = path[2:]
    return path
