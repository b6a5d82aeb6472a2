"""A web page of another site, or a stolen or forged cookie, attacks the browser sign-in.

The attacker controls a page the signed-in user visits (so it can make the browser send forms
and requests with whatever Origin its own site has), can guess and forge cookie values, and can
put the token where it may be logged. Every request here must be refused; the real service
checks the end-to-end cases, an in-process app behind the same middleware the many variants.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from corral.orchestrator.service._auth import BearerAuth
from corral.orchestrator.service._sessions import COOKIE_NAME, SessionBook
from corral.orchestrator.service.dashboard import dashboard_routes

from ._harness import TOKEN, WAIT, open_service, reporter

pytestmark = [pytest.mark.hostile, pytest.mark.anyio]

BASE = "http://127.0.0.1:8420"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def _accepted(request: Request) -> Response:
    return JSONResponse({"accepted": True}, status_code=202)


@asynccontextmanager
async def guarded(sessions: SessionBook) -> AsyncIterator[httpx2.AsyncClient]:
    """A client of an app with one state-changing endpoint behind the server's own auth."""
    routes = [
        Route("/v1/runs", _accepted, methods=["GET", "POST"]),
        *dashboard_routes(TOKEN, sessions),
    ]
    auth = Middleware(BearerAuth, token=TOKEN, sessions=sessions)
    app = Starlette(routes=routes, middleware=[auth])
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url=BASE, timeout=WAIT) as http:
        yield http


async def sign_in(http: httpx2.AsyncClient) -> tuple[str, str]:
    """The session cookie and CSRF token a browser gets by signing in."""
    response = await http.post("/signin", content=f"token={TOKEN}", headers=FORM)
    assert response.status_code == 303
    cookie = response.headers["set-cookie"].split(";")[0].split("=", 1)[1]
    http.cookies.clear()
    session = await http.get("/v1/session", headers={"Cookie": f"{COOKIE_NAME}={cookie}"})
    return cookie, str(session.json()["csrf"])


async def test_without_a_cookie_or_token_the_service_answers_401_and_the_page_asks_to_sign_in(
    tmp_path: Path,
) -> None:
    async with (
        open_service(tmp_path, reporter) as service,
        httpx2.AsyncClient(base_url=service.url, timeout=WAIT) as anonymous,
    ):
        answers = [
            await anonymous.get("/v1/runs"),
            await anonymous.get("/v1/runs/x/events"),
            await anonymous.get("/v1/session"),
            await anonymous.get("/v1/dashboard/runs"),
            await anonymous.post("/v1/runs", json=service.fanout(1)),
            await anonymous.post("/signout"),
        ]
        page = await anonymous.get("/")
    assert [a.status_code for a in answers] == [401] * len(answers)
    assert page.status_code == 303 and page.headers["location"] == "/signin"


async def test_a_cross_site_form_post_gets_403_even_from_a_signed_in_browser(
    tmp_path: Path,
) -> None:
    async with (
        open_service(tmp_path, reporter) as service,
        httpx2.AsyncClient(base_url=service.url, timeout=WAIT) as browser,
    ):
        cookie, csrf = await sign_in(browser)
        evil = {**FORM, "Origin": "https://evil.example"}
        signed_in = {**evil, "Cookie": f"{COOKIE_NAME}={cookie}", "X-CSRF-Token": csrf}
        bare = await browser.post("/v1/runs", content="kind=exec", headers=evil)
        with_cookie = await browser.post("/v1/runs", content="kind=exec", headers=signed_in)
        runs = await service.http.get("/v1/runs")
    assert bare.status_code == 403 and with_cookie.status_code == 403
    assert "cross-site" in bare.json()["detail"]
    assert runs.json()["runs"] == []


@pytest.mark.parametrize(
    "origin",
    [
        "https://evil.example",
        "null",
        "http://127.0.0.1:8421",
        "https://127.0.0.1:8420",
        "http://127.0.0.1:8420.evil.example",
        "http://127.0.0.1:8420@evil.example",
        "http://evil.example#http://127.0.0.1:8420",
        "http://localhost:8420",
    ],
)
async def test_a_state_changing_request_from_another_origin_gets_403(origin: str) -> None:
    async with guarded(SessionBook()) as http:
        cookie, csrf = await sign_in(http)
        headers = {"Cookie": f"{COOKIE_NAME}={cookie}", "X-CSRF-Token": csrf, "Origin": origin}
        with_session = await http.post("/v1/runs", headers=headers)
        with_bearer = await http.post(
            "/v1/runs", headers={"Authorization": f"Bearer {TOKEN}", "Origin": origin}
        )
        signing_in = await http.post(
            "/signin", content=f"token={TOKEN}", headers={**FORM, "Origin": origin}
        )
    assert (with_session.status_code, with_bearer.status_code) == (403, 403)
    assert signing_in.status_code == 403 and "set-cookie" not in signing_in.headers


@pytest.mark.parametrize(
    "extra",
    [
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
        {"Host": "evil.example", "Origin": "http://127.0.0.1:8420"},
        {"Host": "user@127.0.0.1:8420", "Origin": "http://user@127.0.0.1:8420"},
    ],
)
async def test_host_and_fetch_metadata_tricks_are_refused(extra: dict[str, str]) -> None:
    async with guarded(SessionBook()) as http:
        cookie, csrf = await sign_in(http)
        headers = {"Cookie": f"{COOKIE_NAME}={cookie}", "X-CSRF-Token": csrf, **extra}
        answer = await http.post("/v1/runs", headers=headers)
    assert answer.status_code == 403


@pytest.mark.parametrize(
    "host",
    [
        "evil.example:{port}",
        "127.0.0.1.evil.example:{port}",
        "localhost.:{port}",
        "127.0.0.1:{port}@evil.example",
        "127.0.0.1",
        "",
    ],
)
async def test_a_loopback_server_answers_no_other_host_name_even_with_the_token(
    host: str, tmp_path: Path
) -> None:
    """DNS rebinding: a page at the attacker's name, pointed at 127.0.0.1, reaches nothing."""
    async with open_service(tmp_path, reporter) as service:
        port = service.url.rsplit(":", 1)[1]
        foreign = {"Host": host.format(port=port)}
        answers = [
            await service.http.get("/v1/runs", headers=foreign),
            await service.http.get("/signin", headers=foreign),
            await service.http.post("/signin", content=f"token={TOKEN}", headers=foreign),
        ]
        local = await service.http.get("/v1/runs", headers={"Host": f"localhost:{port}"})
    assert [a.status_code for a in answers] == [421, 421, 421]
    assert local.status_code == 200


async def test_a_second_origin_header_cannot_smuggle_a_foreign_one() -> None:
    async with guarded(SessionBook()) as http:
        cookie, csrf = await sign_in(http)
        headers = [
            ("Cookie", f"{COOKIE_NAME}={cookie}"),
            ("X-CSRF-Token", csrf),
            ("Origin", BASE),
            ("Origin", "https://evil.example"),
        ]
        answer = await http.post("/v1/runs", headers=headers)
    assert answer.status_code == 403


@pytest.mark.parametrize(
    "forged",
    [
        "",
        "x",
        TOKEN,
        "A" * 43,
        f"{TOKEN}; {COOKIE_NAME}=A",
    ],
)
async def test_a_forged_cookie_gets_401(forged: str) -> None:
    async with guarded(SessionBook()) as http:
        await sign_in(http)
        answers = [
            await http.get("/v1/runs", headers={"Cookie": f"{COOKIE_NAME}={forged}"}),
            await http.get("/v1/session", headers={"Cookie": f"{COOKIE_NAME}={forged}"}),
        ]
    assert [a.status_code for a in answers] == [401, 401]


async def test_an_expired_or_signed_out_session_gets_401() -> None:
    clock = Clock()
    sessions = SessionBook(ttl=60.0, clock=clock)
    async with guarded(sessions) as http:
        old, _ = await sign_in(http)
        clock.now += 61
        expired = await http.get("/v1/runs", headers={"Cookie": f"{COOKIE_NAME}={old}"})
        cookie, csrf = await sign_in(http)
        jar = {"Cookie": f"{COOKIE_NAME}={cookie}"}
        out = await http.post("/signout", headers={**jar, "X-CSRF-Token": csrf})
        after = await http.get("/v1/runs", headers=jar)
    assert expired.status_code == 401
    assert out.status_code == 200 and "Max-Age=0" in out.headers["set-cookie"]
    assert after.status_code == 401


async def test_two_session_cookies_in_one_request_name_no_session() -> None:
    async with guarded(SessionBook()) as http:
        cookie, _ = await sign_in(http)
        headers = [("Cookie", f"{COOKIE_NAME}={cookie}"), ("Cookie", f"{COOKIE_NAME}=forged")]
        answer = await http.get("/v1/runs", headers=headers)
    assert answer.status_code == 401


@pytest.mark.parametrize("csrf", [None, "", "wrong", "other-session"])
async def test_a_cookie_without_its_own_csrf_token_cannot_change_anything(
    csrf: str | None,
) -> None:
    async with guarded(SessionBook()) as http:
        _, other = await sign_in(http)
        cookie, _ = await sign_in(http)
        headers = {"Cookie": f"{COOKIE_NAME}={cookie}"}
        if csrf is not None:
            headers["X-CSRF-Token"] = other if csrf == "other-session" else csrf
        answers = [
            await http.post("/v1/runs", headers=headers),
            await http.post("/v1/runs", headers={**headers, **FORM}, content="csrf=x"),
            await http.post("/signout", headers=headers),
        ]
        still_in = await http.get("/v1/runs", headers={"Cookie": f"{COOKIE_NAME}={cookie}"})
    assert [a.status_code for a in answers] == [403, 403, 403]
    assert still_in.status_code == 202


@pytest.mark.parametrize("name", ["token", "access_token", "api_key", "authorization"])
async def test_a_token_in_the_query_string_is_not_accepted_nor_logged(
    name: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with (
        open_service(tmp_path, reporter) as service,
        httpx2.AsyncClient(base_url=service.url, timeout=WAIT) as anonymous,
    ):
        answers = [
            await anonymous.get(f"/v1/runs?{name}={TOKEN}"),
            await anonymous.get(f"/v1/runs/x/events?{name}={TOKEN}"),
            await anonymous.get(f"/?{name}={TOKEN}"),
            await anonymous.post(f"/signin?{name}={TOKEN}", headers=FORM),
        ]
    assert [a.status_code for a in answers] == [401, 401, 303, 401]
    assert all("set-cookie" not in a.headers for a in answers)
    assert all(TOKEN not in a.text + a.headers.get("location", "") for a in answers)
    server_side = [r for r in caplog.records if not r.name.startswith("httpx")]
    assert all(TOKEN not in r.getMessage() for r in server_side)


async def test_a_wrong_token_at_sign_in_sets_no_cookie_and_the_cookie_is_strict() -> None:
    async with guarded(SessionBook()) as http:
        wrong = await http.post("/signin", content="token=guess", headers=FORM)
        right = await http.post("/signin", content=f"token={TOKEN}", headers=FORM)
    assert wrong.status_code == 401 and "set-cookie" not in wrong.headers
    flags = right.headers["set-cookie"].split("; ")[1:]
    assert {"HttpOnly", "SameSite=Strict", "Path=/"} <= set(flags)
    assert right.headers["location"] == "/"
