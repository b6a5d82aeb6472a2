"""`corral demo`: triage 40 bundled issues and review a sample change, offline, in under a minute.

Everything is real but the model: corral's model client talks HTTP to its scripted model server,
workers run in parallel with their tools in the bubblewrap sandbox, the journal is SQLite. The
"model" is a pair of rule-based stand-ins, and the output says so.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass


from ._invocation import corral_invocation

DEMO_MODEL = "demo-rules"


def add_parser(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "demo", help="triage issues and review a change offline", description=__doc__
    )
    parser.add_argument(
        "--out", type=Path, help="where to write the reports (default: a new temp folder)"
    )
    parser.set_defaults(handler=run)


async def run(args: argparse.Namespace) -> int:
    from corral.agents import load_config

    from ..demo import demo_policy
    from ..model_server import serve_model_server
    from ._out import check_out_dir

    if args.out is not None:
        check_out_dir(args.out)
    out = (args.out or Path(tempfile.mkdtemp(prefix="corral-demo-"))).resolve()
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    print(
        "corral demo: the model is a rule-based stand-in (keyword and pattern rules), not an LLM;"
    )
    print("everything else is real: HTTP, parallel workers, the sandbox, the journal.")
    async with serve_model_server(demo_policy) as server:
        env = {"CORRAL_HOME": str(out / "home"), "CORRAL_BASE_URL": server.base_url}
        free = {"input_per_mtok": 0.0, "output_per_mtok": 0.0}  # rules cost nothing
        overrides = {"model": DEMO_MODEL, "prices": {DEMO_MODEL: free}}
        config = load_config(cwd=out, env=env, overrides=overrides).config
        triaged = await _triage(config, env, out)
        reviewed = await _review(config, env, out)
        requests = server.stats()["requests"]["total"]
    _summary(out, triaged, reviewed, requests, time.monotonic() - started)
    return 0 if triaged and reviewed else 1


async def _triage(config: Any, env: dict[str, str], out: Path) -> bool:
    from ..demo import DemoProgress
    from ..pipelines.triage import TriageJob, read_issues, read_labels, run_triage
    from ..pipelines.triage.demo_policy import DEMO_ISSUES, DEMO_LABELS
    from ..runs import RunSetup

    issues = read_issues(DEMO_ISSUES)
    labels = read_labels(DEMO_LABELS)
    print(f"\ntriage: {len(issues)} issues, {len(labels.names)} labels, one worker per issue")
    setup = RunSetup(hooks=DemoProgress("triage", len(issues)), env=env)
    job = TriageJob(issues=issues, labels=labels, cwd=out, out=out / "triage")
    outcome = await run_triage(config, job, setup=setup)
    print(f"triage: {outcome.report.summary_line()}")
    for issue in outcome.report.duplicates:
        print(f"  #{issue.number} duplicates #{issue.duplicate_of}")
    return outcome.ok


async def _review(config: Any, env: dict[str, str], out: Path) -> bool:
    import anyio

    from ..demo import DemoProgress, write_shop_repo
    from ..pipelines.review import ReviewJob, Severity, run_review, write_reports
    from ..runs import RunSetup

    repo = await anyio.to_thread.run_sync(write_shop_repo, out / "shop")
    print(f"\nreview: main..feature of {repo}, one read-only reviewer per changed file")
    setup = RunSetup(hooks=DemoProgress("review", 3), env=env)
    report = await run_review(config, ReviewJob(repo=repo, range="main..feature"), setup=setup)
    await anyio.to_thread.run_sync(
        write_reports, report, out / "review", ["md", "json", "sarif"], Severity.HIGH
    )
    print(f"review: {len(report.findings)} findings kept, {len(report.dropped)} dropped")
    for finding in report.findings:
        where = f"{finding.path}:{finding.start_line}"
        print(f"  [{finding.severity}] {where} {finding.title}")
    return report.complete


def _summary(out: Path, triaged: bool, reviewed: bool, requests: int, seconds: float) -> None:
    from ..pipelines.triage.demo_policy import DEMO_ISSUES, DEMO_LABELS

    print(f"\n{requests} model requests in {seconds:.1f} s. Reports are in {out}:")
    for name in (
        "triage/triage.md",
        "triage/triage.json",
        "review/review.md",
        "review/review.sarif",
    ):
        print(f"  {out / name}")
    corral = corral_invocation()
    print(
        "\nTo run the same pipelines against a real model, set OPENAI_API_KEY and run:\n"
        f"  {corral} triage --issues {DEMO_ISSUES} --labels {DEMO_LABELS} --model gpt-5.4-mini\n"
        f"  {corral} review --repo {out / 'shop'} --range main..feature --model gpt-5.4-mini\n"
        "(any OpenAI-compatible endpoint works: add --base-url URL, and --api chat if it only "
        "speaks Chat Completions)"
    )
    if not (triaged and reviewed):
        print(f"\nsome workers did not finish: `{corral} runs` and `{corral} status RUN` say which")
