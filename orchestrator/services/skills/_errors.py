"""What the caller can get wrong when asking for skills, drawn from corral's roots::

    InvalidInput
    └── SkillInputError         a skills request that cannot be served; nothing was searched
        ├── SkillsFolderMissing a folder given as a skills root does not exist
        └── EmptySkillQuery     a match was asked for with no text to match

Broken skills are not errors: each becomes a `SkillWarning` on the catalog and the rest load.
"""

from __future__ import annotations

from corral.tools import InvalidInput


class SkillInputError(InvalidInput):
    """A skills request was made with unusable inputs."""


class SkillsFolderMissing(SkillInputError):
    """A folder named as a skills root is missing or is not a folder."""


class EmptySkillQuery(SkillInputError):
    """A skill match was asked for with blank text."""
