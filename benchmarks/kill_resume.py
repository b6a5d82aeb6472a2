"""SIGKILL at seeded random moments, resumed each time: every item is done exactly once.

The real CLI runs against the scripted model server (in this process, with latency). Each
worker appends its item's number to `witness.txt` with one shell call, reports the number with
`report_result` and answers one line. The run is killed `kills` times, alternating
`corral fanout --run-id X` and `corral resume X`, then resumed to its end.

What "exactly once" witnesses: the results file lists every item once, done, with its own
result; and the witness file holds every number once. The first shell command is not
idempotent, so a finished call that corral ran again would show as a repeated line. A shell
call interrupted by a kill has an unknown outcome; the policy then does what the model is told
to do, check before repeating (`grep -qx N || echo N`). A `report_result` call interrupted by a
kill must never reach the model as unknown: its whole result is in its journaled arguments.

Kill moments are chosen by a seeded generator as "the k-th model answer of some kind" (any, a
shell call, a `report_result` call), so they fall while tools run, while results are journaled
and while `report_result` is in flight. Run:

    .venv/bin/python -m benchmarks.kill_resume --items 240 --kills 5 --seed 1
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

from corral.orchestrator.model_server import ModelServerOptions, serve_model_server

RUN_ID = "run-kill"
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
TEMPLATE = "Item {n}: append {n} to the witness, then report {n}."
INTERRUPTED = "<tool_call_interrupted>"
KINDS = ("any", "shell", "report_result")
STEP_DEADLINE = 120.0
_ITEM = re.compile(r"Item (\d+):")


def _calls_and_outputs(request: dict[str, Any]) -> list[tuple[str, str | None]]:
    """Each function call of the request's input, in order: its name and its output (if any)."""
    items = request["input"]
    outputs = {i["call_id"]: i["output"] for i in items if i.get("type") == "function_call_output"}
    calls = [i for i in items if i.get("type") == "function_call"]
    return [(c["name"], outputs.get(c["call_id"])) for c in calls]


def _call(name: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "function_call", "name": name, "arguments": json.dumps(arguments)}]


def step(request: dict[str, Any]) -> Any:
    """A worker's next step, a pure function of what it has seen (so kills cannot confuse it)."""
    n = int(_ITEM.findall(json.dumps(request["input"]))[-1])
    history = _calls_and_outputs(request)
    if not history:
        return _call("shell", {"command": f"echo {n} >> witness.txt"})
    name, output = history[-1]
    told_unknown = output is not None and INTERRUPTED in output
    if name == "shell" and told_unknown:
        return _call("shell", {"command": f"grep -qx {n} witness.txt || echo {n} >> witness.txt"})
    if name == "shell":
        return _call("report_result", {"n": n})
    if told_unknown:
        return "gave up: the report's outcome is unknown"
    return f"item {n} reported"


def _kind(answer: Any) -> str:
    return answer[0]["name"] if isinstance(answer, list) else "text"


@dataclass
class KillPolicy:
    """`step`, plus the trigger: once `after` answers were given and one of them was of `kind`,
    `kill_now` is set when `lag` more requests have arrived (from any worker), so the kill
    falls while the client handles that answer: journaling it, or running the tool it asked for.
    """

    answers: int = 0
    unknown_reports: int = 0
    kind: str = "any"
    after: int | None = None
    countdown: int | None = None
    lag: int = 1
    kill_now: anyio.Event = field(default_factory=anyio.Event)

    def arm(self, moment: tuple[str, int, int]) -> anyio.Event:
        self.kind, self.after, self.lag = moment
        self.countdown, self.kill_now = None, anyio.Event()
        return self.kill_now

    def disarm(self) -> None:
        self.after = self.countdown = None

    def __call__(self, request: dict[str, Any]) -> Any:
        if self.countdown is not None:
            self.countdown -= 1
            if self.countdown <= 0:
                self.countdown = None
                self.kill_now.set()
        answer = step(request)
        if isinstance(answer, str) and answer.startswith("gave up"):
            self.unknown_reports += 1
        self.answers += 1
        reached = self.after is not None and self.answers >= self.after
        if reached and self.kind in ("any", _kind(answer)):
            self.after, self.countdown = None, self.lag
        return answer


@dataclass(frozen=True)
class KillPlan:
    """When each kill comes: at an answer of which kind, after how many model answers in all,
    and how many requests later."""

    moments: tuple[tuple[str, int, int], ...]

    @classmethod
    def seeded(cls, seed: int, items: int, kills: int) -> KillPlan:
        rng = random.Random(seed)
        # Three answers per item; kills fall in the first 90% so every one happens.
        afters = sorted(rng.sample(range(8, max(items * 27 // 10, 8 + kills)), kills))
        return cls(tuple((rng.choice(KINDS), after, rng.randint(1, 6)) for after in afters))


@dataclass
class Outcome:
    kills: list[float] = field(default_factory=list)
    final_code: int = -1
    final_stderr: str = ""
    unknown_reports: int = 0


def corral_command(index: int, concurrency: int) -> list[str]:
    """Alternately `fanout --run-id` (which also starts the run) and `resume`."""
    if index % 2:
        return [sys.executable, "-m", "corral", "resume", RUN_ID]
    return [
        *(sys.executable, "-m", "corral", "fanout", "--run-id", RUN_ID),
        *("--items", "items.jsonl", "--schema", "schema.json", "--template", TEMPLATE),
        *("--concurrency", str(concurrency)),
    ]


def prepare(workspace: Path, items: int) -> None:
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "items.jsonl").write_text("".join(f'{{"n": {n}}}\n' for n in range(items)))
    (workspace / "schema.json").write_text(json.dumps(SCHEMA))


def corral_env(home: Path, base_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CORRAL_", "OPENAI_"))}
    return {**env, "CORRAL_HOME": str(home), "CORRAL_BASE_URL": base_url}


async def _run_until(
    argv: Sequence[str], env: dict[str, str], cwd: Path, trigger: anyio.Event, log: Path
) -> None:
    """Start `argv`; SIGKILL its process group once `trigger` is set (unless it ended first)."""
    with log.open("ab") as err:
        process = await anyio.open_process(
            argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=err, stderr=err,
            start_new_session=True,
        )  # fmt: skip
    async with process, anyio.create_task_group() as tg:

        async def ended() -> None:
            await process.wait()
            trigger.set()

        tg.start_soon(ended)
        with anyio.fail_after(STEP_DEADLINE):
            await trigger.wait()
        if process.returncode is None:
            os.killpg(process.pid, signal.SIGKILL)
        with anyio.fail_after(STEP_DEADLINE):
            await process.wait()


async def kill_and_resume(
    workspace: Path, home: Path, plan: KillPlan, *, concurrency: int, latency_ms: int
) -> Outcome:
    """Run the plan's kills, then resume the run to its end; say what happened."""
    policy, outcome = KillPolicy(), Outcome()
    options = ModelServerOptions(latency_ms=latency_ms)
    log = workspace / "corral.log"
    async with serve_model_server(policy, options) as server:
        env = corral_env(home, server.base_url)
        for index, moment in enumerate(plan.moments):
            trigger = policy.arm(moment)
            await _run_until(corral_command(index, concurrency), env, workspace, trigger, log)
            outcome.kills.append(time.time())
        policy.disarm()
        argv = [sys.executable, "-m", "corral", "resume", RUN_ID]
        with anyio.fail_after(STEP_DEADLINE * 2):
            done = await anyio.run_process(argv, env=env, cwd=workspace, check=False)
    outcome.final_code, outcome.final_stderr = done.returncode, done.stderr.decode()
    outcome.unknown_reports = policy.unknown_reports
    return outcome


def results(workspace: Path) -> list[tuple[int, str, Any]]:
    lines = (workspace / "results.jsonl").read_text().splitlines()
    return [(r["index"], r["status"], r["result"]) for r in map(json.loads, lines)]


def witness(workspace: Path) -> list[int]:
    return sorted(int(line) for line in (workspace / "witness.txt").read_text().split())


def failed_calls(home: Path) -> list[str]:
    """The outputs of tool calls that ended unsuccessfully for a reason other than a kill (the
    scripted workers take every answered call as done, so such a failure loses its item's work)."""
    with sqlite3.connect(f"file:{home / 'journal.sqlite'}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT output FROM ledger WHERE success = 0").fetchall()
    return [output for (output,) in rows if INTERRUPTED not in (output or "")]


def calls_across_kills(home: Path, kills: Sequence[float]) -> dict[str, int]:
    """How many tool calls, by tool, started before a kill and finished after it."""
    with sqlite3.connect(f"file:{home / 'journal.sqlite'}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT tool, started_at, finished_at FROM ledger").fetchall()
    counts: dict[str, int] = {}
    for tool, started, finished in rows:
        if finished is not None and any(started < k < finished for k in kills):
            counts[tool] = counts.get(tool, 0) + 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=240)
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency-ms", type=int, default=30)
    parser.add_argument("--keep", type=Path, help="run in this new folder and keep it")
    args = parser.parse_args()
    plan = KillPlan.seeded(args.seed, args.items, args.kills)
    with tempfile.TemporaryDirectory() as scratch:
        tmp = args.keep or scratch
        workspace, home = Path(tmp) / "ws", Path(tmp) / "home"
        prepare(workspace, args.items)
        began = time.perf_counter()
        outcome = anyio.run(
            lambda: kill_and_resume(
                workspace, home, plan, concurrency=args.concurrency, latency_ms=args.latency_ms
            )
        )
        wall = time.perf_counter() - began
        lines = results(workspace) if (workspace / "results.jsonl").exists() else []
        seen = witness(workspace)
        across = calls_across_kills(home, outcome.kills)
    expected = list(range(args.items))
    done = [i for i, status, result in lines if status == "done" and result == {"n": i}]
    print(f"kill plan        {plan.moments}")
    print(f"final resume     exit {outcome.final_code}")
    print(f"items done       {len(done)} of {args.items} (results lines: {len(lines)})")
    print(f"witness          {'each item once' if seen == expected else 'WRONG'} ({len(seen)})")
    print(f"across a kill    {across or 'none'} (ledger calls started before, ended after)")
    print(f"unknown reports  {outcome.unknown_reports}")
    print(f"wall time        {wall:.1f} s")
    if done != expected or seen != expected or outcome.final_code != 0:
        print(outcome.final_stderr[-2000:])
        raise SystemExit(1)


if __name__ == "__main__":
    main()
