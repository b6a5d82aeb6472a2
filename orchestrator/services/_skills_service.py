"""Skills for each agent of a run: a budgeted listing of the best matches for its task, and the
bodies of the skills its messages mention by `$name`.

Discovery and the matcher's index are built once per run (in a worker thread) and shared by
every agent; each agent's listing is its own, ranked against its own task.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from corral.agents import SKILLS_INSTRUCTIONS, CorralConfig

from .skills import (
    SkillCatalog,
    commands_environment,
    discover_skills,
    mentioned_skills,
    render_skill,
    skills_budget,
)

if TYPE_CHECKING:
    from ._embedding import Embedder
    from .skills import SkillMatcher

logger = logging.getLogger(__name__)


def _matcher(catalog: SkillCatalog, embedder: Embedder | None) -> SkillMatcher | None:
    if not len(catalog):
        return None
    from ._minilm import retrieval_embedder
    from .skills import SkillMatcher

    return SkillMatcher(catalog, embedder or retrieval_embedder())


@dataclass(frozen=True)
class SkillsForTask:
    """What a task gets: the listing fragment (or None) and the mentioned skills' bodies."""

    listing: str | None
    attachments: tuple[str, ...]


class SkillsService:
    """The skills that apply in one folder, matched to tasks with BM25 fused with embeddings."""

    def __init__(
        self, catalog: SkillCatalog, matcher: SkillMatcher | None, context_window: int
    ) -> None:
        self.catalog = catalog
        self._matcher = matcher
        self._budget = skills_budget(context_window)

    @classmethod
    async def discover(
        cls, config: CorralConfig, cwd: Path, *, embedder: Embedder | None = None
    ) -> SkillsService:
        def build() -> SkillsService:
            catalog = discover_skills(
                cwd,
                home=Path.home(),
                corral_home=config.home,
                skills_dirs=config.skills.dirs,
                root_markers=config.project_root_markers,
                environment=commands_environment(config.shell_environment_policy.set),
                disabled=config.skills.disabled,
                disabled_names=config.skills.disabled_names,
            )
            for warning in catalog.warnings:
                _warn_once(warning.message)
            for unavailable in catalog.unavailable:
                missing = ", ".join(unavailable.missing)
                _warn_once(f"skill `{unavailable.skill.name}` is not offered: missing {missing}")
            # No skills, no model, no matcher to load: a run without skills starts as fast and
            # as small as it would.
            return cls(catalog, _matcher(catalog, embedder), config.model_context_window)

        return await anyio.to_thread.run_sync(build)

    async def for_task(self, text: str) -> SkillsForTask:
        if self._matcher is None:
            return SkillsForTask(None, ())
        listing = await anyio.to_thread.run_sync(self._matcher.listing, text, self._budget)
        fragment = SKILLS_INSTRUCTIONS.render(f"\n{listing}\n") if listing else None
        bodies = tuple(render_skill(s) for s in mentioned_skills(text, self.catalog))
        return SkillsForTask(fragment, bodies)

    def mentioned(self, text: str) -> tuple[str, ...]:
        return tuple(render_skill(s) for s in mentioned_skills(text, self.catalog))


_warned: set[str] = set()


def _warn_once(message: str) -> None:
    # A run discovers skills for each folder its agents work in; a broken skill is told once.
    if message not in _warned:
        _warned.add(message)
        logger.warning("%s", message)
