"""Secrets stay secret: the API token and the model key appear in no answer, event, log or file."""

from __future__ import annotations

import logging
from pathlib import Path

import anyio
import pytest

from corral.orchestrator.service import CorralClient

from ._harness import TOKEN, WAIT, open_service, reporter

pytestmark = pytest.mark.anyio

MODEL_KEY = "sk-model-key-that-must-never-leak-0123456789"


async def test_no_answer_event_log_line_or_journal_holds_the_token_or_the_model_key(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    shown: list[str] = []
    env = {"OPENAI_API_KEY": MODEL_KEY}
    async with open_service(tmp_path, reporter, env=env) as service:
        async with CorralClient(service.url, TOKEN) as client:
            run_id = (await client.submit(service.fanout(2)))["id"]
            with anyio.fail_after(WAIT):
                shown += [repr(e) async for e in client.events(run_id)]
        for path in ("", "/agents", "/items", "/results", "/events"):
            shown.append((await service.http.get(f"/v1/runs/{run_id}{path}")).text)
        shown.append((await service.http.get("/v1/runs")).text)
        shown.append((await service.http.get("/openapi.json")).text)
        refused = await service.http.get("/v1/runs", headers={"Authorization": f"Bearer {TOKEN}x"})
        shown.append(refused.text + str(refused.headers))
    files = b"".join(p.read_bytes() for p in service.home.rglob("*") if p.is_file())
    assert "done" in shown[-6]
    for secret in (TOKEN, MODEL_KEY):
        assert all(secret not in text for text in shown)
        assert secret not in caplog.text
        assert secret.encode() not in files
