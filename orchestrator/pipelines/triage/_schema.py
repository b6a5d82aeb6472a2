"""The result a triage worker hands in through `report_result`, as a JSON Schema.

The label set is an `enum`, so a label outside it is refused by the fan-out's result check and
goes back to the model with the error. Types and priorities are fixed scales; the schema of the
`triage.json` report (a different thing: what the pipeline writes) ships beside this module.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from ...runs import LabelSet

TYPES = ("bug", "feature", "question", "docs", "chore")
PRIORITIES = ("p0", "p1", "p2", "p3")
PRIORITY_MEANINGS = {
    "p0": "act now: data loss, a security hole, or the core of the product broken for many",
    "p1": "next: a serious bug without an easy workaround, or a regression",
    "p2": "planned: ordinary bugs with a workaround, and worthwhile features",
    "p3": "when time allows: cosmetic issues, small wishes, questions, housekeeping",
}
TRIAGE_SCHEMA_FILE = "triage.schema.json"


def report_schema(labels: LabelSet) -> dict[str, Any]:
    """The `report_result` parameters of a worker triaging with `labels`."""
    reason = {"type": "string", "minLength": 1, "maxLength": 600}
    properties: dict[str, Any] = {
        "labels": {
            "type": "array",
            "items": {"enum": list(labels.names)},
            "uniqueItems": True,
            "description": "labels from the label set that clearly apply",
        },
        "labels_reason": reason | {"description": "why these labels, in a sentence"},
        "type": {"enum": list(TYPES)},
        "type_reason": reason | {"description": "why this type, in a sentence"},
        "priority": {"enum": list(PRIORITIES)},
        "priority_reason": reason | {"description": "why this priority, in a sentence"},
        "duplicate_of": {
            "type": ["integer", "null"],
            "description": "the number of the candidate this issue duplicates, or null",
        },
        "duplicate_reason": reason
        | {"description": "why each candidate is or is not a duplicate (or: no candidates)"},
        "confidence": {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "description": "how sure you are of this triage as a whole, from 0 to 1",
        },
    }
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


@cache
def triage_json_schema() -> dict[str, Any]:
    """The JSON Schema (2020-12) that every `triage.json` the pipeline writes conforms to."""
    text = resources.files(__package__).joinpath(TRIAGE_SCHEMA_FILE).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema
