"""Where settings come from: TOML files, environment variables and command-line flags.

Each source becomes a `ConfigLayer` of nested tables with Codex spellings lifted onto corral's
keys and relative paths made absolute against the file's folder (or the cwd for flags).
Merging the layers and validating the result is `_load`'s job.
"""

from __future__ import annotations

import copy
import logging
import os
import stat
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ._codex import ignored_warning, strip_codex
from ._codex_roles import translate_codex_roles
from ._errors import ConfigError

logger = logging.getLogger("corral.config")
Key = tuple[str, ...]
LayerKind = Literal["default", "user", "project", "profile", "env", "flags"]

CONFIG_FILE_NAME = "config.toml"
PROJECT_CONFIG_DIR = ".corral"
CONFIG_FILE_MAX_BYTES = 1024 * 1024
"""The largest config file read (1 MiB): the largest written by hand is a few KiB."""
# Environment variable -> dotted key. The base URL falls back to the SDK's own variable.
ENV_KEYS = {
    "CORRAL_MODEL": "model",
    "CORRAL_API": "model_provider_api",
    "CORRAL_SANDBOX": "sandbox_mode",
    "CORRAL_APPROVAL_POLICY": "approval_policy",
    "CORRAL_EXECUTOR": "executor",
    "CORRAL_TEMPORAL_ADDRESS": "temporal.address",
    "CORRAL_TEMPORAL_NAMESPACE": "temporal.namespace",
    "CORRAL_JOURNAL_URL": "journal.url",
}
BASE_URL_VARS = ("CORRAL_BASE_URL", "OPENAI_BASE_URL")
_SANDBOX_TABLE = "sandbox_workspace_write"
_SANDBOX_TABLE_KEYS = ("writable_roots", "network_access")


@dataclass(frozen=True)
class ConfigLayer:
    """One source of settings, in the order they apply (later wins).

    `source` is "default", the file's path, "environment" or "flags"; `labels` name the exact
    variable or flag behind a key where `source` alone would not.
    """

    kind: LayerKind
    source: str
    values: Mapping[str, Any]
    labels: Mapping[Key, str] = field(default_factory=dict)
    path: Path | None = None
    ignored: tuple[str, ...] = ()
    """Codex keys this source set that corral does not use, taken out before validation."""

    def label(self, key: Key) -> str:
        """Who set `key` in this layer: a file path, "env NAME" or "flag ..."."""
        for end in range(len(key), 0, -1):
            if key[:end] in self.labels:
                return self.labels[key[:end]]
        # A table filled by flags: name the first flag that wrote into it.
        below = (label for k, label in self.labels.items() if k[: len(key)] == key)
        return next(below, self.source)


def corral_home(env: Mapping[str, str], cwd: Path | None = None) -> Path:
    """`$CORRAL_HOME` (relative to `cwd`, default the process's), else `~/.corral`."""
    value = env.get("CORRAL_HOME", "").strip()
    if not value:
        return _user_home(env) / ".corral"
    path = Path(value).expanduser()
    return path if path.is_absolute() else (cwd or Path.cwd()) / path


def read_file_layer(path: Path, kind: LayerKind) -> ConfigLayer | None:
    """The layer in the TOML file at `path`, or None when there is no such file."""
    try:
        text = _read_config_bytes(path).decode("utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc.strerror}") from exc
    try:
        # Editors on Windows save a byte-order mark, which TOML does not allow but means nothing.
        values = tomllib.loads(text.removeprefix("\ufeff"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc
    roles = translate_codex_roles(values, folder=path.parent, project=kind == "project")
    ignored = _without_codex_keys(values, str(path), also=roles)
    layer = ConfigLayer(kind, str(path), values, path=path, ignored=ignored)
    normalise(values, base=path.parent, label=layer.label)
    return layer


def _read_config_bytes(path: Path) -> bytes:
    """At most `CONFIG_FILE_MAX_BYTES` of the regular file at `path`. A project's file is the
    repository's to write (a model's too): a sparse `truncate -s 100G` must not be read whole,
    nor a FIFO swapped in after it was found wait for a writer for ever."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ConfigError(f"{path}: not a regular file; a config file must be one")
        data = handle.read(CONFIG_FILE_MAX_BYTES + 1)
    if len(data) > CONFIG_FILE_MAX_BYTES:
        raise ConfigError(
            f"{path}: larger than {CONFIG_FILE_MAX_BYTES // 2**20} MiB, which no config file "
            "needs; shorten it"
        )
    return data


def find_project_file(cwd: Path, markers: Sequence[str]) -> Path | None:
    """The nearest `.corral/config.toml` from `cwd` up to the project root (cwd if no root)."""
    chain = [cwd, *cwd.parents]
    root = next((i for i, d in enumerate(chain) if any((d / m).exists() for m in markers)), 0)
    for folder in chain[: root + 1]:
        candidate = folder / PROJECT_CONFIG_DIR / CONFIG_FILE_NAME
        if candidate.is_file():
            return candidate
    return None


def env_layer(env: Mapping[str, str], home: Path) -> ConfigLayer | None:
    """The settings named by `CORRAL_*` variables; empty variables count as unset."""
    values: dict[str, Any] = {}
    labels: dict[Key, str] = {}
    named = [(var, key) for var, key in ENV_KEYS.items()]
    named += [(var, "base_url") for var in reversed(BASE_URL_VARS)]  # the first one wins
    for var, key in named:
        value = env.get(var, "").strip()
        if value:
            _set(values, tuple(key.split(".")), value, labels, f"env {var}")
    if env.get("CORRAL_HOME", "").strip():
        values["home"] = str(home)
        labels[("home",)] = "env CORRAL_HOME"
    return ConfigLayer("env", "environment", values, labels) if values else None


def flags_layer(
    overrides: Mapping[str, Any], cli_settings: Sequence[str], cwd: Path
) -> ConfigLayer | None:
    """`-c key=value` settings, then flag values by dotted key (None: the flag was not given)."""
    values: dict[str, Any] = {}
    labels: dict[Key, str] = {}
    for setting in cli_settings:
        key_text, sep, value_text = setting.partition("=")
        label = f"flag -c {key_text.strip()}"
        if not sep:
            raise ConfigError(f"{label}: expected key=value, e.g. -c model=gpt-5.4")
        key = parse_key(key_text, label)
        _set(values, key, parse_setting_value(value_text), labels, label)
    # A dedicated flag (`--model`) is more specific than a `-c` setting, so it wins.
    for dotted, value in overrides.items():
        if value is not None:
            label = "flag --" + dotted.replace("_", "-")
            _set(values, parse_key(dotted, label), copy.deepcopy(value), labels, label)
    ignored = _without_codex_keys(values, "flags")
    if not values:
        return None
    layer = ConfigLayer("flags", "flags", values, labels, ignored=ignored)
    normalise(values, base=cwd, label=layer.label)
    return layer


def parse_key(text: str, source: str) -> Key:
    """Split a dotted key the way TOML does, so `mcp_servers."a.b".url` keeps its quotes."""
    try:
        node: Any = tomllib.loads(f"{text} = 0")
    except tomllib.TOMLDecodeError:
        raise ConfigError(
            f"{source}: `{text.strip()}` is not a key; use a dotted name like shell.max_timeout_ms"
        ) from None
    parts: list[str] = []
    while isinstance(node, dict) and len(node) == 1:
        ((name, node),) = node.items()
        parts.append(name)
    return tuple(parts)


def parse_setting_value(text: str) -> Any:
    """A `-c` value as TOML (`5`, `true`, `["a"]`), else the plain string."""
    try:
        return tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        return text.strip()


def normalise(values: dict[str, Any], *, base: Path, label: Callable[[Key], str]) -> None:
    """Reject `home` and `key_endpoints`, lift `[sandbox_workspace_write]`, and make relative
    paths absolute.

    `label` names who set a key, for the error message.
    """
    if "home" in values:
        where = label(("home",))
        raise ConfigError(f"{where}: `home` cannot be set here; set CORRAL_HOME instead")
    if "key_endpoints" in values:
        where = label(("key_endpoints",))
        raise ConfigError(
            f"{where}: `key_endpoints` cannot be set; it lists the `base_url` values your own "
            "config, environment and flags name: set `base_url` instead"
        )
    _lift_sandbox_table(values, label((_SANDBOX_TABLE,)))
    if "model_instructions_file" in values:
        values["model_instructions_file"] = _absolute(values["model_instructions_file"], base)
    roots = values.get("writable_roots")
    if isinstance(roots, list):
        values["writable_roots"] = [_absolute(root, base) for root in roots]
    servers = values.get("mcp_servers")
    for server in servers.values() if isinstance(servers, dict) else ():
        if isinstance(server, dict) and "cwd" in server:
            server["cwd"] = _absolute(server["cwd"], base)
    skills = values.get("skills")
    if isinstance(skills, dict) and isinstance(skills.get("dirs"), list):
        skills["dirs"] = [_absolute(d, base) for d in skills["dirs"]]
    toggles = skills.get("config") if isinstance(skills, dict) else None
    for toggle in toggles if isinstance(toggles, list) else ():
        if isinstance(toggle, dict) and "path" in toggle:
            toggle["path"] = _absolute(toggle["path"], base)
    agents = values.get("agents")
    roles = agents.get("roles") if isinstance(agents, dict) else None
    for role in roles.values() if isinstance(roles, dict) else ():
        if isinstance(role, dict) and "instructions_file" in role:
            role["instructions_file"] = _absolute(role["instructions_file"], base)


_warned: set[str] = set()


def _without_codex_keys(
    values: dict[str, Any], source: str, also: Sequence[str] = ()
) -> tuple[str, ...]:
    try:
        ignored = sorted({*strip_codex(values), *also})
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    message = ignored_warning(source, ignored)
    # Once per process: a command that loads its config twice still warns once.
    if ignored and message not in _warned:
        _warned.add(message)
        logger.warning(message)
    return tuple(ignored)


def _lift_sandbox_table(values: dict[str, Any], source: str) -> None:
    table = values.pop(_SANDBOX_TABLE, None)
    if table is None:
        return
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: {_SANDBOX_TABLE} must be a table, e.g. [{_SANDBOX_TABLE}]")
    for name, value in table.items():
        if name not in _SANDBOX_TABLE_KEYS:
            allowed = ", ".join(_SANDBOX_TABLE_KEYS)
            raise ConfigError(
                f"unknown key `{_SANDBOX_TABLE}.{name}` in {source}; corral reads {allowed}"
            )
        values[name] = value


def _set(values: dict[str, Any], key: Key, value: Any, labels: dict[Key, str], label: str) -> None:
    node = values
    for part in key[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[key[-1]] = value
    labels[key] = label


def _absolute(value: Any, base: Path) -> Any:
    if not isinstance(value, (str, os.PathLike)):
        return value  # validation reports the wrong type with the key's origin
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else base / path)


def _user_home(env: Mapping[str, str]) -> Path:
    home = env.get("HOME", "").strip()
    return Path(home) if home else Path.home()
