"""The review as SARIF 2.1.0 (OASIS errata01), the format GitHub code scanning and other viewers
read.

One run, whose driver is corral with one rule per finding category. Each result has a level
(error for critical and high, warning for medium, note for low and info), a location relative to
the repository root, a partial fingerprint that survives line moves, and a `fixes` entry when
the reviewer suggested replacement lines. The `invocations` entry says whether every unit was
reviewed.
"""

from __future__ import annotations

import re
from importlib import metadata
from typing import Any
from urllib.parse import quote

from ._findings import Finding, Severity
from ._report import ReviewReport

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA_URI = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
FINGERPRINT_KEY = "corralFinding/v1"
SRCROOT = "%SRCROOT%"
_LEVELS = {
    Severity.CRITICAL: "error",
    Severity.HIGH: "error",
    Severity.MEDIUM: "warning",
    Severity.LOW: "note",
    Severity.INFO: "note",
}
# GitHub reads a rule's `security-severity` (0-10) to rank security alerts.
_SECURITY_SCORES = {
    Severity.CRITICAL: "9.5",
    Severity.HIGH: "8.0",
    Severity.MEDIUM: "5.5",
    Severity.LOW: "3.0",
    Severity.INFO: "0.0",
}
_SLUG = re.compile(r"[^a-z0-9]+")


def sarif_level(severity: Severity) -> str:
    return _LEVELS[severity]


def rule_id(category: str) -> str:
    """The rule a category becomes: lower case, words joined by `-` (`Error handling` is
    `error-handling`)."""
    return _SLUG.sub("-", category.lower()).strip("-") or "general"


def render_sarif(report: ReviewReport) -> dict[str, Any]:
    rules = _rules(report.findings)
    index = {rule["id"]: at for at, rule in enumerate(rules)}
    results = [
        _result(f, fp, index) for f, fp in zip(report.findings, report.fingerprints, strict=True)
    ]
    run: dict[str, Any] = {
        "tool": {"driver": _driver(rules)},
        "invocations": [{"executionSuccessful": report.complete}],
        "results": results,
    }
    return {"$schema": SARIF_SCHEMA_URI, "version": SARIF_VERSION, "runs": [run]}


def _driver(rules: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "name": "corral",
        "version": _version(),
        "rules": rules,
    }


def _version() -> str:
    try:
        return metadata.version("corral")
    except metadata.PackageNotFoundError:
        return "0.0.0"


def _rules(findings: tuple[Finding, ...]) -> list[dict[str, Any]]:
    worst: dict[str, Finding] = {}
    for finding in findings:
        key = rule_id(finding.category)
        if key not in worst or finding.severity.rank < worst[key].severity.rank:
            worst[key] = finding
    return [_rule(key, worst[key]) for key in sorted(worst)]


def _rule(key: str, worst: Finding) -> dict[str, Any]:
    security = "secur" in key
    tags = ["code-review", key, *(["security"] if security else [])]
    properties: dict[str, Any] = {"tags": list(dict.fromkeys(tags))}
    if security:
        properties["security-severity"] = _SECURITY_SCORES[worst.severity]
    return {
        "id": key,
        "name": key,
        "shortDescription": {"text": f"{worst.category} problems found in code review"},
        "defaultConfiguration": {"level": sarif_level(worst.severity)},
        "properties": properties,
    }


def _result(finding: Finding, print_: str, index: dict[str, int]) -> dict[str, Any]:
    key = rule_id(finding.category)
    result: dict[str, Any] = {
        "ruleId": key,
        "ruleIndex": index[key],
        "level": sarif_level(finding.severity),
        "message": {"text": f"{finding.title}\n\n{finding.explanation}"},
        "locations": [{"physicalLocation": _physical(finding)}],
        "partialFingerprints": {FINGERPRINT_KEY: print_},
        "properties": {
            "severity": finding.severity.value,
            "category": finding.category,
            "title": finding.title,
            "merged": finding.merged,
        },
    }
    if finding.fix is not None:
        result["fixes"] = [_fix(finding)]
    return result


def _artifact(path: str) -> dict[str, Any]:
    return {"uri": quote(path, safe="/"), "uriBaseId": SRCROOT}


def _physical(finding: Finding) -> dict[str, Any]:
    region = {"startLine": finding.start_line, "endLine": finding.end_line}
    return {"artifactLocation": _artifact(finding.path), "region": region}


def _fix(finding: Finding) -> dict[str, Any]:
    assert finding.fix is not None
    fix = finding.fix
    replacement = {
        "deletedRegion": {"startLine": fix.start_line, "endLine": fix.end_line},
        "insertedContent": {"text": fix.text},
    }
    return {
        "description": {"text": f"Replace {fix.span}"},
        "artifactChanges": [
            {"artifactLocation": _artifact(finding.path), "replacements": [replacement]}
        ],
    }
