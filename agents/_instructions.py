"""Base instructions: the `instructions` field of every request, fixed for an agent's life.

Texts ship as package data, one folder per model family under `agents/prompts/base/` with one
Markdown file per role; a personality text fills the `{{ personality }}` slot. Which text an
agent gets (config override, journal, model default) is decided by `resolve_base_instructions`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

from corral.tools._errors import InvalidInput

from ._config._model import BUILTIN_ROLES, RoleConfig
from ._prompt_files import prompt_dir, prompt_exists, read_prompt
from ._roles import check_role, config_role, with_role_part

ROLES = BUILTIN_ROLES
PERSONALITIES = ("none", "friendly", "pragmatic")
DEFAULT_FAMILY = "default"
PERSONALITY_SLOT = "{{ personality }}"
_NAMESPACE = re.compile(r"[A-Za-z0-9_]+/(.+)")


def model_family(model: str, *, families: Iterable[str] | None = None) -> str:
    """The prompt family of `model`: the longest family name that prefixes the slug.

    A leading `namespace/` is stripped once if nothing matches. `families` defaults to the
    folders under `agents/prompts/base/`.
    """
    known = tuple(families) if families is not None else _packaged_families()
    for slug in _slug_candidates(model):
        matches = [family for family in known if slug.startswith(family)]
        if matches:
            return max(matches, key=len)
    return DEFAULT_FAMILY


def base_instructions(model: str, role: str = "general", personality: str = "pragmatic") -> str:
    """The role's text for the model's family, with the personality slot filled."""
    _check_choice("role", role, ROLES)
    _check_choice("personality", personality, PERSONALITIES)
    family = model_family(model)
    if not prompt_exists("base", family, f"{role}.md"):
        family = DEFAULT_FAMILY
    template = read_prompt("base", family, f"{role}.md")
    return fill_personality(template, personality_text(personality))


def resolve_base_instructions(
    *,
    override: str | None,
    journaled: str | None,
    model: str,
    role: str,
    personality: str,
    roles: Mapping[str, RoleConfig] | None = None,
) -> str:
    """Config override first, then the value journaled for this agent (resume), then the default.

    A role of `roles` (the config's own) adds its text to the general instructions, or to the
    override when there is one."""
    if override is None and journaled is not None:
        return journaled
    if roles is not None:
        check_role(role, roles)
    own = config_role(role, roles)
    if own is not None:
        general = base_instructions(model, "general", personality)
        return with_role_part(general if override is None else override, role, own)
    if override is not None:
        return override
    return base_instructions(model, role, personality)


@lru_cache(maxsize=64)
def prompt_version(instructions: str) -> str:
    """The version of base instructions: `sha256:` and the hex digest of their UTF-8 text, so
    the same prompt has the same version in every corral release and on every executor."""
    return "sha256:" + hashlib.sha256(instructions.encode("utf-8")).hexdigest()


def personality_text(personality: str) -> str:
    """The text for the personality slot; empty for `none`."""
    _check_choice("personality", personality, PERSONALITIES)
    if personality == "none":
        return ""
    return read_prompt("personality", f"{personality}.md")


def fill_personality(template: str, text: str) -> str:
    """Replace the slot; an empty text also drops the blank line the slot stood on."""
    if not text:
        template = template.replace(f"{PERSONALITY_SLOT}\n\n", "")
    return template.replace(PERSONALITY_SLOT, text)


def _slug_candidates(model: str) -> list[str]:
    stripped = _NAMESPACE.fullmatch(model)
    return [model, stripped.group(1)] if stripped else [model]


def _packaged_families() -> tuple[str, ...]:
    return tuple(
        entry.name
        for entry in prompt_dir("base").iterdir()
        if entry.is_dir() and not entry.name.startswith(("_", "."))
    )


def _check_choice(what: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise InvalidInput(f"unknown {what} {value!r}; choose one of: {', '.join(allowed)}")
