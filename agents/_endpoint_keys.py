"""Where the model key may go: the one check every path that attaches a key runs through.

A key read from the environment goes only to an endpoint the user's own layers name (their
`$CORRAL_HOME/config.toml`, a project they trusted, `CORRAL_BASE_URL`/`OPENAI_BASE_URL`, flags
and `-c`), or to OpenAI's when none is named. The rule itself is `model.endpoint_key`; this module
reads the named endpoints and the key variable off a config, and the selected provider's query
parameters and headers (`provider_extras`), which go only to that provider's own endpoint.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._config import CorralConfig
from .model._settings import endpoint_key, endpoint_url


def named_endpoints(config: CorralConfig) -> tuple[str, ...]:
    """The endpoints `config`'s own layers name; a config built in code names its `base_url`."""
    if config.key_endpoints is not None:
        return config.key_endpoints
    return (config.base_url,) if config.base_url else ()


def api_key_for(endpoint: str | None, config: CorralConfig, env: Mapping[str, str]) -> str | None:
    """The API key from `env` that may be sent to `endpoint` (None: the environment's or the
    default endpoint), or None when `config`'s own layers do not name that endpoint.

    Callers with an endpoint from an untrusted source (a journaled spec, a service request)
    pass the config the user loaded themselves; with None, send no key.
    """
    url = endpoint_url(endpoint, env)
    return endpoint_key(url, env, named=named_endpoints(config), key_var=config.model_api_key_env)


def provider_extras(
    config: CorralConfig, endpoint: str | None, env: Mapping[str, str]
) -> dict[str, Any]:
    """The `ModelSettings` fields for the `[model_providers]` table `config` selects: its
    `query_params`, `http_headers` and `env_http_headers`, when `endpoint` is that provider's
    own (a `base_url` set elsewhere replaces the provider, and its headers stay with it)."""
    provider = config.model_providers.get(config.model_provider or "")
    if provider is None or endpoint_url(endpoint, env) != endpoint_url(provider.base_url, env):
        return {}
    return {
        "query_params": provider.query_params,
        "http_headers": provider.http_headers,
        "env_http_headers": provider.env_http_headers,
    }
