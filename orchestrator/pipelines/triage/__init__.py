"""Issue triage: labels, a type, a priority and duplicates for each issue, by parallel workers.

`run_triage` takes the issues (`read_issues`: what `gh issue list --json` prints) and a label set
(`read_labels`: a YAML file), finds each issue's candidate duplicates in one embedding index,
runs one read-only worker per issue, and writes `triage.json` (conforming to
`triage_json_schema()`) and `triage.md`. `demo_policy.triage_demo_policy` is a rule-based stand-in
for a model, for the offline demo.
"""

from ...runs import SIMILARITY_FLOOR as SIMILARITY_FLOOR
from ...runs import Issue as Issue
from ...runs import Label as Label
from ...runs import LabelSet as LabelSet
from ...runs import TriageJob as TriageJob
from ._errors import IssuesFileError as IssuesFileError
from ._errors import LabelsFileError as LabelsFileError
from ._errors import TriageInputError as TriageInputError
from ._index import TOP_CANDIDATES as TOP_CANDIDATES
from ._index import Candidate as Candidate
from ._index import DuplicateIndex as DuplicateIndex
from ._issues import parse_issues as parse_issues
from ._issues import read_issues as read_issues
from ._labels import parse_labels as parse_labels
from ._labels import read_labels as read_labels
from ._pipeline import READ_ONLY_TOOLS as READ_ONLY_TOOLS
from ._pipeline import TriageOutcome as TriageOutcome
from ._pipeline import run_triage as run_triage
from ._pipeline import triage_config as triage_config
from ._pipeline import triager as triager
from ._render import render_markdown as render_markdown
from ._report import JSON_NAME as JSON_NAME
from ._report import MARKDOWN_NAME as MARKDOWN_NAME
from ._report import FailedIssue as FailedIssue
from ._report import TriagedIssue as TriagedIssue
from ._report import TriageReport as TriageReport
from ._report import build_report as build_report
from ._schema import PRIORITIES as PRIORITIES
from ._schema import TYPES as TYPES
from ._schema import report_schema as report_schema
from ._schema import triage_json_schema as triage_json_schema
from ._task import issue_task as issue_task
from ._task import triage_guide as triage_guide

__all__ = [
    "JSON_NAME",
    "MARKDOWN_NAME",
    "PRIORITIES",
    "READ_ONLY_TOOLS",
    "SIMILARITY_FLOOR",
    "TOP_CANDIDATES",
    "TYPES",
    "Candidate",
    "DuplicateIndex",
    "FailedIssue",
    "IssuesFileError",
    "Label",
    "LabelSet",
    "LabelsFileError",
    "TriageInputError",
    "TriageJob",
    "TriageOutcome",
    "TriageReport",
    "TriagedIssue",
    "build_report",
    "issue_task",
    "parse_issues",
    "parse_labels",
    "read_issues",
    "read_labels",
    "render_markdown",
    "report_schema",
    "run_triage",
    "triage_config",
    "triage_guide",
    "triage_json_schema",
    "triager",
]
