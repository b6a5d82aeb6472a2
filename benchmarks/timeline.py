"""A timeline of a benchmark run: every process's CPU and the model requests in flight, sampled
at a fixed interval, to see where cores sit idle (a worker process starting up, an uneven end,
a limiter keeping requests back).

`Timeline` runs a sampler thread in the benchmark's own process: each tick it walks the process
tree under it (`/proc/PID/task/*/children`), reads each process's CPU time (`/proc/PID/stat`)
and the model server's `/stats` (`in_flight`, requests so far). `table()` prints one compact
row per tick; `summary()` the figures that matter: the cores' idle share, and how long the run
kept fewer than its concurrency in flight. Linux only.

    python -m benchmarks._turn_processes --repeat 1 --timeline
"""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

TICK = 0.1
"""Seconds between samples."""
_CLK = os.sysconf("SC_CLK_TCK")
_STATS_TIMEOUT = 1.0
ROLES = ("parent", "worker", "server", "sampler", "other", "machine")
"""Where CPU goes: this run's processes, the sampler, and the rest of the machine."""


@dataclass(frozen=True)
class Sample:
    """One tick: seconds since the start, CPU seconds used in the tick by each process role,
    model requests in flight at the tick's end and answered during it."""

    at: float
    span: float
    cpu: dict[str, float]
    in_flight: int
    answered: int


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            found += [int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
        except (OSError, ValueError):
            continue
    return found


def _cpu_and_cmdline(pid: int) -> tuple[float, str] | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / _CLK, cmdline


def _machine_busy() -> float:
    """CPU seconds every core of the machine has spent busy so far (`/proc/stat`)."""
    fields = [int(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / _CLK


def role_of(cmdline: str) -> str:
    """The column a process's CPU goes to, from its command line."""
    if "model-server" in cmdline:
        return "server"
    if "corral.orchestrator._procs" in cmdline:
        return "worker"
    if "benchmarks._turn_modes" in cmdline or "benchmarks.profile_turn" in cmdline:
        return "parent"
    return "other"


@dataclass
class Timeline:
    """Samples the process tree under this process, and the model server at `stats_url`."""

    stats_url: str
    tick: float = TICK
    samples: list[Sample] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> Timeline:
        self._thread = threading.Thread(target=self._run, name="timeline", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        start = last = time.perf_counter()
        mine = time.process_time()
        # What the processes already there had used before is not the run's.
        seen = {pid: found[0] for pid in self._tree() if (found := _cpu_and_cmdline(pid))}
        answered = self._stats()[1]
        busy = _machine_busy()
        while not self._stop.wait(self.tick):
            cpu: dict[str, float] = {}
            for pid in self._tree():
                found = _cpu_and_cmdline(pid)
                if found is None:
                    continue
                used, cmdline = found
                role = role_of(cmdline)
                cpu[role] = cpu.get(role, 0.0) + used - seen.get(pid, 0.0)
                seen[pid] = used
            in_flight, total = self._stats()
            # The sampler's own CPU, on the same cores: what it costs the run.
            cpu["sampler"], mine = time.process_time() - mine, time.process_time()
            # Other engineers' work on the same cores: not idle, though not this run's either.
            ours, was, busy = sum(cpu.values()), busy, _machine_busy()
            cpu["machine"] = max(0.0, busy - was - ours)
            now = time.perf_counter()
            self.samples.append(Sample(now - start, now - last, cpu, in_flight, total - answered))
            answered, last = total, now

    def _tree(self) -> list[int]:
        pids, todo = [], [os.getpid()]
        while todo:
            pid = todo.pop()
            kids = _children(pid)
            pids += kids
            todo += kids
        return pids

    def _stats(self) -> tuple[int, int]:
        try:
            with urllib.request.urlopen(self.stats_url, timeout=_STATS_TIMEOUT) as answer:
                stats = json.loads(answer.read())
        except (OSError, ValueError):
            return -1, 0
        return int(stats["in_flight"]), int(stats["requests"]["total"])

    def active(self) -> list[Sample]:
        """The samples from the first request answered to the last (the run itself)."""
        busy = [i for i, s in enumerate(self.samples) if s.answered > 0 or s.in_flight > 0]
        return self.samples[busy[0] : busy[-1] + 1] if busy else []

    def table(self, every: int = 1) -> str:
        """One row per `every` ticks of the run: CPU % of one core per role, cores idle,
        requests in flight and answered per second."""
        roles = ROLES
        head = f"{'t s':>6}" + "".join(f"{r:>8}" for r in roles)
        head += f"{'idle':>7}{'flight':>8}{'rps':>7}"
        rows, run = [head], self.active()
        for i in range(0, len(run), every):
            chunk = run[i : i + every]
            span = sum(s.span for s in chunk)
            used = {r: sum(s.cpu.get(r, 0.0) for s in chunk) / span for r in roles}
            idle = max(0.0, (os.cpu_count() or 1) - sum(used.values()))
            answered = sum(s.answered for s in chunk) / span
            rows.append(
                f"{chunk[-1].at:6.1f}"
                + "".join(f"{100 * used[r]:7.0f}%" for r in roles)
                + f"{idle:7.2f}{chunk[-1].in_flight:8d}{answered:7.0f}"
            )
        return "\n".join(rows)

    def summary(self, concurrency: int) -> dict[str, float]:
        """The run's figures: its span from the first request answered to the last
        (`timeline_s`), CPU seconds by role (`machine`: the rest of the machine's), core-seconds
        idle, and the seconds with fewer than `concurrency` requests in flight."""
        run = self.active()
        wall = sum(s.span for s in run)
        figures: dict[str, float] = {"timeline_s": wall}
        for role in ROLES:
            figures[f"{role}_cpu_s"] = sum(s.cpu.get(role, 0.0) for s in run)
        used = sum(figures[f"{r}_cpu_s"] for r in ROLES)
        figures["idle_core_s"] = (os.cpu_count() or 1) * wall - used
        figures["idle_share"] = figures["idle_core_s"] / max((os.cpu_count() or 1) * wall, 1e-9)
        figures["below_cap_s"] = sum(s.span for s in run if 0 <= s.in_flight < concurrency)
        return figures
