"""What a skill needs to work: environment variables and commands, declared and checked.

A SKILL.md declares them in its frontmatter, `requires: {env: [NAME], commands: [NAME]}`
(OpenClaw's `bins` is read as `commands`); Codex's sidecar `agents/openai.yaml` adds its
`dependencies.tools` entries of type `env_var`. They are checked against the environment the
agent's commands get (not corral's own, which commands never see): a variable must be set there
and not empty, a command must be an executable file in one of its PATH's absolute folders.
Nothing is run, and no value is ever copied into a message. Discovery decides what to do with
a skill that lacks something.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

SIDECAR = Path("agents") / "openai.yaml"
MAX_SIDECAR_BYTES = 64 * 1024
MAX_REQUIREMENTS = 32
"""Names one skill may list: a skill is checked at every discovery, so its cost is bounded."""
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_COMMAND_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,127}")
_KEYS = {"env": "env", "commands": "commands", "bins": "commands"}


class RequirementsError(ValueError):
    """A `requires` entry that cannot be checked; the message says which and why."""


@dataclass(frozen=True)
class Requirements:
    env: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.env or self.commands)

    def missing(self, environment: Mapping[str, str]) -> tuple[str, ...]:
        """What `environment` lacks, as `env NAME` and `command NAME`; never a value."""
        path = _absolute_path(environment.get("PATH", ""))
        gone = [f"env {name}" for name in self.env if not environment.get(name)]
        gone += [f"command {name}" for name in self.commands if not _found(name, path)]
        return tuple(gone)


def parse_requirements(frontmatter: Mapping[str, Any], folder: Path) -> Requirements:
    """The skill's declared needs: its frontmatter's `requires`, then its Codex sidecar's."""
    declared = _from_frontmatter(frontmatter.get("requires"))
    sidecar = _from_sidecar(folder)
    env = tuple(dict.fromkeys((*declared.env, *sidecar)))
    if len(env) + len(declared.commands) > MAX_REQUIREMENTS:
        raise RequirementsError(f"`requires` lists more than {MAX_REQUIREMENTS} names")
    return Requirements(env=env, commands=declared.commands)


def _from_frontmatter(value: Any) -> Requirements:
    if value is None:
        return Requirements()
    if not isinstance(value, Mapping):
        raise RequirementsError("`requires` must be a table: `env: [NAME]`, `commands: [NAME]`")
    found: dict[str, list[str]] = {"env": [], "commands": []}
    for key, names in value.items():
        kind = _KEYS.get(str(key))
        if kind is None:
            shown = repr(str(key)[:40])
            raise RequirementsError(f"`requires` key {shown} is not known; use `env` or `commands`")
        found[kind] += _names(f"requires.{key}", names, kind)
    return Requirements(env=tuple(found["env"]), commands=tuple(found["commands"]))


def _names(where: str, names: Any, kind: str) -> list[str]:
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, list) or len(names) > MAX_REQUIREMENTS:
        raise RequirementsError(f"`{where}` must be a list of at most {MAX_REQUIREMENTS} names")
    pattern = _ENV_NAME if kind == "env" else _COMMAND_NAME
    for name in names:
        if not isinstance(name, str) or not pattern.fullmatch(name):
            what = "a variable name" if kind == "env" else "a command name without a path"
            raise RequirementsError(f"`{where}`: {str(name)[:40]!r} is not {what}")
    return list(names)


def _from_sidecar(folder: Path) -> list[str]:
    """The `env_var` dependencies of Codex's `agents/openai.yaml`; other kinds are Codex's."""
    data = _read_sidecar(folder)
    if data is None:
        return []
    try:
        loaded = yaml.safe_load(data.decode("utf-8"))
    except yaml.MarkedYAMLError as exc:
        # The line number only: YAML's own message quotes the file, which may not be the
        # skill's (a symlink swapped in) and goes to logs.
        mark = exc.problem_mark or exc.context_mark
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise RequirementsError(f"{SIDECAR} is not valid YAML{where}") from exc
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise RequirementsError(f"{SIDECAR} is not UTF-8 YAML") from exc
    tools = _get(_get(loaded, "dependencies"), "tools")
    entries = tools if isinstance(tools, list) else []
    wanted = [e.get("value") for e in entries if isinstance(e, dict) and e.get("type") == "env_var"]
    return _names(f"{SIDECAR} dependencies", wanted, "env")


def _read_sidecar(folder: Path) -> bytes | None:
    """The sidecar's bytes; None when there is none. It must be a regular file inside the
    skill's folder: a symlink out of it could name any file of the host (its text would reach
    warnings), and a FIFO or a terminal would block discovery."""
    path = folder / SIDECAR
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if not real.is_relative_to(folder.resolve()):
        raise RequirementsError(f"{SIDECAR} leads outside the skill's folder; make it a file there")
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise RequirementsError(f"{SIDECAR} is not a regular file")
        data = file.read(MAX_SIDECAR_BYTES + 1)
    if len(data) > MAX_SIDECAR_BYTES:
        raise RequirementsError(f"{SIDECAR} is larger than {MAX_SIDECAR_BYTES:,} bytes")
    return data


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


def _absolute_path(path: str) -> str:
    """PATH without its relative entries: a command in the project's own folder (or `.`) is
    something the workspace provides, not something installed."""
    return os.pathsep.join(entry for entry in path.split(os.pathsep) if os.path.isabs(entry))


def _found(command: str, path: str) -> bool:
    return bool(path) and shutil.which(command, path=path) is not None
