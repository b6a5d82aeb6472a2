"""Model endpoint settings: which API, where, with which key, and how hard to retry.

`ModelSettings.resolve` fills the endpoint and key from the environment (`CORRAL_*` first, then
the `OPENAI_*` names the SDK uses) and refuses a remote endpoint without a key. Loopback
servers (the scripted model server, vLLM, Ollama) get a placeholder key. `endpoint_key` is the
one rule for keys: a key from the environment goes only to an endpoint the user named. The values
of a provider's `env_http_headers` are secrets like the key and follow the same rule.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Collection, Mapping
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from ._errors import ModelConfigError
from ._headers import (
    EnvHeaders,
    Headers,
    QueryParams,
    allowed_headers,
    check_header_value,
)
from ._retry import DEFAULT_RETRY_DEADLINE

DEFAULT_BASE_URL = "https://api.openai.com/v1"
LOOPBACK_PLACEHOLDER_KEY = "corral-local"
_BASE_URL_VARS = ("CORRAL_BASE_URL", "OPENAI_BASE_URL")
_API_KEY_VARS = ("CORRAL_API_KEY", "OPENAI_API_KEY")


class ModelSettings(BaseModel):
    """How to reach one model. Timeouts and backoff are in seconds."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = Field(min_length=1)
    api: Literal["responses", "chat"] = "responses"
    base_url: str | None = None
    api_key: SecretStr | None = Field(default=None, exclude=True)
    """Never dumped: a reloaded journal or spec takes the key from the environment again."""
    max_attempts: int | None = Field(default=None, ge=1)
    """A cap on attempts per call; unset, the retry deadline alone bounds a call."""
    retry_deadline: float = Field(default=DEFAULT_RETRY_DEADLINE, gt=0)
    """How long one call keeps retrying 429s, 5xx, dropped streams and timeouts."""
    backoff_initial: float = Field(default=0.2, gt=0)
    backoff_max: float = Field(default=20.0, gt=0)
    request_timeout: float = Field(default=600.0, gt=0)
    """The longest one attempt may take, streamed or not."""
    stream_idle_timeout: float = Field(default=300.0, gt=0)
    """The longest wait for the next bytes of a streamed response (Codex: 300 s)."""
    reasoning_effort: str | None = None
    """Sent with every request that sets none itself (Codex's `model_reasoning_effort`)."""
    query_params: QueryParams = {}
    """Added to every request's URL, percent-encoded (the provider's, e.g. Azure's
    `api-version`)."""
    http_headers: Headers = {}
    """Sent with every request (the provider's; no credentials: those come from variables)."""
    env_http_headers: EnvHeaders = Field(default={}, exclude=True)
    """Header name -> the environment variable holding its value. Never dumped: a reloaded spec
    takes them from the config the user loaded now, as it takes the key."""
    secret_headers: dict[str, SecretStr] = Field(default={}, exclude=True)
    """The values `env_http_headers` read, filled in by `with_endpoint`; never dumped."""

    @classmethod
    def resolve(
        cls,
        *,
        env: Mapping[str, str] | None = None,
        named: Collection[str] = (),
        key_var: str | None = None,
        **fields: Any,
    ) -> ModelSettings:
        """Validate `fields` and fill `base_url`/`api_key` from `env` (default `os.environ`);
        `named` and `key_var` are as in `endpoint_key`."""
        environ = os.environ if env is None else env
        try:
            settings = cls(**fields)
        except ValidationError as exc:
            raise ModelConfigError(f"invalid model settings: {_first_error(exc)}") from exc
        return settings.with_endpoint(environ, named=named, key_var=key_var)

    def with_endpoint(
        self, env: Mapping[str, str], *, named: Collection[str] = (), key_var: str | None = None
    ) -> ModelSettings:
        """These settings with the base URL and key filled in; raises if a key is required.

        A key given in code is kept; one from the environment follows `endpoint_key`.
        """
        base_url = endpoint_url(self.base_url, env)
        _check_url(base_url)
        key = self.api_key.get_secret_value() if self.api_key else None
        key = key or endpoint_key(base_url, env, named=named, key_var=key_var)
        if not key:
            if not is_loopback_url(base_url):
                raise ModelConfigError(_no_key_message(base_url, env, key_var))
            key = LOOPBACK_PLACEHOLDER_KEY
        secrets = self.secret_headers or (
            _read_secret_headers(self.env_http_headers, env)
            if endpoint_named(base_url, env, named=named)
            else {}
        )
        update = {"base_url": base_url, "api_key": SecretStr(key), "secret_headers": secrets}
        return self.model_copy(update=update)

    def request_headers(self) -> dict[str, str]:
        """The provider's headers for every request, the secret ones included (for `_http`)."""
        secrets = {name: value.get_secret_value() for name, value in self.secret_headers.items()}
        return allowed_headers({**self.http_headers, **secrets})

    def client_identity(self) -> tuple[Any, ...]:
        """What tells two endpoints' clients apart: agents whose settings share it may share one
        client (its connections and its headers)."""
        return (
            self.api,
            self.base_url,
            self.api_key,
            tuple(self.query_params.items()),
            tuple(self.request_headers().items()),
        )


def endpoint_url(base_url: str | None, env: Mapping[str, str]) -> str:
    """The endpoint a request goes to: `base_url`, else the environment's, else OpenAI's."""
    return (base_url or _first_set(env, _BASE_URL_VARS) or DEFAULT_BASE_URL).strip().rstrip("/")


def endpoint_key(
    base_url: str,
    env: Mapping[str, str],
    *,
    named: Collection[str] = (),
    key_var: str | None = None,
) -> str | None:
    """The API key from `env` that may go to `base_url`, or None.

    The key goes only to an endpoint the user named: one of `named` (the `base_url` values of
    their own config layers and flags) or the environment's `CORRAL_BASE_URL`/`OPENAI_BASE_URL`;
    when none is named, only to OpenAI's. It is read from `key_var` (the config's
    `model_api_key_env`), else `CORRAL_API_KEY`, else `OPENAI_API_KEY`.
    """
    if not endpoint_named(base_url, env, named=named):
        return None
    return _first_set(env, (*((key_var,) if key_var else ()), *_API_KEY_VARS))


def endpoint_named(base_url: str, env: Mapping[str, str], *, named: Collection[str] = ()) -> bool:
    """True when a secret from the environment (the key, a provider's `env_http_headers`) may
    go to `base_url`: one of `named`, the environment's base URL, else OpenAI's alone."""
    allowed = {url.strip().rstrip("/") for url in named}
    from_env = _first_set(env, _BASE_URL_VARS)
    if from_env:
        allowed.add(from_env.rstrip("/"))
    return base_url.strip().rstrip("/") in (allowed or {DEFAULT_BASE_URL})


def _read_secret_headers(
    variables: Mapping[str, str], env: Mapping[str, str]
) -> dict[str, SecretStr]:
    """Each header whose variable is set to something not blank, as Codex sends them; a header
    whose variable is unset or blank is left out."""
    headers: dict[str, SecretStr] = {}
    for header, variable in variables.items():
        value = env.get(variable, "")
        if not value.strip():
            continue
        try:
            check_header_value(header, variable, value)
        except ValueError as exc:
            raise ModelConfigError(str(exc)) from None
        headers[header] = SecretStr(value)
    return headers


def _no_key_message(base_url: str, env: Mapping[str, str], key_var: str | None) -> str:
    held = _first_set(env, (*((key_var,) if key_var else ()), *_API_KEY_VARS))
    if held:
        return (
            f"the API key is not sent to {base_url}: no config, flag or environment variable of "
            "your own names that endpoint (a project's or a journal's cannot); set it with "
            "--base-url, CORRAL_BASE_URL or base_url in $CORRAL_HOME/config.toml"
        )
    return (
        f"no API key for the model endpoint {base_url}: set OPENAI_API_KEY "
        "(or CORRAL_API_KEY), or point OPENAI_BASE_URL at a local server"
    )


def is_loopback_url(url: str) -> bool:
    """True when `url` names this machine (localhost or a loopback address)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _check_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ModelConfigError(
            f"model base URL {url!r} is not an http(s) URL; use e.g. http://127.0.0.1:8000/v1"
        )
    if "@" in parts.netloc:
        # Credentials in the URL would be journaled with every spec and shown in every error
        # that names the endpoint (and sent as Basic auth beside corral's Bearer key).
        shown = f"{parts.scheme}://…@{parts.netloc.rpartition('@')[2]}{parts.path}"
        raise ModelConfigError(
            f"model base URL {shown!r} holds credentials before its host; remove them and put "
            "the key in an environment variable (env_key, or env_http_headers for a header)"
        )
    if "?" in url or "#" in url:
        # The request path is appended to the base URL: it would land inside the query.
        raise ModelConfigError(
            f"model base URL {url!r} holds a query or a fragment; give the parameters as the "
            'provider\'s query_params = { name = "value" } instead'
        )


def _first_set(env: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    for name in names:
        value = env.get(name, "").strip()
        if value:
            return value
    return None


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"]) or "settings"
    return f"{where}: {error['msg']}"
