"""The user's and the project's folders that the config tests write files into and load from.

`home` is `$CORRAL_HOME` (`<tmp>/home/.corral`, so `$HOME` is its parent) and `project` a git
root (`<tmp>/proj` with `.git`); `load` reads the layers from them with no other environment.
`conftest.py` offers the two fixtures to every test under `tests/agents/`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from corral.agents._config import ConfigError, LoadedConfig, load_config


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home" / ".corral"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    return root


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def trusting(project: Path) -> str:
    """The user-file entry that trusts `project`'s own `.corral/config.toml`, as Codex writes it."""
    return f'[projects."{project.resolve()}"]\ntrust_level = "trusted"\n'


def load(
    cwd: Path,
    home: Path,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    cli_settings: Sequence[str] = (),
) -> LoadedConfig:
    """The config a command started in `cwd` would load, with `home` as the only user layer."""
    environ = {"HOME": str(home.parent), "CORRAL_HOME": str(home), **(env or {})}
    return load_config(cwd=cwd, env=environ, overrides=overrides, cli_settings=cli_settings)


def load_error(cwd: Path, home: Path, **kwargs: Any) -> str:
    """The message of the `ConfigError` that loading raises (it must exit 2)."""
    with pytest.raises(ConfigError) as caught:
        load(cwd, home, **kwargs)
    assert caught.value.exit_code == 2
    return str(caught.value)
