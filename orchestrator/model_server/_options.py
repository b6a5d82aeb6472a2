"""The server's options and their validation; the one place that knows which flags combine.

`ModelServerOptions` is what `serve_model_server` takes and what the CLI builds from its flags;
`check_options` turns every bad combination into a `ServerOptionsError` before anything starts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ._errors import ServerOptionsError

Policy = Callable[[dict[str, Any]], Any]
"""A function from the normalised request to output items; sync or async."""

MAX_RETRY_AFTER = 86_400.0
"""The longest wait an injected 429 may ask for, in seconds: a day."""

FaultKind = Literal["server_error", "rate_limited", "disconnect"]
FAULT_KINDS: tuple[FaultKind, ...] = ("server_error", "rate_limited", "disconnect")

_PLAN_ENTRIES: dict[str, FaultKind | None] = {
    "ok": None,
    "500": "server_error",
    "server_error": "server_error",
    "429": "rate_limited",
    "rate_limited": "rate_limited",
    "disconnect": "disconnect",
}


@dataclass(frozen=True)
class FaultRates:
    """Probabilities, per request, of answering 500, answering 429, or cutting the connection."""

    fail: float = 0.0
    ratelimit: float = 0.0
    disconnect: float = 0.0


@dataclass(frozen=True)
class ModelServerOptions:
    """Everything the scripted server can be told; the defaults answer at once, without faults."""

    host: str = "127.0.0.1"
    port: int = 0
    latency_ms: int = 0
    max_concurrency: int | None = None
    faults: FaultRates = field(default_factory=FaultRates)
    seed: int = 0
    retry_after: float = 1.0
    fault_plan: tuple[str, ...] = ()
    log_path: Path | None = None
    record_path: Path | None = None
    upstream: str | None = None
    replay_path: Path | None = None
    rpm: int | None = None
    """Requests per minute the server answers; past it, 429 with Retry-After (None: no limit)."""
    tpm: int | None = None
    """Tokens per minute (input and output) the server answers; past it, 429 (None: no limit)."""
    keep_requests: bool = True
    """Keep every request's record in memory for `RunningModelServer.requests`; the CLI, which
    cannot show them, does not (its `--log` file has them)."""


def parse_fault_plan(text: str) -> tuple[str, ...]:
    """Split `429,500,disconnect,ok` into entries, checking each one."""
    entries = tuple(part.strip() for part in text.split(",") if part.strip())
    for entry in entries:
        plan_entry_kind(entry)
    return entries


def plan_entry_kind(entry: str) -> FaultKind | None:
    """The fault a plan entry stands for (None for `ok`)."""
    try:
        return _PLAN_ENTRIES[entry.strip().lower()]
    except KeyError:
        allowed = ", ".join(_PLAN_ENTRIES)
        raise ServerOptionsError(
            f"unknown fault plan entry {entry!r}; use a comma list of: {allowed}"
        ) from None


def check_options(policy: Policy | None, options: ModelServerOptions) -> None:
    """Raise `ServerOptionsError` for any option out of range or in conflict with another."""
    _check_ranges(options)
    _check_faults(options.faults)
    for entry in options.fault_plan:
        plan_entry_kind(entry)
    _check_sources(policy, options)


def _check_ranges(options: ModelServerOptions) -> None:
    if not 0 <= options.port <= 65535:
        raise ServerOptionsError(f"port {options.port} is out of range; use 0-65535 (0 picks one)")
    if options.latency_ms < 0:
        raise ServerOptionsError(f"--latency-ms must be 0 or more, not {options.latency_ms}")
    if options.max_concurrency is not None and options.max_concurrency < 1:
        raise ServerOptionsError(
            f"--max-concurrency must be at least 1, not {options.max_concurrency}"
        )
    if not 0 <= options.retry_after <= MAX_RETRY_AFTER:  # NaN fails both comparisons
        raise ServerOptionsError(
            f"--retry-after must be from 0 to {MAX_RETRY_AFTER:g} seconds (a day), "
            f"not {options.retry_after}"
        )
    for flag, limit in (("--rpm", options.rpm), ("--tpm", options.tpm)):
        if limit is not None and limit < 1:
            raise ServerOptionsError(
                f"{flag} must be at least 1, not {limit}; leave it out for no limit"
            )


def _check_faults(faults: FaultRates) -> None:
    rates = {"--fail-rate": faults.fail, "--ratelimit-rate": faults.ratelimit}
    rates["--disconnect-rate"] = faults.disconnect
    for flag, rate in rates.items():
        if not 0.0 <= rate <= 1.0:
            raise ServerOptionsError(f"{flag} must be between 0 and 1, not {rate}")
    if sum(rates.values()) > 1.0:
        raise ServerOptionsError("the fault rates add up to more than 1; lower one of them")


def _check_sources(policy: Policy | None, options: ModelServerOptions) -> None:
    recording = options.record_path is not None
    if recording != (options.upstream is not None):
        raise ServerOptionsError("--record FILE and --upstream URL go together; give both")
    if recording and options.replay_path is not None:
        raise ServerOptionsError("--record and --replay cannot be combined; pick one")
    replaying = options.replay_path is not None
    if policy is None and not (recording or replaying):
        raise ServerOptionsError(
            "a policy is required (--policy PATH.py:FUNC) unless --replay or --record is given"
        )
    if policy is not None and (recording or replaying):
        raise ServerOptionsError(
            "a policy cannot be combined with --record or --replay: those answer from the "
            "upstream or the cassette; drop --policy"
        )
