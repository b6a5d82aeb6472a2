"""What the memory store keeps: raw memories (phase 1) and consolidated insights (phase 2).

Both are pydantic records, the shape the store writes and the CLI prints. A project is the
repository root a run worked in (`project_of`), resolved, so two spellings of one folder are
one project.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from corral.tools import InvalidInput

MAX_TEXT = 1_000
"""A stored memory's text is cut here; the prompt shows at most `FRAGMENT_TEXT` of it."""


PromptVersion = Annotated[str, Field(pattern=r"^sha256:[0-9a-f]{64}$")]
"""`sha256:` and the hex digest of a prompt's text (`corral.agents.prompt_version`): nothing
else, so a journal made by hand cannot put other text where a version is shown."""


class UnknownMemory(InvalidInput):
    """No memory or insight has the id given."""


class MemoryRecord(BaseModel):
    """One raw memory: a fact a run learned, where, by whom, when, and its embedding."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    memory_id: str
    project: str
    text: str = Field(min_length=1, max_length=MAX_TEXT)
    files: tuple[str, ...] = ()
    """Files the run involved, relative to the project where they are inside it."""
    run_id: str
    agent_id: str
    created_at: float
    """Seconds since the epoch."""
    embedding: tuple[float, ...] = ()
    prompt_version: PromptVersion | None = None
    """The version of the extraction prompt that produced it (`sha256:` and its digest, as an
    agent's `prompt_version`); None where it was not kept (kept before versions were, or in a
    PostgreSQL journal)."""


class Insight(BaseModel):
    """A consolidated insight: merged from raw memories, which `source_ids` name."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    insight_id: str
    project: str
    text: str = Field(min_length=1, max_length=MAX_TEXT)
    source_ids: tuple[str, ...] = ()
    created_at: float
    prompt_version: PromptVersion | None = None
    """The version of the consolidation prompt that produced it, as a memory's."""


def new_memory_id() -> str:
    return f"mem-{uuid.uuid4().hex[:12]}"


def new_insight_id() -> str:
    return f"ins-{uuid.uuid4().hex[:12]}"


def project_of(cwd: Path) -> str:
    """The project a folder belongs to: the nearest enclosing git root (a linked worktree's
    main repository), else the folder itself."""
    folder = cwd.expanduser().resolve()
    for candidate in (folder, *folder.parents):
        marker = candidate / ".git"
        if marker.is_file():
            return _main_worktree(marker) or str(candidate)
        if marker.exists():
            return str(candidate)
    return str(folder)


def _main_worktree(marker: Path) -> str | None:
    """The main repository of a linked worktree, whose `.git` file says `gitdir: R/.git/...`,
    only if R's record of that worktree points back at `marker`: a `.git` file is the
    project's own content, and must not claim another repository (and its memories)."""
    try:
        text = marker.read_text(errors="replace").strip()
        if not text.startswith("gitdir:"):
            return None
        admin = Path(text.removeprefix("gitdir:").strip())
        admin = admin if admin.is_absolute() else marker.parent / admin
        head, sep, _ = str(admin).partition("/.git/worktrees/")
        # The folder read must be the one the text names: `R/.git/worktrees/../../..` names R
        # but climbs out of its git dir into one the `.git` file's author wrote.
        if not sep or admin.resolve().parent != Path(head, ".git", "worktrees").resolve():
            return None
        back = Path((admin / "gitdir").read_text(errors="replace").strip())
        if back.resolve() == marker.resolve():
            return str(Path(head).resolve())
    except OSError:
        pass
    return None


def relative_files(project: str, paths: list[str], cwd: Path) -> tuple[str, ...]:
    """`paths` (absolute, or relative to `cwd`) as paths relative to `project`, sorted, once
    each; a path outside the project stays absolute."""
    root = Path(project)
    seen: set[str] = set()
    for raw in paths:
        path = Path(raw) if Path(raw).is_absolute() else cwd / raw
        try:
            resolved = path.resolve()
        except (OSError, RuntimeError):
            continue
        seen.add(str(resolved.relative_to(root)) if resolved.is_relative_to(root) else str(path))
    return tuple(sorted(seen))
