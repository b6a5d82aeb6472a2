"""Flags and helpers shared by the commands that start agents (exec, resume, demo, fanout...).

Defining the flags imports nothing heavy, so that `--help` answers at once; the helpers that
load config or build executors import what they need when called.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from corral.agents import CorralConfig
    from corral.tools import InvalidInput

    from ..runs import Executor, ExecutorSettings
    from ..service import ServiceLimits

EXECUTOR_CHOICES = ("local", "temporal")
"""`corral.orchestrator.runs.EXECUTOR_KINDS`, spelled out so the flags need not import it."""


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def add_model_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", help="model name (config: model)")
    parser.add_argument(
        "--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1"
    )
    parser.add_argument(
        "--api", choices=("responses", "chat"), help="which API the endpoint speaks"
    )
    parser.add_argument(
        "-p", "--profile", help="use the [profiles.NAME] table of your config (config: profile)"
    )
    parser.add_argument(
        "-c",
        "--config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config key (TOML value), e.g. -c budgets.max_turns=20",
    )


def add_workspace_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cd", type=Path, help="working directory of the agent (default: here)")
    parser.add_argument(
        "--sandbox",
        choices=("read-only", "workspace-write", "full-access"),
        help="what the agent may change (default from config: workspace-write)",
    )


def add_output_flags(parser: argparse.ArgumentParser) -> None:
    """`-q/--quiet`: no live progress on stderr (the run id and the summary still print)."""
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="show no progress while the run goes on"
    )


def add_admission_flags(parser: argparse.ArgumentParser, *, when_full: str) -> None:
    """`--max-running`, `--max-queued`: how many runs a server executes and holds waiting
    (`[service]` gives the defaults); `when_full` says what a run past the queue gets."""
    parser.add_argument(
        "--max-running",
        type=int,
        metavar="N",
        help="runs executing at once (default: [service] max_running, 4)",
    )
    parser.add_argument(
        "--max-queued",
        type=int,
        metavar="N",
        help=f"runs waiting for a slot before new ones {when_full}"
        " (default: [service] max_queued, 16)",
    )


def service_limits(
    args: argparse.Namespace, config: CorralConfig, *, error: type[InvalidInput]
) -> ServiceLimits:
    """`--port` checked, and `--max-running`/`--max-queued` over `[service]` (flags win), for
    the servers (`serve`, `mcp-server`); a bad value raises `error`, the command's own kind."""
    from ..service import ServiceLimits

    if not 0 <= args.port <= 65535:
        raise error(f"--port {args.port} is not a port; use 0-65535")
    settings = config.service
    max_running = settings.max_running if args.max_running is None else args.max_running
    max_queued = settings.max_queued if args.max_queued is None else args.max_queued
    if max_running < 1 or max_queued < 0:
        raise error("--max-running must be >= 1 and --max-queued >= 0")
    return ServiceLimits(
        max_running=max_running, max_queued=max_queued, on_restart=settings.on_restart
    )


def add_executor_flags(parser: argparse.ArgumentParser) -> None:
    """`--executor`, `--temporal-address`, `--temporal-namespace`: where the run executes."""
    group = parser.add_argument_group("executor")
    group.add_argument(
        "--executor",
        choices=EXECUTOR_CHOICES,
        help="run the agents here (local) or on corral workers of a Temporal server "
        "(config: executor, default local)",
    )
    group.add_argument(
        "--temporal-address",
        metavar="HOST:PORT",
        help="the Temporal server's frontend (config: temporal.address, 127.0.0.1:7233)",
    )
    group.add_argument(
        "--temporal-namespace", metavar="NS", help="config: temporal.namespace (default)"
    )


def executor_settings(args: argparse.Namespace, config: CorralConfig) -> ExecutorSettings:
    """The executor flags over `config`'s `executor` and `[temporal]`; flags win."""
    from ..runs import resolve_executor_settings

    return resolve_executor_settings(
        config,
        kind=getattr(args, "executor", None),
        address=getattr(args, "temporal_address", None),
        namespace=getattr(args, "temporal_namespace", None),
    )


def cli_executor(args: argparse.Namespace, config: CorralConfig) -> Executor:
    """The executor the flags and `config` ask for; Temporal's SDK is loaded only for it."""
    from ..runs import executor_from_settings

    return executor_from_settings(executor_settings(args, config))


def resolve_cwd(raw: Path | None) -> Path:
    from corral.tools import InvalidInput

    cwd = (raw or Path.cwd()).expanduser()
    if not cwd.is_dir():
        raise InvalidInput(f"--cd {cwd}: not a directory; give an existing folder")
    return cwd.resolve()


def load_cli_config(args: argparse.Namespace, cwd: Path) -> CorralConfig:
    from corral.agents import load_config

    overrides: dict[str, Any] = {
        "model": getattr(args, "model", None),
        "base_url": getattr(args, "base_url", None),
        "model_provider_api": getattr(args, "api", None),
        "sandbox_mode": getattr(args, "sandbox", None),
        "profile": getattr(args, "profile", None),
    }
    loaded = load_config(cwd=cwd, overrides=overrides, cli_settings=args.config)
    check_journal_writable(loaded.config)
    return loaded.config


def check_journal_writable(config: CorralConfig) -> None:
    """Refuse to start a run whose journal cannot be written (a read-only home, a mounted
    snapshot): it failed at the first write, after printing a run id that was never kept."""
    import os

    from corral.tools import InvalidInput

    from ..runs import journal_path

    if config.journal.url is not None:
        return  # a shared database: its own errors say what is wrong
    path = journal_path(config)
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    writable = os.access(folder, os.W_OK | os.X_OK) and (
        not path.exists() or os.access(path, os.W_OK)
    )
    if not writable:
        raise InvalidInput(
            f"cannot write the journal {path}: {folder} is read-only to corral; every run is "
            "written there, so set CORRAL_HOME to a folder you can write to (`corral runs`, "
            "`status` and `export` still read this one)"
        )
