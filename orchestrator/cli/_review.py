"""`corral review`: a git range or a patch reviewed by parallel read-only agents.

The reports (Markdown, JSON, SARIF 2.1.0) go to `--out`; each kept finding is printed on stdout,
progress and the summary on stderr. Exit 0 when no finding is at or above `--fail-on`, 1 when
some are or when part of the change could not be reviewed, 2 for a usage mistake (then nothing
is written).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._common import add_executor_flags, add_model_flags, add_output_flags, positive_int

if TYPE_CHECKING:
    from ..pipelines.review import ReviewReport, Severity
    from ._progress import LiveProgress

NEVER = "none"
# The review pipeline's values, spelled out so that `--help` need not import the pipeline
# (a test holds them equal): its severities, most severe first, and its unit size.
SEVERITIES = ("critical", "high", "medium", "low", "info")
DEFAULT_MAX_UNIT_LINES = 400
_DESCRIPTION = (
    "Review a git range (BASE..HEAD, or BASE...HEAD from their merge base) or a patch file. "
    "The change is cut per file (and a large file per group of hunks); one read-only reviewer "
    "per part reports findings, which are kept only on the changed lines, merged when they are "
    "near-duplicates, and sorted by severity. Writes review.md, review.json and review.sarif."
)


def add_parser(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "review",
        help="review a git range or a patch with parallel agents",
        description=_DESCRIPTION,
    )
    add_model_flags(parser)
    add_executor_flags(parser)
    add_output_flags(parser)
    parser.add_argument("--repo", type=Path, metavar="DIR", help="the repository (default: here)")
    change = parser.add_mutually_exclusive_group(required=True)
    change.add_argument("--range", metavar="BASE..HEAD", help="a git range, e.g. main..HEAD")
    change.add_argument("--patch", type=Path, metavar="FILE", help="a unified diff to review")
    parser.add_argument(
        "--out", type=Path, default=Path("corral-review"), metavar="DIR", help="report folder"
    )
    parser.add_argument(
        "--format",
        type=_formats,
        default=("md", "json", "sarif"),
        metavar="md,json,sarif",
        help="which reports to write (default: all three)",
    )
    parser.add_argument(
        "--concurrency", type=positive_int, metavar="N", help="reviewers at once (config: 16)"
    )
    parser.add_argument(
        "--fail-on",
        choices=(*SEVERITIES, NEVER),
        default="high",
        help="exit 1 when a finding is at or above this severity (default: high)",
    )
    parser.add_argument(
        "--max-unit-lines",
        type=positive_int,
        default=DEFAULT_MAX_UNIT_LINES,
        metavar="N",
        help="changed lines per reviewer before a file is split by hunks",
    )
    parser.add_argument("--run-id", help="choose the run id (default: generated)")
    parser.set_defaults(handler=run)


async def run(args: argparse.Namespace) -> int:
    import anyio.to_thread

    from corral.tools import InvalidInput

    from ..pipelines.review import ReviewJob, Severity, run_review, write_reports
    from ..runs import RunSetup
    from ._common import cli_executor, load_cli_config
    from ._fanout import live_progress
    from ._out import check_out_dir

    repo = (args.repo or Path.cwd()).expanduser()
    if not repo.is_dir():
        raise InvalidInput(f"--repo {repo}: not a directory; give the repository to review")
    config = load_cli_config(args, repo.resolve())
    check_out_dir(args.out)
    fail_on = None if args.fail_on == NEVER else Severity(args.fail_on)
    request = ReviewJob(
        repo=repo,
        range=args.range,
        patch=args.patch,
        concurrency=args.concurrency,
        max_unit_lines=args.max_unit_lines,
        run_id=args.run_id,
    )
    console = _Console(live_progress("review", args, config))
    setup = RunSetup(hooks=console.progress, executor=cli_executor(args, config))
    report = await console.cancellable(
        run_review(
            config,
            request,
            setup=setup,
            on_start=console.started,
            on_units=console.progress.name_items,
        )
    )
    written = await anyio.to_thread.run_sync(write_reports, report, args.out, args.format, fail_on)
    return console.finish(report, written, fail_on)


class _Console:
    """What a person sees: the run at the start, the reviewers' progress (each named), each
    finding, the summary and the verdict."""

    def __init__(self, progress: LiveProgress) -> None:
        self.run_id: str | None = None
        self.progress = progress

    def started(self, run_id: str, total: int, left: int) -> None:
        self.run_id = run_id
        self.progress.tally.total = total
        self.progress.tally.done += total - left
        noun = "reviewer" if total == 1 else "reviewers"
        _say(f"run {run_id}: {total} {noun}")

    async def cancellable(self, work: Awaitable[ReviewReport]) -> ReviewReport:
        import anyio

        try:
            return await work
        except anyio.get_cancelled_exc_class():
            self.progress.close()
            _say("stopped; no report was written")
            raise

    def finish(self, report: ReviewReport, written: list[Path], fail_on: Severity | None) -> int:
        self.progress.close()
        for f in report.findings:
            print(f"{f.severity.value:<8} {f.path}:{f.lines}  {f.title}")
        sys.stdout.flush()
        if not report.units:
            _say(f"nothing to review in {report.source.label}")
        names = ", ".join(p.name for p in written)
        folder = written[0].parent if written else None
        _say(f"{report.summary_line()}; reports in {folder}/ ({names})")
        code = 0
        failing = report.at_or_above(fail_on)
        if failing:
            _say(f"{len(failing)} at or above {fail_on}")
            code = 1
        for unit in report.failed_units:
            _say(f"not reviewed: {unit.label}: {unit.error or unit.status}")
            code = 1
        return code


def _say(text: str) -> None:
    print(f"corral review: {text}", file=sys.stderr)
    sys.stderr.flush()


def _formats(text: str) -> tuple[str, ...]:
    from ..pipelines.review import ReviewInputError, parse_formats

    try:
        return parse_formats(text)
    except ReviewInputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
