"""A model call is bounded by a retry deadline in seconds, not by a count of tries.

The scripted server injects the faults; a recording sleep stands in for the backoff, and the
waits it was asked for count towards the deadline, so nothing here waits for real.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from corral.agents._items import Message
from corral.agents.model import (
    ModelConnectionRefused,
    ModelRequest,
    ModelSettings,
    ModelUnavailable,
    RetryPolicy,
    open_model_client,
)
from corral.agents.model._types import ModelClient
from corral.orchestrator.model_server import ModelServerOptions, serve_model_server

TEST_DEADLINE = 20


class SleepRecorder:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


@asynccontextmanager
async def open_client(
    base_url: str, sleep: SleepRecorder, **settings: Any
) -> AsyncIterator[ModelClient]:
    resolved = ModelSettings.resolve(
        model="m-test", api="responses", base_url=base_url, env={}, **settings
    )
    client = open_model_client(resolved, sleep=sleep)
    try:
        yield client
    finally:
        await client.aclose()


def ask() -> ModelRequest:
    return ModelRequest(
        model="m-test", instructions="Be brief.", input=[Message(role="user", text="hi")]
    )


@pytest.mark.anyio
async def test_a_long_run_of_transient_faults_is_outlasted_when_no_attempt_cap_is_set() -> None:
    faults = ("500", "429", "disconnect") * 6
    sleep = SleepRecorder()
    with anyio.fail_after(TEST_DEADLINE):
        async with (
            serve_model_server(
                lambda request: "at last", ModelServerOptions(fault_plan=faults, retry_after=0.01)
            ) as server,
            open_client(server.base_url, sleep, backoff_initial=0.01, backoff_max=0.05) as client,
        ):
            response = await client.complete(ask())
    assert response.attempts == len(faults) + 1
    assert len(sleep.delays) == len(faults)


@pytest.mark.anyio
async def test_a_call_gives_up_when_its_next_attempt_would_start_past_the_deadline() -> None:
    sleep = SleepRecorder()
    options = ModelServerOptions(fault_plan=("500",) * 10)
    with anyio.fail_after(TEST_DEADLINE):
        async with (
            serve_model_server(lambda request: "never", options) as server,
            open_client(server.base_url, sleep, retry_deadline=1.0, backoff_initial=0.2) as client,
        ):
            with pytest.raises(ModelUnavailable, match=r"failed after 3 attempts over") as caught:
                await client.complete(ask())
    # Waits of about 0.2 and 0.4 s fit in 1 s; the next (about 0.8 s) would not.
    assert len(sleep.delays) == 2 and caught.value.last_status == 500


@pytest.mark.anyio
async def test_a_retry_after_beyond_the_deadline_ends_the_call_without_waiting() -> None:
    sleep = SleepRecorder()
    options = ModelServerOptions(fault_plan=("429",), retry_after=30.0)
    with anyio.fail_after(TEST_DEADLINE):
        async with (
            serve_model_server(lambda request: "late", options) as server,
            open_client(server.base_url, sleep, retry_deadline=5.0) as client,
        ):
            with pytest.raises(ModelUnavailable, match="failed after 1 attempts"):
                await client.complete(ask())
    assert sleep.delays == []


@pytest.mark.anyio
async def test_refused_connections_end_the_call_after_a_few_in_a_row_not_the_deadline() -> None:
    sleep = SleepRecorder()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with anyio.fail_after(TEST_DEADLINE):
        async with open_client(f"http://127.0.0.1:{port}/v1", sleep) as client:
            with pytest.raises(ModelConnectionRefused, match="refused the connection on 5"):
                await client.complete(ask())
    assert len(sleep.delays) == RetryPolicy().refused_attempts - 1


def test_the_backoff_stays_finite_however_many_attempts_a_deadline_allows() -> None:
    policy = RetryPolicy(backoff_initial=0.2, backoff_max=20.0)
    assert 18.0 <= policy.backoff(5_000) <= 20.0
