"""Cassettes: recording answers from a real endpoint, and replaying them without one.

A request is matched by its content (endpoint plus body, key order ignored); the n-th occurrence
of the same content gets the n-th answer recorded for it. One JSON line per exchange:
`{"endpoint", "request", "status", "headers", "body"}`, with a stream's raw SSE text as `body`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict, deque
from pathlib import Path
from typing import IO, Any

import httpx2

from ._errors import ServerOptionsError
from ._reply import Reply, error_reply

UPSTREAM_TIMEOUT = 600.0
_KEPT_HEADERS = ("content-type", "retry-after", "retry-after-ms", "x-request-id")
_FRAME_END = re.compile(r"(?<=\r\n\r\n)|(?<=\n\n)")


def request_key(endpoint: str, body: dict[str, Any]) -> str:
    """What two requests must share to count as the same one."""
    text = json.dumps([endpoint, body], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


class CassetteReplayer:
    """Answers from a recorded cassette, in recorded order per distinct request."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._answers: defaultdict[str, deque[dict[str, Any]]] = defaultdict(deque)
        self._seen: defaultdict[str, int] = defaultdict(int)
        for entry in _read_cassette(path):
            self._answers[request_key(entry["endpoint"], entry["request"])].append(entry)

    def answer(self, endpoint: str, body: dict[str, Any]) -> Reply:
        key = request_key(endpoint, body)
        self._seen[key] += 1
        if not self._answers[key]:
            return self._miss(endpoint, self._seen[key])
        return reply_from_entry(self._answers[key].popleft())

    def _miss(self, endpoint: str, occurrence: int) -> Reply:
        message = (
            f"cassette {self._path} has no recorded answer for this {endpoint} request "
            f"(occurrence {occurrence} of its content); record it with --record FILE --upstream URL"
        )
        return error_reply(404, message, "invalid_request_error", "cassette_miss")


class CassetteRecorder:
    """Forwards each request to the upstream endpoint and records the exchange."""

    def __init__(self, path: Path, upstream: str) -> None:
        self._upstream = upstream.rstrip("/")
        try:
            self._file: IO[str] = path.open("w", encoding="utf-8")
        except OSError as exc:
            raise ServerOptionsError(f"cannot write --record file {path}: {exc.strerror}") from exc
        self._client = httpx2.AsyncClient(timeout=UPSTREAM_TIMEOUT)

    async def forward(
        self, endpoint: str, body: dict[str, Any], raw: bytes, authorization: str | None
    ) -> Reply:
        url = self._upstream + endpoint.removeprefix("/v1")
        headers = {"content-type": "application/json"}
        if authorization:
            headers["authorization"] = authorization
        try:
            response = await self._client.post(url, content=raw, headers=headers)
        except httpx2.HTTPError as exc:
            message = f"upstream {url} failed: {type(exc).__name__}: {exc}"
            return error_reply(502, message, "upstream_error", "upstream_unreachable")
        entry = {
            "endpoint": endpoint,
            "request": body,
            "status": response.status_code,
            "headers": {k: v for k, v in response.headers.items() if k.lower() in _KEPT_HEADERS},
            "body": response.text,
        }
        self._file.write(json.dumps(entry, ensure_ascii=False) + "\n")
        self._file.flush()
        return reply_from_entry(entry)

    async def aclose(self) -> None:
        await self._client.aclose()
        self._file.close()


def reply_from_entry(entry: dict[str, Any]) -> Reply:
    """The reply a recorded exchange stands for; a stream is cut back into its SSE frames."""
    headers = [(str(name).lower(), str(value)) for name, value in entry["headers"].items()]
    content_type = dict(headers).get("content-type", "")
    text: str = entry["body"]
    if content_type.startswith("text/event-stream"):
        chunks = [frame.encode() for frame in _FRAME_END.split(text) if frame]
    else:
        chunks = [text.encode()]
    return Reply(entry["status"], chunks, headers)


def _read_cassette(path: Path) -> list[dict[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ServerOptionsError(f"cannot read --replay cassette {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ServerOptionsError(
            f"--replay cassette {path} is not UTF-8 text ({exc.reason}); give a file --record wrote"
        ) from exc
    entries = []
    for number, line in enumerate(lines, start=1):
        if line.strip():
            entries.append(_parse_entry(path, number, line))
    return entries


def _parse_entry(path: Path, number: int, line: str) -> dict[str, Any]:
    try:
        entry = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ServerOptionsError(f"cassette {path} line {number} is not JSON: {exc}") from exc
    fields = {"endpoint": str, "request": dict, "status": int, "headers": dict, "body": str}
    for name, kind in fields.items():
        if not isinstance(entry, dict) or not isinstance(entry.get(name), kind):
            raise ServerOptionsError(
                f"cassette {path} line {number} lacks {name!r} ({kind.__name__}); "
                "was it written by --record?"
            )
    return entry  # type: ignore[no-any-return]
