"""Model endpoint settings: which API, where, with which key, and how hard to retry.

`ModelSettings.resolve` fills the endpoint and key from the environment (`CORRAL_*` first, then
the `OPENAI_*` names the SDK uses) and refuses a remote endpoint without a key. Loopback
servers (the scripted model server, vLLM, Ollama) get a placeholder key.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from ._errors import ModelConfigError
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

    @classmethod
    def resolve(cls, *, env: Mapping[str, str] | None = None, **fields: Any) -> ModelSettings:
        """Validate `fields` and fill `base_url`/`api_key` from `env` (default `os.environ`)."""
        environ = os.environ if env is None else env
        try:
            settings = cls(**fields)
        except ValidationError as exc:
            raise ModelConfigError(f"invalid model settings: {_first_error(exc)}") from exc
        return settings.with_endpoint(environ)

    def with_endpoint(self, env: Mapping[str, str]) -> ModelSettings:
        """These settings with the base URL and key filled in; raises if a key is required."""
        base_url = (self.base_url or _first_set(env, _BASE_URL_VARS) or DEFAULT_BASE_URL).rstrip(
            "/"
        )
        _check_url(base_url)
        key = self.api_key.get_secret_value() if self.api_key else _first_set(env, _API_KEY_VARS)
        if not key:
            if not is_loopback_url(base_url):
                raise ModelConfigError(
                    f"no API key for the model endpoint {base_url}: set OPENAI_API_KEY "
                    "(or CORRAL_API_KEY), or point OPENAI_BASE_URL at a local server"
                )
            key = LOOPBACK_PLACEHOLDER_KEY
        return self.model_copy(update={"base_url": base_url, "api_key": SecretStr(key)})


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
