"""Parallel code review: a git range or a patch, reviewed by read-only agents, one per unit.

`run_review` reads the change (`read_change`), cuts it into units (`split_units`: a file, or a
group of hunks of a large one), runs a reviewer per unit through the fan-out, and aggregates the
findings (`aggregate`: only lines in the change, near-duplicates merged, sorted by severity).
`write_reports` writes the result as Markdown, JSON and SARIF 2.1.0.
"""

from ...runs import DEFAULT_MAX_UNIT_LINES as DEFAULT_MAX_UNIT_LINES
from ...runs import ReviewJob as ReviewJob
from ._aggregate import Aggregation as Aggregation
from ._aggregate import DroppedFinding as DroppedFinding
from ._aggregate import aggregate as aggregate
from ._aggregate import similar_titles as similar_titles
from ._diff import FileDiff as FileDiff
from ._diff import Hunk as Hunk
from ._diff import parse_unified_diff as parse_unified_diff
from ._errors import BadRange as BadRange
from ._errors import GitFailed as GitFailed
from ._errors import NotARepository as NotARepository
from ._errors import PatchError as PatchError
from ._errors import ReviewInputError as ReviewInputError
from ._findings import FINDINGS_SCHEMA as FINDINGS_SCHEMA
from ._findings import Finding as Finding
from ._findings import Fix as Fix
from ._findings import Severity as Severity
from ._findings import findings_from_result as findings_from_result
from ._pipeline import REVIEWER_TOOLS as REVIEWER_TOOLS
from ._pipeline import Change as Change
from ._pipeline import read_change as read_change
from ._pipeline import read_only as read_only
from ._pipeline import run_review as run_review
from ._report import ChangeSource as ChangeSource
from ._report import ReviewReport as ReviewReport
from ._report import UnitOutcome as UnitOutcome
from ._report import fingerprint as fingerprint
from ._sarif import render_sarif as render_sarif
from ._units import CONTEXT_TOLERANCE as CONTEXT_TOLERANCE
from ._units import ChangeMap as ChangeMap
from ._units import ReviewUnit as ReviewUnit
from ._units import split_units as split_units
from ._write import FORMATS as FORMATS
from ._write import parse_formats as parse_formats
from ._write import render_reports as render_reports
from ._write import write_reports as write_reports

__all__ = [
    "CONTEXT_TOLERANCE",
    "DEFAULT_MAX_UNIT_LINES",
    "FINDINGS_SCHEMA",
    "FORMATS",
    "REVIEWER_TOOLS",
    "Aggregation",
    "BadRange",
    "Change",
    "ChangeMap",
    "ChangeSource",
    "DroppedFinding",
    "FileDiff",
    "Finding",
    "Fix",
    "GitFailed",
    "Hunk",
    "NotARepository",
    "PatchError",
    "ReviewInputError",
    "ReviewJob",
    "ReviewReport",
    "ReviewUnit",
    "Severity",
    "UnitOutcome",
    "aggregate",
    "findings_from_result",
    "fingerprint",
    "parse_formats",
    "parse_unified_diff",
    "read_change",
    "read_only",
    "render_reports",
    "render_sarif",
    "run_review",
    "similar_titles",
    "split_units",
    "write_reports",
]
