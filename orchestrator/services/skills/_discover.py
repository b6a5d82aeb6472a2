"""Finds SKILL.md files in corral's skills folders and in those Codex and Claude Code use.

Roots are searched in precedence order: the project's folders from the working folder up to the
project root (nearest first), then the user's, then any extra roots. The same name found twice
keeps the first and warns with both paths. Everything here reads the disk: from async code, call
`discover_skills` through `anyio.to_thread.run_sync`.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from corral.tools._sandbox import command_environment

from ._model import Scope, Skill, SkillCatalog, SkillWarning, UnavailableSkill
from ._parse import SKILL_FILE, parse_skill_file

PROJECT_FOLDERS = (".corral/skills", ".codex/skills", ".claude/skills", ".agents/skills")
HOME_FOLDERS = (".codex/skills", ".claude/skills", ".agents/skills")
DEFAULT_ROOT_MARKERS = (".git",)
# Codex's scan limits: a skills root is a small tree, and these bound a root pointed at `/`.
MAX_SCAN_DEPTH = 6
MAX_SCAN_FOLDERS = 2000


@dataclass(frozen=True)
class SkillRoot:
    """A folder searched for skills, and the scope its skills get."""

    path: Path
    scope: Scope


def skill_roots(
    cwd: Path,
    *,
    home: Path,
    corral_home: Path,
    skills_dirs: Sequence[Path] = (),
    root_markers: Sequence[str] = DEFAULT_ROOT_MARKERS,
) -> list[SkillRoot]:
    """The folders searched for `cwd`, highest precedence first; `home` is the user's `~`."""
    roots = [
        SkillRoot(folder / name, "project")
        for folder in _project_folders(cwd.resolve(), root_markers)
        for name in PROJECT_FOLDERS
    ]
    roots.append(SkillRoot(corral_home / "skills", "user"))
    roots.extend(SkillRoot(home / name, "user") for name in HOME_FOLDERS)
    roots.extend(SkillRoot(Path(folder), "extra") for folder in skills_dirs)
    return roots


def discover_skills(
    cwd: Path,
    *,
    home: Path,
    corral_home: Path,
    skills_dirs: Sequence[Path] = (),
    root_markers: Sequence[str] = DEFAULT_ROOT_MARKERS,
    environment: Mapping[str, str] | None = None,
    disabled: Collection[Path] = (),
    disabled_names: Collection[str] = (),
) -> SkillCatalog:
    """Every valid skill that applies in `cwd`; invalid and shadowed ones become warnings,
    and those missing what they require in `environment` are set apart (`load_skills`).
    `disabled` and `disabled_names` are the SKILL.md files and the names turned off (Codex's
    `[[skills.config]]`)."""
    roots = skill_roots(
        cwd,
        home=home,
        corral_home=corral_home,
        skills_dirs=skills_dirs,
        root_markers=root_markers,
    )
    return load_skills(
        roots, environment=environment, disabled=disabled, disabled_names=disabled_names
    )


def commands_environment(set_vars: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables an agent's commands start with (`[shell_environment_policy] set` added):
    what a skill's requirements are checked against."""
    return command_environment(os.environ, set_vars or {}, sandboxed=True, network=False)


def load_skills(
    roots: Iterable[SkillRoot],
    *,
    environment: Mapping[str, str] | None = None,
    disabled: Collection[Path] = (),
    disabled_names: Collection[str] = (),
) -> SkillCatalog:
    """The skills under `roots`, earlier roots winning a name; each file is read once.

    A skill whose requirements `environment` (default: `commands_environment()`) lacks goes
    to `unavailable`, after precedence is settled: it still shadows a lower skill's name. A
    file in `disabled` (compared with symlinks resolved) is not read at all, as if absent; a
    skill named in `disabled_names` is dropped wherever it is found.
    """
    chosen: dict[str, Skill] = {}
    warnings: list[SkillWarning] = []
    # Seen before the scan: a turned-off file is skipped like one already read.
    seen: set[Path] = {path.resolve() for path in disabled}
    for root in roots:
        for path in _scan_root(root, warnings):
            canonical = path.resolve()
            if canonical in seen:
                continue
            seen.add(canonical)
            found = parse_skill_file(path, root.scope)
            if not (isinstance(found, Skill) and found.name in disabled_names):
                _admit(found, chosen, warnings)
    skills = sorted(chosen.values(), key=lambda skill: (skill.name, str(skill.path)))
    env = commands_environment() if environment is None else environment
    usable, unavailable = _split_available(skills, env)
    return SkillCatalog(skills=usable, warnings=tuple(warnings), unavailable=unavailable)


def _split_available(
    skills: list[Skill], environment: Mapping[str, str]
) -> tuple[tuple[Skill, ...], tuple[UnavailableSkill, ...]]:
    usable: list[Skill] = []
    unavailable: list[UnavailableSkill] = []
    for skill in skills:
        missing = skill.requires.missing(environment) if skill.requires else ()
        if missing:
            unavailable.append(UnavailableSkill(skill, missing))
        else:
            usable.append(skill)
    return tuple(usable), tuple(unavailable)


def _admit(
    found: Skill | SkillWarning, chosen: dict[str, Skill], warnings: list[SkillWarning]
) -> None:
    if isinstance(found, SkillWarning):
        warnings.append(found)
        return
    kept = chosen.get(found.name)
    if kept is None:
        chosen[found.name] = found
        warnings.extend(SkillWarning(found.path, note) for note in found.notes)
        return
    warnings.append(
        SkillWarning(
            found.path,
            f"skipped {found.path}: the skill `{found.name}` is already loaded from "
            f"{kept.path} ({kept.scope}), which takes precedence",
        )
    )


def _project_folders(cwd: Path, root_markers: Sequence[str]) -> list[Path]:
    """From `cwd` up to the project root, nearest first; just `cwd` outside a project."""
    upward = [cwd, *cwd.parents]
    for depth, folder in enumerate(upward):
        if any((folder / marker).exists() for marker in root_markers):
            return upward[: depth + 1]
    return [cwd]


def _scan_root(root: SkillRoot, warnings: list[SkillWarning]) -> list[Path]:
    if not root.path.is_dir():
        if root.scope == "extra":
            warnings.append(SkillWarning(root.path, f"skills folder {root.path} does not exist"))
        return []
    return _breadth_first(root.path, warnings)


def _breadth_first(root: Path, warnings: list[SkillWarning]) -> list[Path]:
    """SKILL.md files under `root`; a skill's own subfolders are its resources, not skills."""
    found: list[Path] = []
    queue = deque([(root, 0)])
    visited = {root.resolve()}
    scanned = 0
    while queue:
        folder, depth = queue.popleft()
        scanned += 1
        if scanned > MAX_SCAN_FOLDERS:
            message = f"stopped searching {root} for skills after {MAX_SCAN_FOLDERS:,} folders"
            warnings.append(SkillWarning(root, message))
            break
        if (folder / SKILL_FILE).is_file():
            found.append(folder / SKILL_FILE)
            continue
        if depth == MAX_SCAN_DEPTH:
            continue
        for child in _subfolders(folder, warnings):
            if (real := child.resolve()) not in visited:
                visited.add(real)
                queue.append((child, depth + 1))
    return found


def _subfolders(folder: Path, warnings: list[SkillWarning]) -> list[Path]:
    try:
        return sorted(child for child in folder.iterdir() if child.is_dir())
    except OSError as exc:
        reason = exc.strerror or str(exc)
        warnings.append(SkillWarning(folder, f"cannot search {folder} for skills: {reason}"))
        return []
