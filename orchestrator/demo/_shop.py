"""The demo's sample repository: a small shop package on `main`, a change with real defects on
`feature`, built as a real git repository from the bundled `data/shop_repo.json`."""

from __future__ import annotations

import json
import subprocess
from importlib import resources
from pathlib import Path

_GIT_IDENTITY = ("-c", "user.name=corral demo", "-c", "user.email=demo@corral.invalid")


def write_shop_repo(root: Path) -> Path:
    """Create the repository at `root` (checked out on `main`) and return it."""
    data = json.loads(resources.files(__package__).joinpath("data/shop_repo.json").read_text())
    root.mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    _write(root, data["base"])
    _git(root, "add", "-A")
    _git(root, *_GIT_IDENTITY, "commit", "-q", "-m", "Start the shop")
    _git(root, "checkout", "-q", "-b", "feature")
    _write(root, data["change"])
    _git(root, "add", "-A")
    _git(root, *_GIT_IDENTITY, "commit", "-q", "-m", "Add totals, search and receipts")
    _git(root, "checkout", "-q", "main")
    return root


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
