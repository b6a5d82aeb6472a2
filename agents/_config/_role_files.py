"""Reading each role's `instructions_file` once, when the config is loaded.

The text becomes the role's `instructions`, so what a worker is told cannot change while the run
goes on (an agent that swaps the file for a link to a secret later gains nothing). The file must
be a regular file of at most `ROLE_FILE_MAX_BYTES` (the AGENTS.md budget); one that an untrusted
project names must still lie inside the project, and outside `$CORRAL_HOME`, when it is opened
(`_trust` checked the path when the layer was read; this checks what is opened).
"""

from __future__ import annotations

import errno
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from corral.tools._safe_fs import open_regular

from ._errors import ConfigError
from ._role_model import RoleConfig

if TYPE_CHECKING:
    from ._load import LoadedConfig

ROLE_FILE_MAX_BYTES = 32 * 1024
"""As `project_doc_max_bytes` by default: a role's file is read like an AGENTS.md."""


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


def read_role_file(
    path: Path, *, confine: tuple[Path, Path | None] | None, given: str, what: str = "Markdown"
) -> str:
    """The file's text; `ConfigError` (starting with `given`) when it may not or cannot be read.
    `confine` is (a folder, and optionally `$CORRAL_HOME`): inside the one, outside the other,
    and not a hard link (which could be any file's content under an inside name)."""
    real = path.resolve()
    if confine is not None and (
        not real.is_relative_to(confine[0].resolve())
        or (confine[1] is not None and real.is_relative_to(confine[1].resolve()))
    ):
        raise ConfigError(
            f"{given}: it leads outside {confine[0]}; keep the project's role files in it"
        )
    data = _read_checked(real, given, what, single_link=confine is not None)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{given}: not UTF-8 text; save it as UTF-8") from None


def _read_checked(real: Path, given: str, what: str, *, single_link: bool) -> bytes:
    """The bytes of the regular file at the resolved path `real`, reached without following a
    symlink swapped in since it was resolved (`open_regular`), at most the cap."""
    try:
        handle = open_regular(real)
    except FileNotFoundError:
        raise ConfigError(f"{given}: no such file; create it or fix the path") from None
    except OSError as exc:
        if exc.errno == errno.EINVAL:
            raise ConfigError(f"{given}: not a regular file; point it at a {what} file") from None
        raise ConfigError(f"{given}: cannot be read: {exc.strerror}") from None
    with handle:
        if single_link and os.fstat(handle.fileno()).st_nlink > 1:
            raise ConfigError(f"{given}: a hard-linked file; copy the text into a file of its own")
        data = handle.read(ROLE_FILE_MAX_BYTES + 1)
    if len(data) > ROLE_FILE_MAX_BYTES:
        raise ConfigError(f"{given}: the file is over {ROLE_FILE_MAX_BYTES:,} bytes; shorten it")
    return data
