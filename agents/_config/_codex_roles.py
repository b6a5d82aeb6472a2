"""Codex's `[agents.NAME]` role tables, translated onto corral's `[agents.roles.NAME]`.

Codex describes a role by a table under `[agents]`: a `description`, and the role's settings in
the table itself or in a `config_file` (a TOML file laid over the spawned agent's config).
corral reads the settings it has for a role: `model`, `sandbox_mode` (narrowed by the parent's
profile, as every worker's is) and `developer_instructions`, which become the role's
instructions (added to the general base instructions, where Codex sends them as the role's
developer message). Settings whose loss can only narrow a worker or change its style (effort,
reasoning summaries, web search turned on, nicknames) are skipped by name. A role that sets
anything else (Codex-only settings too, which may turn a tool off), whose name corral cannot
take, or whose `config_file` cannot be read (a project's must lie in its `.corral/` folder) is
skipped whole: with a key left out it could run wider than its author meant, and
without the role a spawn asking for it is refused. Skipped names join the file's warning line.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from ._codex import _AGENT_KEYS as AGENT_KEYS
from ._errors import ConfigError
from ._role_model import BUILTIN_ROLES, ROLE_NAME
from ._role_read import read_role_file

_TABLE_ONLY = frozenset({"description", "config_file", "nickname_candidates"})
_TRANSLATED = {"model": "model", "sandbox_mode": "sandbox_mode"}
_INSTRUCTIONS = "developer_instructions"
# Dropping these changes only the worker's style: its effort, its wording, how its reasoning
# is summed up or shown. The role runs without them. Every other setting corral does not read
# skips the role whole, Codex-only ones too: `[features] shell_tool = false`,
# `include_apply_patch_tool = false`, `tools_view_image = false` or `[permissions]` take a tool
# or a right away, so dropping one would hand the worker what its author turned off.
_DROPPABLE = frozenset(
    {
        "model_reasoning_effort",
        "model_verbosity",
        "personality",
        "model_personality",
        "model_reasoning_summary",
        "model_reasoning_summary_format",
        "model_supports_reasoning_summaries",
        "hide_agent_reasoning",
        "show_raw_agent_reasoning",
        "plan_mode_reasoning_effort",
        "service_tier",
        "nickname_candidates",
    }
)
_WEB_SEARCH = "web_search"
"""Dropped when it turns web search on (the worker goes without, which only narrows it); a role
that turns it off is skipped whole, since without the key its worker would have the parent's."""
_WEB_SEARCH_OFF = ("disabled", False)


class _Unusable(Exception):
    """The role cannot be translated; it is skipped whole."""


def translate_codex_roles(values: dict[str, Any], *, folder: Path, project: bool) -> list[str]:
    """Move each `[agents.NAME]` table of `values` (one file's, in `folder`) to
    `agents.roles.NAME`, in place; returns the dotted names of what was skipped."""
    agents = values.get("agents")
    if not isinstance(agents, dict):
        return []
    skipped: list[str] = []
    for name in [n for n, v in agents.items() if n not in AGENT_KEYS and isinstance(v, dict)]:
        table = agents.pop(name)
        roles = agents.get("roles", {})
        try:
            if name in BUILTIN_ROLES or not ROLE_NAME.fullmatch(name) or name in roles:
                raise _Unusable
            role, dropped = _role_of(table, folder, project)
        except _Unusable:
            skipped.append(f"agents.{name}")
            continue
        agents.setdefault("roles", {})[name] = role
        skipped += [f"agents.{name}.{key}" for key in dropped]
    return skipped


def _role_of(
    table: dict[str, Any], folder: Path, project: bool
) -> tuple[dict[str, Any], list[str]]:
    settings: dict[str, Any] = {}
    if "config_file" in table:
        settings.update(_role_file(table["config_file"], folder, project))
    settings.update({k: v for k, v in table.items() if k not in _TABLE_ONLY})
    role: dict[str, Any] = {}
    if "description" in table:
        role["description"] = table["description"]
    dropped = [k for k in table if k == "nickname_candidates"]
    for key, value in settings.items():
        if key in _TRANSLATED:
            role[_TRANSLATED[key]] = value
        elif key == _INSTRUCTIONS:
            role["instructions"] = value
        elif key in _DROPPABLE or (key == _WEB_SEARCH and value not in _WEB_SEARCH_OFF):
            dropped.append(key)
        else:
            raise _Unusable
    return role, dropped


def _role_file(value: Any, folder: Path, project: bool) -> dict[str, Any]:
    if not isinstance(value, str) or not value.strip():
        raise _Unusable
    path = Path(value).expanduser()
    path = path if path.is_absolute() else folder / path
    confine = (folder, None) if project else None
    try:
        text = read_role_file(path, confine=confine, given="config_file", what="TOML")
        return tomllib.loads(text.removeprefix("\ufeff"))
    except (ConfigError, tomllib.TOMLDecodeError):
        raise _Unusable from None
