"""A Codex config that switches off a tool corral always offers, in any of Codex's spellings
(`include_apply_patch_tool = false`, `tools_view_image = false`, `[tools] view_image = false`,
`[features] view_image_tool = false`...), at the top or in a profile. Skipped with the warning,
as they were, agents got the tool the user had turned off; they are refused in one line, as
`[features] shell_tool = false` already was, saying what to set instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agents._config_files import load_error, write

pytestmark = pytest.mark.hostile

SWITCHES = {
    "include_apply_patch_tool": ("include_apply_patch_tool = false\n", "apply_patch"),
    "tools_view_image": ("tools_view_image = false\n", "view_image"),
    "include_view_image_tool": ("include_view_image_tool = false\n", "view_image"),
    "tools.view_image": ("[tools]\nview_image = false\n", "view_image"),
    "features.view_image_tool": ("[features]\nview_image_tool = false\n", "view_image"),
}


def in_profile(text: str) -> str:
    if text.startswith("["):
        return text.replace("[", "[profiles.quiet.", 1) + '[profiles.quiet]\nmodel = "m"\n'
    return f'[profiles.quiet]\nmodel = "m"\n{text}'


@pytest.mark.parametrize("where", ["top", "profile"])
@pytest.mark.parametrize("name", sorted(SWITCHES))
def test_a_codex_switch_that_turns_a_tool_off_is_refused_not_skipped(
    name: str, where: str, home: Path, project: Path
) -> None:
    text, tool = SWITCHES[name]
    write(home / "config.toml", text if where == "top" else in_profile(text))
    message = load_error(project, home)
    assert f"= false turns off the {tool} tool" in message
    assert 'sandbox_mode = "read-only"' in message and "\n" not in message
