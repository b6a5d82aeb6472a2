"""Guards that already held before roles of one's own were used, kept next to the code that now
reads role files and role names: an untrusted project's role file outside the project is never
read, a service request may not point a role at a file on the server or widen its sandbox, and
an odd role name in a service request is refused before anything loads. (The attacks that the
new code had to stop are in `test_hostile_config_roles.py`.)"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from corral.agents import CorralConfig
from corral.orchestrator.service import ExecRequest, RequestRefused, ServicePolicy
from corral.orchestrator.service._policy import resolve_run_config
from tests.agents._config_files import home, load, project, write

from .test_hostile_config_roles import (
    SECRET,
    link,
    project_roles,
    role_text,
    secret,
)

__all__ = ["home", "project", "secret"]  # the fixtures, used by name


@pytest.mark.parametrize(
    "pointing",
    [
        lambda project, secret: str(secret),
        lambda project, secret: os.path.relpath(secret, project / ".corral"),
        lambda project, secret: link(project / ".corral" / "role.md", secret),
        lambda project, secret: link(project / "docs" / "up", secret.parent) + "/id_rsa",
        lambda project, secret: str(project / ".." / "home" / ".ssh" / "id_rsa"),
    ],
    ids=["absolute", "relative", "symlinked-file", "symlinked-folder", "dot-dot"],
)
def test_an_untrusted_projects_role_file_outside_the_project_is_never_read(
    project: Path, home: Path, secret: Path, pointing: Any
) -> None:
    path = pointing(project, secret)
    project_roles(project, f'[agents.roles.spy]\ninstructions_file = "{path}"\n')
    config = load(project, home).config
    spy = config.agents.roles.get("spy")
    assert spy is None or SECRET not in (role_text(config, "spy") or "")


def test_a_role_file_in_corral_home_is_not_read_from_an_untrusted_project(project: Path) -> None:
    # CORRAL_HOME inside the project: the journal and the user's files there stay out.
    corral_home = project / ".home"
    write(corral_home / "notes.md", SECRET)
    project_roles(
        project, f'[agents.roles.spy]\ninstructions_file = "{corral_home / "notes.md"}"\n'
    )
    config = load(project, corral_home).config
    assert "spy" not in config.agents.roles or SECRET not in (role_text(config, "spy") or "")


MODEL_URL = "http://127.0.0.1:9/v1"


def service_policy(tmp_path: Path) -> ServicePolicy:
    config = CorralConfig(base_url=MODEL_URL, home=tmp_path / "home")
    config = config.model_copy(
        update={"service": config.service.model_copy(update={"allowed_roots": (tmp_path,)})}
    )
    return ServicePolicy.from_config(config, tmp_path)


@pytest.mark.parametrize(
    "setting",
    [
        'agents.roles.spy.instructions_file="{secret}"',
        'agents.roles.spy={{instructions_file="{secret}"}}',
        'agents={{roles={{spy={{instructions_file="{secret}"}}}}}}',
        '"agents"."roles"."spy"."instructions_file"="{secret}"',
    ],
)
def test_a_service_request_may_not_point_a_role_at_a_file_on_the_server(
    tmp_path: Path, secret: Path, setting: str
) -> None:
    allowed = service_policy(tmp_path)
    env = {"CORRAL_HOME": str(allowed.home), "CORRAL_BASE_URL": MODEL_URL}
    with pytest.raises(RequestRefused, match="it reads a file on the server"):
        resolve_run_config(
            allowed, cwd=tmp_path, env=env, overrides={}, settings=[setting.format(secret=secret)]
        )


def test_a_service_request_may_not_give_a_role_a_sandbox_past_the_servers_allowance(
    tmp_path: Path,
) -> None:
    allowed = service_policy(tmp_path)
    env = {"CORRAL_HOME": str(allowed.home), "CORRAL_BASE_URL": MODEL_URL}
    with pytest.raises(RequestRefused, match="wider than"):
        resolve_run_config(
            allowed,
            cwd=tmp_path,
            env=env,
            overrides={},
            settings=['agents.roles.wide.sandbox_mode="danger-full-access"'],
        )


@pytest.mark.parametrize("role", ["../escape", "a\nb", "Bad Name", "x" * 41, "<role>", ""])
def test_a_service_exec_request_with_an_odd_role_name_is_refused_before_anything_loads(
    role: str,
) -> None:
    with pytest.raises(ValidationError, match="unknown role"):
        ExecRequest.model_validate({"kind": "exec", "task": "go", "role": role})
