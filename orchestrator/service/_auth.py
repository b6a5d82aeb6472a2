"""Bearer-token authentication: where the token comes from, and the check on every request.

The token is `CORRAL_API_TOKEN`, else the one in `$CORRAL_HOME/api-token`, generated there
(mode 0600) at the first start on a loopback address; a start beyond loopback with neither is
refused before anything is written, so a refused start never leaves a token for the next one.
Tokens are compared in constant time; a request without the right token gets 401 with
`WWW-Authenticate: Bearer`. Only `/healthz` is open.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import secrets
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from ._errors import ServiceOptionsError

TOKEN_ENV = "CORRAL_API_TOKEN"
TOKEN_FILE = "api-token"
OPEN_PATHS = frozenset({"/healthz"})


@dataclass(frozen=True)
class ApiToken:
    value: str
    configured: bool
    """Set by the operator (environment or an existing file), rather than generated just now."""
    generated_at: Path | None = None
    """The file a new token was written to; the caller prints it once."""


def resolve_token(env: Mapping[str, str], home: Path, *, host: str = "127.0.0.1") -> ApiToken:
    """The API token from `CORRAL_API_TOKEN` or `home/api-token`, generating the file if absent
    and the server listens on loopback only (`host`); `ServiceOptionsError` if it does not."""
    from_env = env.get(TOKEN_ENV, "").strip()
    if from_env:
        return ApiToken(from_env, configured=True)
    path = home / TOKEN_FILE
    try:
        text = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        check_bind(host, ApiToken("", configured=False))
        return ApiToken(_write_new_token(path), configured=False, generated_at=path)
    except OSError as exc:
        raise ServiceOptionsError(f"cannot read the API token {path}: {exc.strerror}") from exc
    if not text:
        raise ServiceOptionsError(f"the API token file {path} is empty; delete it or fill it")
    return ApiToken(text, configured=True)


def _write_new_token(path: Path) -> str:
    token = secrets.token_urlsafe(32)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(token + "\n")
    except OSError as exc:
        raise ServiceOptionsError(f"cannot write the API token to {path}: {exc.strerror}") from exc
    return token


def is_loopback(host: str) -> bool:
    """Whether every address `host` names is a loopback one."""
    if host == "localhost":
        return True
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except socket.gaierror:
        return False
    return all(ipaddress.ip_address(str(a).split("%")[0]).is_loopback for a in addresses)


def check_bind(host: str, token: ApiToken) -> None:
    """Refuse to listen beyond this machine with a token nobody configured."""
    if not token.configured and not is_loopback(host):
        raise ServiceOptionsError(
            f"refusing to listen on {host} without a configured API token: set "
            f"{TOKEN_ENV}, or start once on 127.0.0.1 to generate one in corral's home"
        )


class BearerAuth:
    """ASGI middleware: 401 for any request but the open paths without the right token."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self._app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS or self._allowed(scope):
            await self._app(scope, receive, send)
            return
        response = JSONResponse(
            {"error": "unauthorized", "detail": "send Authorization: Bearer <token>"},
            status_code=401,
            headers={"WWW-Authenticate": 'Bearer realm="corral"'},
        )
        await response(scope, receive, send)

    def _allowed(self, scope: Scope) -> bool:
        given = b""
        for name, value in scope["headers"]:
            if name == b"authorization":
                given = value
        return hmac.compare_digest(given, self._expected)
