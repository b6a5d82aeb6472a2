"""What a refactor run produced: one outcome per worker, the result branch, and the summary.

A worker's status says what became of its changes: `merged` into the result branch, `unchanged`
(its check passed and it changed nothing), or why they were kept out (`check failed`,
`merge conflict`, `wrote outside its files`, `failed`). Nothing is hidden: the summary shows every
worker's files, status, diffstat and check, and what the model itself reported next to it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._check import CheckResult

PASSED = "passed"
"""Check passed and committed; becomes `merged` or `merge conflict` once merged."""
MERGED = "merged"
UNCHANGED = "unchanged"
CHECK_FAILED = "check failed"
CONFLICT = "merge conflict"
OUTSIDE = "wrote outside its files"
FAILED = "failed"
OK_STATUSES = frozenset({MERGED, UNCHANGED})
_SHOWN_FILES = 8


@dataclass(frozen=True)
class Attempt:
    """One agent's go at a write set."""

    agent_id: str
    status: str
    error: str | None
    report: dict[str, Any] | None
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class WorkerOutcome:
    index: int
    files: tuple[str, ...]
    branch: str
    status: str
    check: CheckResult | None = None
    attempts: tuple[Attempt, ...] = ()
    commit: str | None = None
    changed: tuple[str, ...] = ()
    diffstat: str = ""
    outside: tuple[str, ...] = ()
    detail: str | None = None
    """What else to know: the conflicting files, an error, an agent that did not complete."""

    @property
    def ok(self) -> bool:
        return self.status in OK_STATUSES

    @property
    def report(self) -> dict[str, Any] | None:
        """What the last agent handed in through `report_result`, if anything."""
        return self.attempts[-1].report if self.attempts else None

    def lines(self) -> list[str]:
        """The worker's block in the summary."""
        lines = [f"worker {self.index}: {self.status}", f"  files: {_files(self.files)}"]
        branch = f"{self.branch} at {self.commit[:12]}" if self.commit else "no commit"
        lines.append(f"  branch: {branch}")
        lines.append(f"  changes: {self.diffstat or 'none'}")
        if self.check is not None:
            lines.append(f"  check: {self.check.describe()}{self._claim()}")
        if self.outside:
            lines.append(f"  changed outside its files (not committed): {_files(self.outside)}")
        if self.detail:
            lines.append(f"  note: {self.detail}")
        if self.check is not None and not self.check.passed and self.check.tail():
            lines += ["  check output (last lines):", *_indented(self.check.tail(), "    ")]
        report = self.report
        if report is not None:
            lines.append(f"  worker's summary: {str(report.get('summary', '')).strip()}")
        if len(self.attempts) > 1:
            lines.append(f"  attempts: {len(self.attempts)}")
        return lines

    def _claim(self) -> str:
        report = self.report
        if report is None:
            return "; the worker reported no result"
        said = "passed" if report.get("check_passed") else "failed"
        return f"; the worker said it {said}"

    def to_json(self) -> dict[str, Any]:
        return {
            "worker": self.index,
            "status": self.status,
            "files": list(self.files),
            "branch": self.branch,
            "commit": self.commit,
            "changed": list(self.changed),
            "diffstat": self.diffstat,
            "outside": list(self.outside),
            "check": self.check.to_json() if self.check is not None else None,
            "detail": self.detail,
            "report": self.report,
            "attempts": [a.agent_id for a in self.attempts],
        }


@dataclass(frozen=True)
class RefactorOutcome:
    run_id: str
    repo: Path
    base: str
    branch: str | None
    """The result branch, or None when no worker's changes were merged."""
    workers: tuple[WorkerOutcome, ...]
    merged_check: CheckResult | None
    """The check on the merged result (None when nothing was merged)."""
    journal: Path

    @property
    def ok(self) -> bool:
        """Every worker merged or unchanged, and the merged result passes the check."""
        merged_ok = self.merged_check is None or self.merged_check.passed
        return merged_ok and all(worker.ok for worker in self.workers)

    def summary(self) -> str:
        count = len(self.workers)
        lines = [f"corral refactor: run {self.run_id}, {count} workers, base {self.base[:12]}", ""]
        for worker in self.workers:
            lines += [*worker.lines(), ""]
        lines += self._result_lines()
        return "\n".join(lines)

    def _result_lines(self) -> list[str]:
        if self.branch is None:
            return ["result: no branch was made: no worker's changes were merged"]
        merged = [str(w.index) for w in self.workers if w.status == MERGED]
        lines = [f"result: branch {self.branch} has the changes of worker(s) {', '.join(merged)}"]
        if self.merged_check is not None:
            lines.append(f"  check on the merged result: {self.merged_check.describe()}")
            if not self.merged_check.passed:
                lines += _indented(self.merged_check.tail(), "    ")
        kept_out = [str(w.index) for w in self.workers if not w.ok]
        if kept_out:
            lines.append(f"  kept out: worker(s) {', '.join(kept_out)} (see above)")
        return lines

    def totals(self) -> dict[str, Any]:
        """The run's journaled summary."""
        attempts = [a for w in self.workers for a in w.attempts]
        return {
            "workers": len(self.workers),
            "merged": sum(1 for w in self.workers if w.status == MERGED),
            "kept_out": sum(1 for w in self.workers if not w.ok),
            "branch": self.branch,
            "input_tokens": sum(a.input_tokens for a in attempts),
            "output_tokens": sum(a.output_tokens for a in attempts),
            "outcomes": [w.to_json() for w in self.workers],
        }


def _files(paths: Sequence[str]) -> str:
    shown = ", ".join(paths[:_SHOWN_FILES])
    more = len(paths) - _SHOWN_FILES
    return f"{shown} and {more} more" if more > 0 else shown


def _indented(text: str, prefix: str) -> list[str]:
    return [f"{prefix}{line}" for line in text.splitlines()]
