"""The same fan-out on the local executor and on Temporal: wall time and client CPU per model turn.

N items at concurrency C against the scripted server at L ms latency (two model requests per item,
no other tool, as in `benchmarks.fanout`), after an unmeasured warm-up fan-out on each executor.
Locally, the client is this process. On Temporal, it is this process (the starter) plus the
`corral worker` subprocesses, read from /proc just before and after the measured run (so their
start-up is left out); the dev server and the model server are the server side, reported apart.
Everything runs offline on loopback:

    .venv/bin/python -m benchmarks.temporal_fanout --items 100 --concurrency 16 --latency-ms 100
"""

from __future__ import annotations

import argparse
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import anyio

from corral.agents import CorralConfig, RateLimit
from corral.orchestrator.fanout import FanoutOutcome, run_fanout
from corral.orchestrator.runs import RunSetup
from corral.orchestrator.temporal import (
    TemporalExecutor,
    TemporalOutcome,
    TemporalSettings,
    dev_server_path,
)

from .fanout import numbered_job, serve_numbers, server_stats

START_DEADLINE = 60.0
STOP_TIMEOUT = 20.0
TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Figures:
    wall_s: float
    starter_cpu_s: float
    worker_cpu_s: float
    server_cpu_s: float
    requests: int
    done: int
    wrong: tuple[int, ...]

    @property
    def client_cpu_s(self) -> float:
        return self.starter_cpu_s + self.worker_cpu_s


def cpu_seconds(pid: int) -> float:
    """User plus system CPU of a live process (not its children), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def wait_for_line(stream: IO[str], marker: str, what: str) -> None:
    """Read `stream` until a line holds `marker`, then keep draining it in a thread so the
    process never blocks on a full pipe."""
    lines: queue.Queue[str] = queue.Queue()

    def drain() -> None:
        for line in stream:
            lines.put(line)
        lines.put("")

    threading.Thread(target=drain, daemon=True).start()
    deadline, seen = time.monotonic() + START_DEADLINE, []
    while (left := deadline - time.monotonic()) > 0:
        line = lines.get(timeout=left)
        seen.append(line)
        if marker in line:
            return
        if not line:
            break
    raise RuntimeError(f"{what} did not start: {''.join(seen)[-2000:]}")


@contextmanager
def running(argv: list[str], marker: str, *, stderr: bool = False, **kw: object) -> Iterator[int]:
    """A subprocess, yielded (as its pid) once its output says `marker`; terminated after."""
    pipes = {"stderr": subprocess.PIPE} if stderr else {"stdout": subprocess.PIPE}
    process = subprocess.Popen(argv, text=True, **pipes, **kw)  # type: ignore[call-overload]
    try:
        wait_for_line(process.stderr if stderr else process.stdout, marker, argv[0])
        yield process.pid
    finally:
        process.terminate()
        try:
            process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=STOP_TIMEOUT)


def dev_server(port: int) -> list[str]:
    argv = [str(dev_server_path()), "server", "start-dev", "--ip", "127.0.0.1", "--headless"]
    return [*argv, "--port", str(port), "--log-level", "error"]


def worker(address: str, host: str, concurrency: int) -> list[str]:
    argv = [sys.executable, "-m", "corral", "worker", "--temporal-address", address]
    return [*argv, "--host-name", host, "--max-concurrent", str(concurrency)]


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def config_for(home: Path, base_url: str, concurrency: int) -> CorralConfig:
    limit = RateLimit(max_concurrency=concurrency)
    return CorralConfig(home=home, base_url=base_url, rate_limits={"default": limit})


def checked(outcome: FanoutOutcome) -> tuple[int, tuple[int, ...]]:
    wrong = [o.index for o in outcome.items if o.status != "done" or o.result != {"n": o.index}]
    return outcome.done, tuple(wrong)


def measure_local(items: int, warmup: int, concurrency: int, base_url: str, home: Path) -> Figures:
    config = config_for(home, base_url, concurrency)

    def fanout(count: int) -> FanoutOutcome:
        setup = RunSetup(env={})
        return anyio.run(lambda: run_fanout(config, numbered_job(count, concurrency, home), setup))

    fanout(warmup)
    before = server_stats(base_url)["requests"]["total"]
    cpu, wall = time.process_time(), time.perf_counter()
    outcome = fanout(items)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    requests = server_stats(base_url)["requests"]["total"] - before
    return Figures(wall, cpu, 0.0, 0.0, requests, *checked(outcome))


def measure_temporal(
    items: int, warmup: int, concurrency: int, workers: int, base_url: str, home: Path
) -> Figures:
    port = free_port()
    address = f"127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CORRAL_", "OTEL_"))}
    env["CORRAL_HOME"] = str(home)
    executor = TemporalExecutor(TemporalSettings(address=address))
    config = config_for(home, base_url, concurrency)

    def fanout(count: int) -> TemporalOutcome:
        return anyio.run(
            lambda: executor.run_fanout(config, numbered_job(count, concurrency, home))
        )

    with ExitStack() as stack:
        server = stack.enter_context(running(dev_server(port), "Temporal Server:"))
        pids = [
            stack.enter_context(
                running(
                    worker(address, f"bench-{i}", concurrency),
                    "polling",
                    stderr=True,
                    env=env,
                    cwd=home,
                )
            )
            for i in range(workers)
        ]
        fanout(warmup)
        before = server_stats(base_url)["requests"]["total"]
        baseline = [cpu_seconds(pid) for pid in (server, *pids)]
        cpu, wall = time.process_time(), time.perf_counter()
        done = fanout(items)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        spent = [cpu_seconds(pid) - b for pid, b in zip((server, *pids), baseline, strict=True)]
        requests = server_stats(base_url)["requests"]["total"] - before
    return Figures(wall, cpu, sum(spent[1:]), spent[0], requests, *checked(done.outcome))


def report(args: argparse.Namespace, local: Figures, temporal: Figures) -> None:
    ideal = -(-args.items // args.concurrency) * 2 * args.latency_ms / 1000
    print(f"items {args.items}, concurrency {args.concurrency}, latency {args.latency_ms} ms")
    print(f"ideal makespan {ideal:.1f} s; temporal: {args.workers} corral worker processes")
    print(f"each executor ran a {args.warmup}-item fan-out first, not counted")
    print()
    head = ("executor", "done", "wall s", "turns", "client CPU s", "CPU ms/turn", "server CPU s")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name, f in (("local", local), ("temporal", temporal)):
        per_turn = 1000 * f.client_cpu_s / max(f.requests, 1)
        split = f" ({f.starter_cpu_s:.2f} + {f.worker_cpu_s:.2f})" if name == "temporal" else ""
        cells = (
            name,
            f"{f.done}",
            f"{f.wall_s:.2f}",
            f"{f.requests}",
            f"{f.client_cpu_s:.2f}{split}",
            f"{per_turn:.2f}",
            f"{f.server_cpu_s:.2f}",
        )
        print("| " + " | ".join(cells) + " |")
        if f.wrong:
            print(f"  {name}: wrong or failed items {list(f.wrong[:10])}")
    print()
    print("client CPU on temporal = starter (this process) + workers; server CPU = dev server")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency-ms", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2, help="corral worker processes")
    parser.add_argument(
        "--warmup", type=int, default=16, help="items of an unmeasured fan-out run first on each"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, serve_numbers(args.latency_ms) as url:
        local_home, temporal_home = Path(tmp, "local"), Path(tmp, "temporal")
        local_home.mkdir()
        temporal_home.mkdir()
        local = measure_local(args.items, args.warmup, args.concurrency, url, local_home)
        temporal = measure_temporal(
            args.items, args.warmup, args.concurrency, args.workers, url, temporal_home
        )
    report(args, local, temporal)


if __name__ == "__main__":
    main()
