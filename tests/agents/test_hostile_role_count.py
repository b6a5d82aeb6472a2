"""A config that defines roles by the thousand: each one's name and description go into the
spawn tool's schema of every request (and every Temporal workflow's input), so past
`MAX_ROLES` the config is refused with one line saying how many may be defined, whichever layer
and spelling (`[agents.roles.NAME]`, Codex's `[agents.NAME]`) they came in."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.agents._config._role_model import MAX_ROLES
from tests.agents._config_files import load_error, write

pytestmark = pytest.mark.hostile

DESCRIPTION = "d" * 100  # 5,000 roles stay under the 1 MiB a config file may hold


def corral_roles(count: int) -> str:
    return "".join(
        f'[agents.roles.r{n}]\ndescription = "{DESCRIPTION}"\ninstructions = "x"\n'
        for n in range(count)
    )


def codex_roles(count: int) -> str:
    return "".join(
        f'[agents.r{n}]\ndescription = "{DESCRIPTION}"\ndeveloper_instructions = "x"\n'
        for n in range(count)
    )


WHERE = {
    "user, corral's tables": ("home", corral_roles),
    "user, Codex's tables": ("home", codex_roles),
    "untrusted project, corral's tables": ("project", corral_roles),
    "untrusted project, Codex's tables": ("project", codex_roles),
}


@pytest.mark.parametrize("count", [MAX_ROLES + 1, 5000])
@pytest.mark.parametrize("where", sorted(WHERE))
def test_more_roles_than_the_cap_is_a_one_line_config_error(
    where: str, count: int, home: Path, project: Path
) -> None:
    layer, tables = WHERE[where]
    path = home / "config.toml" if layer == "home" else project / ".corral" / "config.toml"
    write(path, tables(count))
    message = load_error(project, home)
    assert f"at most {MAX_ROLES}" in message and "\n" not in message
