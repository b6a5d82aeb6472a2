"""A Codex config that narrows the sandbox with `default_permissions` never runs agents wider.

Codex picks the sandbox from `default_permissions` (a built-in `:read-only`, `:workspace`,
`:danger-full-access`, or a `[permissions.NAME]` profile of the user's), over `sandbox_mode`.
Skipping the key, as corral once did, ran a user's `:read-only` agents in workspace-write, or in
the full access a leftover `sandbox_mode` named. A built-in profile is now the sandbox; one
whose rules corral cannot follow is refused with one line, never run wider.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.tools import SandboxMode
from tests.agents._config_files import load, load_error, write

pytestmark = pytest.mark.hostile

NARROWED = {
    "read-only over a full-access sandbox_mode": (
        'sandbox_mode = "danger-full-access"\ndefault_permissions = ":read-only"\n',
        SandboxMode.READ_ONLY,
    ),
    "read-only alone": ('default_permissions = ":read-only"\n', SandboxMode.READ_ONLY),
    "workspace over a full-access sandbox_mode": (
        'default_permissions = ":workspace"\nsandbox_mode = "danger-full-access"\n',
        SandboxMode.WORKSPACE_WRITE,
    ),
    "read-only in the chosen profile": (
        'sandbox_mode = "danger-full-access"\nprofile = "review"\n'
        '[profiles.review]\ndefault_permissions = ":read-only"\n',
        SandboxMode.READ_ONLY,
    ),
}


@pytest.mark.parametrize("case", NARROWED.values(), ids=NARROWED.keys())
def test_a_built_in_permission_profile_is_the_sandbox_agents_get(
    case: tuple[str, SandboxMode], home: Path, project: Path
) -> None:
    text, meant = case
    write(home / "config.toml", text)
    assert load(project, home).config.sandbox_mode is meant


CUSTOM = {
    "a profile of the user's own": (
        'default_permissions = "docs-only"\n[permissions.docs-only.filesystem]\n'
        '":workspace_roots" = "read"\n'
    ),
    "one extending a built-in": (
        'default_permissions = "strict"\n[permissions.strict]\nextends = ":read-only"\n'
    ),
    "one in a profile": 'profile = "p"\n[profiles.p]\ndefault_permissions = "locked"\n',
    "not a name": "default_permissions = 7\n",
}


@pytest.mark.parametrize("text", CUSTOM.values(), ids=CUSTOM.keys())
def test_a_permission_profile_corral_cannot_follow_is_refused_not_run_wider(
    text: str, home: Path, project: Path
) -> None:
    write(home / "config.toml", text)
    message = load_error(project, home)
    assert message.startswith(f"{home / 'config.toml'}: default_permissions = ")
    assert "set sandbox_mode" in message and "\n" not in message
