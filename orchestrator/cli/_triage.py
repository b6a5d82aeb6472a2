"""`corral triage`: labels, a type, a priority and duplicates for each issue of a file.

Reads the issues (what `gh issue list --json number,title,body,labels,author,createdAt` prints,
or JSON Lines) and a YAML label set, checks both before anything runs, and writes `triage.json`
and `triage.md` to `--out`. Exit code 0 when every issue was triaged, 1 when some were not.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._common import add_executor_flags, add_model_flags, add_output_flags, positive_int
from ._exec import approval_services
from ._fanout import Console, live_progress

if TYPE_CHECKING:
    from ..pipelines.triage import TriageOutcome

DEFAULT_OUT = Path("corral-triage")
_DESCRIPTION = (
    "Triage issues: one read-only worker per issue chooses labels from LABELS.yaml, a type "
    "(bug, feature, question, docs, chore) and a priority (p0-p3), each with a reason, and "
    "confirms or rejects the most similar other issues as duplicates. Input is what `gh issue "
    "list --json number,title,body,labels,author,createdAt` prints, or one issue per line."
)


def add_parser(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "triage", help="label, classify and deduplicate issues", description=_DESCRIPTION
    )
    add_model_flags(parser)
    add_executor_flags(parser)
    add_output_flags(parser)
    parser.add_argument(
        "--issues",
        type=Path,
        required=True,
        metavar="FILE.json|FILE.jsonl",
        help="the issues, or - for stdin",
    )
    parser.add_argument(
        "--labels",
        type=Path,
        required=True,
        metavar="LABELS.yaml",
        help="`name: description` lines, or a list of {name, description}",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        metavar="DIR",
        help=f"where triage.json and triage.md go (default: ./{DEFAULT_OUT})",
    )
    parser.add_argument(
        "--concurrency", type=positive_int, metavar="N", help="workers at once (config: 16)"
    )
    parser.add_argument(
        "--repo",
        type=Path,
        metavar="DIR",
        help="let workers read this project's code (read_file, grep, list_dir; read-only)",
    )
    parser.add_argument("--run-id", help="choose the run id (default: generated)")
    parser.set_defaults(handler=run)


async def run(args: argparse.Namespace) -> int:
    import anyio

    from ..pipelines.triage import READ_ONLY_TOOLS, TriageJob, read_issues, read_labels, run_triage
    from ..runs import RunSetup
    from ._common import cli_executor, load_cli_config, resolve_cwd
    from ._out import check_out_dir, input_path

    cwd = resolve_cwd(args.repo)
    config = load_cli_config(args, cwd)
    check_out_dir(args.out)
    issues = read_issues(input_path(args.issues))
    labels = read_labels(args.labels)
    progress = live_progress("triage", args, config)
    progress.name_items(tuple(f"#{issue.number}" for issue in issues))  # workers go in this order
    console = Console("triage", progress=progress)
    setup = RunSetup(
        hooks=progress,
        services=approval_services(),
        executor=cli_executor(args, config),
        on_start=console.started,
    )
    job = TriageJob(
        issues=issues,
        labels=labels,
        cwd=cwd,
        out=args.out.expanduser().resolve(),
        concurrency=args.concurrency,
        run_id=args.run_id,
        tools=READ_ONLY_TOOLS if args.repo is not None else (),
    )
    try:
        outcome = await run_triage(config, job, setup=setup)
    except anyio.get_cancelled_exc_class():
        console.close()
        if console.run_id is not None:
            print(
                f"corral triage: stopped; no report written (run {console.run_id} is journaled)",
                file=sys.stderr,
            )
        raise
    console.close()
    return report(outcome)


def report(outcome: TriageOutcome) -> int:
    """Tell a person how it went and where the reports are; the exit code."""
    print(f"corral triage: {outcome.report.summary_line()}", file=sys.stderr)
    for failed in outcome.report.failed:
        print(f"corral triage: #{failed.number} not triaged: {failed.error}", file=sys.stderr)
    print(f"corral triage: reports in {outcome.json_path} and {outcome.markdown_path}")
    return 0 if outcome.ok else 1
