"""Fan-out throughput: N items at concurrency C against the scripted server at L ms latency.

Each worker makes two model requests (a `report_result` call, then a one-line answer) and has no
other tool, so the run measures the orchestration itself. The server runs in its own process,
so the CPU time measured here is the client process's alone (its journal included). Run:

    .venv/bin/python -m benchmarks.fanout --items 1000 --concurrency 256 --latency-ms 200
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
import urllib.request
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import anyio

from corral.agents import CorralConfig, RateLimit
from corral.orchestrator.fanout import run_fanout
from corral.orchestrator.runs import FanoutJob, RunSetup, WorkerTemplate

from ._server import model_server

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
TEMPLATE = "Item {n}: report it."
_ITEM = re.compile(r"Item (\d+):")


def policy(request: dict[str, Any]) -> Any:
    """Report the item's number, then answer in one line."""
    if any(item.get("type") == "function_call_output" for item in request["input"]):
        return "reported"
    numbers = _ITEM.findall(json.dumps(request["input"]))
    arguments = json.dumps({"n": int(numbers[-1])})
    return [{"type": "function_call", "name": "report_result", "arguments": arguments}]


def numbered_job(count: int, concurrency: int, home: Path) -> FanoutJob:
    """`count` items `{"n": N}`, each worker reporting its number back, without core tools."""
    return FanoutJob(
        items=tuple({"n": n} for n in range(count)),
        template=TEMPLATE,
        result_schema=SCHEMA,
        cwd=home,
        concurrency=concurrency,
        worker=WorkerTemplate(tools=()),
    )


def serve_numbers(latency_ms: int) -> AbstractContextManager[str]:
    """The scripted server answering this module's `policy`, with `latency_ms` per request."""
    return model_server("benchmarks.fanout:policy", "--latency-ms", str(latency_ms))


def server_stats(base_url: str) -> dict[str, Any]:
    with urllib.request.urlopen(base_url.removesuffix("/v1") + "/stats", timeout=10) as reply:
        stats: dict[str, Any] = json.load(reply)
    return stats


async def measure(
    items: int, concurrency: int, in_flight: int, base_url: str, home: Path
) -> dict[str, Any]:
    limit = RateLimit(max_concurrency=in_flight)
    config = CorralConfig(home=home, base_url=base_url, rate_limits={"default": limit})
    cpu, wall = time.process_time(), time.perf_counter()
    outcome = await run_fanout(config, numbered_job(items, concurrency, home), RunSetup(env={}))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    wrong = [o.index for o in outcome.items if o.status != "done" or o.result != {"n": o.index}]
    return {"makespan_s": wall, "client_cpu_s": cpu, "done": outcome.done, "wrong": wrong}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--latency-ms", type=int, default=200)
    parser.add_argument(
        "--max-in-flight",
        type=int,
        help="the endpoint limiter's window (rate_limits max_concurrency; default: concurrency)",
    )
    args = parser.parse_args()
    in_flight = args.max_in_flight or args.concurrency
    with tempfile.TemporaryDirectory() as tmp, serve_numbers(args.latency_ms) as url:
        figures = anyio.run(measure, args.items, args.concurrency, in_flight, url, Path(tmp))
        stats = server_stats(url)
    requests = stats["requests"]["total"]
    ideal = -(-args.items // args.concurrency) * 2 * args.latency_ms / 1000
    print(f"items            {args.items} ({figures['done']} done, wrong: {figures['wrong'][:5]})")
    print(f"concurrency      {args.concurrency} (limiter window {in_flight})")
    print(f"latency          {args.latency_ms} ms; ideal makespan {ideal:.1f} s")
    print(f"makespan         {figures['makespan_s']:.2f} s")
    print(f"items/s          {args.items / figures['makespan_s']:.1f}")
    print(f"model requests   {requests}")
    print(
        f"client CPU       {figures['client_cpu_s']:.2f} s = "
        f"{1000 * figures['client_cpu_s'] / max(requests, 1):.2f} ms per model request"
    )
    print(f"max in flight    {stats['max_in_flight']}")


if __name__ == "__main__":
    main()
