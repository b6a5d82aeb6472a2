"""While agents run or a model server serves, the garbage collector runs less often; the
process gets its own setting back afterwards, and a setting the host chose is left alone."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from corral.agents import CorralConfig, MemoryStore, RunnerHooks
from corral.orchestrator._collector import RUN_THRESHOLD, paced_collector
from corral.orchestrator._run import ClientPool, RuntimeOptions, open_runtime
from corral.orchestrator.model_server import serve_model_server

HOST = (700, 10, 10)


@pytest.fixture(autouse=True)
def host_collector() -> Iterator[None]:
    """Each test starts from CPython's default setting and leaves the process as it found it."""
    found, enabled = gc.get_threshold(), gc.isenabled()
    gc.set_threshold(*HOST)
    gc.enable()
    try:
        yield
    finally:
        gc.set_threshold(*found)
        if not enabled:
            gc.disable()


def test_the_first_threshold_is_raised_while_held_and_given_back_after() -> None:
    with paced_collector():
        assert gc.get_threshold() == (RUN_THRESHOLD, 10, 10)
    assert gc.get_threshold() == HOST


def test_overlapping_holders_give_the_setting_back_only_when_the_last_one_leaves() -> None:
    first, second = paced_collector(), paced_collector()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert gc.get_threshold()[0] == RUN_THRESHOLD
    second.__exit__(None, None, None)
    assert gc.get_threshold() == HOST


def test_a_higher_threshold_the_host_chose_is_left_alone() -> None:
    gc.set_threshold(100_000, 20, 20)
    with paced_collector():
        assert gc.get_threshold() == (100_000, 20, 20)
    assert gc.get_threshold() == (100_000, 20, 20)


def test_a_collector_the_host_turned_off_stays_off_and_untouched() -> None:
    gc.disable()
    with paced_collector():
        assert not gc.isenabled()
        assert gc.get_threshold() == HOST
    assert not gc.isenabled()


def test_a_setting_the_host_changes_meanwhile_is_kept_when_the_holder_leaves() -> None:
    with paced_collector():
        gc.set_threshold(1_000, 5, 5)
    assert gc.get_threshold() == (1_000, 5, 5)


def test_a_holder_that_fails_still_gives_the_setting_back() -> None:
    with pytest.raises(RuntimeError), paced_collector():
        raise RuntimeError("the run failed")
    assert gc.get_threshold() == HOST


@pytest.mark.anyio
async def test_an_open_runtime_paces_the_collector_until_it_closes() -> None:
    clients = ClientPool()
    options = RuntimeOptions(
        config=CorralConfig(),
        store=MemoryStore(),
        run_id="run-paced",
        clients=clients,
        hooks=RunnerHooks(),
    )
    try:
        async with open_runtime(options):
            assert gc.get_threshold()[0] == RUN_THRESHOLD
    finally:
        await clients.aclose()
    assert gc.get_threshold() == HOST


@pytest.mark.anyio
async def test_a_serving_model_server_paces_the_collector_until_it_stops() -> None:
    async with serve_model_server(lambda request: "ok"):
        assert gc.get_threshold()[0] == RUN_THRESHOLD
    assert gc.get_threshold() == HOST
