"""Which executor a run goes to, read from flags and config, and the executors' errors.

Kept apart from `_executor` (the protocol and its implementations) so that the Temporal adapter
and the commands can use the settings without importing what runs the agents.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from corral.agents import CorralConfig
from corral.tools import InvalidInput

ExecutorKind = Literal["local", "temporal"]
EXECUTOR_KINDS: tuple[ExecutorKind, ...] = ("local", "temporal")
INSTALL_HINT = "pip install 'corral[temporal]'"
_ADDRESS = re.compile(r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):(\d{1,5})")


class ExecutorSettingsError(InvalidInput):
    """The executor asked for cannot be set up: a bad address, or the Temporal extra missing."""


class NotOnThisExecutor(InvalidInput):
    """The run asked for cannot be carried out by the executor asked for."""


class UnknownRunApproval(InvalidInput):
    """No run this executor carries out has an approval with that id."""


class ApprovalRefused(InvalidInput):
    """The run's approval takes no answer: it was answered already, or is not pending."""


@dataclass(frozen=True)
class ExecutorSettings:
    """Which executor runs go to, and for Temporal, where its server is."""

    kind: ExecutorKind = "local"
    address: str = "127.0.0.1:7233"
    namespace: str = "default"
    task_queue: str = "corral"
    journal_url: str | None = None
    """The shared PostgreSQL journal (`[journal] url`), whose database also keeps payloads that
    cross Temporal by reference."""


def resolve_executor_settings(
    config: CorralConfig,
    *,
    kind: str | None = None,
    address: str | None = None,
    namespace: str | None = None,
) -> ExecutorSettings:
    """The settings from `config` (`executor`, `[temporal]`), each flag given beating it."""
    chosen = kind or config.executor
    if chosen not in EXECUTOR_KINDS:
        raise ExecutorSettingsError(f"--executor {chosen}: choose one of local, temporal")
    if address is not None:
        check_address(address, "--temporal-address")
    elif chosen == "temporal":
        check_address(config.temporal.address, "config temporal.address")
    return ExecutorSettings(
        kind="temporal" if chosen == "temporal" else "local",
        address=address or config.temporal.address,
        namespace=namespace or config.temporal.namespace,
        task_queue=config.temporal.task_queue,
        journal_url=config.journal.url,
    )


def check_address(address: str, source: str) -> None:
    """Refuse anything but HOST:PORT (an IPv6 host in brackets), naming where it came from."""
    match = _ADDRESS.fullmatch(address.strip())
    if match is None or not 0 < int(match.group(1)) < 65536:
        raise ExecutorSettingsError(
            f"{source} {address!r} is not HOST:PORT; give the Temporal server's frontend, "
            "e.g. 127.0.0.1:7233"
        )
