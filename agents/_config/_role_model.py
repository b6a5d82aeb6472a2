"""`[agents.roles.NAME]`: a worker role of one's own, and the names a role may take.

What a role does to a worker (its instructions, model and sandbox) is `agents._roles`' and the
supervisor's; reading its file at load time is `_role_files`'.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from corral.tools import SandboxMode

from ._role_read import read_role_file

ROLE_NAME = re.compile(r"[a-z][a-z0-9_-]{0,39}")
"""A role of one's own: lower-case letters, digits, `_` and `-`, as a model can spell it."""
BUILTIN_ROLES = ("general", "supervisor", "reviewer", "refactorer", "triager")
"""`agents.ROLES`, which no role of one's own may take the name of."""
ROLE_DESCRIPTION_MAX_CHARS = 500
MAX_ROLES = 32
"""Roles of one's own at most: every role's name and description go into the spawn tool's
schema, sent with every request of every agent that may spawn (and the roles travel with each
Temporal workflow), so a file with thousands of them would make every run costly or fail."""


class RoleConfig(BaseModel):
    """`[agents.roles.NAME]`: a worker role of your own, next to the built-in ones. Its
    instructions are added to the general base instructions; `instructions_file` is read
    once, when the config is loaded."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    description: str = Field(default="", max_length=ROLE_DESCRIPTION_MAX_CHARS)
    instructions: str | None = None
    instructions_file: Path | None = None
    model: str | None = None
    sandbox_mode: SandboxMode | None = None

    @field_validator("sandbox_mode", mode="before")
    @classmethod
    def _codex_sandbox_spelling(cls, value: Any) -> Any:
        return SandboxMode.FULL_ACCESS if value == "danger-full-access" else value

    @model_validator(mode="after")
    def _one_source_of_instructions(self) -> RoleConfig:
        if self.instructions is not None and self.instructions_file is not None:
            raise ValueError("set either instructions or instructions_file, not both")
        return self

    def read_instructions(self) -> str | None:
        """The role's own instructions: its text, or its file read now (a loaded config has
        read every role's file already, `_role_files`)."""
        if self.instructions_file is None:
            return self.instructions
        given = f"role instructions {self.instructions_file}"
        return read_role_file(self.instructions_file, confine=None, given=given)
