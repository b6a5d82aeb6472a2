"""Connecting to a Temporal server, failing at once with a clear message when none answers.

Every client and worker of corral connects here, with the pydantic data converter (corral's
workflow arguments are pydantic models) and a short deadline: a wrong address or a stopped
server is a `TemporalUnavailable` naming the address, never a hang.
"""

from __future__ import annotations

from dataclasses import dataclass

import anyio
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter

from ._errors import TemporalUnavailable
from ._wire import SHARED_QUEUE

CONNECT_TIMEOUT = 5.0
DEFAULT_NAMESPACE = "default"


@dataclass(frozen=True)
class TemporalSettings:
    """Where the Temporal server is, and which queue corral's workflows use there."""

    address: str
    namespace: str = DEFAULT_NAMESPACE
    task_queue: str = SHARED_QUEUE
    connect_timeout: float = CONNECT_TIMEOUT


async def connect(settings: TemporalSettings) -> Client:
    """A client of the server at `settings.address`; raises `TemporalUnavailable` within
    `connect_timeout` seconds when it cannot be reached."""
    try:
        with anyio.fail_after(settings.connect_timeout):
            return await Client.connect(
                settings.address,
                namespace=settings.namespace,
                data_converter=pydantic_data_converter,
            )
    except TimeoutError as exc:
        raise _unavailable(settings, f"no answer within {settings.connect_timeout:g} s") from exc
    except (RuntimeError, OSError, ValueError) as exc:
        raise _unavailable(settings, str(exc)) from exc


def _unavailable(settings: TemporalSettings, why: str) -> TemporalUnavailable:
    return TemporalUnavailable(
        f"cannot reach the Temporal server at {settings.address} "
        f"(namespace {settings.namespace}): {why}. Start the server (for a local one: "
        "`temporal server start-dev`) or fix --temporal-address, or run with --executor local"
    )
