"""A Codex provider's `query_params`, `http_headers` and `env_http_headers`, from the config file
to what the scripted model server receives.

Azure needs `api-version` on every request and gateways want their headers: each case loads a
Codex config as the user's file, builds the model settings the run would use, and sends real
requests (Responses and Chat, streamed and not) to the scripted server, which records the query
string and headers it was sent.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest

from corral.agents import model_settings_from_config
from corral.agents._items import Message
from corral.agents.model import ModelRequest, ModelSettings, open_model_client
from corral.orchestrator._run import ClientPool
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.service._overrides import classify
from tests.agents._config_files import load, write

TEST_DEADLINE = 20
APIS: list[Literal["responses", "chat"]] = ["responses", "chat"]


def azure_config(base_url: str, wire_api: str = "responses") -> str:
    return (
        'model_provider = "azure"\nmodel = "gpt-test"\n'
        "[model_providers.azure]\n"
        'name = "Azure"\n'
        f'base_url = "{base_url}"\n'
        'env_key = "AZURE_OPENAI_API_KEY"\n'
        'query_params = { api-version = "2025-04-01-preview" }\n'
        f'wire_api = "{wire_api}"\n'
        'http_headers = { "X-Team" = "search" }\n'
        'env_http_headers = { "X-Gateway-Token" = "GATEWAY_TOKEN", "api-key" = '
        '"AZURE_OPENAI_API_KEY", "X-Absent" = "NOT_SET_ANYWHERE" }\n'
    )


ENV = {"AZURE_OPENAI_API_KEY": "azure-key-1234", "GATEWAY_TOKEN": "gw-token-5678"}


def policy(request: dict[str, Any]) -> str:
    del request
    return "ok"


async def send_one(settings: ModelSettings, *, stream: bool) -> None:
    client = open_model_client(settings)
    request = ModelRequest(
        model=settings.model,
        instructions="Be brief.",
        input=[Message(role="user", text="hi")],
        stream=stream,
    )
    try:
        with anyio.fail_after(TEST_DEADLINE):
            await client.complete(request)
    finally:
        await client.aclose()


def settings_for(home: Path, project: Path, text: str, env: Mapping[str, str]) -> ModelSettings:
    write(home / "config.toml", text)
    loaded = load(project, home, env=env)
    return model_settings_from_config(loaded.config, {**env, "HOME": str(home.parent)})


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
@pytest.mark.parametrize("api", APIS)
@pytest.mark.anyio
async def test_every_model_request_carries_the_providers_query_and_headers(
    api: Literal["responses", "chat"], stream: bool, home: Path, project: Path
) -> None:
    async with serve_model_server(policy) as server:
        settings = settings_for(home, project, azure_config(server.base_url, api), ENV)
        await send_one(settings, stream=stream)
    (record,) = server.requests
    assert record["query"] == "api-version=2025-04-01-preview"
    headers = record["headers"]
    assert headers["x-team"] == "search"
    assert headers["x-gateway-token"] == "gw-token-5678"
    assert headers["api-key"] == "...1234"  # the server's log cuts it down
    assert headers["authorization"] == "Bearer ...1234"
    assert "x-absent" not in headers  # an unset variable leaves its header out, as in Codex


@pytest.mark.anyio
async def test_a_blank_variable_leaves_its_header_out(home: Path, project: Path) -> None:
    async with serve_model_server(policy) as server:
        env = {**ENV, "GATEWAY_TOKEN": "  "}
        settings = settings_for(home, project, azure_config(server.base_url), env)
        await send_one(settings, stream=True)
    (record,) = server.requests
    assert "x-gateway-token" not in record["headers"]
    assert record["headers"]["x-team"] == "search"


def test_the_azure_provider_keys_load_without_a_skipped_warning(
    home: Path, project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="corral.config")
    write(home / "config.toml", azure_config("https://my-team.openai.azure.com/openai"))
    provider = load(project, home, env=ENV).config.model_providers["azure"]
    assert provider.query_params == {"api-version": "2025-04-01-preview"}
    assert provider.http_headers == {"X-Team": "search"}
    assert provider.env_http_headers["X-Gateway-Token"] == "GATEWAY_TOKEN"
    assert not [r for r in caplog.records if "ignored Codex settings" in r.getMessage()]


def test_a_base_url_set_elsewhere_leaves_the_providers_headers_behind(
    home: Path, project: Path
) -> None:
    text = azure_config("https://my-team.openai.azure.com/openai")
    write(home / "config.toml", text)
    env = {**ENV, "HOME": str(home.parent)}
    loaded = load(project, home, env=env, overrides={"base_url": "http://127.0.0.1:9/v1"})
    settings = model_settings_from_config(loaded.config, env)
    assert settings.query_params == {}
    assert settings.http_headers == {}
    assert settings.secret_headers == {}


def test_agents_with_other_provider_headers_get_their_own_client() -> None:
    base = ModelSettings.resolve(model="m", base_url="http://127.0.0.1:9/v1", env={})
    other = base.model_copy(update={"http_headers": {"X-Team": "other"}})
    pool = ClientPool(factory=open_model_client)
    assert pool.client_for(base) is pool.client_for(base)
    assert pool.client_for(base) is not pool.client_for(other)


@pytest.mark.parametrize("key", ["query_params", "http_headers", "env_http_headers"])
def test_a_service_request_cannot_override_provider_headers_or_query(key: str) -> None:
    assert classify(("model_providers", "gw", key, "X-Team")) == "never"
    assert classify(("model_providers", "gw", key)) == "never"
