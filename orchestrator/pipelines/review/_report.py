"""A finished review: what was reviewed, by whom, what was found, and what was left out.

`ReviewReport` is the one value the Markdown, JSON and SARIF renderings are made from. Each kept
finding carries a fingerprint that stays the same when unrelated edits move its lines: it hashes
the file, the category, the title's words and the text of the finding's first line.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._aggregate import DroppedFinding, title_words
from ._findings import Finding, Severity

REPORT_VERSION = 1


@dataclass(frozen=True)
class ChangeSource:
    """Where the change came from: a git range (with its commits) or a patch file."""

    kind: str
    label: str
    base: str | None = None
    head: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "label": self.label, "base": self.base, "head": self.head}


@dataclass(frozen=True)
class UnitOutcome:
    """How one reviewer's unit ended: `done` with its findings counted, or `failed` and why."""

    label: str
    path: str
    part: int
    parts: int
    status: str
    reported: int = 0
    error: str | None = None
    agent_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "path": self.path,
            "part": self.part,
            "parts": self.parts,
            "status": self.status,
            "findings_reported": self.reported,
            "error": self.error,
            "agent_id": self.agent_id,
        }


@dataclass(frozen=True)
class ReviewReport:
    source: ChangeSource
    root: Path
    findings: tuple[Finding, ...] = ()
    fingerprints: tuple[str, ...] = ()
    """One per finding, same order."""
    dropped: tuple[DroppedFinding, ...] = ()
    units: tuple[UnitOutcome, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()
    """(path, reason) for each changed file with nothing to review in its new version."""
    run_id: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)

    @property
    def failed_units(self) -> tuple[UnitOutcome, ...]:
        return tuple(u for u in self.units if u.status != "done")

    @property
    def complete(self) -> bool:
        return not self.failed_units

    def counts(self) -> dict[str, int]:
        """Kept findings per severity, every severity named, most severe first."""
        found = Counter(f.severity for f in self.findings)
        return {s.value: found.get(s, 0) for s in Severity}

    def at_or_above(self, threshold: Severity | None) -> tuple[Finding, ...]:
        """The findings that fail the review at `threshold` (None: none ever do)."""
        if threshold is None:
            return ()
        return tuple(f for f in self.findings if f.severity.at_least(threshold))

    def summary_line(self) -> str:
        total = len(self.findings)
        parts = [f"{n} {s}" for s, n in self.counts().items() if n]
        detail = f" ({', '.join(parts)})" if parts else ""
        noun = "finding" if total == 1 else "findings"
        reviewed = len(self.units) - len(self.failed_units)
        return f"{total} {noun}{detail}; {reviewed} of {len(self.units)} units reviewed"

    def to_json(self, fail_on: Severity | None) -> dict[str, Any]:
        findings = [
            {**f.to_json(), "fingerprint": fp}
            for f, fp in zip(self.findings, self.fingerprints, strict=True)
        ]
        return {
            "version": REPORT_VERSION,
            "source": self.source.to_json(),
            "repo": str(self.root),
            "run_id": self.run_id,
            "fail_on": fail_on.value if fail_on is not None else None,
            "summary": {
                "findings": len(self.findings),
                "by_severity": self.counts(),
                "failing": len(self.at_or_above(fail_on)),
                "units": len(self.units),
                "units_failed": len(self.failed_units),
                "dropped": len(self.dropped),
            },
            "findings": findings,
            "dropped": [{**d.finding.to_json(), "reason": d.reason} for d in self.dropped],
            "units": [u.to_json() for u in self.units],
            "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
            "usage": self.usage,
        }


def fingerprint(finding: Finding, first_line_text: str | None) -> str:
    """A stable id for `finding` that survives line moves (see the module docstring)."""
    words = " ".join(sorted(title_words(finding.title)))
    text = " ".join((first_line_text or "").split())
    key = "\0".join((finding.path, finding.category.lower(), words, text))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
