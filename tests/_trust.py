"""Trusting a test's project the way a user does: an entry in their own config file."""

from __future__ import annotations

from pathlib import Path


def trust_project(home: Path, folder: Path) -> None:
    """Append Codex's `[projects."..."] trust_level = "trusted"` for `folder` to `home`'s file."""
    home.mkdir(parents=True, exist_ok=True)
    with (home / "config.toml").open("a", encoding="utf-8") as file:
        file.write(f'\n[projects."{folder.resolve()}"]\ntrust_level = "trusted"\n')
