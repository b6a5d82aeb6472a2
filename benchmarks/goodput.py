"""Goodput under a rate limit: a fan-out against a server that allows N requests per minute.

The scripted server runs in its own process with `--rpm N` (a token bucket that saves up one
second's worth and answers 429 with Retry-After and OpenAI's `x-ratelimit-*` headers past it).
corral is given no `[rate_limits]`: its endpoint limiter has to learn the limit from the first
429 and pace every worker to it. Each item makes two model requests (a `report_result` call,
then a one-line answer). Reported: the requests the server answered per minute while the run was
sending them, as a share of the limit, and the items that failed. Run:

    .venv/bin/python -m benchmarks.goodput --items 500 --rpm 600
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import anyio

from corral.agents import CorralConfig
from corral.orchestrator.fanout import run_fanout
from corral.orchestrator.runs import RunSetup

from ._server import model_server
from .fanout import numbered_job, server_stats


def limited_server(rpm: int, log: Path) -> AbstractContextManager[str]:
    options = ("--rpm", str(rpm), "--log", str(log))
    return model_server("benchmarks.fanout:policy", *options)


async def run_items(items: int, concurrency: int, base_url: str, home: Path) -> dict[str, Any]:
    config = CorralConfig(home=home, base_url=base_url)
    wall = time.perf_counter()
    outcome = await run_fanout(config, numbered_job(items, concurrency, home), RunSetup(env={}))
    wall = time.perf_counter() - wall
    wrong = [o.index for o in outcome.items if o.status != "done" or o.result != {"n": o.index}]
    return {"makespan_s": wall, "done": outcome.done, "failed": outcome.failed, "wrong": wrong}


def answered_times(log: Path) -> list[float]:
    """Arrival times of the requests the server answered (not refused by its bucket)."""
    times = []
    with log.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            if not record["throttled"]:
                times.append(record["time"])
    return sorted(times)


def goodput(times: list[float], rpm: int) -> tuple[float, float]:
    """Requests answered per minute from the first to the last, and that as a share of `rpm`.

    The bucket's one second of savings is left out of the count, so a burst at the start does
    not flatter the figure.
    """
    burst = rpm / 60
    span = times[-1] - times[0]
    per_minute = max(0.0, len(times) - burst) / span * 60 if span > 0 else 0.0
    return per_minute, per_minute / rpm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=500)
    parser.add_argument("--rpm", type=int, default=600)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "requests.jsonl"
        with limited_server(args.rpm, log) as url:
            figures = anyio.run(run_items, args.items, args.concurrency, url, Path(tmp))
            stats = server_stats(url)
        times = answered_times(log)
    rate, share = goodput(times, args.rpm)
    print(f"items            {args.items} ({figures['done']} done, {figures['failed']} failed)")
    print(f"wrong results    {figures['wrong'][:5]}")
    print(f"server limit     {args.rpm} requests per minute (--rpm)")
    print(f"requests         {len(times)} answered, {stats['throttled']} refused with 429")
    print(f"makespan         {figures['makespan_s']:.1f} s")
    print(f"goodput          {rate:.1f} requests per minute = {share:.1%} of the limit")


if __name__ == "__main__":
    main()
