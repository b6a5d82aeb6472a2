"""What goes wrong with a fan-out, drawn from corral's roots in `tools._errors`::

    InvalidInput
    └── FanoutInputError        the items, the template or the schema is unusable; nothing ran
        ├── ItemsFileError      a line of the items file is not one JSON object
        ├── TemplateError       the template is malformed, or names a field an item lacks
        ├── ResultSchemaError   the result schema is not a valid JSON Schema
        └── NotAFanoutRun       `resume` was pointed at a run that is not a fan-out

Each message names the file, line or field to fix. Failures of single items are not errors:
they are recorded on the item (`failed`, with the reason) and the run carries on.
"""

from __future__ import annotations

from corral.tools import InvalidInput


class FanoutInputError(InvalidInput):
    """A fan-out was asked for with unusable inputs; nothing was started."""


class ItemsFileError(FanoutInputError):
    """A line of the items file is not a JSON object."""


class TemplateError(FanoutInputError):
    """The template cannot be parsed, or cannot be filled from an item."""


class ResultSchemaError(FanoutInputError):
    """The result schema is not valid JSON, or not a valid JSON Schema."""


class NotAFanoutRun(FanoutInputError):
    """A run id given to the fan-out's resume names a run of another kind."""
