"""`run_review`: a git range or a patch, reviewed in parallel by read-only reviewers.

The change is read and checked before anything runs (a bad range or patch starts nothing and
journals nothing). It is cut into units, one reviewer per unit runs through the fan-out with the
reviewer role and a read-only sandbox, and their findings are aggregated into a `ReviewReport`.
Writing the report is left to `write_reports`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import anyio.to_thread

from corral.agents import CorralConfig
from corral.tools import ApprovalPolicy, SandboxMode

from ..._input_files import read_input_file
from ...fanout import FanoutOutcome, StartCallback
from ...runs import FanoutJob, ReviewJob, RunSetup, WorkerTemplate, executor_of
from ._aggregate import aggregate
from ._diff import FileDiff, parse_unified_diff
from ._errors import PatchError, ReviewInputError
from ._findings import FINDINGS_SCHEMA, Finding, findings_from_result
from ._git import checkout_at, range_diff, repo_root, resolve_range
from ._report import ChangeSource, ReviewReport, UnitOutcome, fingerprint
from ._task import AT_HEAD, PATCH_TREE, TASK_TEMPLATE
from ._units import ChangeMap, ReviewUnit, split_units

REVIEWER_TOOLS = ("shell", "read_file", "list_dir", "grep")
"""The core tools a reviewer gets besides `report_result`; none of them can write."""
REVIEWER_ROLE = "reviewer"
REVIEWER = WorkerTemplate(
    role=REVIEWER_ROLE,
    tools=REVIEWER_TOOLS,
    sandbox=SandboxMode.READ_ONLY,
    approval=ApprovalPolicy.NEVER,
)
"""A reviewer: read-only, never asking to escalate, with the tools that cannot write."""


@dataclass(frozen=True)
class Change:
    """A change read and parsed: where it came from, the repository root, its files."""

    source: ChangeSource
    root: Path
    files: tuple[FileDiff, ...]

    @property
    def skipped(self) -> tuple[tuple[str, str], ...]:
        return tuple((f.path, f.skip_reason) for f in self.files if f.skip_reason is not None)


async def read_change(job: ReviewJob) -> Change:
    """The change `job` names; raises `ReviewInputError` subclasses for bad input."""
    if (job.range is None) == (job.patch is None):
        raise ReviewInputError("give exactly one of --range BASE..HEAD and --patch FILE")
    if not job.repo.is_dir():
        raise ReviewInputError(f"--repo {job.repo}: not a directory; give the repository")
    if job.patch is not None:
        return await _patch_change(job.repo.resolve(), job.patch)
    assert job.range is not None
    root = await repo_root(job.repo.resolve())
    span = await resolve_range(root, job.range)
    files = parse_unified_diff(await range_diff(root, span), source=f"git diff {span.text}")
    source = ChangeSource("range", span.text, span.base, span.head)
    return Change(source, root, tuple(files))


async def _patch_change(root: Path, patch: Path) -> Change:
    text = await anyio.to_thread.run_sync(read_input_file, patch, "patch", PatchError)
    files = parse_unified_diff(text, source=str(patch))
    if not files:
        raise PatchError(
            f"{patch} holds no unified diff; give the output of `git diff` or `diff -u`"
        )
    return Change(ChangeSource("patch", str(patch)), root, tuple(files))


async def run_review(
    config: CorralConfig,
    job: ReviewJob,
    *,
    setup: RunSetup,
    on_start: StartCallback | None = None,
    on_units: Callable[[tuple[str, ...]], None] | None = None,
) -> ReviewReport:
    """Read the change, review each unit of it in parallel, and aggregate the findings.

    `on_units` hears the units' labels (a file, or a file's group of hunks) in item order before
    the reviewers start, so progress can name each reviewer by what it reviews.
    """
    change = await read_change(job)
    units = split_units(change.files, job.max_unit_lines)
    if not units:
        return ReviewReport(change.source, change.root, skipped=change.skipped)
    if on_units is not None:
        on_units(tuple(unit.label for unit in units))
    async with _reviewers_cwd(change) as cwd:
        items = [
            unit.item(AT_HEAD if change.source.kind == "range" else PATCH_TREE) for unit in units
        ]
        fanout = FanoutJob(
            items=tuple(items),
            template=TASK_TEMPLATE,
            result_schema=FINDINGS_SCHEMA,
            cwd=cwd,
            concurrency=job.concurrency,
            run_id=job.run_id,
            worker=REVIEWER,
            run_kind="review",
        )
        setup = replace(setup, on_start=on_start) if on_start is not None else setup
        outcome = await executor_of(setup).run(fanout, setup, config)
    return _report(change, units, outcome, roots=(str(cwd), str(change.root)))


def read_only(config: CorralConfig) -> CorralConfig:
    """`config` with reviewers confined: read-only sandbox, no writable roots, no escalation."""
    return REVIEWER.shape(config)


@asynccontextmanager
async def _reviewers_cwd(change: Change) -> AsyncIterator[Path]:
    if change.source.head is None:
        yield change.root
        return
    async with checkout_at(change.root, change.source.head) as tree:
        yield tree


def _report(
    change: Change, units: Sequence[ReviewUnit], outcome: FanoutOutcome, roots: Sequence[str]
) -> ReviewReport:
    change_map = ChangeMap(change.files)
    found: list[Finding] = []
    outcomes: list[UnitOutcome] = []
    for unit, item in zip(units, outcome.items, strict=True):
        findings = (
            findings_from_result(item.result, unit=unit.label, roots=roots, known=change_map.paths)
            if item.status == "done"
            else []
        )
        found.extend(findings)
        outcomes.append(
            UnitOutcome(
                unit.label,
                unit.path,
                unit.part,
                unit.parts,
                item.status,
                len(findings),
                item.error,
                item.agent_id,
            )
        )
    merged = aggregate(found, change_map)
    prints = tuple(fingerprint(f, change_map.line_text(f.path, f.start_line)) for f in merged.kept)
    return ReviewReport(
        source=change.source,
        root=change.root,
        findings=merged.kept,
        fingerprints=prints,
        dropped=merged.dropped,
        units=tuple(outcomes),
        skipped=change.skipped,
        run_id=outcome.run_id,
        usage=outcome.totals(),
    )
