"""`corral model-server`: the scripted OpenAI-compatible server as a command.

Turns flags into `ModelServerOptions`, loads the policy, prints one line with the base URL when
the server is ready, and serves until SIGINT or SIGTERM, which end it cleanly with exit code 0.
"""

from __future__ import annotations

import argparse
import gc
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from corral.orchestrator.model_server import (
        ModelServerOptions,
    )


_DESCRIPTION = (
    "Serve POST /v1/responses and /v1/chat/completions (streaming and not), GET /v1/models and "
    "GET /stats, answering from a Python policy, a recorded cassette, or a real upstream."
)


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "model-server",
        help="run the scripted OpenAI-compatible model server",
        description=_DESCRIPTION,
    )
    p.add_argument("--policy", metavar="PATH.py:FUNC", help="function answering each request")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0 picks a free port (the default)")
    p.add_argument("--log", type=Path, metavar="FILE", help="write each request as a JSON line")
    p.add_argument("--latency-ms", type=int, default=0, help="delay before the first byte")
    p.add_argument("--max-concurrency", type=int, metavar="N", help="queue requests beyond N")
    p.add_argument(
        "--rpm", type=int, metavar="N", help="answer N requests per minute; 429 past that"
    )
    p.add_argument("--tpm", type=int, metavar="N", help="answer N tokens per minute; 429 past that")
    _add_fault_flags(p)
    p.add_argument(
        "--record", type=Path, metavar="FILE", help="record a cassette (needs --upstream)"
    )
    p.add_argument("--upstream", metavar="URL", help="OpenAI-compatible base URL to record from")
    p.add_argument("--replay", type=Path, metavar="FILE", help="answer from a recorded cassette")
    p.set_defaults(handler=run_model_server)


def _add_fault_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--fail-rate", type=float, default=0.0, help="share of requests answered 500")
    p.add_argument("--ratelimit-rate", type=float, default=0.0, help="share answered 429")
    p.add_argument("--disconnect-rate", type=float, default=0.0, help="share cut off midway")
    p.add_argument("--seed", type=int, default=0, help="seed of the fault draws")
    p.add_argument("--retry-after", type=float, default=1.0, help="seconds sent with a 429")
    p.add_argument(
        "--fault-plan",
        default="",
        metavar="LIST",
        help="faults for the first requests, e.g. 429,500,disconnect,ok; then the rates apply",
    )


def options_from_args(args: argparse.Namespace) -> ModelServerOptions:
    from corral.orchestrator.model_server import FaultRates, ModelServerOptions, parse_fault_plan

    return ModelServerOptions(
        host=args.host,
        port=args.port,
        latency_ms=args.latency_ms,
        max_concurrency=args.max_concurrency,
        faults=FaultRates(args.fail_rate, args.ratelimit_rate, args.disconnect_rate),
        seed=args.seed,
        retry_after=args.retry_after,
        fault_plan=parse_fault_plan(args.fault_plan),
        log_path=args.log,
        record_path=args.record,
        upstream=args.upstream,
        replay_path=args.replay,
        rpm=args.rpm,
        tpm=args.tpm,
        keep_requests=False,  # nothing can read them from outside; --log writes them
    )


async def run_model_server(args: argparse.Namespace) -> int:
    import anyio

    from corral.orchestrator.model_server import load_policy, serve_model_server

    options = options_from_args(args)
    policy = load_policy(args.policy) if args.policy else None
    # The receiver is in place before the ready line, so a signal sent right after it is caught.
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with serve_model_server(policy, options) as server:
            # What start-up built lives as long as the process: no full collection need walk it.
            gc.freeze()
            print(f"corral model-server: listening on {server.base_url}", flush=True)
            async for _ in signals:
                break
    print("corral model-server: stopped", file=sys.stderr, flush=True)
    return 0
