"""A model base URL with credentials before its host (`https://user:secret@gateway/v1`), from
the config file, the environment or code. The URL is journaled with every spec and named in
every error about the endpoint, so it is refused in one line that shows the host but never
the credentials, pointing at the variables that keep secrets out of the journal."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.agents import model_settings_from_config
from corral.agents.model import ModelConfigError, ModelSettings
from tests.agents._config_files import load, write

pytestmark = pytest.mark.hostile

SECRET = "s3cr3t-Q9"
URLS = {
    "user and password": f"https://user:{SECRET}@gateway.example.test/v1",
    "token as user": f"https://{SECRET}@gateway.example.test/v1",
    "empty user": f"https://:{SECRET}@gateway.example.test/v1",
    "two at signs": f"https://u@{SECRET}@gateway.example.test/v1",
    "loopback": f"http://user:{SECRET}@127.0.0.1:9/v1",
    "encoded at": f"https://user%40x:{SECRET}@gateway.example.test/v1",
}


def refused(message: str) -> None:
    assert SECRET not in message and "\n" not in message
    assert "credentials" in message and "env_key" in message


@pytest.mark.parametrize("url", URLS.values(), ids=URLS.keys())
def test_a_base_url_with_credentials_is_refused_from_code(url: str) -> None:
    with pytest.raises(ModelConfigError) as caught:
        ModelSettings.resolve(model="m", base_url=url, env={}, named=[url], api_key="k")
    refused(str(caught.value))


@pytest.mark.parametrize("url", URLS.values(), ids=URLS.keys())
def test_a_base_url_with_credentials_is_refused_from_the_environment(url: str) -> None:
    env = {"OPENAI_BASE_URL": url, "OPENAI_API_KEY": "k"}
    with pytest.raises(ModelConfigError) as caught:
        ModelSettings.resolve(model="m", env=env)
    refused(str(caught.value))


@pytest.mark.parametrize("url", URLS.values(), ids=URLS.keys())
def test_a_base_url_with_credentials_is_refused_from_the_config_file(
    url: str, home: Path, project: Path
) -> None:
    write(home / "config.toml", f'base_url = "{url}"\n')
    env = {"OPENAI_API_KEY": "k"}
    config = load(project, home, env=env).config
    with pytest.raises(ModelConfigError) as caught:
        model_settings_from_config(config, env)
    refused(str(caught.value))
