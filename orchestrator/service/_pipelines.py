"""The pipeline run kinds on the server: review, refactor and triage, and the reports they keep.

Each runs its job on the run's executor (the pipeline the CLI calls) under the service's run
id, then keeps its report in the run's journal record (`summary["report"]`), where
`GET /v1/runs/{id}/report` reads it: what the CLI would have written to files.
`check_pipeline` refuses server paths and git ranges that cannot work before the run is
admitted, so they are a 422.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread

from corral.agents import CorralConfig, RunRecord, Store

from ..pipelines.refactor import MERGED, RefactorOutcome
from ..pipelines.review import (
    ChangeSource,
    ReviewReport,
    Severity,
    read_change,
    render_reports,
    render_sarif,
)
from ..pipelines.triage import (
    READ_ONLY_TOOLS,
    TriageReport,
    render_markdown,
)
from ..runs import RefactorJob, ReviewJob, RunSetup, TriageJob, executor_of
from ._errors import RunRejected
from ._inline import inline_issues, inline_labels
from ._models import PipelineRequest, RefactorRequest, ReviewRequest, TriageRequest

PATCH_LABEL = "the submitted patch"
REPORT_KEY = "report"


def check_pipeline(request: PipelineRequest, cwd: Path) -> Path:
    """The folder the run works in (`cd`, else its repository, as the CLI does) once the
    request is known to be able to run there; `InvalidInput` if not. Blocking, and called in a
    worker thread that anyio started, since a review's range is resolved by git."""
    repo = server_path(request.repo) if request.repo is not None else None
    if repo is not None and not repo.is_dir():
        raise RunRejected(f"repo {request.repo!r} is not a directory on the server")
    if isinstance(request, ReviewRequest) and request.range is not None:
        anyio.from_thread.run(read_change, _review_job(request, cwd, None))
    return cwd if request.cd is not None or repo is None else repo.resolve()


def server_path(text: str) -> Path:
    """A path the request names on the server (`~` is the server's home)."""
    return Path(text).expanduser()


async def run_pipeline(
    request: PipelineRequest,
    *,
    config: CorralConfig,
    cwd: Path,
    setup: RunSetup,
    run_id: str,
    store: Store,
) -> None:
    """Carry out a pipeline run under `run_id` and keep its report in the journal."""
    if isinstance(request, ReviewRequest):
        report = await _review(request, config, cwd, setup, run_id)
    elif isinstance(request, RefactorRequest):
        report = await _refactor(request, config, setup, run_id)
    else:
        report = await _triage(request, config, cwd, setup, run_id)
    await keep_report(store, run_id, request.kind, report)


async def keep_report(store: Store, run_id: str, kind: str, report: dict[str, Any]) -> None:
    """Add `report` to the run's journaled summary (making the record if nothing ran)."""
    record = await store.get_run(run_id)
    if record is None:  # e.g. a review of a change with nothing to review starts no fan-out
        now = time.time()
        record = RunRecord(
            run_id=run_id, kind=kind, status="done", created_at=now, updated_at=now, config={}
        )
        await store.create_run(record)
    await store.update_run(run_id, summary={**record.summary, REPORT_KEY: report})


async def _review(
    request: ReviewRequest, config: CorralConfig, cwd: Path, setup: RunSetup, run_id: str
) -> dict[str, Any]:
    if request.patch is None:
        report = await executor_of(setup).run(_review_job(request, cwd, run_id), setup, config)
        return review_report(report, request.fail_on)
    async with anyio.TemporaryDirectory(prefix="corral-review-") as folder:
        patch = anyio.Path(folder) / "submitted.patch"
        await patch.write_text(request.patch, encoding="utf-8")
        job = _review_job(request, cwd, run_id).model_copy(update={"patch": Path(patch)})
        report = await executor_of(setup).run(job, setup, config)
    report = replace(report, source=ChangeSource("patch", PATCH_LABEL))
    return review_report(report, request.fail_on)


def _review_job(request: ReviewRequest, cwd: Path, run_id: str | None) -> ReviewJob:
    repo = server_path(request.repo) if request.repo else cwd
    return ReviewJob(
        repo=repo,
        range=request.range,
        concurrency=request.concurrency,
        max_unit_lines=request.max_unit_lines,
        run_id=run_id,
    )


def review_report(report: ReviewReport, fail_on: str) -> dict[str, Any]:
    """A review as the journal keeps it: SARIF 2.1.0, the Markdown, and the summary."""
    threshold = None if fail_on == "none" else Severity(fail_on)
    (markdown,) = render_reports(report, ("md",), threshold).values()
    return {
        "kind": "review",
        "complete": report.complete,
        "summary": report.to_json(threshold)["summary"],
        "sarif": render_sarif(report),
        "markdown": markdown,
    }


async def _refactor(
    request: RefactorRequest, config: CorralConfig, setup: RunSetup, run_id: str
) -> dict[str, Any]:
    job = RefactorJob(
        repo=server_path(request.repo),
        instruction=request.instruction,
        files=tuple(request.files),
        check=request.check,
        branch=request.branch,
        concurrency=request.concurrency,
        max_attempts=request.max_attempts,
        run_id=run_id,
    )
    return refactor_report(await executor_of(setup).run(job, setup, config))


def refactor_report(outcome: RefactorOutcome) -> dict[str, Any]:
    """A refactor as the journal keeps it: the result branch, each worker and its check."""
    merged_check = outcome.merged_check
    return {
        "kind": "refactor",
        "ok": outcome.ok,
        "repo": str(outcome.repo),
        "base": outcome.base,
        "branch": outcome.branch,
        "merged": [w.index for w in outcome.workers if w.status == MERGED],
        "failed": [w.index for w in outcome.workers if not w.ok],
        "merged_check": merged_check.to_json() if merged_check is not None else None,
        "workers": [w.to_json() for w in outcome.workers],
        "text": outcome.summary(),
    }


async def _triage(
    request: TriageRequest, config: CorralConfig, cwd: Path, setup: RunSetup, run_id: str
) -> dict[str, Any]:
    job = TriageJob(
        issues=inline_issues(request.issues),
        labels=inline_labels(request.labels),
        cwd=server_path(request.repo) if request.repo else cwd,
        concurrency=request.concurrency,
        run_id=run_id,
        tools=READ_ONLY_TOOLS if request.repo is not None else (),
    )
    outcome = await executor_of(setup).run(job, setup, config)
    return triage_report(outcome.report)


def triage_report(report: TriageReport) -> dict[str, Any]:
    """A triage as the journal keeps it: what `triage.json` holds, and `triage.md`."""
    return {"kind": "triage", "json": report.to_json(), "markdown": render_markdown(report)}
