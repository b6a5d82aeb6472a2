"""Inline pipeline inputs: the values a request carries where the CLI reads a file.

Each is checked by the pipeline's own parser (`parse_issues`, `parse_labels`,
`parse_unified_diff`), so the API and the CLI refuse the same things with the same words; the
request models call these in their validators, and the runs call them again for the parsed value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..pipelines.review import PatchError, parse_unified_diff
from ..pipelines.triage import (
    Issue,
    IssuesFileError,
    LabelSet,
    LabelsFileError,
    parse_issues,
    parse_labels,
)

InlineLabels = str | dict[str, str | None] | list[dict[str, Any]]
"""A label set: a labels file's YAML text, `{name: description}`, or `[{name, description}]`."""

_ISSUE_LINE = re.compile(r", line \d+")
_LABEL_LINE = re.compile(r"\bline (\d+)")


def inline_issues(issues: Sequence[Mapping[str, Any]]) -> list[Issue]:
    """The issues of a request (`gh issue list --json` objects); `IssuesFileError` if bad."""
    # One object per line is JSON Lines, so the parser's "index N" is the request's own index;
    # its line numbers count lines of this text, which the caller never saw, so they go.
    text = "\n".join(json.dumps(issue) for issue in issues)
    try:
        return parse_issues(text, source="issues")
    except IssuesFileError as exc:
        raise IssuesFileError(_ISSUE_LINE.sub("", str(exc))) from exc


def inline_labels(labels: InlineLabels) -> LabelSet:
    """The label set of a request; `LabelsFileError` naming the bad entry if it is unusable."""
    if isinstance(labels, str):
        return parse_labels(labels, source="labels")
    # One entry per line, so the parser's line N is the request's entry N.
    if isinstance(labels, dict):
        text = "\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in labels.items())
    else:
        text = "\n".join(f"- {json.dumps(entry)}" for entry in labels)
    try:
        return parse_labels(text or "[]", source="labels")
    except LabelsFileError as exc:
        raise LabelsFileError(_LABEL_LINE.sub(r"entry \1", str(exc))) from exc


def check_patch(patch: str) -> None:
    """Refuse a patch that is not a unified diff with at least one file (`PatchError`)."""
    if not parse_unified_diff(patch, source="patch"):
        raise PatchError("patch holds no unified diff; give the output of `git diff` or `diff -u`")
