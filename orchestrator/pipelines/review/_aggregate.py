"""Aggregating reviewers' findings: keep those in the change, merge near-duplicates, sort.

A finding is kept when its file is in the change and its lines come within
`CONTEXT_TOLERANCE` lines of a line the change adds or changes (or of a place where it removed
lines). Two kept findings are near-duplicates when they are in the same file, their line ranges
overlap, and their titles share most of their words (see `similar_titles`); a merged finding
keeps the higher severity and the wider line range. The result is sorted by severity, then path,
then line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from ._findings import Finding
from ._units import ChangeMap

MIN_SHARED_WORDS = 2
SHARED_WORD_SHARE = 0.6
"""Near-duplicate titles share at least this share of the shorter title's words (and at least
`MIN_SHARED_WORDS` of them), after case, punctuation, stop words and plural `s` are set aside."""
_WORD = re.compile(r"[a-z0-9]+")
_STOP_WORDS = frozenset(
    (
        *("a", "an", "and", "are", "as", "at", "be", "by", "can", "could", "for", "from"),
        *("has", "have", "if", "in", "is", "it", "its", "may", "might", "of", "on", "or"),
        *("the", "this", "that", "to", "was", "when", "where", "which", "while", "will"),
        *("with", "without"),
    )
)


@dataclass(frozen=True)
class DroppedFinding:
    """A finding aggregation left out, and why."""

    finding: Finding
    reason: str


@dataclass(frozen=True)
class Aggregation:
    kept: tuple[Finding, ...]
    dropped: tuple[DroppedFinding, ...]


def aggregate(findings: Iterable[Finding], change: ChangeMap) -> Aggregation:
    """Keep the findings inside `change`, merge near-duplicates, and sort them."""
    inside: list[Finding] = []
    dropped: list[DroppedFinding] = []
    for finding in findings:
        reason = _outside(finding, change)
        if reason is None:
            inside.append(finding)
        else:
            dropped.append(DroppedFinding(finding, reason))
    return Aggregation(tuple(sort_findings(merge_duplicates(inside))), tuple(dropped))


def _outside(finding: Finding, change: ChangeMap) -> str | None:
    if finding.path not in change.paths:
        return f"{finding.path} is not among the files the change touches"
    if not change.covers(finding.path, finding.start_line, finding.end_line):
        return (
            f"{finding.span} {'is' if finding.start_line == finding.end_line else 'are'} more "
            f"than {change.tolerance} lines away from any line the change touches"
        )
    return None


def merge_duplicates(findings: Iterable[Finding]) -> list[Finding]:
    """Findings with near-duplicates merged, in the order each group first appeared."""
    groups: list[Finding] = []
    for finding in findings:
        for at, group in enumerate(groups):
            if is_near_duplicate(group, finding):
                groups[at] = _merge(group, finding)
                break
        else:
            groups.append(finding)
    return groups


def is_near_duplicate(a: Finding, b: Finding) -> bool:
    overlap = a.start_line <= b.end_line and b.start_line <= a.end_line
    return a.path == b.path and overlap and similar_titles(a.title, b.title)


def similar_titles(a: str, b: str) -> bool:
    """Whether two titles say the same thing (see `SHARED_WORD_SHARE`)."""
    words_a, words_b = title_words(a), title_words(b)
    if words_a == words_b:
        return True
    shared = len(words_a & words_b)
    shorter = min(len(words_a), len(words_b))
    return shared >= MIN_SHARED_WORDS and shared >= SHARED_WORD_SHARE * shorter


def title_words(title: str) -> frozenset[str]:
    """The words of a title that carry its meaning, lower-cased, a plural `s` removed."""
    words = (w for w in _WORD.findall(title.lower()) if w not in _STOP_WORDS)
    return frozenset(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words)


def _merge(a: Finding, b: Finding) -> Finding:
    lead, other = (a, b) if a.severity.rank <= b.severity.rank else (b, a)
    return replace(
        lead,
        start_line=min(a.start_line, b.start_line),
        end_line=max(a.end_line, b.end_line),
        fix=lead.fix or other.fix,
        merged=a.merged + b.merged,
    )


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (f.severity.rank, f.path, f.start_line, f.end_line))
