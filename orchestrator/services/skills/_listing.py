"""Renders the skills a worker may use as plain-text instructions within a token budget.

The budget is Codex's: 2% of the model's context window, counting a token as four bytes. Skills
come in rank order and are listed whole while they fit; the caller wraps the text in its
fragment and decides where it goes.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._model import Skill

SKILLS_BUDGET_SHARE = 0.02
BYTES_PER_TOKEN = 4

_HEADER = """## Skills
A skill is a folder of instructions, and often scripts, templates or reference files, for one \
kind of work. The skills below are the ones most likely to fit this task, best first. Each line \
gives the skill's name, what it is for, and the SKILL.md file to read before using it.
### Available skills
"""

_HOW_TO = """### How to use skills
- When to use one: the task names it (`$name` or its plain name), or the task clearly falls \
within what its description covers. Use the smallest set of skills that covers the task, and \
say in one line which ones you use and why. A skill applies to the current task only.
- Before acting, open its SKILL.md and follow it. Resolve relative paths from the skill's \
folder. Read only the files under `references/` that the task needs; run the scripts under \
`scripts/` rather than retyping them; reuse files under `assets/` rather than recreating them.
- Keep your context small: summarise long files instead of copying them into your answers, and \
do not load skills the task does not need.
- If a skill's file is missing, cannot be read, or asks for something your permissions do not \
allow, say so briefly and continue with the best approach you have without it.
"""

_SHORT_HEADER = "## Skills\nRead a skill's SKILL.md before using it. Best fits first:\n"


def skills_budget(context_window: int) -> int:
    """Tokens the skills listing may take in a worker's context: 2% of its window."""
    return int(context_window * SKILLS_BUDGET_SHARE)


def estimate_tokens(text: str) -> int:
    """Tokens as corral budgets them: UTF-8 bytes over four, rounded up."""
    return -(-len(text.encode("utf-8")) // BYTES_PER_TOKEN)


def render_listing(skills: Sequence[Skill], budget_tokens: int) -> str:
    """The listing of `skills` (best first) that fits `budget_tokens`, or "" if none fits.

    The full instructions are used when they leave room for at least one skill, a one-line
    header otherwise. Skills that do not fit are left out, and a closing line counts them.
    """
    budget = budget_tokens * BYTES_PER_TOKEN
    for header, footer in ((_HEADER, _HOW_TO), (_SHORT_HEADER, "")):
        text = _fill(skills, header, footer, budget)
        if text:
            return text
    return ""


def _fill(skills: Sequence[Skill], header: str, footer: str, budget: int) -> str:
    lines: list[str] = []
    used = _size(header) + _size(footer)
    for skill in skills:
        line = _line(skill)
        omitted = _omitted_line(len(skills) - len(lines) - 1)
        if used + _size(line) + _size(omitted) > budget:
            break
        lines.append(line)
        used += _size(line)
    if not lines:
        return ""
    omitted = _omitted_line(len(skills) - len(lines))
    return header + "".join(lines) + omitted + footer


def _line(skill: Skill) -> str:
    return f"- {skill.name}: {skill.description} (file: {skill.path})\n"


def _omitted_line(count: int) -> str:
    if count <= 0:
        return ""
    noun = "skill" if count == 1 else "skills"
    return f"- (not listed: {count} more {noun} that fit less well)\n"


def _size(text: str) -> int:
    return len(text.encode("utf-8"))
