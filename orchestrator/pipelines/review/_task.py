"""The reviewer's task: one unit's diff, where its checkout stands, and how to report.

It is a fan-out template, filled from `ReviewUnit.item`; the reviewer role's base instructions
(`agents/prompts/base/default/reviewer.md`) say what is worth reporting, this says what to review
and the exact shape of a finding.
"""

from __future__ import annotations

from ._units import CONTEXT_TOLERANCE

AT_HEAD = (
    "Your working directory is the repository at the new version of the change, so "
    "`read_file` and `grep` show the code as the diff leaves it."
)
PATCH_TREE = (
    "Your working directory is the repository the patch is for; it may or may not have the "
    "patch applied, so where a file and the diff disagree, the diff is the change to review."
)

TASK_TEMPLATE = (
    "Review this change to `{path}` ({label}). In the new version of the file it adds or "
    "changes lines {changed}.\n\n"
    "{where} Read the changed file and whatever it calls or is called by before you judge; "
    "you may not modify anything.\n\n"
    "Report every finding through `report_result`: `path` from the repository root, "
    "`start_line` and `end_line` in the NEW version of the file, `severity` (critical, high, "
    "medium, low or info), a `category` (such as correctness, security, error-handling, "
    "concurrency, performance, resource-leak), a one-line `title`, an `explanation` of what "
    "triggers the failure and what goes wrong, and, when the fix is clear, `suggested_patch`: "
    "the code that should replace lines start_line to end_line. Only findings within "
    f"{CONTEXT_TOLERANCE} lines of the changed lines are kept. If nothing is worth reporting, "
    'report {{"findings": []}}.\n\n'
    "{fence}diff\n{diff}\n{fence}\n"
)
