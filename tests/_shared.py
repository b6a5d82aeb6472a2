"""The real data sets in `shared/`, beside the clone: skills, MCP tool catalogs and Codex's
apply_patch scenarios. A clone on its own has none of them; a test that needs one skips with one
line naming the folder, and with `shared/` present (as in CI) every such test runs."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def shared_folder(name: str) -> Path:
    """`shared/data/NAME`, where the data set `name` would be (it may be missing), with any
    symlink on the way resolved, as the commands under test report paths."""
    return (SHARED / "data" / name).resolve()


def shared_data(name: str) -> Path:
    """`shared/data/NAME`, or skip the calling test with the folder it needs."""
    folder = shared_folder(name)
    if not folder.is_dir():
        pytest.skip(f"needs {folder} (clone corral beside shared/ to run it)")
    return folder


def needs_shared(name: str) -> pytest.MarkDecorator:
    """A mark that skips a test (or module) when `shared/data/NAME` is missing."""
    folder = shared_folder(name)
    return pytest.mark.skipif(
        not folder.is_dir(), reason=f"needs {folder} (clone corral beside shared/ to run it)"
    )
