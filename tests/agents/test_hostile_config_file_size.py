"""A config file is read up to 1 MiB, never whole: a project's `.corral/config.toml` is the
repository's to write (a model's too), and a sparse `truncate -s 100G` of it made every later
run in the repository read 100 GB into memory. Each location is refused in one line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from corral.agents import ConfigError, load_config
from corral.agents._config._sources import CONFIG_FILE_MAX_BYTES

pytestmark = pytest.mark.hostile


@pytest.mark.parametrize("where", ["project", "user"])
@pytest.mark.parametrize("extra", [1, 64 * 1024 * 1024], ids=["one-byte-over", "sparse-64mib"])
def test_a_config_file_past_the_cap_is_refused_unread(
    tmp_path: Path, where: str, extra: int
) -> None:
    repo, home = tmp_path / "repo", tmp_path / "home"
    (repo / ".git").mkdir(parents=True)
    home.mkdir()
    folder = repo / ".corral" if where == "project" else home
    folder.mkdir(exist_ok=True)
    big = folder / "config.toml"
    with big.open("wb") as handle:
        handle.write(b"# " + b"x" * 100 + b"\n")
        handle.truncate(CONFIG_FILE_MAX_BYTES + extra)  # the rest is a hole: no disk is used
    with pytest.raises(ConfigError) as refused:
        load_config(cwd=repo, env={"CORRAL_HOME": str(home), "HOME": str(tmp_path)})
    assert str(refused.value) == (
        f"{big}: larger than 1 MiB, which no config file needs; shorten it"
    )


def test_a_config_file_at_the_cap_is_read(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    text = b'model = "m"\n'
    (home / "config.toml").write_bytes(
        text + b"#" * (CONFIG_FILE_MAX_BYTES - len(text) - 1) + b"\n"
    )
    loaded = load_config(cwd=tmp_path, env={"CORRAL_HOME": str(home), "HOME": str(tmp_path)})
    assert loaded.config.model == "m"
    assert os.path.getsize(home / "config.toml") == CONFIG_FILE_MAX_BYTES
