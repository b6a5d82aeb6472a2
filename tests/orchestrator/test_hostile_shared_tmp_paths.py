"""Attacks through fixed paths in the host's shared temporary folders.

Any local user can create `/tmp/anything` before corral does. A fixed path there that corral
runs, imports or reads as trusted is code or data that user chose: a fan-out's parent started
`/tmp/i18b/child_dbg.py` as every worker process when `I18B_DBG` was set (a debugging leftover).
Paths inside the sandbox's own private `/tmp` are not the host's and are allowed by name.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.hostile

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("agents", "tools", "orchestrator", "observability")
SHARED = ("/tmp/", "/var/tmp/", "/dev/shm/")
SANDBOX_ONLY = {"/tmp/.corral-netproxy"}
"""Mount points inside the sandbox's private /tmp, never looked up on the host."""


def fixed_shared_paths(package: str) -> list[str]:
    found: list[str] = []
    for source in sorted((ROOT / package).rglob("*.py")):
        tree = ast.parse(source.read_text(), filename=str(source))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
                continue
            if node.value.startswith(SHARED) and node.value not in SANDBOX_ONLY:
                found.append(f"{source.relative_to(ROOT)}:{node.lineno}: {node.value}")
    return found


@pytest.mark.parametrize(
    "package",
    PACKAGES,
)
def test_no_module_names_a_fixed_path_in_a_shared_temporary_folder(package: str) -> None:
    assert fixed_shared_paths(package) == []
