"""`run_triage`: issues and a label set in, a checked triage report (and its files) out.

It embeds every issue once to find each one's candidate duplicates, then runs one read-only
`triager` worker per issue through the fan-out, each reporting against a schema whose label
`enum` is the label set. What the fan-out does not own (the index, the report) is done here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import anyio.to_thread

from corral.agents import CorralConfig
from corral.tools import SandboxMode

from ...fanout import FanoutOutcome
from ...runs import FanoutJob, LabelSet, RunSetup, TriageJob, WorkerTemplate, executor_of
from ...services import Embedder, WordLlamaEmbedder
from ._index import TOP_CANDIDATES, DuplicateIndex
from ._render import render_markdown
from ._report import (
    JSON_NAME,
    MARKDOWN_NAME,
    TriageReport,
    build_report,
    report_json_text,
    write_text_atomically,
)
from ._schema import report_schema
from ._task import issue_task, triage_guide

TRIAGER = "triager"
READ_ONLY_TOOLS = ("read_file", "grep", "list_dir")
"""The tools a worker gets when it may look at the project's code (`corral triage --repo`)."""
_TEMPLATE = "{task}"


@dataclass(frozen=True)
class TriageOutcome:
    """A finished triage: the report, where its files went (if written), and the fan-out."""

    report: TriageReport
    fanout: FanoutOutcome
    json_path: Path | None = None
    markdown_path: Path | None = None

    @property
    def ok(self) -> bool:
        return self.report.ok


async def run_triage(
    config: CorralConfig,
    job: TriageJob,
    *,
    setup: RunSetup,
    embedder: Embedder | None = None,
) -> TriageOutcome:
    """Triage `job.issues` with `job.labels`, their fan-out on `setup`'s executor.

    `embedder` defaults to the bundled WordLlama model; `setup.on_start` hears of the fan-out.
    """
    issues, labels = job.issues, job.labels
    build = partial(
        DuplicateIndex.build,
        issues,
        embedder or WordLlamaEmbedder(),
        floor=job.similarity_floor,
        top=TOP_CANDIDATES,
    )
    index = await anyio.to_thread.run_sync(build)
    items = [
        {"number": issue.number, "task": issue_task(issue, index.candidates(issue.number))}
        for issue in issues
    ]
    fanout_job = FanoutJob(
        items=tuple(items),
        template=_TEMPLATE,
        result_schema=report_schema(labels),
        cwd=job.cwd,
        concurrency=job.concurrency,
        run_id=job.run_id,
        max_result_tries=job.max_result_tries,
        worker=triager(labels, job.tools),
        run_kind="triage",
    )
    fanout = await executor_of(setup).run(fanout_job, setup, config)
    report = build_report(issues, labels.names, index, fanout)
    if job.out is None:
        return TriageOutcome(report, fanout)
    json_path, markdown_path = job.out / JSON_NAME, job.out / MARKDOWN_NAME
    await anyio.to_thread.run_sync(write_text_atomically, json_path, report_json_text(report))
    await anyio.to_thread.run_sync(write_text_atomically, markdown_path, render_markdown(report))
    return TriageOutcome(report, fanout, json_path, markdown_path)


def triager(labels: LabelSet, tools: Sequence[str]) -> WorkerTemplate:
    """A triage worker: read-only, with `tools`, and the triage guide after any instructions."""
    return WorkerTemplate(
        role=TRIAGER,
        tools=tuple(tools),
        sandbox=SandboxMode.READ_ONLY,
        instructions=triage_guide(labels),
    )


def triage_config(config: CorralConfig, labels: LabelSet) -> CorralConfig:
    """`config` for the workers: read-only, with the triage guide after any instructions."""
    return triager(labels, ()).shape(config)
