"""Where a turn's client CPU goes: one driver of `benchmarks.turns` under cProfile.

The scripted server runs in its own process; the driver runs here under the profiler (the
event-loop thread only: the journal's writer thread and the tools' worker threads are not seen
by cProfile, so the SQLite work itself does not show; their CPU time is printed as one figure,
and `runtime-sqlite` against `runtime-memory` in `benchmarks.turns` is the journal's whole
cost). Printed: own
time grouped by package (corral's subpackages apart), then corral's own functions by own time,
then the top functions overall by cumulative time. Run:

    .venv/bin/python -m benchmarks.profile_turn --mode corral --agents 200 --concurrency 50
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import os
import pstats
import re
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import anyio

from ._server import model_server
from ._turn_modes import MODES
from .turns import FAULTS

_SITE = re.compile(r"site-packages/([^/]+)")
_STDLIB = re.compile(r"python3\.\d+/(?:asyncio/)?([^/]+?)(?:\.py|/)")
_CORRAL = re.compile(r"/corral/([a-z_]+)(?:/(_?[a-z_]+)/)?")


def package_of(filename: str) -> str:
    """A profile entry's package: `corral.<sub>`, a site package, a stdlib module, or C code."""
    if filename == "~" or filename.startswith("<"):
        return "C functions"
    if (site := _SITE.search(filename)) is not None:
        return site.group(1).removesuffix(".py")
    if "/asyncio/" in filename:
        return "asyncio"
    if (corral := _CORRAL.search(filename)) is not None and "/benchmarks/" not in filename:
        top, sub = corral.groups()
        return f"corral.{top}" + (f".{sub}" if sub else "")
    if "/benchmarks/" in filename:
        return "benchmarks"
    if (stdlib := _STDLIB.search(filename)) is not None:
        return f"stdlib.{stdlib.group(1)}"
    return "other"


def grouped(stats: pstats.Stats) -> tuple[dict[str, float], list[tuple[float, str]]]:
    """Own time per package, and (own time, function) for corral's own functions."""
    packages: dict[str, float] = defaultdict(float)
    corral: list[tuple[float, str]] = []
    entries: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    for (filename, line, name), (_, _, own, _, _) in entries.items():
        package = package_of(filename)
        packages[package] += own
        if package.startswith("corral.") or package == "C functions":
            corral.append((own, f"{package}:{name} ({Path(filename).name}:{line})"))
    return packages, sorted(corral, reverse=True)


async def _drive(mode: str, url: str, agents: int, concurrency: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        return await MODES[mode](url, agents, concurrency, Path(tmp))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=sorted(MODES), default="corral")
    parser.add_argument("--agents", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--latency-ms", type=int, default=0)
    parser.add_argument(
        "--faults",
        action="store_true",
        help="the server injects the `faults` scenario's 429s and cut streams",
    )
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--dump", help="also write the raw stats here (for pstats' callers)")
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "bench")
    importlib.import_module("corral.orchestrator.runs")  # start-up is not profiled

    faults = FAULTS if args.faults else ()
    options = ("--latency-ms", str(args.latency_ms), *faults)
    with model_server("benchmarks.turns:policy", *options) as url:
        # CPU time, not wall: the loop's waits in epoll are not work.
        profiler = cProfile.Profile(time.process_time)
        cpu, loop_cpu = time.process_time(), time.thread_time()
        profiler.enable()
        figures = anyio.run(_drive, args.mode, url, args.agents, args.concurrency)
        profiler.disable()
        cpu, loop_cpu = time.process_time() - cpu, time.thread_time() - loop_cpu
    if args.dump:
        profiler.dump_stats(args.dump)
    stats = pstats.Stats(profiler)
    packages, corral = grouped(stats)
    total = sum(packages.values()) or 1.0
    turns = max(figures["turns"], 1)
    print(f"{args.mode}: {figures}; {1000 * cpu / turns:.2f} ms CPU per turn under the profiler")
    # The profiler slows the loop's thread only, so this share is a lower bound.
    others = cpu - loop_cpu
    print(
        f"other threads (the journal's writer, sync tools): {1000 * others / turns:.2f} ms "
        f"per turn, {100 * others / max(cpu, 1e-9):.0f}% of the process's CPU"
    )
    print("\nown time by package")
    for package, own in sorted(packages.items(), key=lambda kv: -kv[1]):
        if own / total >= 0.005:
            print(f"  {100 * own / total:5.1f}%  {1000 * own / turns:6.3f} ms/turn  {package}")
    print("\ncorral's own functions and C functions by own time")
    for own, name in corral[: args.top]:
        print(f"  {100 * own / total:5.1f}%  {name}")
    print("\nby cumulative time")
    stats.sort_stats("cumulative").print_stats(args.top)


if __name__ == "__main__":
    main()
