"""A run deleted from the journal (`corral journal delete`) while the server knew it: no listing
shows it any more, and its Idempotency-Key starts a new run, whether the server kept running or
was started again since."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import open_sqlite_store
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.service import CorralClient, ServiceLimits

from ._harness import TOKEN, WAIT, Harness, open_service, reporter
from .test_restart import fanout, service

pytestmark = pytest.mark.anyio
KEY = "nightly-42"


async def finished(service: Harness, key: str | None = KEY) -> str:
    async with CorralClient(service.url, TOKEN) as client:
        run_id = str((await client.submit(service.fanout(1), idempotency_key=key))["id"])
        with anyio.fail_after(WAIT):
            [e async for e in client.events(run_id)]
    return run_id


async def delete(home: Path, run_id: str) -> None:
    """What `corral journal delete RUN` does to the journal, from outside the server."""
    async with open_sqlite_store(home / "journal.sqlite") as store:
        await store.delete_run(run_id, at=time.time())


async def listed(service: Harness, path: str) -> list[str]:
    runs: list[dict[str, Any]] = (await service.http.get(path)).json()["runs"]
    return [str(run["id"]) for run in runs]


@pytest.mark.parametrize("path", ["/v1/runs", "/v1/dashboard/runs"])
async def test_a_run_deleted_from_the_journal_is_listed_no_more(tmp_path: Path, path: str) -> None:
    async with open_service(tmp_path, reporter) as service:
        kept, deleted = await finished(service, None), await finished(service)
        assert sorted(await listed(service, path)) == sorted([kept, deleted])
        await delete(service.home, deleted)
        assert await listed(service, path) == [kept]
        gone = await service.http.get(f"/v1/runs/{deleted}")
    assert gone.status_code == 404


async def test_a_deleted_run_is_not_found_though_the_server_ran_it(tmp_path: Path) -> None:
    async with open_service(tmp_path, reporter) as service:
        deleted = await finished(service)
        await delete(service.home, deleted)
        gone = await service.http.get(f"/v1/runs/{deleted}")
    assert gone.status_code == 404


async def test_the_key_of_a_deleted_run_starts_a_new_run(tmp_path: Path) -> None:
    async with open_service(tmp_path, reporter) as service:
        first = await finished(service)
        await delete(service.home, first)
        second = await finished(service)
        again = await finished(service)
        shown = await listed(service, "/v1/runs")
    assert second != first and again == second
    assert shown == [second]


async def submitted(client: CorralClient, request: dict[str, Any]) -> str:
    run_id = str((await client.submit(request, idempotency_key=KEY))["id"])
    with anyio.fail_after(WAIT):
        [e async for e in client.events(run_id)]
    return run_id


@pytest.mark.parametrize("deleted", [True, False])
async def test_after_a_restart_the_key_starts_a_new_run_only_if_its_run_was_deleted(
    tmp_path: Path, deleted: bool
) -> None:
    home, limits = tmp_path / "home", ServiceLimits()
    async with serve_model_server(reporter) as model:
        request = fanout(1, model.base_url, tmp_path)
        async with service(home, limits, model.base_url) as client:
            first = await submitted(client, request)
        if deleted:
            await delete(home, first)
        async with service(home, limits, model.base_url) as client:
            second = await submitted(client, request)
            again = await submitted(client, request)
    assert again == second
    assert (second != first) is deleted
