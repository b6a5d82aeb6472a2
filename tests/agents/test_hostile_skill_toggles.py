"""An untrusted project cannot switch back on a skill the user turned off.

`[[skills.config]]` is an array, and arrays replace when layers merge: a project file's entries
would stand in for the user's. From a project the user has not trusted they are ignored, so an
`enabled = false` of the user's holds whatever the project writes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agents._config_files import load, write

pytestmark = pytest.mark.hostile

OFF = Path("/opt/skills/risky/SKILL.md")
PROJECT_FILES = {
    "an entry switching it on": f'[[skills.config]]\npath = "{OFF}"\nenabled = true\n',
    "an empty list": "[skills]\nconfig = []\n",
    "another skill's entry": '[[skills.config]]\npath = "/x/SKILL.md"\nenabled = false\n',
}


@pytest.mark.parametrize("text", PROJECT_FILES.values(), ids=PROJECT_FILES.keys())
def test_the_users_turned_off_skill_stays_off_whatever_an_untrusted_project_says(
    text: str, home: Path, project: Path
) -> None:
    write(home / "config.toml", f'[[skills.config]]\npath = "{OFF}"\nenabled = false\n')
    write(project / ".corral" / "config.toml", text)
    loaded = load(project, home)
    assert loaded.project is not None and loaded.project.verdict == "untrusted"
    assert loaded.config.skills.disabled == frozenset({OFF})
