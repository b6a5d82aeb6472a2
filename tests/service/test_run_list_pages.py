"""`GET /v1/runs` in pages: a client following `next` sees every run once, oldest first."""

from __future__ import annotations

from pathlib import Path

import pytest

from ._harness import open_service, reporter

pytestmark = pytest.mark.anyio


async def test_a_client_following_next_reads_every_run_once_in_order(tmp_path: Path) -> None:
    async with open_service(tmp_path, reporter) as service:
        submitted = [
            (await service.http.post("/v1/runs", json=service.fanout(1))).json()["id"]
            for _ in range(5)
        ]
        pages = [(await service.http.get("/v1/runs?limit=2")).json()]
        while pages[-1]["has_more"]:
            pages.append((await service.http.get(pages[-1]["next"])).json())
        whole = (await service.http.get("/v1/runs")).json()
    listed = [run["id"] for page in pages for run in page["runs"]]
    assert [len(page["runs"]) for page in pages] == [2, 2, 1]
    assert listed == [run["id"] for run in whole["runs"]] and sorted(listed) == sorted(submitted)
    assert whole["has_more"] is False and "next" not in whole


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("limit=0", "limit must be a whole number from 1 to 1000"),
        ("limit=ten", "limit must be a whole number"),
        ("limit=5000", "limit must be a whole number"),
        ("after=run-gone", "after=run-gone is no run in this list"),
    ],
)
async def test_paging_it_cannot_honour_is_a_422_that_says_what_to_send(
    tmp_path: Path, query: str, words: str
) -> None:
    async with open_service(tmp_path, reporter) as service:
        answer = await service.http.get(f"/v1/runs?{query}")
    assert answer.status_code == 422 and words in answer.json()["error"]


async def test_the_next_page_keeps_the_status_filter(tmp_path: Path) -> None:
    async with open_service(tmp_path, reporter) as service:
        for _ in range(3):
            await service.http.post("/v1/runs", json=service.fanout(1))
        first = (await service.http.get("/v1/runs?status=nothing&limit=1")).json()
        some = (await service.http.get("/v1/runs?limit=1")).json()
    assert first == {"runs": [], "has_more": False}
    assert some["has_more"] and some["next"].startswith("/v1/runs?limit=1&after=")
