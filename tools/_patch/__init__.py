"""The Codex patch format: parsing, matching, and applying a patch all-or-nothing.

`apply_patch` (async) and `apply_patch_text` (blocking) are the one code path used by the
`apply_patch` tool and by `corral apply-patch`.
"""

from ._changeset import PatchResult as PatchResult
from ._changeset import apply_patch as apply_patch
from ._changeset import apply_patch_text as apply_patch_text
from ._commit import Disk as Disk
from ._commit import LocalDisk as LocalDisk
from ._errors import PatchConflict as PatchConflict
from ._errors import PatchError as PatchError
from ._errors import PatchParseError as PatchParseError
from ._errors import PatchWriteFailed as PatchWriteFailed
from ._parse import AddFile as AddFile
from ._parse import DeleteFile as DeleteFile
from ._parse import Patch as Patch
from ._parse import UpdateChunk as UpdateChunk
from ._parse import UpdateFile as UpdateFile
from ._parse import parse_patch as parse_patch
from ._seek import seek_sequence as seek_sequence

__all__ = [
    "AddFile",
    "DeleteFile",
    "Disk",
    "LocalDisk",
    "Patch",
    "PatchConflict",
    "PatchError",
    "PatchParseError",
    "PatchResult",
    "PatchWriteFailed",
    "UpdateChunk",
    "UpdateFile",
    "apply_patch",
    "apply_patch_text",
    "parse_patch",
    "seek_sequence",
]
