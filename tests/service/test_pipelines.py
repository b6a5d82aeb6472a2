"""The pipeline run kinds over HTTP: triage, review and refactor, their reports, and bad input.

The scripted models are the pipelines' own end-to-end policies (tests/e2e), so the server is
shown to carry out the same runs as the CLI, with the report kept in the journal instead of files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from jsonschema import Draft202012Validator

from corral.orchestrator.pipelines.triage import triage_json_schema
from corral.orchestrator.service import CorralClient
from tests._git import git, init_repo, write

from ..e2e import test_refactor as refactor_e2e
from ..e2e import test_review as review_e2e
from ..e2e import test_triage as triage_e2e
from ._harness import TOKEN, WAIT, Harness, open_service, reporter

pytestmark = pytest.mark.anyio

PATCH = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"
LABELS = {
    "bug": "Something is broken",
    "enhancement": "A new feature or an improvement",
    "question": "A usage question",
    "sync": "Fetching data from the server",
}


async def run_to_the_end(
    service: Harness, request: dict[str, Any], status: str = "done"
) -> tuple[str, dict[str, Any]]:
    """Submit `request`, follow its events to an end in `status`; the run id and its report."""
    async with CorralClient(service.url, TOKEN) as client:
        run_id = (await client.submit(request))["id"]
        with anyio.fail_after(WAIT):
            ending = [e async for e in client.events(run_id)][-1]
    assert (ending.event, ending.data["status"]) == ("end", status), ending.data
    answer = await service.http.get(f"/v1/runs/{run_id}/report")
    assert answer.status_code == 200, answer.text
    listed = (await service.http.get(f"/v1/runs/{run_id}")).json()
    assert listed["kind"] == request["kind"], "the run is listed (and journaled) as its own kind"
    return run_id, answer.json()["report"]


def pipeline(service: Harness, kind: str, **fields: Any) -> dict[str, Any]:
    return {"kind": kind, "base_url": service.model_url, "cd": str(service.cwd), **fields}


async def test_a_triage_over_http_reports_every_issue_with_labels_from_the_set(
    tmp_path: Path,
) -> None:
    async with open_service(tmp_path, triage_e2e.triager) as service:
        request = pipeline(service, "triage", issues=triage_e2e.ISSUES, labels=LABELS)
        run_id, report = await run_to_the_end(service, request)
        items = (await service.http.get(f"/v1/runs/{run_id}/items")).json()["items"]
    triaged = report["json"]
    Draft202012Validator(triage_json_schema()).validate(triaged)
    assert triaged["run_id"] == run_id and triaged["labels"] == list(LABELS)
    assert [i["number"] for i in triaged["issues"]] == [11, 12, 13, 14]
    assert all(i["labels"] and set(i["labels"]) <= set(LABELS) for i in triaged["issues"])
    assert {i["number"]: i["duplicate_of"] for i in triaged["issues"]}[14] == 11
    assert (
        "| #11 | Sync crashes with a traceback when the laptop is offline | bug | p1 |"
        in (report["markdown"])
    )
    assert [i["status"] for i in items] == ["done"] * 4


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """A repository whose one commit holds the shopping cart module."""
    return shop_repo(tmp_path)


def shop_repo(tmp_path: Path) -> Path:
    return init_repo(tmp_path / "shop-repo", {"shop/cart.py": review_e2e.CART_BASE}, message="base")


async def test_a_review_of_a_submitted_patch_keeps_a_valid_sarif_report(
    shop: Path, tmp_path: Path
) -> None:
    write(shop, {"shop/cart.py": review_e2e.CART_HEAD})
    patch = git(shop, "diff") + "\n"  # the working tree keeps the change: reviewers read it there
    async with open_service(tmp_path, review_e2e.reviewer) as service:
        request = pipeline(service, "review", repo=str(shop), patch=patch, fail_on="critical")
        _, report = await run_to_the_end(service, request)
    sarif = report["sarif"]
    assert review_e2e.sarif_problems(sarif) == []
    results = sarif["runs"][0]["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [("correctness", "error")]
    location = results[0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "shop/cart.py"
    assert report["summary"]["findings"] == 1 and report["complete"] is True
    assert "Off-by-one reads past the end" in report["markdown"]
    assert "the submitted patch" in report["markdown"]


def calc_repo(tmp_path: Path) -> Path:
    return init_repo(tmp_path / "calc-repo", refactor_e2e.FILES)


async def test_a_refactor_over_http_merges_the_passing_worker_into_the_result_branch(
    tmp_path: Path,
) -> None:
    repo = calc_repo(tmp_path)
    fields = {"instruction": refactor_e2e.INSTRUCTION, "check": refactor_e2e.CHECK}
    async with open_service(tmp_path, refactor_e2e.refactorer) as service:
        request = pipeline(
            service, "refactor", repo=str(repo), concurrency=2, max_attempts=1, **fields
        )
        # A worker kept out makes the run `failed`, as it makes the CLI exit 1.
        run_id, report = await run_to_the_end(service, request, "failed")
    branch = f"corral/refactor/{run_id}/result"
    assert report["branch"] == branch
    assert (report["merged"], report["failed"]) == ([1], [2])
    statuses = {w["worker"]: (w["status"], w["check"]["passed"]) for w in report["workers"]}
    assert statuses == {1: ("merged", True), 2: ("check failed", False)}
    assert report["merged_check"]["passed"] is True
    assert "def add_numbers" in git(repo, "show", f"{branch}:calc/ops.py")
    assert git(repo, "symbolic-ref", "HEAD") == "refs/heads/main"


async def post(service: Harness, request: dict[str, Any]) -> tuple[int, str]:
    answer = await service.http.post("/v1/runs", json=request)
    body = answer.json()
    return answer.status_code, " | ".join(
        [body["error"], *(e["msg"] for e in body.get("errors", []))]
    )


async def test_invalid_inline_input_is_a_422_that_names_the_problem(
    shop: Path, tmp_path: Path
) -> None:
    issues = triage_e2e.ISSUES[:2]
    twice = [{"name": "Bug", "description": "broken"}, {"name": "bug"}]
    hunk_runs_long = "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-a\n"
    async with open_service(tmp_path, reporter) as service:
        duplicate = await post(service, pipeline(service, "triage", issues=issues, labels=twice))
        untitled = await post(
            service, pipeline(service, "triage", issues=[{"number": 3}], labels=LABELS)
        )
        malformed = await post(service, pipeline(service, "review", patch=hunk_runs_long))
        both = await post(service, pipeline(service, "review", patch=PATCH, range="a..b"))
        bad_range = await post(
            service, pipeline(service, "review", repo=str(shop), range="main..nope")
        )
        no_repo = await post(
            service, pipeline(service, "refactor", repo=str(tmp_path / "gone"), instruction="x")
        )
        blank = await post(
            service, pipeline(service, "refactor", repo=str(shop), instruction=" \n")
        )
        listed = (await service.http.get("/v1/runs")).json()["runs"]
    assert duplicate[0] == 422
    assert "labels: label 'Bug'/'bug' is defined twice, at entry 1 and entry 2" in duplicate[1]
    assert untitled[0] == 422
    assert "issues: the issue at index 0 is malformed: it has no 'title'" in untitled[1]
    assert malformed[0] == 422
    assert "patch line 5: a hunk ends early or runs long" in malformed[1]
    assert both[0] == 422 and "give exactly one of range (BASE..HEAD) and patch" in both[1]
    assert bad_range[0] == 422 and "nope" in bad_range[1]
    assert no_repo[0] == 422 and "is not a directory on the server" in no_repo[1]
    assert blank[0] == 422 and "the instruction is blank; say what to change" in blank[1]
    assert listed == [], "no bad request was admitted"


async def test_a_run_of_a_kind_without_a_report_answers_404_pointing_at_its_results(
    tmp_path: Path,
) -> None:
    async with open_service(tmp_path, reporter) as service:
        async with CorralClient(service.url, TOKEN) as client:
            run_id = (await client.submit(service.fanout(1)))["id"]
            with anyio.fail_after(WAIT):
                [e async for e in client.events(run_id)]
        answer = await service.http.get(f"/v1/runs/{run_id}/report")
        unknown = await service.http.get("/v1/runs/run-nope/report")
    assert answer.status_code == 404
    assert answer.json()["error"] == (
        f"run {run_id} (fanout) keeps no report: review, triage and refactor runs do; "
        f"read /v1/runs/{run_id}/results"
    )
    assert unknown.status_code == 404 and unknown.json()["error"] == "no run run-nope"
