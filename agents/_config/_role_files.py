"""Reading each role's `instructions_file` once, when the config is loaded.

The text becomes the role's `instructions`, so what a worker is told cannot change while the run
goes on (an agent that swaps the file for a link to a secret later gains nothing). The file must
be a regular file of at most `ROLE_FILE_MAX_BYTES` (the AGENTS.md budget); one that an untrusted
project names must still lie inside the project, and outside `$CORRAL_HOME`, when it is opened
(`_trust` checked the path when the layer was read; this checks what is opened).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ._loaded import LoadedConfig
from ._role_model import RoleConfig
from ._role_read import read_role_file


def with_role_files(loaded: LoadedConfig) -> LoadedConfig:
    """`loaded` with every role's `instructions_file` read into its `instructions`."""
    roles = loaded.config.agents.roles
    if not any(role.instructions_file is not None for role in roles.values()):
        return loaded
    read = {name: _read_role(loaded, name, role) for name, role in roles.items()}
    agents = loaded.config.agents.model_copy(update={"roles": read})
    return replace(loaded, config=loaded.config.model_copy(update={"agents": agents}))


def _read_role(loaded: LoadedConfig, name: str, role: RoleConfig) -> RoleConfig:
    path = role.instructions_file
    if path is None:
        return role
    key = ("agents", "roles", name, "instructions_file")
    index = loaded.key_layers.get(key)
    where = "default" if index is None else loaded.layers[index].label(key)
    given = f"{where}: agents.roles.{name}.instructions_file = {str(path)!r}"
    confine = _confinement(loaded, index)
    within: tuple[Path, Path | None] | None = None
    if confine is not None:
        within = (confine, loaded.config.home)
    text = read_role_file(path, confine=within, given=given)
    return role.model_copy(update={"instructions": text, "instructions_file": None})


def _confinement(loaded: LoadedConfig, index: int | None) -> Path | None:
    """The project folder the file must stay in: set for an untrusted project's key."""
    project = loaded.project
    if index is None or project is None or loaded.layers[index].kind != "project":
        return None
    return None if project.verdict == "trusted" else project.folder
