"""Attacks on `corral journal delete`: a run id written as a pattern must name only itself.

A store that matched the id with `LIKE` or `GLOB` would take `%`, `_`, `*`, `?` or `[...]` as
wildcards and delete (or refuse for) other runs; memories and blobs are deleted by run id
too. Every store must treat the id as the exact text it is.
"""

from __future__ import annotations

import time

import pytest

from corral.agents._store import Store, UnknownRun
from tests.store.conformance.test_store import make_run

pytestmark = [pytest.mark.hostile, pytest.mark.anyio]

KEPT = ["run-1", "run-12", "run_a", "RUN-1", "run-[1]", "run-%"]


@pytest.mark.parametrize("pattern", ["run-%", "run-_", "run-*", "run-?", "run-[1]", "%", "RUN-1"])
async def test_a_run_id_with_wildcards_deletes_only_the_run_of_exactly_that_id(
    store: Store, pattern: str
) -> None:
    for run_id in KEPT:
        await store.create_run(make_run(run_id, status="done"))
    held = {r.run_id for r in await store.list_runs()}
    if pattern in held:
        await store.delete_run(pattern, at=time.time())
    else:
        with pytest.raises(UnknownRun):
            await store.delete_run(pattern, at=time.time())
    left = {r.run_id for r in await store.list_runs()}
    assert left == held - {pattern}
