"""`corral fanout`: one worker per line of a JSONL file, each reporting a schema-checked result.

The template's `{field}` placeholders are filled from each item; the workers run at most
`--concurrency` at once, and the results go to `--out` as JSON lines in item order. Ctrl-C or
SIGTERM (handled in `_main`) stops every worker and leaves the run resumable with `corral resume`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._common import (
    add_executor_flags,
    add_model_flags,
    add_output_flags,
    add_workspace_flags,
    positive_int,
)
from ._exec import approval_services

if TYPE_CHECKING:
    from corral.agents import CorralConfig

    from ..fanout import FanoutOutcome
    from ._progress import LiveProgress

DEFAULT_MAX_RESULT_TRIES = 3
"""`corral.orchestrator.fanout.DEFAULT_MAX_RESULT_TRIES`, spelled out for a fast `--help`."""

_DESCRIPTION = (
    "Run one worker per line of a JSONL file on the template, its {field} placeholders filled "
    "from the line ({{ and }} for braces). Each worker hands in its result through the "
    "report_result tool, checked against the JSON Schema; results go to --out in item order. "
    "Ctrl-C or SIGTERM stops the run; `corral resume RUN` carries it on."
)


def add_parser(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "fanout", help="run one worker per item of a JSONL file", description=_DESCRIPTION
    )
    add_model_flags(parser)
    add_workspace_flags(parser)
    add_executor_flags(parser)
    add_output_flags(parser)
    parser.add_argument(
        "--items", type=Path, required=True, metavar="FILE.jsonl", help="the items, or - for stdin"
    )
    parser.add_argument(
        "--template", required=True, metavar="TEXT_OR_@FILE", help="the task; {field} is filled"
    )
    parser.add_argument("--schema", type=Path, required=True, metavar="SCHEMA.json")
    parser.add_argument(
        "--concurrency", type=positive_int, metavar="N", help="workers at once (config: 16)"
    )
    parser.add_argument(
        "--processes",
        type=positive_int,
        metavar="N",
        help="worker processes sharing the run's journal, budget and rate limits (default: one "
        "per core up to 4 when at least 32 workers run at once per process, else 1)",
    )
    parser.add_argument(
        "--max-result-tries",
        type=positive_int,
        default=DEFAULT_MAX_RESULT_TRIES,
        metavar="N",
        help="invalid results a worker may send before its item fails",
    )
    parser.add_argument(
        "--out", default="results.jsonl", metavar="FILE", help="results file, or - for stdout"
    )
    parser.add_argument("--run-id", help="choose the run id (default: generated)")
    parser.set_defaults(handler=run)


async def run(args: argparse.Namespace) -> int:
    from ..fanout import ResultSchema, read_items
    from ..runs import FanoutJob, RunSetup
    from ._common import cli_executor, load_cli_config, resolve_cwd
    from ._out import check_out_file, input_path

    cwd = resolve_cwd(args.cd)
    config = load_cli_config(args, cwd)
    check_out_file(args.out)
    items = read_items(input_path(args.items))
    template = read_template(args.template)
    schema = ResultSchema.load(args.schema)
    progress = live_progress("fanout", args, config)
    console = Console("fanout", progress=progress)
    setup = RunSetup(hooks=progress, services=approval_services(), on_start=console.started)
    job = FanoutJob(
        items=tuple(items),
        template=template,
        result_schema=schema,
        cwd=cwd,
        concurrency=args.concurrency,
        processes=args.processes,
        run_id=args.run_id,
        out=args.out,
        max_result_tries=args.max_result_tries,
    )
    executor = cli_executor(args, config)
    outcome = await console.cancellable(lambda: executor.run(job, setup, config))
    return console.report(outcome)


async def resume(args: argparse.Namespace, config: CorralConfig, run_id: str) -> int:
    """`corral resume RUN` for a fan-out run (called by the resume command)."""
    from corral.agents import RunnerHooks
    from corral.tools import InvalidInput

    from ..fanout import resume_fanout
    from ..runs import RunSetup
    from ._hooks import JsonLinesHooks

    if args.message is not None:
        raise InvalidInput(f"run {run_id} is a fan-out: it takes no follow-up message; drop it")
    progress = None if args.json else live_progress("resume", args, config)
    hooks: RunnerHooks = JsonLinesHooks() if progress is None else progress
    console = Console("resume", progress=progress)
    setup = RunSetup(hooks=hooks, services=approval_services())
    outcome = await console.cancellable(
        lambda: resume_fanout(
            config,
            run_id,
            setup=setup,
            base_url=args.base_url,
            on_start=console.started,
            retry_failed=args.retry_failed,
            processes=args.processes,
        )
    )
    return console.report(outcome)


def read_template(raw: str) -> str:
    """`--template`: the text itself, or `@FILE` for a file's contents."""
    from .._input_files import read_input_file
    from ..fanout import TemplateError

    if not raw.startswith("@"):
        return raw
    return read_input_file(Path(raw[1:]).expanduser(), "template", TemplateError)


@dataclass
class Console:
    """What a person sees on stderr: the run id at the start, the progress while it runs (when
    given one), one summary line at the end."""

    command: str
    run_id: str | None = None
    progress: LiveProgress | None = None

    def started(self, run_id: str, total: int, left: int) -> None:
        self.run_id = run_id
        if self.progress is not None:
            self.progress.started(run_id, total, left)
            return
        todo = "" if left == total else f", {left} to go"
        noun = "item" if total == 1 else "items"
        print(f"corral {self.command}: run {run_id} ({total} {noun}{todo})", file=sys.stderr)
        sys.stderr.flush()

    async def cancellable(self, work: Callable[[], Awaitable[FanoutOutcome]]) -> FanoutOutcome:
        """Run `work`; if Ctrl-C or SIGTERM cancels it (see `_main`), say how to resume."""
        import anyio

        try:
            return await work()
        except anyio.get_cancelled_exc_class():
            self.close()
            if self.run_id is not None:
                print(
                    f"corral {self.command}: stopped; resume with `corral resume {self.run_id}`",
                    file=sys.stderr,
                )
            raise

    def close(self) -> None:
        if self.progress is not None:
            self.progress.close()

    def report(self, outcome: FanoutOutcome) -> int:
        self.close()
        if outcome.to_stdout:
            for line in outcome.lines():
                print(line)
            sys.stdout.flush()
        where = f"; results in {outcome.out}" if outcome.out is not None else ""
        where += f"; journal: {outcome.journal}"
        print(f"corral {self.command}: {outcome.summary_line()}{where}", file=sys.stderr)
        if not outcome.ok:
            print(
                f"corral {self.command}: run the failed items again with "
                f"`corral resume {outcome.run_id} --retry-failed`",
                file=sys.stderr,
            )
        return 0 if outcome.ok else 1


def live_progress(command: str, args: argparse.Namespace, config: CorralConfig) -> LiveProgress:
    """The run's progress on stderr, priced with the config's `[prices]`."""
    from .._run._budget import price_for
    from ._progress import LiveProgress, progress_mode

    mode = progress_mode(sys.stderr, quiet=getattr(args, "quiet", False))
    return LiveProgress(command, mode=mode, price_of=lambda model: price_for(config.prices, model))
