"""The `executor` fixture: every scenario runs once in this process and once on Temporal.

Both sides are driven through one `Seam`: `serving(config)` brings up what runs the agents
(nothing locally; a corral worker in this process on Temporal, on a queue and host of its own),
`run(job, setup, config)` is `Executor.run`, and asks for approval are seen and answered the
same way on both. One time-skipping Temporal test server serves all the scenarios, started by
the first Temporal scenario; on it an hour of silence passes in moments, so a deadline a
scenario waits out is `seam.long_s`: an hour there, a second or two here.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Iterator

import pytest
from temporalio.testing import WorkflowEnvironment

from tests.temporal._harness import time_skipping

from ._seam import EXECUTORS, LocalSeam, Seam, TemporalSeam


@pytest.fixture(scope="package")
def anyio_backend() -> str:
    # Package-wide, so the one Temporal test server outlives each scenario's event loop. Not
    # session-wide: the event loop would stay running after the scenarios, and every later test
    # that starts one of its own (a command's `main()`) would find it in its thread.
    return "asyncio"


@pytest.fixture(scope="package")
async def temporal_env() -> AsyncIterator[WorkflowEnvironment]:
    async with time_skipping() as env:
        yield env


@pytest.fixture(scope="session")
def queue_numbers() -> Iterator[int]:
    """A new number for each Temporal scenario: its task queue, host and run ids are its own."""
    return itertools.count(1)


@pytest.fixture(params=EXECUTORS)
def executor(request: pytest.FixtureRequest, queue_numbers: Iterator[int]) -> Seam:
    if request.param == "local":
        return LocalSeam()
    env: WorkflowEnvironment = request.getfixturevalue("temporal_env")
    return TemporalSeam(env, next(queue_numbers))
