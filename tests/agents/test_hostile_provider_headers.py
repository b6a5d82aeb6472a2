"""Attacks on a provider's `query_params`, `http_headers` and `env_http_headers`.

The header values read from the environment are secrets like the API key: never journaled or
shown, sent only to the provider's own endpoint when the user named it. Names and values that
could split a header or the request line, or take over corral's own headers, are refused with a
one-line config error; query parameters cannot move the path or the host; an untrusted project
cannot set any of them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import anyio
import pytest

from corral.agents import AgentSpec, model_settings_from_config
from corral.agents._items import Message
from corral.agents.model import (
    ModelConfigError,
    ModelError,
    ModelRequest,
    ModelSettings,
    open_model_client,
)
from corral.orchestrator.model_server import ModelServerOptions, serve_model_server
from corral.orchestrator.runs import build_root_spec
from tests.agents._config_files import load, load_error, write

pytestmark = pytest.mark.hostile

TEST_DEADLINE = 20
SECRET = "gw-secret-value-9Q7Z"
PROVIDER_URL = "https://gateway.example.test/v1"


def provider(extra: str, base_url: str = PROVIDER_URL) -> str:
    return (
        'model_provider = "gw"\n[model_providers.gw]\n'
        f'base_url = "{base_url}"\nenv_key = "GW_KEY"\n{extra}'
    )


def toml_string(text: str) -> str:
    return json.dumps(text)  # a TOML basic string: JSON's escapes are TOML's


ENV = {"GW_KEY": "gw-key", "GW_TOKEN": SECRET}

BAD_NAMES = {
    "crlf": "X-A\r\nX-Injected",
    "lf": "X-A\nHost",
    "space": "X A",
    "colon": "X-A: 1",
    "empty": "",
    "nul": "X-A\u0000",
    "zero-width": "X\u200bA",
    "non-ascii": "X-Ä",
}


@pytest.mark.parametrize("table", ["http_headers", "env_http_headers"])
@pytest.mark.parametrize("name", BAD_NAMES.values(), ids=BAD_NAMES.keys())
def test_a_header_name_that_is_no_http_token_is_a_one_line_config_error(
    table: str, name: str, home: Path, project: Path
) -> None:
    write(home / "config.toml", provider(f'{table} = {{ {toml_string(name)} = "GW_TOKEN" }}\n'))
    message = load_error(project, home, env=ENV)
    assert "is not a valid HTTP header name" in message
    assert "\n" not in message and "\r" not in message


BAD_VALUES = {
    "crlf": "v\r\nX-Injected: 1",
    "lf": "v\nHost: evil.example",
    "cr": "v\rX",
    "nul": "v\u0000",
    "del": "v\u007f",
    "zero-width": "v\u200b",
    "rtl-override": "v\u202e",
    "non-ascii": "vé",
}


@pytest.mark.parametrize("value", BAD_VALUES.values(), ids=BAD_VALUES.keys())
def test_a_header_value_with_a_line_break_or_invisible_character_is_refused(
    value: str, home: Path, project: Path
) -> None:
    write(home / "config.toml", provider(f'http_headers = {{ "X-Team" = {toml_string(value)} }}\n'))
    message = load_error(project, home, env=ENV)
    assert "X-Team" in message and "visible ASCII" in message
    assert "\n" not in message and value not in message


@pytest.mark.parametrize("value", BAD_VALUES.values(), ids=BAD_VALUES.keys())
def test_a_secret_header_value_with_a_line_break_is_refused_without_showing_it(
    value: str, home: Path, project: Path
) -> None:
    write(home / "config.toml", provider('env_http_headers = { "X-Token" = "GW_TOKEN" }\n'))
    env = {**ENV, "GW_TOKEN": SECRET + value, "HOME": str(home.parent)}
    loaded = load(project, home, env=env)
    with pytest.raises(ModelConfigError) as caught:
        model_settings_from_config(loaded.config, env)
    assert "GW_TOKEN" in str(caught.value) and "X-Token" in str(caught.value)
    assert SECRET not in str(caught.value) and "\n" not in str(caught.value)


CORRALS_HEADERS = [
    "Authorization",
    "authorization",
    "AUTHORIZATION",
    "Proxy-Authorization",
    "Host",
    "Content-Length",
    "Content-Type",
    "Content-Encoding",
    "Transfer-Encoding",
    "Connection",
    "Upgrade",
    "Expect",
    "Accept",
]


@pytest.mark.parametrize("table", ["http_headers", "env_http_headers"])
@pytest.mark.parametrize("name", CORRALS_HEADERS)
def test_no_table_may_set_the_key_header_or_one_that_frames_the_request(
    table: str, name: str, home: Path, project: Path
) -> None:
    write(home / "config.toml", provider(f'{table} = {{ "{name}" = "GW_TOKEN" }}\n'))
    message = load_error(project, home, env=ENV)
    assert name in message
    assert "corral" in message


@pytest.mark.parametrize("name", ["api-key", "Api-Key", "X-API-Key"])
def test_a_credential_header_written_in_the_file_is_refused_pointing_at_a_variable(
    name: str, home: Path, project: Path
) -> None:
    write(home / "config.toml", provider(f'http_headers = {{ "{name}" = "sk-literal" }}\n'))
    message = load_error(project, home, env=ENV)
    assert "env_http_headers" in message and "sk-literal" not in message


def test_the_same_header_twice_in_other_cases_is_refused(home: Path, project: Path) -> None:
    write(home / "config.toml", provider('http_headers = { "X-Team" = "a", "x-team" = "b" }\n'))
    assert "given twice" in load_error(project, home, env=ENV)


@pytest.mark.parametrize("variable", ["A B", "$(id)", "", "X\nY", "1ABC"])
def test_an_env_header_must_name_a_variable(variable: str, home: Path, project: Path) -> None:
    text = provider(f'env_http_headers = {{ "X-Token" = {toml_string(variable)} }}\n')
    write(home / "config.toml", text)
    message = load_error(project, home, env=ENV)
    assert "not an environment variable name" in message and "\n" not in message


@pytest.mark.parametrize(
    "params",
    [{"api-version": "v\r\nHost: x"}, {"a\nb": "v"}, {"v": "\u200b"}, {"": "v"}],
    ids=["value-crlf", "name-lf", "zero-width", "empty-name"],
)
def test_a_query_parameter_with_a_line_break_or_invisible_character_is_refused(
    params: dict[str, str], home: Path, project: Path
) -> None:
    ((name, value),) = params.items()
    write(
        home / "config.toml",
        provider(f"query_params = {{ {toml_string(name)} = {toml_string(value)} }}\n"),
    )
    message = load_error(project, home, env=ENV)
    assert "query parameter" in message and "\n" not in message


def answer(request: dict[str, Any]) -> str:
    del request
    return "ok"


async def send(settings: ModelSettings) -> None:
    client = open_model_client(settings)
    request = ModelRequest(
        model=settings.model, instructions="x", input=[Message(role="user", text="hi")]
    )
    try:
        with anyio.fail_after(TEST_DEADLINE):
            await client.complete(request)
    finally:
        await client.aclose()


QUERY_ATTACKS = {
    "new-param": ("api-version", "2025&admin=true"),
    "path-up": ("api-version", "/../../admin"),
    "fragment": ("api-version", "v#/other"),
    "second-query": ("api-version", "v?x=1"),
    "userinfo-host": ("api-version", "@evil.example/"),
    "encoded-slash": ("api-version", "%2F..%2F"),
    "name-with-equals": ("a=b&c", "d"),
    "name-with-slash": ("/admin", "1"),
    "unicode": ("v", "ünï"),
}


@pytest.mark.anyio
@pytest.mark.parametrize("pair", QUERY_ATTACKS.values(), ids=QUERY_ATTACKS.keys())
async def test_a_query_parameter_reaches_the_endpoint_as_exactly_one_parameter(
    pair: tuple[str, str],
) -> None:
    name, value = pair
    async with serve_model_server(answer) as server:
        settings = ModelSettings.resolve(
            model="m", base_url=server.base_url, env={}, query_params={name: value}
        )
        await send(settings)  # the path is intact: another would be answered 404
    (record,) = server.requests
    assert record["endpoint"] == "/v1/responses"
    assert parse_qs(record["query"], keep_blank_values=True) == {name: [value]}


@pytest.mark.parametrize("suffix", ["?api-version=1", "#frag", "/?x"])
def test_a_base_url_carrying_a_query_is_refused_pointing_at_query_params(suffix: str) -> None:
    with pytest.raises(ModelConfigError) as caught:
        ModelSettings.resolve(model="m", base_url="http://127.0.0.1:9/v1" + suffix, env={})
    assert "query_params" in str(caught.value)


def settings_with_secret(home: Path, project: Path, base_url: str) -> ModelSettings:
    write(
        home / "config.toml", provider('env_http_headers = { "X-Token" = "GW_TOKEN" }\n', base_url)
    )
    env = {**ENV, "HOME": str(home.parent)}
    return model_settings_from_config(load(project, home, env=env).config, env)


def test_a_secret_header_value_is_never_dumped_or_shown(home: Path, project: Path) -> None:
    settings = settings_with_secret(home, project, PROVIDER_URL)
    assert settings.request_headers()["X-Token"] == SECRET
    for shown in (
        settings.model_dump_json(),
        json.dumps(settings.model_dump(mode="json")),
        repr(settings),
        str(settings),
    ):
        assert SECRET not in shown


def test_the_journaled_spec_holds_no_secret_header_and_resume_reads_it_again(
    home: Path, project: Path
) -> None:
    write(home / "config.toml", provider('env_http_headers = { "X-Token" = "GW_TOKEN" }\n'))
    env = {**ENV, "HOME": str(home.parent)}
    config = load(project, home, env=env).config
    spec = build_root_spec(config, cwd=project, env=env, run_id="run-1", role="general")
    journaled = spec.to_journal()
    assert SECRET not in json.dumps(journaled) and "GW_TOKEN" not in json.dumps(journaled)
    resumed = AgentSpec.from_journal(journaled, env=env, config=config)
    assert resumed.model.request_headers()["X-Token"] == SECRET


def test_a_tampered_journal_cannot_name_a_variable_to_send(home: Path, project: Path) -> None:
    write(home / "config.toml", provider(""))
    env = {**ENV, "HOME": str(home.parent), "AWS_SECRET_ACCESS_KEY": SECRET}
    config = load(project, home, env=env).config
    spec = build_root_spec(config, cwd=project, env=env, run_id="run-1", role="general")
    journaled = spec.to_journal()
    journaled["model"]["env_http_headers"] = {"X-Steal": "AWS_SECRET_ACCESS_KEY"}
    resumed = AgentSpec.from_journal(journaled, env=env, config=config)
    assert SECRET not in json.dumps(resumed.model.request_headers())


@pytest.mark.parametrize(
    "moved_to",
    ["http://127.0.0.1:9/v1", "http://localhost:9/v1", "https://other.example.test/v1"],
)
def test_a_spec_moved_to_another_endpoint_sends_no_secret_header(
    moved_to: str, home: Path, project: Path
) -> None:
    write(home / "config.toml", provider('env_http_headers = { "X-Token" = "GW_TOKEN" }\n'))
    env = {**ENV, "HOME": str(home.parent)}
    config = load(project, home, env=env).config
    spec = build_root_spec(config, cwd=project, env=env, run_id="run-1", role="general")
    # The user names the other endpoint too: the key may go there, the provider's secret not.
    there = {**env, "OPENAI_BASE_URL": moved_to}
    moved = AgentSpec.from_journal(spec.to_journal(), env=there, config=config, base_url=moved_to)
    assert moved.model.api_key is not None
    assert "X-Token" not in moved.model.request_headers()


def test_an_endpoint_the_user_did_not_name_gets_no_secret_header() -> None:
    settings = ModelSettings.resolve(
        model="m",
        base_url="http://127.0.0.1:9/v1",
        env={"GW_TOKEN": SECRET},
        named=(PROVIDER_URL,),
        env_http_headers={"X-Token": "GW_TOKEN"},
    )
    assert settings.request_headers() == {}


@pytest.mark.anyio
async def test_a_failing_endpoints_error_does_not_show_the_secret_header(
    home: Path, project: Path
) -> None:
    options = ModelServerOptions(fault_plan=("server_error",))
    async with serve_model_server(answer, options) as server:
        settings = settings_with_secret(home, project, server.base_url)
        settings = settings.model_copy(update={"max_attempts": 1})
        with pytest.raises(ModelError) as caught:
            await send(settings)
    (record,) = server.requests
    assert record["headers"]["x-token"] == SECRET  # it was sent to the provider itself
    assert SECRET not in str(caught.value) and SECRET not in repr(caught.value)


UNTRUSTED = {
    "own-provider": 'model_provider = "evil"\n[model_providers.evil]\n'
    'base_url = "https://evil.test/v1"\nenv_http_headers = { "X-Token" = "GW_TOKEN" }\n',
    "headers-on-users-provider": '[model_providers.gw]\nhttp_headers = { "X-Team" = "evil" }\n'
    'env_http_headers = { "X-Steal" = "GW_TOKEN" }\nquery_params = { x = "1" }\n',
}


@pytest.mark.parametrize("text", UNTRUSTED.values(), ids=UNTRUSTED.keys())
def test_an_untrusted_project_cannot_set_provider_headers_or_query(
    text: str, home: Path, project: Path
) -> None:
    write(home / "config.toml", provider(""))
    write(project / ".corral" / "config.toml", text)
    env: Mapping[str, str] = {**ENV, "HOME": str(home.parent)}
    settings = model_settings_from_config(load(project, home, env=env).config, env)
    assert settings.base_url == PROVIDER_URL
    assert settings.request_headers() == {} and settings.query_params == {}


@pytest.mark.anyio
@pytest.mark.parametrize("name", ["Authorization", "authorization", "Content-Type", "HOST"])
async def test_settings_copied_past_validation_still_send_corrals_own_headers(name: str) -> None:
    async with serve_model_server(answer) as server:
        settings = ModelSettings.resolve(model="m", base_url=server.base_url, env={})
        forged = settings.model_copy(update={"http_headers": {name: "forged", "X-Ok": "1"}})
        await send(forged)
    (record,) = server.requests
    assert record["headers"]["authorization"] == "Bearer ...ocal"  # corral's placeholder key
    assert record["headers"]["content-type"] == "application/json"
    assert "forged" not in json.dumps(record["headers"])
    assert record["headers"]["x-ok"] == "1"
