"""A role of the run's config named by a service exec request: it runs with the role's
instructions, and a role the config does not have is a 422 naming the roles there are."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.orchestrator.service import CorralClient

from ._harness import TOKEN, WAIT, open_service

pytestmark = pytest.mark.anyio

ROLE = 'agents.roles.auditor={description="checks licences", instructions="List licences."}'


def exec_request(model_url: str, cwd: Path, role: str, **fields: Any) -> dict[str, Any]:
    return {
        "kind": "exec",
        "task": "audit",
        "role": role,
        "base_url": model_url,
        "cd": str(cwd),
        "config": [ROLE],
        **fields,
    }


async def test_an_exec_request_runs_a_role_of_the_runs_config(tmp_path: Path) -> None:
    sent: list[dict[str, Any]] = []

    def answer(request: dict[str, Any]) -> str:
        sent.append(request)
        return "MIT"

    async with (
        open_service(tmp_path, answer) as service,
        CorralClient(service.url, TOKEN) as client,
    ):
        body = exec_request(service.model_url, service.cwd, "auditor", run_id="run-audit")
        await client.submit(body)
        with anyio.fail_after(WAIT):
            ending = [e async for e in client.events("run-audit")][-1]
    assert (ending.event, ending.data["status"]) == ("end", "completed")
    assert sent[0]["instructions"].endswith("# Your role: auditor\n\nList licences.\n")


async def test_an_exec_request_naming_a_role_the_config_lacks_is_a_422_with_the_roles(
    tmp_path: Path,
) -> None:
    async with open_service(tmp_path, lambda request: "no") as service:
        body = exec_request(service.model_url, service.cwd, "wizard")
        answer = await service.http.post("/v1/runs", json=body)
    assert answer.status_code == 422
    assert answer.json()["error"].endswith(
        "unknown role 'wizard'; choose one of: general, supervisor, reviewer, refactorer, "
        "triager, auditor"
    )
