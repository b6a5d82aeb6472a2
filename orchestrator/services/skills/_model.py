"""The values the skills package hands out: a validated skill, a warning, and the catalog.

A `Skill` keeps the whole text of its SKILL.md, read once at discovery, so rendering it later
never touches the disk. `SkillFrontmatter` is the boundary check of the YAML header; keys other
than `name` and `description` are allowed and kept on the skill as `metadata`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictStr, field_validator

from ._requirements import Requirements

MAX_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 1024

Scope = Literal["project", "user", "extra"]


class SkillFrontmatter(BaseModel):
    """The YAML header of a SKILL.md: two required fields, any others kept."""

    model_config = ConfigDict(extra="allow", frozen=True)

    name: StrictStr = Field(min_length=1, max_length=MAX_NAME_CHARS)
    description: StrictStr = Field(min_length=1)
    """One line; longer than `MAX_DESCRIPTION_CHARS` it is cut there by `cut_description`."""

    @field_validator("name", "description", mode="before")
    @classmethod
    def _number_as_text(cls, value: Any) -> Any:
        # YAML reads `name: 2048` or `description: 1.5` as a number; the author meant the text.
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        return value

    @field_validator("name", mode="after")
    @classmethod
    def _one_line_name(cls, value: str) -> str:
        if value != value.strip() or "\n" in value:
            raise ValueError("must be one line without leading or trailing spaces")
        return value

    @field_validator("description", mode="before")
    @classmethod
    def _single_line(cls, value: Any) -> Any:
        # Listings show one line per skill, so the limit applies to what will be shown.
        return " ".join(value.split()) if isinstance(value, str) else value

    @property
    def extras(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


def cut_description(text: str) -> str:
    """`text` within `MAX_DESCRIPTION_CHARS`: cut at the last word that fits, with an ellipsis.

    Published skills exceed the limit Codex documents (one of Anthropic's runs to 1,068
    characters); they are listed shortened, not dropped.
    """
    if len(text) <= MAX_DESCRIPTION_CHARS:
        return text
    head = text[: MAX_DESCRIPTION_CHARS - 1]
    space = head.rfind(" ")
    return (head[:space] if space > MAX_DESCRIPTION_CHARS // 2 else head).rstrip() + "\u2026"


@dataclass(frozen=True)
class Skill:
    """One usable skill: its header fields, where it was found, and the full SKILL.md text."""

    name: str
    description: str
    path: Path
    scope: Scope
    content: str = field(repr=False)
    metadata: Mapping[str, Any] = field(default_factory=dict, repr=False)
    notes: tuple[str, ...] = field(default=(), repr=False)
    """What was changed to make the skill usable (a description cut to length)."""
    requires: Requirements = field(default_factory=Requirements, repr=False)
    """The variables and commands it needs where the agent's commands run."""

    @property
    def folder(self) -> Path:
        return self.path.parent


@dataclass(frozen=True)
class SkillWarning:
    """A skill that was skipped or shadowed, and why; `str()` is the line to show a person."""

    path: Path
    message: str

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class UnavailableSkill:
    """A valid skill that lacks what it requires: listed for people, never offered to models."""

    skill: Skill
    missing: tuple[str, ...]
    """`env NAME` and `command NAME`, in the order the skill declares them."""


@dataclass(frozen=True)
class SkillCatalog:
    """The skills found for one working folder, sorted by name, and what was skipped.

    `skills` are the usable ones, the only ones matched, listed to a model or injected by a
    `$name` mention; `unavailable` are those whose requirements are missing here.
    """

    skills: tuple[Skill, ...]
    warnings: tuple[SkillWarning, ...] = ()
    unavailable: tuple[UnavailableSkill, ...] = ()
    _by_name: dict[str, Skill] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {skill.name: skill for skill in self.skills})

    def __iter__(self) -> Iterator[Skill]:
        return iter(self.skills)

    def __len__(self) -> int:
        return len(self.skills)

    def get(self, name: str) -> Skill | None:
        """The skill called exactly `name`, or None."""
        return self._by_name.get(name)
