"""Where a run's agents execute: the `Executor` seam, its local default and how one is chosen.

`LocalExecutor` runs agents in this process (the anyio runtime); the Temporal one, built by
`executor_from_settings` only when asked for, hands runs to corral workers of a Temporal server
(`_on_temporal`, which needs the optional `corral[temporal]` extra). `run_fanout` and
`run_single_agent` dispatch to `RunSetup.executor`, so every pipeline built on them follows.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from agents import CorralConfig
from tools import InvalidInput

from ._single import RunSetup, SingleOutcome, run_single_agent
from .fanout import DEFAULT_MAX_RESULT_TRIES, FanoutItem, FanoutOutcome, StartCallback, run_fanout

ExecutorKind = Literal["local", "temporal"]
EXECUTOR_KINDS: tuple[ExecutorKind, ...] = ("local", "temporal")
INSTALL_HINT = "pip install 'corral[temporal]'"
_ADDRESS = re.compile(r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):(\d{1,5})")


class ExecutorSettingsError(InvalidInput):
    """The executor asked for cannot be set up: a bad address, or the Temporal extra missing."""


class NotOnThisExecutor(InvalidInput):
    """The run asked for cannot be carried out by the executor asked for."""


class Executor(Protocol):
    """Carries out runs; both methods take what the local functions of the same name take."""

    @property
    def kind(self) -> ExecutorKind: ...

    async def run_fanout(
        self,
        config: CorralConfig,
        items: Sequence[FanoutItem] | Sequence[Mapping[str, Any]],
        template: str,
        schema: Any,
        *,
        cwd: Path,
        setup: RunSetup,
        concurrency: int | None = None,
        run_id: str | None = None,
        out: Path | str | None = None,
        max_result_tries: int = DEFAULT_MAX_RESULT_TRIES,
        tools: Sequence[str] | None = None,
        on_start: StartCallback | None = None,
        role: str = "general",
    ) -> FanoutOutcome: ...

    async def run_single(
        self,
        config: CorralConfig,
        task: str,
        *,
        cwd: Path,
        setup: RunSetup,
        run_id: str | None = None,
        role: str = "general",
    ) -> SingleOutcome: ...


@dataclass(frozen=True)
class LocalExecutor:
    """Runs agents in this process: the default, and what a `RunSetup` without one gets."""

    @property
    def kind(self) -> ExecutorKind:
        return "local"

    async def run_fanout(
        self,
        config: CorralConfig,
        items: Sequence[FanoutItem] | Sequence[Mapping[str, Any]],
        template: str,
        schema: Any,
        *,
        cwd: Path,
        setup: RunSetup,
        concurrency: int | None = None,
        run_id: str | None = None,
        out: Path | str | None = None,
        max_result_tries: int = DEFAULT_MAX_RESULT_TRIES,
        tools: Sequence[str] | None = None,
        on_start: StartCallback | None = None,
        role: str = "general",
    ) -> FanoutOutcome:
        # `run_fanout` dispatches only to executors that are not local, so this cannot loop.
        return await run_fanout(
            config,
            items,
            template,
            schema,
            cwd=cwd,
            setup=setup,
            concurrency=concurrency,
            run_id=run_id,
            out=out,
            max_result_tries=max_result_tries,
            tools=tools,
            on_start=on_start,
            role=role,
        )

    async def run_single(
        self,
        config: CorralConfig,
        task: str,
        *,
        cwd: Path,
        setup: RunSetup,
        run_id: str | None = None,
        role: str = "general",
    ) -> SingleOutcome:
        return await run_single_agent(config, task, cwd=cwd, setup=setup, run_id=run_id, role=role)


@dataclass(frozen=True)
class ExecutorSettings:
    """Which executor runs go to, and for Temporal, where its server is."""

    kind: ExecutorKind = "local"
    address: str = "127.0.0.1:7233"
    namespace: str = "default"
    task_queue: str = "corral"


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
    )


def check_address(address: str, source: str) -> None:
    """Refuse anything but HOST:PORT (an IPv6 host in brackets), naming where it came from."""
    match = _ADDRESS.fullmatch(address.strip())
    if match is None or not 0 < int(match.group(1)) < 65536:
        raise ExecutorSettingsError(
            f"{source} {address!r} is not HOST:PORT; give the Temporal server's frontend, "
            "e.g. 127.0.0.1:7233"
        )


def executor_from_settings(settings: ExecutorSettings) -> Executor:
    """The executor `settings` ask for; Temporal's SDK is imported only when it is Temporal."""
    if settings.kind == "local":
        return LocalExecutor()
    try:
        from ._on_temporal import TemporalRunner
    except ImportError as exc:
        if (exc.name or "").partition(".")[0] != "temporalio":
            raise
        raise ExecutorSettingsError(
            f"--executor temporal needs Temporal's SDK, which is not installed: {INSTALL_HINT} "
            "(or run with --executor local)"
        ) from exc
    return TemporalRunner.from_settings(settings)


def refuse_remote(chosen: Executor | ExecutorSettings | None, what: str, why: str) -> None:
    """Raise `NotOnThisExecutor` unless `chosen` is local (or none): `what` cannot run there,
    because `why`."""
    if chosen is not None and chosen.kind != "local":
        raise NotOnThisExecutor(
            f"{what} cannot run with --executor {chosen.kind}: {why}; use --executor local"
        )
