"""`[skills]`: corral's switch and extra folders, and Codex's `[[skills.config]]` entries that
turn single skills off by path or name. Applying them to discovery is the skills loader's job
(`corral.orchestrator.services.skills`)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Section(BaseModel):
    # As every table of the config (`_model`): unknown keys are errors, docstrings documented.
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class SkillToggle(_Section):
    """`[[skills.config]]`, Codex's entry that turns one skill off (or back on) by the path of
    its SKILL.md or by its name; a later entry for the same file or name wins."""

    path: Path | None = None
    name: str | None = Field(default=None, min_length=1)
    enabled: bool

    @model_validator(mode="after")
    def _one_selector(self) -> SkillToggle:
        if (self.path is None) == (self.name is None):
            raise ValueError("name the skill by `path` (its SKILL.md) or by `name`, one of them")
        return self


class SkillsConfig(_Section):
    """`[skills]`: whether agents get a listing of matching skills, extra skill folders, and
    Codex's `[[skills.config]]` entries that turn single skills off."""

    enabled: bool = True
    dirs: tuple[Path, ...] = ()
    config: tuple[SkillToggle, ...] = ()
    """Tables of `path` (a SKILL.md) or `name`, and `enabled`: a skill an `enabled = false`
    entry names is never loaded; the last entry for a file or name wins."""

    @property
    def disabled(self) -> frozenset[Path]:
        """The SKILL.md files turned off, as the last entry for each says."""
        last = {entry.path: entry.enabled for entry in self.config if entry.path is not None}
        return frozenset(path for path, enabled in last.items() if not enabled)

    @property
    def disabled_names(self) -> frozenset[str]:
        """The skill names turned off, as the last entry for each says."""
        last = {entry.name: entry.enabled for entry in self.config if entry.name is not None}
        return frozenset(name for name, enabled in last.items() if not enabled)
