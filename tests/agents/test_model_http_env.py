"""The model endpoint's HTTP path and the environment: the proxy variables are honoured (read
once per session, not on every request), and ~/.netrc never touches the bearer key."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from corral.agents._items import Message
from corral.agents.model import ModelError, ModelRequest, ModelSettings, open_model_client
from corral.orchestrator.model_server import serve_model_server

TEST_DEADLINE = 20
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.fixture(autouse=True)
def clean_proxy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


def ask() -> ModelRequest:
    return ModelRequest(
        model="m-test", instructions="", input=[Message(role="user", text="hi")], stream=True
    )


async def answer_through(base_url: str) -> None:
    settings = ModelSettings.resolve(
        model="m-test", api="responses", base_url=base_url, env={}, api_key="sk-test-1234"
    )
    client = open_model_client(settings)
    try:
        await client.complete(ask())
    finally:
        await client.aclose()


@pytest.mark.anyio
async def test_a_netrc_entry_for_the_model_host_leaves_the_bearer_key_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login someone password secret\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    with anyio.fail_after(TEST_DEADLINE):
        async with serve_model_server(lambda request: "ok") as server:
            await answer_through(server.base_url)
            authorization = server.requests[0]["headers"]["authorization"]
    assert authorization == "Bearer ...1234"  # the server's record masks all but the tail


@pytest.mark.anyio
async def test_a_proxy_named_by_the_environment_carries_the_requests(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with anyio.fail_after(TEST_DEADLINE):
        async with serve_model_server(lambda request: "via the proxy") as server:
            # The scripted server stands in for the proxy: the request names a host nobody
            # resolves, so it can only arrive through the proxy the variable names.
            # It answers a proxied request (its target a whole URL) with a 404 naming the target.
            monkeypatch.setenv("HTTP_PROXY", server.base_url.removesuffix("/v1"))
            with pytest.raises(ModelError, match=r"404.*POST /http://model\.invalid/v1/responses"):
                await answer_through("http://model.invalid/v1")


@pytest.mark.anyio
async def test_no_proxy_exempts_the_models_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with anyio.fail_after(TEST_DEADLINE):
        async with serve_model_server(lambda request: "direct") as server:
            await answer_through(server.base_url)
            assert len(server.requests) == 1
