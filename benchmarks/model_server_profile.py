"""Where the scripted model server's CPU goes per request, for the fan-out's requests.

The requests are a real fan-out worker's: one worker of `benchmarks._fanout_modes` is run
against a logging server and its five request bodies are kept; then many virtual agents replay
them, each under its own `prompt_cache_key` (so the prefix-cache bookkeeping does its real work),
streamed, `--concurrency` at a time, against a fresh server answering `benchmarks.turns:policy`.
Printed: the server's CPU per request (read from /proc, without a profiler), its `/stats`
figures, and, with `--profile`, a second pass under cProfile (CPU time) grouped by package and by
corral's own functions. Run:

    .venv/bin/python -m benchmarks.model_server_profile --agents 1000 --concurrency 256 \
        --latency-ms 200 --profile
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import json
import os
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio

from ._server import model_server, model_server_argv, server_cpu

POLICY = "benchmarks.turns:policy"
SERVE_PROFILED = "--serve-profiled"
"""First argument of this module's second use: `corral model-server` under cProfile."""
REQUEST_TIMEOUT = 60.0
_PRELOADED = (
    "corral.orchestrator.cli._model_server",
    "corral.orchestrator.model_server",
    "uvicorn.protocols.http.httptools_impl",
    "benchmarks.turns",
)


def capture_bodies(home: Path) -> list[bytes]:
    """The request bodies, in order, of one fan-out worker run against a logging server."""
    from ._fanout_modes import drive_fanout

    log = home / "requests.jsonl"
    with model_server(POLICY, "--log", str(log)) as url:
        anyio.run(drive_fanout, url, 1, 1, home, 1)
    with log.open(encoding="utf-8") as lines:
        records = [json.loads(line) for line in lines]
    return [json.dumps(record["body"]).encode() for record in records]


def replayed(body: bytes, agent: int) -> bytes:
    """`body` as virtual agent `agent` sends it: its own cache key, the same bytes otherwise."""
    request = json.loads(body)
    request["prompt_cache_key"] = f"{request['prompt_cache_key']}-{agent}"
    return json.dumps(request).encode()


async def drive(url: str, bodies: list[bytes], agents: int, concurrency: int) -> int:
    """Each virtual agent sends the bodies in order, reading every answer to its end."""
    import aiohttp

    sent = 0
    limit = anyio.Semaphore(concurrency)
    connector = aiohttp.TCPConnector(limit=concurrency)
    headers = {"content-type": "application/json", "authorization": "Bearer bench"}
    async with aiohttp.ClientSession(connector=connector, headers=headers) as session:

        async def agent(index: int) -> None:
            nonlocal sent
            async with limit:
                for body in bodies:
                    data = replayed(body, index)
                    with anyio.fail_after(REQUEST_TIMEOUT):
                        async with session.post(f"{url}/responses", data=data) as reply:
                            await reply.read()
                            reply.raise_for_status()
                    sent += 1

        async with anyio.create_task_group() as group:
            for index in range(agents):
                group.start_soon(agent, index)
    return sent


def stats(url: str) -> dict[str, Any]:
    import urllib.request

    with urllib.request.urlopen(url.removesuffix("/v1") + "/stats", timeout=10) as reply:
        figures: dict[str, Any] = json.load(reply)
    return figures


@contextmanager
def profiled_server(out: Path, *options: str) -> Iterator[str]:
    """The server run by this module under cProfile, writing its stats to `out` when stopped."""
    argv = [sys.executable, "-m", "benchmarks.model_server_profile", SERVE_PROFILED, str(out)]
    with model_server_argv([*argv, "model-server", "--policy", POLICY, *options]) as url:
        yield url


def serve_profiled(out: str, argv: list[str]) -> int:
    """`corral ARGV` under cProfile counting CPU time (not the loop's waits), dumped to `out`."""
    from corral.orchestrator.cli import main

    for module in _PRELOADED:  # start-up is not what is measured
        importlib.import_module(module)
    profiler = cProfile.Profile(time.process_time)
    profiler.enable()
    try:
        code = main(argv)
    finally:
        profiler.disable()
        profiler.dump_stats(out)
    return code


def measure(url: str, bodies: list[bytes], agents: int, concurrency: int) -> dict[str, float]:
    before, wall = server_cpu(url), time.perf_counter()
    sent = anyio.run(drive, url, bodies, agents, concurrency)
    cpu, wall = server_cpu(url) - before, time.perf_counter() - wall
    return {"requests": sent, "server_cpu_s": cpu, "wall_s": wall}


def print_profile(path: Path, requests: int, top: int) -> None:
    from .profile_turn import grouped

    profile = pstats.Stats(str(path))
    packages, corral = grouped(profile)
    total = sum(packages.values()) or 1.0
    per_request = 1000 * total / requests
    print(f"\nunder cProfile: {per_request:.3f} ms CPU per request; own time by package")
    for package, own in sorted(packages.items(), key=lambda kv: -kv[1]):
        if own / total >= 0.005:
            print(f"  {100 * own / total:5.1f}%  {1000 * own / requests:6.3f} ms/req  {package}")
    print("\ncorral's own functions and C functions by own time")
    for own, name in corral[:top]:
        print(f"  {100 * own / total:5.1f}%  {name}")
    print("\nby cumulative time")
    profile.sort_stats("cumulative").print_stats(top)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == SERVE_PROFILED:
        sys.exit(serve_profiled(sys.argv[2], sys.argv[3:]))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=128)
    parser.add_argument("--latency-ms", type=int, default=0, help="the server's --latency-ms")
    parser.add_argument("--profile", action="store_true", help="a second pass under cProfile")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--repeat", type=int, default=1, help="passes per server (medians)")
    parser.add_argument(
        "--before", type=Path, help="a checkout of older code whose server is measured too"
    )
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "bench")
    with tempfile.TemporaryDirectory() as tmp:
        bodies = capture_bodies(Path(tmp))
        options = ("--latency-ms", str(args.latency_ms))
        servers = {"this checkout": None} | ({"before": args.before} if args.before else {})
        print(
            f"{args.agents} agents x {len(bodies)} requests, {args.concurrency} at a time, "
            f"{args.latency_ms} ms; load average {os.getloadavg()[0]:.1f}"
        )
        passes: dict[str, list[float]] = {name: [] for name in servers}
        for _ in range(args.repeat):  # interleaved, so the machine's noise spreads over both
            for name, code in servers.items():
                with model_server(POLICY, *options, code=code) as url:
                    figures = measure(url, bodies, args.agents, args.concurrency)
                    served = stats(url)
                passes[name].append(1000 * figures["server_cpu_s"] / max(figures["requests"], 1))
                print(
                    f"  {name}: {figures['wall_s']:.2f} s, /stats input_bytes "
                    f"{served['input_bytes']}, prefix_shared_bytes "
                    f"{served['prefix_shared_bytes']}",
                    file=sys.stderr,
                )
        for name, per_request in passes.items():
            print(f"{name}: server CPU {statistics.median(per_request):.3f} ms per request")
        requests = args.agents * len(bodies)
        if args.profile:
            out = Path(tmp) / "server.pstats"
            with profiled_server(out, *options) as url:
                anyio.run(drive, url, bodies, args.agents, args.concurrency)
            print_profile(out, requests, args.top)


if __name__ == "__main__":
    main()
