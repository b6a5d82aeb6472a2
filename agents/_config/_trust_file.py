"""Writing trust: `[projects."/folder"]` entries in the user's own `$CORRAL_HOME/config.toml`.

The file is edited as text, so its comments and layout survive: the folder's old tables are cut
out and a new one appended. The result is parsed back and compared with what was meant; a file
the edit cannot express (an inline or dotted `projects` key) is left alone with a message. What
trust means when a config is loaded is `_trust`'s job.
"""

from __future__ import annotations

import json
import os
import tempfile
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._errors import ConfigError
from ._model import DEFAULT_ROOT_MARKERS
from ._sources import CONFIG_FILE_NAME, PROJECT_CONFIG_DIR, corral_home, find_project_file
from ._sources import read_file_layer as _read_layer
from ._trust import (
    PROJECTS_TABLE,
    TRUSTED,
    Verdict,
    fingerprint_of,
    project_fingerprint,
    project_folder,
    verdict_of,
)


@dataclass(frozen=True)
class TrustTarget:
    """The folder a `corral trust DIR` is about (the one whose `.corral/` applies in DIR), its
    project file if there is one, and the fingerprint of that file's widening keys now."""

    folder: Path
    file: Path | None
    fingerprint: str


@dataclass(frozen=True)
class TrustListing:
    """One entry of the user file's `[projects]`, and what it says of the project as it is now."""

    folder: str
    trust_level: str
    verdict: Verdict


def user_config_file(env: Mapping[str, str], cwd: Path) -> Path:
    return corral_home(env, cwd) / CONFIG_FILE_NAME


def trust_folder(directory: Path, env: Mapping[str, str]) -> Path:
    """The folder trust in `directory` is keyed by, found without reading the project's file
    (so trust in a project whose file is broken can still be revoked)."""
    directory, home = _directory(directory, env)
    file = _project_file(directory, home)
    return project_folder(file) if file is not None else directory


def trust_target(directory: Path, env: Mapping[str, str]) -> TrustTarget:
    """Which project `directory` belongs to, found the way `load_config` finds it."""
    directory, home = _directory(directory, env)
    file = _project_file(directory, home)
    layer = _read_layer(file, "project") if file is not None else None
    if layer is None:
        # No project file yet: trust the folder as it is, so any widening key added later asks.
        empty = directory / PROJECT_CONFIG_DIR / CONFIG_FILE_NAME
        return TrustTarget(directory, None, fingerprint_of(empty, {}))
    return TrustTarget(
        project_folder(layer.path or directory), file, project_fingerprint(layer, home)
    )


def write_trust(user_file: Path, folder: Path, fingerprint: str | None) -> None:
    """Record `folder` as trusted with `fingerprint` (None: remove its entries) in `user_file`."""
    text = _read_text(user_file)
    old = _parse(user_file, text)
    projects = {k: v for k, v in old.get(PROJECTS_TABLE, {}).items() if not _same(k, folder)}
    new_text = _without_tables(text, folder).rstrip("\n")
    new_text = f"{new_text}\n" if new_text else ""
    if fingerprint is not None:
        projects[str(folder)] = {"trust_level": TRUSTED, "trusted_hash": fingerprint}
        new_text = _append_table(new_text, folder, fingerprint)
    expected = {k: v for k, v in old.items() if k != PROJECTS_TABLE}
    if projects:
        expected[PROJECTS_TABLE] = projects
    if _parse(user_file, new_text, quiet=True) != expected:
        raise ConfigError(
            f"{user_file}: cannot update its [projects] entries safely (are they inline or "
            f'dotted keys?); edit it by hand: [projects."{folder}"] trust_level = "trusted"'
        )
    _replace(user_file, new_text)


def list_trust(env: Mapping[str, str], cwd: Path) -> list[TrustListing]:
    """The user file's trust entries, each judged against its project's file as it is now."""
    user = _read_layer(user_config_file(env, cwd), "user")
    table = user.values.get(PROJECTS_TABLE) if user else None
    listing: list[TrustListing] = []
    for name, entry in (table or {}).items():
        if not isinstance(entry, Mapping):
            continue
        folder = Path(name).expanduser()
        try:
            now = trust_target(folder, env).fingerprint if folder.is_dir() else ""
        except ConfigError:  # its file is broken now: not what was trusted
            now = ""
        level = str(entry.get("trust_level", ""))
        listing.append(TrustListing(name, level, verdict_of(entry, now)))
    return listing


def _directory(directory: Path, env: Mapping[str, str]) -> tuple[Path, Path]:
    if not directory.is_dir():
        raise ConfigError(f"{directory}: not a directory; give the project's folder")
    directory = directory.resolve()
    return directory, corral_home(env, directory)


def _project_file(directory: Path, home: Path) -> Path | None:
    user = _read_layer(home / CONFIG_FILE_NAME, "user")
    return find_project_file(directory, _markers(user.values if user else {}))


def _markers(values: Mapping[str, Any]) -> Sequence[str]:
    markers = values.get("project_root_markers")
    if isinstance(markers, list) and all(isinstance(m, str) for m in markers):
        return markers
    return DEFAULT_ROOT_MARKERS


def _same(name: str, folder: Path) -> bool:
    return Path(name).expanduser().resolve() == folder


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot be read: {exc}") from exc


def _parse(path: Path, text: str, *, quiet: bool = False) -> dict[str, Any]:
    try:
        return tomllib.loads(text.removeprefix("\ufeff"))  # a BOM, as the loader allows
    except tomllib.TOMLDecodeError as exc:
        if quiet:
            return {"<invalid>": str(exc)}
        raise ConfigError(f"{path}: invalid TOML: {exc}; fix it before trusting a project") from exc


def _without_tables(text: str, folder: Path) -> str:
    """`text` without the `[projects."..."]` tables naming `folder` (header to next header)."""
    kept: list[str] = []
    skipping = False
    for line in text.splitlines(keepends=True):
        header = _header(line)
        if header is not None:
            skipping = len(header) == 2 and header[0] == PROJECTS_TABLE and _same(header[1], folder)
        if not skipping:
            kept.append(line)
    return "".join(kept)


def _header(line: str) -> tuple[str, ...] | None:
    """The dotted name of a `[table]` header line, `("[[",)` for an array's, else None."""
    stripped = line.strip()
    if stripped.startswith("[["):
        return ("[[",)
    if not stripped.startswith("["):
        return None
    try:
        node: Any = tomllib.loads(stripped)
    except tomllib.TOMLDecodeError:
        return None  # a line inside a multi-line array or string
    parts: list[str] = []
    while isinstance(node, dict) and len(node) == 1:
        ((name, node),) = node.items()
        parts.append(name)
    return tuple(parts)


def _append_table(text: str, folder: Path, fingerprint: str) -> str:
    if text and not text.endswith("\n"):
        text += "\n"
    key = json.dumps(str(folder), ensure_ascii=False)
    table = f'[{PROJECTS_TABLE}.{key}]\ntrust_level = "{TRUSTED}"\ntrusted_hash = "{fingerprint}"\n'
    return f"{text}\n{table}" if text.strip() else table


def _replace(path: Path, text: str) -> None:
    """Write `text` to `path` atomically, keeping its mode (0600 for a new file)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else 0o600
    fd, temp = tempfile.mkstemp(prefix=".config-", suffix=".toml", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
