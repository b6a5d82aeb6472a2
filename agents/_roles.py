"""Roles of one's own (`[agents.roles.NAME]`) next to the built-in ones: the names a worker may
take, what each is for, and the base instructions of a config role.

A config role keeps the general base instructions and adds its own text as the role's part, as
Codex keeps the parent's base instructions and sends a role's `developer_instructions`; so
workers of every config role share the general text as their prefix. What a role may change in
a worker's model and permissions is the supervisor's (`orchestrator.supervisor`).
"""

from __future__ import annotations

from collections.abc import Mapping

from corral.tools._errors import InvalidInput

from ._config._model import BUILTIN_ROLES, ROLE_NAME, RoleConfig

__all__ = [
    "BUILTIN_DESCRIPTIONS",
    "ROLE_NAME",
    "ROLE_PART_HEADING",
    "check_role",
    "config_role",
    "role_descriptions",
    "role_names",
    "role_part",
    "with_role_part",
]

BUILTIN_DESCRIPTIONS = {
    "general": "any task (the default)",
    "supervisor": "splits work among workers of its own",
    "reviewer": "reports problems, changes nothing",
    "refactorer": "applies one change to the files it is given",
    "triager": "classifies an issue",
}
ROLE_PART_HEADING = "# Your role: "
"""Starts the role's part, after the general base instructions."""
_NO_DESCRIPTION = "a role of this configuration"


def role_names(roles: Mapping[str, RoleConfig]) -> tuple[str, ...]:
    """Every role a worker may take: the built-in ones, then the config's in name order (a
    stable order, so the spawn tool's schema is byte for byte the same in every request)."""
    return (*BUILTIN_ROLES, *sorted(name for name in roles if name not in BUILTIN_ROLES))


def role_descriptions(roles: Mapping[str, RoleConfig]) -> dict[str, str]:
    """What each role of `role_names` is for, as the model is told."""
    own = {name: roles[name].description.strip() or _NO_DESCRIPTION for name in roles}
    return {name: BUILTIN_DESCRIPTIONS.get(name) or own[name] for name in role_names(roles)}


def check_role(role: str, roles: Mapping[str, RoleConfig]) -> None:
    """Raise `InvalidInput` naming every known role when `role` is none of them."""
    known = role_names(roles)
    if role not in known:
        shown = role[:60] + ("…" if len(role) > 60 else "")
        raise InvalidInput(f"unknown role {shown!r}; choose one of: {', '.join(known)}")


def config_role(role: str, roles: Mapping[str, RoleConfig] | None) -> RoleConfig | None:
    """The config's own role of that name; None for a built-in role or an unknown one."""
    if role in BUILTIN_ROLES or roles is None:
        return None
    return roles.get(role)


def with_role_part(general: str, name: str, role: RoleConfig) -> str:
    """`general` base instructions with the role's own text added as its part (unchanged for a
    role without instructions)."""
    text = role.read_instructions()
    if text is None or not text.strip():
        return general
    return f"{general.rstrip()}\n\n{ROLE_PART_HEADING}{name}\n\n{text.strip()}\n"


def role_part(base: str, shipped: frozenset[str]) -> str | None:
    """The part a config role added to one of corral's `shipped` texts; None when `base` is
    not such a text with a role part."""
    for text in shipped:
        prefix = f"{text.rstrip()}\n\n{ROLE_PART_HEADING}"
        if base.startswith(prefix):
            return base[len(prefix) :]
    return None
