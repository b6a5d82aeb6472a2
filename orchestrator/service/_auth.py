"""Bearer-token authentication: where the token comes from, and the check on every request.

The token is `CORRAL_API_TOKEN`, else the one in `$CORRAL_HOME/api-token`, generated there
(mode 0600) at the first start on a loopback address; a start beyond loopback with neither is
refused before anything is written, so a refused start never leaves a token for the next one.
Tokens are compared in constant time. A request is let in with the right bearer header, or with
the session cookie a browser got by signing in (`_sessions.py`); with the cookie, a state-changing
request must also carry the session's CSRF token. A state-changing request from a page of another
origin gets 403 whatever it carries; one without the token or a live session gets 401 with
`WWW-Authenticate: Bearer` (a browser asking for the dashboard is sent to the sign-in page
instead). Tokens are never read from a query string. Only `/healthz`, the sign-in page and the
dashboard's static files are open. A server on loopback also refuses (421) any `Host` but its
own loopback names, so a page whose name an attacker points at 127.0.0.1 (DNS rebinding) reaches
nothing.
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

from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ._errors import ServiceOptionsError
from ._sessions import (
    CSRF_HEADER,
    SAFE_METHODS,
    SessionBook,
    cookie_value,
    csrf_matches,
    is_cross_site,
)

TOKEN_ENV = "CORRAL_API_TOKEN"
TOKEN_FILE = "api-token"
OPEN_PATHS = frozenset({"/healthz", "/signin"})
OPEN_PREFIXES = ("/static/",)
PAGE_PATHS = frozenset({"/"})
"""Pages a browser opens by hand: without a session it is sent to sign in, not shown a 401."""
_CHECKED_HEADERS = frozenset({b"origin", b"host", b"sec-fetch-site", b"cookie", b"x-csrf-token"})


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


def loopback_hosts(host: str, port: int) -> frozenset[str] | None:
    """The `Host` values a server listening on `host:port` answers: its loopback names when it
    listens on loopback only, else any (None)."""
    if not is_loopback(host):
        return None
    names = {"127.0.0.1", "localhost", "[::1]", f"[{host}]" if ":" in host else host}
    bare = names if port == 80 else set()  # browsers leave out the default port
    return frozenset({f"{name}:{port}" for name in names} | bare)


class BearerAuth:
    """ASGI middleware: who may make this request (see the module docstring)."""

    def __init__(
        self,
        app: ASGIApp,
        token: str,
        sessions: SessionBook | None = None,
        hosts: frozenset[str] | None = None,
    ) -> None:
        self._app = app
        self._expected = token.encode()
        self._sessions = sessions or SessionBook()
        self._hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is None:
            await self._app(scope, receive, send)
        else:
            await refusal(scope, receive, send)

    def _refusal(self, scope: Scope) -> Response | None:
        """None to let the request in, else the response that refuses it."""
        headers = _headers(scope)
        if self._hosts is not None and headers.get("host", "").lower() not in self._hosts:
            return _refuse(421, "this server answers only to its own loopback address")
        unsafe = scope["method"] not in SAFE_METHODS
        if unsafe and is_cross_site(headers, scope.get("scheme", "http")):
            return _refuse(403, "cross-site requests are refused; use the dashboard's own page")
        path: str = scope["path"]
        if path in OPEN_PATHS or path.startswith(OPEN_PREFIXES) or self._has_bearer(scope):
            return None
        session = self._sessions.get(cookie_value(headers.get("cookie")))
        if session is not None:
            if unsafe and not csrf_matches(session, headers.get(CSRF_HEADER)):
                return _refuse(403, f"send the session's CSRF token in {CSRF_HEADER}")
            return None
        if path in PAGE_PATHS and scope["method"] == "GET":
            return RedirectResponse("/signin", status_code=303)
        return _refuse(401, "send Authorization: Bearer <token>, or sign in at /signin")

    def _has_bearer(self, scope: Scope) -> bool:
        given = b""
        for name, value in scope["headers"]:
            if name == b"authorization":
                given = value
        # The scheme is case-insensitive (RFC 9110 11.1): OAuth libraries send "bearer".
        scheme, _, credentials = given.strip().partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(
            credentials.strip(), self._expected
        )


def _refuse(status: int, detail: str) -> Response:
    error = {401: "unauthorized", 421: "misdirected"}.get(status, "forbidden")
    headers = {"WWW-Authenticate": 'Bearer realm="corral"'} if status == 401 else None
    return JSONResponse({"error": error, "detail": detail}, status_code=status, headers=headers)


def _headers(scope: Scope) -> dict[str, str]:
    """The headers the checks read; one given twice reads as a value no check accepts."""
    seen: dict[str, str] = {}
    for raw_name, raw_value in scope["headers"]:
        if raw_name not in _CHECKED_HEADERS:
            continue
        name, value = raw_name.decode("latin-1"), raw_value.decode("latin-1")
        if name == "cookie" and name in seen:  # joined, so a second session cookie is seen
            seen[name] = f"{seen[name]}; {value}"
        else:
            seen[name] = "\x00twice" if name in seen else value
    return seen
