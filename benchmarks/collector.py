"""What the garbage collector costs a fan-out at each pace: the `scale` workload (1,000 agents,
256 at a time, 200 ms) through the fan-out in one process, with the collector's first threshold
held at each `--thresholds` value for the run (700 is CPython's own pace, what corral ran at
before `corral.orchestrator._collector`; corral's is `RUN_THRESHOLD`).

Each run is a fresh process; the thresholds take turns, repetition by repetition, against one
scripted model server. Printed per threshold (medians): wall, process CPU, the collector's own
time (`gc.callbacks`, on the threads that collected) and its share of the CPU, the collections
of each generation, and peak RSS.

    .venv/bin/python -m benchmarks.collector --thresholds 700,5000,10000,20000 --repeat 3
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from ._server import model_server
from ._turn_modes import PRELOADED
from .turns import SCENARIOS, WORKER_TIMEOUT

_ONE = "--one"
"""First argument of this module's second use: one run in this process."""


class _Collections:
    """The collector's time and count per generation, from `gc.callbacks`."""

    def __init__(self) -> None:
        self.seconds = [0.0, 0.0, 0.0]
        self.count = [0, 0, 0]
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.thread_time()
            return
        generation = int(info["generation"])
        self.seconds[generation] += time.thread_time() - self._started
        self.count[generation] += 1


async def _fan_out(url: str, threshold: int) -> dict[str, Any]:
    from corral.orchestrator import _collector

    from ._fanout_modes import drive_fanout

    for module in PRELOADED["corral"]:  # start-up is not what is measured
        importlib.import_module(module)
    importlib.import_module("corral.orchestrator.fanout")
    scenario = SCENARIOS["scale"]
    # The run holds the collector at this pace: corral's pacing is set to it too, so it finds
    # the threshold already there and leaves it.
    setattr(_collector, "RUN_THRESHOLD", threshold)  # noqa: B010 (a Final, set for measuring)
    gc.set_threshold(threshold, *gc.get_threshold()[1:])
    collections = _Collections()
    gc.callbacks.append(collections)
    cpu, wall = time.process_time(), time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        figures = await drive_fanout(url, scenario.agents, scenario.concurrency, Path(tmp), 1)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    gc.callbacks.remove(collections)
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "gc_s": sum(collections.seconds),
        "collections": collections.count,
        "lost_agents": figures["lost_agents"],
        "rss_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _one(url: str, threshold: int) -> dict[str, Any]:
    argv = [sys.executable, "-m", "benchmarks.collector", _ONE, url, str(threshold)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=WORKER_TIMEOUT, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the run at {threshold} failed:\n{done.stderr[-3000:]}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def _print(runs: dict[int, list[dict[str, Any]]]) -> None:
    print(f"{'threshold':>9} {'wall s':>7} {'cpu s':>6} {'gc s':>5} {'gc share':>8} "
          f"{'collections (0/1/2)':>20} {'RSS MB':>7} {'lost':>4}")  # fmt: skip
    for threshold, figures in runs.items():
        median = _medians(figures)
        counts = "/".join(
            str(round(statistics.median(f["collections"][g] for f in figures))) for g in range(3)
        )
        share = median("gc_s") / median("cpu_s")
        print(
            f"{threshold:>9} {median('wall_s'):>7.2f} {median('cpu_s'):>6.2f} "
            f"{median('gc_s'):>5.2f} {share:>8.1%} {counts:>20} {median('rss_peak_mb'):>7.1f} "
            f"{median('lost_agents'):>4.0f}"
        )


def _medians(figures: list[dict[str, Any]]) -> Callable[[str], float]:
    def median(name: str) -> float:
        return float(statistics.median(f[name] for f in figures))

    return median


def main() -> None:
    if len(sys.argv) > 3 and sys.argv[1] == _ONE:
        os.environ.setdefault("OPENAI_API_KEY", "bench")
        print(json.dumps(anyio.run(_fan_out, sys.argv[2], int(sys.argv[3]))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--thresholds", default="700,10000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    thresholds = [int(t) for t in args.thresholds.split(",")]
    if any(t < 1 for t in thresholds):
        parser.error("--thresholds takes whole numbers of at least 1, e.g. 700,10000")
    runs: dict[int, list[dict[str, Any]]] = {t: [] for t in thresholds}
    scenario = SCENARIOS["scale"]
    with model_server("benchmarks.turns:policy", "--latency-ms", str(scenario.latency_ms)) as url:
        for _ in range(args.repeat):
            for threshold in thresholds:
                runs[threshold].append(_one(url, threshold))
    print(
        f"fan-out in one process: {scenario.agents} agents x 5 turns, {scenario.concurrency} at "
        f"a time, {scenario.latency_ms} ms; medians of {args.repeat}; load average "
        f"{os.getloadavg()[0]:.1f}"
    )
    _print(runs)


if __name__ == "__main__":
    main()
