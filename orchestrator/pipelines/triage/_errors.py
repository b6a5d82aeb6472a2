"""What goes wrong with a triage run's inputs, drawn from corral's roots in `tools._errors`::

    InvalidInput
    └── TriageInputError        the issues or the labels are unusable; nothing ran
        ├── IssuesFileError     the issues file, or one record in it, is malformed
        └── LabelsFileError     the labels file is malformed or defines a label twice

Each message names the file and the position (index, line) to fix. An issue whose worker never
hands in a valid result is no error: it is listed as not triaged, and the exit code says so.
"""

from __future__ import annotations

from corral.tools import InvalidInput


class TriageInputError(InvalidInput):
    """A triage was asked for with unusable inputs; nothing was started."""


class IssuesFileError(TriageInputError):
    """The issues file cannot be read, or a record in it is not an issue."""


class LabelsFileError(TriageInputError):
    """The labels file cannot be read, or its label set is malformed."""
