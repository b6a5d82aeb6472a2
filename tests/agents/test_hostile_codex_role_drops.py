"""A Codex `[agents.NAME]` role that turns something off with a setting corral does not read:
`[features] shell_tool = false`, `include_apply_patch_tool = false`, `tools_view_image = false`,
`[permissions]`, `web_search = "disabled"`... Dropped, the setting's loss would hand the worker
the tool or the right its author took away, so the role is skipped whole (a spawn asking for it
is refused) and named in the warning line, inline or in its `config_file`."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tests.agents._config_files import load, write

pytestmark = pytest.mark.hostile

TURNED_OFF = {
    "no shell": "[features]\nshell_tool = false\n",
    "no unified exec": "[features]\nunified_exec = false\n",
    "no apply_patch": "include_apply_patch_tool = false\n",
    "no view_image": "tools_view_image = false\n",
    "no web search tool": "tools_web_search = false\n",
    "tools table": "[tools]\nview_image = false\n",
    "permissions": '[permissions]\ndefault = ":read-only"\n',
    "web search off": 'web_search = "disabled"\n',
    "no login shell": "allow_login_shell = false\n",
    "notify": 'notify = ["notify-send", "done"]\n',
    "apps": "[apps]\nenabled = false\n",
}


@pytest.mark.parametrize("inline", [True, False], ids=["inline", "config_file"])
@pytest.mark.parametrize("setting", TURNED_OFF.values(), ids=TURNED_OFF.keys())
def test_a_role_turning_something_off_that_corral_cannot_honour_is_skipped_whole(
    setting: str, inline: bool, home: Path, project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    body = 'developer_instructions = "careful"\n'
    if inline:
        # Tables inside the role's table: `[agents.careful.features]` and so on.
        lines = [
            "[agents.careful." + line[1:] if line.startswith("[") else line
            for line in setting.splitlines(keepends=True)
        ]
        text = "[agents.careful]\n" + body + "".join(lines)
    else:
        write(home / "agents" / "careful.toml", body + setting)
        text = '[agents.careful]\nconfig_file = "agents/careful.toml"\n'
    write(home / "config.toml", text)
    caplog.set_level(logging.WARNING, logger="corral.config")
    assert "careful" not in load(project, home).config.agents.roles
    warned = [r.getMessage() for r in caplog.records if "ignored Codex settings" in r.getMessage()]
    assert any(line.endswith("agents.careful") or "agents.careful," in line for line in warned)
