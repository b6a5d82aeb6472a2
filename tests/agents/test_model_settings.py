"""Model settings: where the endpoint and key come from, and which adapter opens."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from corral.agents.model import (
    ChatCompletionsModelClient,
    ModelConfigError,
    ModelSettings,
    ResponsesModelClient,
    open_model_client,
)
from corral.tools._errors import InvalidInput


def test_corral_variables_win_over_openai_ones() -> None:
    env = {
        "CORRAL_BASE_URL": "https://models.example/v1/",
        "OPENAI_BASE_URL": "https://api.openai.com/v1",
        "CORRAL_API_KEY": "sk-corral",
        "OPENAI_API_KEY": "sk-openai",
    }
    settings = ModelSettings.resolve(model="gpt-test", env=env)
    assert settings.base_url == "https://models.example/v1"
    assert settings.api_key is not None and settings.api_key.get_secret_value() == "sk-corral"


def test_explicit_values_win_over_the_environment() -> None:
    env = {"OPENAI_BASE_URL": "https://a.example/v1", "OPENAI_API_KEY": "sk-env"}
    settings = ModelSettings.resolve(
        model="m", base_url="https://b.example/v1", api_key="sk-given", env=env
    )
    assert settings.base_url == "https://b.example/v1"
    assert settings.api_key is not None and settings.api_key.get_secret_value() == "sk-given"


def test_remote_endpoint_without_a_key_says_to_set_openai_api_key() -> None:
    with pytest.raises(InvalidInput, match="set OPENAI_API_KEY") as caught:
        ModelSettings.resolve(model="m", env={})
    assert "https://api.openai.com/v1" in str(caught.value)
    assert caught.value.exit_code == 2


@pytest.mark.parametrize(
    "base_url", ["http://127.0.0.1:8000/v1", "http://localhost:11434/v1", "http://[::1]:9/v1"]
)
def test_loopback_endpoint_gets_a_placeholder_key(base_url: str) -> None:
    settings = ModelSettings.resolve(model="m", base_url=base_url, env={})
    assert settings.api_key is not None and settings.api_key.get_secret_value()


def test_api_key_never_appears_when_settings_are_printed() -> None:
    settings = ModelSettings.resolve(model="m", api_key="sk-very-secret", env={})
    assert "sk-very-secret" not in repr(settings)
    assert "sk-very-secret" not in str(settings)
    assert "api_key" not in settings.model_dump()
    reloaded = ModelSettings.model_validate_json(settings.model_dump_json())
    assert reloaded.with_endpoint({"OPENAI_API_KEY": "sk-env"}).api_key == SecretStr("sk-env")


def test_out_of_range_setting_is_an_invalid_input_naming_the_field() -> None:
    with pytest.raises(ModelConfigError, match="max_attempts"):
        ModelSettings.resolve(model="m", max_attempts=0, env={})


def test_base_url_that_is_not_http_is_refused() -> None:
    with pytest.raises(ModelConfigError, match="not an http"):
        ModelSettings.resolve(model="m", base_url="127.0.0.1:8000", env={})


@pytest.mark.anyio
async def test_factory_opens_the_adapter_for_the_api() -> None:
    for api, kind in (("responses", ResponsesModelClient), ("chat", ChatCompletionsModelClient)):
        settings = ModelSettings.resolve(
            model="m", api=api, base_url="http://127.0.0.1:1/v1", env={}
        )
        client = open_model_client(settings)
        assert isinstance(client, kind)
        await client.aclose()
