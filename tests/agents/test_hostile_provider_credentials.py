"""A credential written into a provider's `http_headers` or `query_params` in the config file.

Both tables are journaled with every spec (and shown by `corral config`), so a key, token,
cookie or signature written there would sit in the journal of every run. Whatever the name's
spelling (another vendor's key header, `_` for `-`, no separator, upper case), a name that
carries a credential is refused with a one-line error that points at `env_http_headers` and
never shows the value.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.agents.model import ModelConfigError, ModelSettings
from tests.agents._config_files import load_error, write

pytestmark = pytest.mark.hostile

LITERAL = "sk-literal-4Qx9"
ENV = {"GW_KEY": "gw-key"}

HEADER_NAMES = [
    "api_key",
    "apikey",
    "X-Goog-Api-Key",
    "Ocp-Apim-Subscription-Key",
    "x-functions-key",
    "X-Auth-Token",
    "X-Access-Token",
    "X-Amz-Security-Token",
    "Private-Token",
    "X-Vault-Token",
    "Cookie",
    "X-Client-Secret",
    "X-Password",
    "X-Credentials",
    "X-Signature",
    "X-Auth",
    "anthropic-api-key",
    "X_API_KEY",
]
QUERY_NAMES = [
    "key",
    "api-key",
    "api_key",
    "apiKey",
    "access_token",
    "token",
    "sig",
    "client_secret",
    "password",
    "subscription-key",
    "auth",
]


def provider(extra: str) -> str:
    return (
        'model_provider = "gw"\n[model_providers.gw]\n'
        f'base_url = "https://gateway.example.test/v1"\nenv_key = "GW_KEY"\n{extra}'
    )


@pytest.mark.parametrize("name", HEADER_NAMES)
def test_a_credential_header_of_any_spelling_in_the_file_is_refused(
    name: str, home: Path, project: Path
) -> None:
    write(home / "config.toml", provider(f'http_headers = {{ "{name}" = "{LITERAL}" }}\n'))
    message = load_error(project, home, env=ENV)
    assert "env_http_headers" in message and LITERAL not in message and "\n" not in message


@pytest.mark.parametrize("name", QUERY_NAMES)
def test_a_credential_query_parameter_in_the_file_is_refused(
    name: str, home: Path, project: Path
) -> None:
    write(home / "config.toml", provider(f'query_params = {{ "{name}" = "{LITERAL}" }}\n'))
    message = load_error(project, home, env=ENV)
    assert "env_http_headers" in message and LITERAL not in message and "\n" not in message


@pytest.mark.parametrize("name", HEADER_NAMES[:4])
def test_settings_made_in_code_or_read_from_a_journal_refuse_it_too(name: str) -> None:
    with pytest.raises(ModelConfigError) as refused:
        ModelSettings.resolve(
            model="m", base_url="http://127.0.0.1:9/v1", env={}, http_headers={name: LITERAL}
        )
    assert LITERAL not in str(refused.value)
