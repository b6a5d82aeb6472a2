"""The demo's one scripted model: the triage stand-in for triagers, the review one for reviewers.

A request is told apart by the result its worker must report: findings for a reviewer, labels
for a triager. Both stand-ins are keyword and pattern rules, not models.
"""

from __future__ import annotations

from typing import Any

from ..pipelines.triage.demo_policy import triage_demo_policy
from ._review_policy import review_the_change


def demo_policy(request: dict[str, Any]) -> Any:
    for tool in request.get("tools") or []:
        if tool.get("name") == "report_result":
            properties = (tool.get("parameters") or {}).get("properties") or {}
            if "findings" in properties:
                return review_the_change(request)
    return triage_demo_policy(request)
