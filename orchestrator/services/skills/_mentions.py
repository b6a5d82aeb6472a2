"""`$name` mentions in a task text, and the `<skill>` fragment that carries a mentioned skill.

The fragment follows Codex: a `<name>` line, a `<path>` line, then the whole SKILL.md, sent as a
user message after the task for that turn only. Where it goes in the history is the caller's job.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from corral.agents import SKILL

from ._model import Skill, SkillCatalog

# Codex's name characters. The look-behind keeps `a$b` and `$$x` from counting as mentions.
_MENTION = re.compile(r"(?<![\w$])\$([A-Za-z0-9_:-]+)")


def mentioned_skills(text: str, catalog: SkillCatalog | Iterable[Skill]) -> list[Skill]:
    """The skills `text` names with `$name`, in order of first mention, each once.

    Names that match no skill are ignored: they are often shell variables such as `$HOME`.
    A trailing `:` or `-` is punctuation ("use $pdf: ..."), unless the full name is a skill's.
    """
    by_name = catalog if isinstance(catalog, SkillCatalog) else SkillCatalog(tuple(catalog))
    found: dict[str, Skill] = {}
    for match in _MENTION.finditer(text):
        raw = match.group(1)
        skill = by_name.get(raw) or by_name.get(raw.rstrip(":-"))
        if skill is not None:
            found.setdefault(skill.name, skill)
    return list(found.values())


def render_skill(skill: Skill) -> str:
    """The `<skill>` user-role fragment holding the skill's name, path and full SKILL.md."""
    body = skill.content.rstrip("\n")
    return SKILL.render(f"\n<name>{skill.name}</name>\n<path>{skill.path}</path>\n{body}\n")
