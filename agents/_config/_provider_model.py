"""`[model_providers.ID]`: Codex's provider tables, with the query parameters and headers a
provider (Azure, a gateway) needs on every request.

The names and values are checked by `model._headers`, the same checks a journaled spec's
settings pass; reading the secret values and deciding where they go is `model._settings`'s job.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..model._headers import EnvHeaders, Headers, QueryParams


class _Section(BaseModel):
    # As every table of the config (`_model`): unknown keys are errors, docstrings documented.
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class ModelProviderConfig(_Section):
    """`[model_providers.ID]`, as Codex writes it; `model_provider = "ID"` selects one. Its
    `base_url`, `env_key` and `wire_api` stand in for corral's `base_url`, `model_api_key_env`
    and `model_provider_api` wherever those are not set themselves."""

    name: str | None = None
    base_url: str | None = None
    env_key: str | None = Field(default=None, min_length=1)
    wire_api: Literal["responses", "chat"] | None = None
    query_params: QueryParams = {}
    """Added to every request's URL, percent-encoded (Azure: `{ api-version = "..." }`)."""
    http_headers: Headers = {}
    """Sent with every request. No credentials (`Authorization`, `api-key`): those come from
    environment variables, through `env_key` or `env_http_headers`."""
    env_http_headers: EnvHeaders = {}
    """Header name -> the environment variable whose value is sent; a variable that is unset or
    blank leaves its header out. The values are secrets like the key: sent only to this
    provider's `base_url`, never journaled or shown."""
