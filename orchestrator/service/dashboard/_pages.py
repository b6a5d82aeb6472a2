"""The dashboard's pages and the browser sign-in: `/`, `/signin`, `/signout`, `/v1/session`,
and the static files under `/static/`, all read from this package (no build step, no CDN).

Signing in exchanges the API token, posted once in a form body, for a session cookie
(`_sessions.py`); the middleware in `_auth.py` decides who may reach what. Every page is sent
with a strict Content-Security-Policy, so nothing but the package's own script ever runs in it.
"""

from __future__ import annotations

import hmac
from importlib import resources
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from .._sessions import (
    COOKIE_NAME,
    SessionBook,
    clear_cookie_header,
    cookie_value,
    set_cookie_header,
)

MAX_FORM_BYTES = 8 * 1024
STATIC_FILES = {
    "dashboard.js": "text/javascript; charset=utf-8",
    "dashboard.css": "text/css; charset=utf-8",
}
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    # not no-referrer: with it a browser sends `Origin: null` on its own same-origin form posts
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def dashboard_routes(token: str, sessions: SessionBook, *, content: bool = False) -> list[Route]:
    """The pages; `content` says whether the inspector may show tool arguments and results
    (the server's OpenTelemetry content-capture setting) or only their sizes."""
    pages = _Pages(token, sessions, content)
    return [
        Route("/", pages.index),
        Route("/signin", pages.signin_page, methods=["GET"]),
        Route("/signin", pages.signin, methods=["POST"]),
        Route("/signout", pages.signout, methods=["POST"]),
        Route("/v1/session", pages.session),
        Route("/static/{name}", pages.static),
    ]


class _Pages:
    def __init__(self, token: str, sessions: SessionBook, content: bool) -> None:
        self._token = token.encode()
        self._sessions = sessions
        self._content = content

    async def index(self, request: Request) -> Response:
        return HTMLResponse(_asset("index.html"), headers=SECURITY_HEADERS)

    async def signin_page(self, request: Request) -> Response:
        return _signin_form("")

    async def signin(self, request: Request) -> Response:
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_FORM_BYTES:
                return _signin_form("That is not a corral API token.", 413)
        given = parse_qs(body.decode("utf-8", "replace")).get("token", [""])
        if len(given) != 1 or not hmac.compare_digest(given[0].strip().encode(), self._token):
            return _signin_form("That token is not this server's API token; try again.", 401)
        session = self._sessions.open()
        response = RedirectResponse("/", status_code=303, headers=SECURITY_HEADERS)
        secure = request.url.scheme == "https"
        response.headers["Set-Cookie"] = set_cookie_header(
            session, secure=secure, ttl=self._sessions.ttl
        )
        return response

    async def signout(self, request: Request) -> Response:
        self._sessions.close(cookie_value(request.headers.get("cookie")))
        response = JSONResponse({"signed_out": True}, headers=SECURITY_HEADERS)
        response.headers["Set-Cookie"] = clear_cookie_header()
        return response

    async def session(self, request: Request) -> Response:
        """The CSRF token of the caller's session (null for a bearer-token caller), and whether
        the dashboard shows tool content."""
        session = self._sessions.get(cookie_value(request.headers.get("cookie")))
        shown: dict[str, object] = {
            "csrf": None,
            "expires_at": None,
            "cookie": COOKIE_NAME,
            "content": self._content,
        }
        if session is not None:
            shown.update(csrf=session.csrf, expires_at=session.expires_at)
        return JSONResponse(shown, headers=SECURITY_HEADERS)

    async def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        media_type = STATIC_FILES.get(name)
        if media_type is None:
            return JSONResponse({"error": f"no static file {name}"}, status_code=404)
        headers = {**SECURITY_HEADERS, "Cache-Control": "no-cache"}
        return Response(_asset(name), media_type=media_type, headers=headers)


def _signin_form(message: str, status: int = 200) -> Response:
    page = _asset("signin.html").replace("<!--message-->", message)
    return HTMLResponse(page, status_code=status, headers=SECURITY_HEADERS)


def dashboard_paths() -> dict[str, object]:
    """The OpenAPI entries of the dashboard's pages and sign-in."""

    def page(text: str) -> dict[str, object]:
        return {"responses": {"200": {"description": text}}, "security": []}

    return {
        "/": {"get": {"responses": {"200": {"description": "the dashboard (303 to /signin)"}}}},
        "/signin": {
            "get": page("the sign-in form"),
            "post": {
                "security": [],
                "responses": {
                    "303": {"description": "signed in: a session cookie, then the dashboard"},
                    "401": {"description": "not this server's token"},
                    "403": {"description": "posted from a page of another origin"},
                },
            },
        },
        "/signout": {"post": {"responses": {"200": {"description": "the session is ended"}}}},
        "/v1/session": {
            "get": {"responses": {"200": {"description": "{csrf, expires_at} of the session"}}}
        },
        "/v1/dashboard/runs": {
            "get": {
                "responses": {
                    "200": {"description": "runs newest first with totals; ?status=&kind=&q="}
                }
            }
        },
        "/static/{name}": {"get": page("the dashboard's script and stylesheet")},
    }
