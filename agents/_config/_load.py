"""Loading the effective configuration: layers merged in order, validated once, origins kept.

Order, later wins: built-in defaults, `$CORRAL_HOME/config.toml`, the project's
`.corral/config.toml`, the selected `[profiles.NAME]`, `CORRAL_*` environment variables, then
flags and `-c key=value`. Codex's `model_provider` fills in the endpoint keys no layer set.
Tables merge deeply; scalars and arrays replace. Every validation error is traced back to the
layer that set the key, so its message names the file, variable or flag to fix. The project file
applies in full only to a trusted project (`_trust`); the endpoints the user's own layers name
are kept as `key_endpoints`, the only ones an API key from the environment goes to.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from ._errors import ConfigError
from ._loaded import DEFAULT_ORIGIN, LoadedConfig
from ._model import DEFAULT_ROOT_MARKERS, CorralConfig
from ._role_files import with_role_files
from ._schema_keys import array_of_tables, field_names
from ._sources import (
    CONFIG_FILE_NAME,
    ConfigLayer,
    Key,
    corral_home,
    env_layer,
    find_project_file,
    flags_layer,
    normalise,
    read_file_layer,
)
from ._trust import ProjectVerdict, judge_project


def load_config(
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    cli_settings: Sequence[str] = (),
) -> LoadedConfig:
    """Read every layer for a run in `cwd` and validate the merged result.

    `env` defaults to `os.environ`. `overrides` maps dotted keys to flag values (None: the flag
    was not given); `cli_settings` are `-c key=value` strings, values parsed as TOML.
    """
    environ = os.environ if env is None else env
    cwd = Path(os.path.abspath(cwd))
    layers, verdict = _read_layers(cwd, environ, overrides or {}, cli_settings)
    layers = with_profile(layers, cwd)
    merged, key_layers = _merge_all(layers)
    provider_url = apply_provider(merged, layers, key_layers)
    merged["key_endpoints"] = _named_endpoints(layers) + ([provider_url] if provider_url else [])
    config = _validate(merged, layers, key_layers)
    loaded = _with_instructions_file(LoadedConfig(config, layers, key_layers, verdict))
    return with_role_files(loaded)


def _read_layers(
    cwd: Path, env: Mapping[str, str], overrides: Mapping[str, Any], cli_settings: Sequence[str]
) -> tuple[tuple[ConfigLayer, ...], ProjectVerdict | None]:
    home = corral_home(env, cwd)
    user = read_file_layer(home / CONFIG_FILE_NAME, "user")
    project_path = find_project_file(cwd, _root_markers(user))
    project = verdict = None
    # With CORRAL_HOME at ~/.corral and the cwd at ~, both layers are the same file: read it once.
    if project_path is not None and not (user and user.path and project_path.samefile(user.path)):
        project = read_file_layer(project_path, "project")
    if project is not None:
        project, verdict = judge_project(project, user, home)
    candidates = (
        ConfigLayer("default", DEFAULT_ORIGIN, {"home": str(home)}),
        user,
        project,
        env_layer(env, home),
        flags_layer(overrides, cli_settings, cwd),
    )
    return tuple(layer for layer in candidates if layer is not None), verdict


def _named_endpoints(layers: Sequence[ConfigLayer]) -> list[str]:
    """Every `base_url` a layer names; an untrusted project's was dropped before this."""
    urls = (layer.values.get("base_url") for layer in layers)
    return [url.strip().rstrip("/") for url in urls if isinstance(url, str) and url.strip()]


def _root_markers(user: ConfigLayer | None) -> Sequence[str]:
    # As in Codex, only the user file may move the project root: the project file is found by it.
    markers = user.values.get("project_root_markers") if user else None
    if isinstance(markers, list) and all(isinstance(m, str) for m in markers):
        return markers
    return DEFAULT_ROOT_MARKERS


def _merge_all(layers: Sequence[ConfigLayer]) -> tuple[dict[str, Any], dict[Key, int]]:
    merged: dict[str, Any] = {}
    key_layers: dict[Key, int] = {}
    for index, layer in enumerate(layers):
        _merge(merged, layer.values, (), index, key_layers)
    return merged, key_layers


def with_profile(layers: tuple[ConfigLayer, ...], cwd: Path) -> tuple[ConfigLayer, ...]:
    """`layers` with the selected `[profiles.NAME]` table as a layer of its own, after the
    files and before the environment and flags (Codex: flags > profile > config.toml)."""
    merged, key_layers = _merge_all(layers)
    name = merged.get("profile")
    if not isinstance(name, str):
        return layers  # none selected, or the wrong type, which validation reports
    profiles = merged.get("profiles")
    table = profiles.get(name) if isinstance(profiles, dict) else None
    if not isinstance(table, dict):
        where = _where(("profile",), layers, key_layers)
        raise ConfigError(
            f"{where}: profile = {_show(name)}: no [profiles.{name}] table defines it; "
            "add one to your config.toml or pick another profile"
        )
    source = layers[key_layers[("profiles", name)]]
    values = copy.deepcopy(table)
    label = f"profile {name} in {source.label(('profiles', name))}"
    normalise(values, base=source.path.parent if source.path else cwd, label=lambda _: label)
    at = next((i for i, layer in enumerate(layers) if layer.kind in ("env", "flags")), len(layers))
    profile = ConfigLayer("profile", label, values)
    return (*layers[:at], profile, *layers[at:])


def apply_provider(
    merged: dict[str, Any], layers: tuple[ConfigLayer, ...], key_layers: dict[Key, int]
) -> str | None:
    """Fill `base_url`, `model_api_key_env` and `model_provider_api` from the `[model_providers]`
    table `model_provider` names, where no layer set them; returns the endpoint it filled in.

    An untrusted project's provider keys were dropped before this, so the endpoint is one the
    user's own layers name and the key may go to it.
    """
    name = merged.get("model_provider")
    providers = merged.get("model_providers")
    table = providers.get(name) if isinstance(providers, dict) and isinstance(name, str) else None
    if name is None or (table is None and name == "openai"):
        return None
    if table is None and isinstance(name, str) and name in BUILTIN_PROVIDERS:
        _fill_builtin_provider(name, merged, key_layers)
        return None
    if not isinstance(table, dict):
        where = _where(("model_provider",), layers, key_layers)
        raise ConfigError(
            f"{where}: model_provider = {_show(name)}: no [model_providers.{name}] table; "
            "add one with base_url, env_key and wire_api, use a built-in one (openai, "
            f"{', '.join(BUILTIN_PROVIDERS)}), or remove the key"
        )
    filled = None
    for ours, theirs in _PROVIDER_KEYS:
        if theirs in table and (ours,) not in key_layers:
            merged[ours] = table[theirs]
            key_layers[(ours,)] = key_layers[("model_providers", name, theirs)]
            filled = table[theirs] if ours == "base_url" else filled
    return filled.strip().rstrip("/") if isinstance(filled, str) and filled.strip() else None


# Codex's built-in local providers: a `model_provider` naming one needs no table. Their servers
# take no API key, so none is sent (a loopback server gets corral's placeholder key).
BUILTIN_PROVIDERS: Mapping[str, str] = {
    "ollama": "http://localhost:11434/v1",
    "oss": "http://localhost:11434/v1",
    "lmstudio": "http://localhost:1234/v1",
}


def _fill_builtin_provider(name: str, merged: dict[str, Any], key_layers: dict[Key, int]) -> None:
    chosen_by = key_layers[("model_provider",)]
    # Chat Completions: what every version of these local servers speaks.
    for key, value in (("base_url", BUILTIN_PROVIDERS[name]), ("model_provider_api", "chat")):
        if (key,) not in key_layers:
            merged[key] = value
            key_layers[(key,)] = chosen_by


_PROVIDER_KEYS = (
    ("base_url", "base_url"),
    ("model_api_key_env", "env_key"),
    ("model_provider_api", "wire_api"),
)


def _merge(
    into: dict[str, Any], values: Mapping[str, Any], prefix: Key, index: int, seen: dict[Key, int]
) -> None:
    for name, value in values.items():
        key = (*prefix, name)
        seen[key] = index
        if isinstance(value, Mapping):
            if not isinstance(into.get(name), dict):
                into[name] = {}
            _merge(into[name], value, key, index, seen)
        else:
            into[name] = value


def _validate(
    merged: dict[str, Any], layers: tuple[ConfigLayer, ...], key_layers: Mapping[Key, int]
) -> CorralConfig:
    try:
        return CorralConfig.model_validate(merged)
    except ValidationError as exc:
        problems = [_describe(error, layers, key_layers) for error in exc.errors(include_url=False)]
        raise ConfigError("\n".join(problems)) from exc


def _describe(
    error: ErrorDetails, layers: tuple[ConfigLayer, ...], key_layers: Mapping[Key, int]
) -> str:
    loc = tuple(part for part in error["loc"] if isinstance(part, str))  # list indices dropped
    where, key, kind = _where(loc, layers, key_layers), ".".join(loc), error["type"]
    ctx = error.get("ctx", {})
    if kind == "extra_forbidden":
        return f"unknown key `{key}` in {where}{_suggestion(loc)}"
    if kind == "missing":
        return f"{where}: `{key}` is required"
    if kind == "value_error":
        return f"{where}: {key}: {ctx['error']}"
    given = f"{key} = {_show(error['input'])} is not allowed"
    if kind in ("tuple_type", "list_type"):
        if array_of_tables(loc):
            return f"{where}: {given}: use an array of tables, e.g. [[{key}]] followed by its keys"
        example = _show(error["input"] if isinstance(error["input"], str) else "...")
        return f"{where}: {given}: use an array, e.g. {key} = [{example}]"
    if kind in ("dict_type", "model_type"):
        return f"{where}: {given}: use a table, e.g. [{key}] followed by its keys"
    if kind in ("enum", "literal_error"):
        allowed = ", ".join(re.findall(r"'([^']*)'", ctx["expected"]))
        return f"{where}: {given}; use one of {allowed}"
    message = error["msg"]
    return f"{where}: {given}: {message[:1].lower()}{message[1:]}"


def _where(loc: Key, layers: tuple[ConfigLayer, ...], key_layers: Mapping[Key, int]) -> str:
    for end in range(len(loc), 0, -1):
        if loc[:end] in key_layers:
            label = layers[key_layers[loc[:end]]].label(loc[:end])
            return label.replace("env ", "environment variable ", 1)
    return DEFAULT_ORIGIN


def _suggestion(loc: Key) -> str:
    # Only a near miss (`modle`, `max_thread`): a loose match suggests unrelated keys. A key
    # that is the first word of exactly one allowed key (`sandbox` for `sandbox_mode`) is one.
    names = field_names(loc[:-1]) or []
    close = difflib.get_close_matches(loc[-1], names, n=1, cutoff=0.75)
    longer = [name for name in names if name.startswith(f"{loc[-1]}_")]
    if not close and len(longer) == 1:
        close = longer
    return f"; did you mean `{'.'.join((*loc[:-1], close[0]))}`?" if close else ""


def _show(value: Any) -> str:
    return json.dumps(value, default=str, ensure_ascii=False)


def _with_instructions_file(loaded: LoadedConfig) -> LoadedConfig:
    config, key = loaded.config, ("model_instructions_file",)
    path = config.model_instructions_file
    # The file replaces `base_instructions` unless a later layer set that text itself.
    if path is None or loaded.key_layers.get(("base_instructions",), -1) > loaded.key_layers[key]:
        return loaded
    where = _where(key, loaded.layers, loaded.key_layers)
    given = f"model_instructions_file = {_show(str(path))}"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            f"{where}: {given}: no such file; create it or point the key at an existing file"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{where}: {given}: cannot be read: {exc}") from exc
    config = config.model_copy(update={"base_instructions": text})
    return LoadedConfig(config, loaded.layers, loaded.key_layers, loaded.project)
