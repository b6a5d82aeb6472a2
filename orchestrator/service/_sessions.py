"""Browser sessions: the cookie a sign-in sets, its CSRF token, its expiry, and sign-out.

A session is server-side: the cookie holds only a random id, so a forged or guessed value names
nothing, sign-out revokes at once, and a restart signs everyone out. Each session carries its own
CSRF token, which the dashboard reads from `GET /v1/session` (same origin only: no CORS is ever
answered) and sends back as `X-CSRF-Token` on every state-changing request. The same-origin
checks on `Origin`, `Sec-Fetch-Site` and `Host` live here too, so the middleware in `_auth.py`
only decides.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

COOKIE_NAME = "corral_session"
CSRF_HEADER = "x-csrf-token"
SESSION_TTL = 12 * 3600.0
"""How long a sign-in lasts; a browser signs in again after it."""
MAX_SESSIONS = 1024
"""Sessions kept at once; the oldest go first, so repeated sign-ins cannot grow memory."""
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


@dataclass(frozen=True)
class Session:
    session_id: str
    csrf: str
    expires_at: float


@dataclass
class SessionBook:
    """The live sessions of this server process."""

    ttl: float = SESSION_TTL
    clock: Callable[[], float] = time.time
    _sessions: dict[str, Session] = field(default_factory=dict)

    def open(self) -> Session:
        self._drop_expired()
        while len(self._sessions) >= MAX_SESSIONS:
            del self._sessions[next(iter(self._sessions))]
        session = Session(
            secrets.token_urlsafe(32), secrets.token_urlsafe(32), self.clock() + self.ttl
        )
        self._sessions[session.session_id] = session
        return session

    def get(self, session_id: str | None) -> Session | None:
        """The live session `session_id` names, or None (unknown, forged or expired)."""
        if not session_id:
            return None
        found = self._sessions.get(session_id)
        if found is None or not hmac.compare_digest(found.session_id, session_id):
            return None
        if found.expires_at <= self.clock():
            del self._sessions[session_id]
            return None
        return found

    def close(self, session_id: str | None) -> None:
        if session_id:
            self._sessions.pop(session_id, None)

    def _drop_expired(self) -> None:
        now = self.clock()
        for key in [k for k, s in self._sessions.items() if s.expires_at <= now]:
            del self._sessions[key]


def csrf_matches(session: Session, given: str | None) -> bool:
    return given is not None and hmac.compare_digest(session.csrf.encode(), given.encode())


def set_cookie_header(session: Session, *, secure: bool, ttl: float) -> str:
    flags = f"Path=/; Max-Age={int(ttl)}; HttpOnly; SameSite=Strict"
    return f"{COOKIE_NAME}={session.session_id}; {flags}{'; Secure' if secure else ''}"


def clear_cookie_header() -> str:
    return f"{COOKIE_NAME}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict"


def is_cross_site(headers: Mapping[str, str], scheme: str) -> bool:
    """Whether a request says it comes from a page of another origin than the one it is sent to.

    `Origin` must be exactly this server's `scheme://host[:port]` as the `Host` header names it
    (so `null`, another port, or a look-alike such as `127.0.0.1:8420.evil.test` all fail);
    `Sec-Fetch-Site` must not be `cross-site` or `same-site`. A request with neither header is
    not a browser's cross-site one (scripts send none): the CSRF token and the session's
    SameSite=Strict cookie cover browsers that send no `Origin`.
    """
    fetch_site = headers.get("sec-fetch-site")
    if fetch_site in ("cross-site", "same-site"):
        return True
    origin = headers.get("origin")
    if origin is None:
        return False
    host = headers.get("host", "")
    return not host or origin != f"{scheme}://{host}" or not _plain_host(host)


def _plain_host(host: str) -> bool:
    """A `Host` value that is only a host and port (no user info, path or spaces)."""
    try:
        parts = urlsplit(f"//{host}")
        _ = parts.port
    except ValueError:
        return False
    return bool(parts.hostname) and parts.netloc == host and not parts.username


def cookie_value(raw_cookie: str | None) -> str | None:
    """The session id from a `Cookie` header; None when absent or given more than once."""
    if not raw_cookie:
        return None
    values = []
    for part in raw_cookie.split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE_NAME:
            values.append(value.strip())
    return values[0] if len(values) == 1 else None
