"""`CorralClient`: a small typed client of the API (submit, get, cancel, results, events,
approvals).

`events` follows a run's event stream and, when the connection drops, reconnects with
`Last-Event-ID` set to the last id it saw, so the caller sees every event exactly once; a
204 answer means the stream had already ended after that id, and the iteration stops.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import httpx2

from ._errors import (
    ApprovalClosed,
    QueueFull,
    RunRejected,
    ServiceUnreachable,
    UnknownApproval,
)

DEFAULT_TIMEOUT = 30.0
MAX_RECONNECTS = 5
RECONNECT_DELAY = 0.2
TERMINAL_EVENTS = frozenset({"end", "error"})


class _StreamOver(Exception):
    """The server answered 204: nothing follows the last event the client saw."""


@dataclass(frozen=True)
class ServerEvent:
    """One event of a stream: `id` is the per-run sequence (None for metadata and the end)."""

    event: str
    data: dict[str, Any]
    id: int | None = None


class CorralClient:
    """Talks to `corral serve` at `base_url` with the API token. Use `async with`."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_connections: int | None = 100,
    ) -> None:
        self._http = httpx2.AsyncClient(
            base_url=base_url,
            headers={"Authorization": f"Bearer {token}"},
            timeout=timeout,
            limits=httpx2.Limits(max_connections=max_connections),
        )

    async def __aenter__(self) -> CorralClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def submit(
        self, request: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """Submit a run; returns `{"id", "status", "links"}`."""
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        return await self._call("POST", "/v1/runs", json=dict(request), headers=headers)

    async def get(self, run_id: str) -> dict[str, Any]:
        return await self._call("GET", f"/v1/runs/{run_id}")

    async def cancel(self, run_id: str) -> dict[str, Any]:
        return await self._call("POST", f"/v1/runs/{run_id}/cancel")

    async def results(self, run_id: str) -> list[dict[str, Any]]:
        answer = await self._call("GET", f"/v1/runs/{run_id}/results")
        return list(answer["results"])

    async def report(self, run_id: str) -> dict[str, Any]:
        """A pipeline run's report (review, triage, refactor); `ServiceUnreachable` until it
        has one."""
        answer = await self._call("GET", f"/v1/runs/{run_id}/report")
        return dict(answer["report"])

    async def approvals(self, run_id: str, *, state: str | None = None) -> list[dict[str, Any]]:
        """The run's approvals, oldest first; `state` filters (`pending`, `expired`, ...)."""
        params = {"state": state} if state is not None else {}
        answer = await self._call("GET", f"/v1/runs/{run_id}/approvals", params=params)
        return list(answer["approvals"])

    async def answer(
        self, approval_id: str, decision: Literal["approve", "deny"], reason: str | None = None
    ) -> dict[str, Any]:
        """Answer a pending approval; `UnknownApproval` (404) or `ApprovalClosed` (409) if not."""
        body = {"decision": decision, **({"reason": reason} if reason is not None else {})}
        return await self._call("POST", f"/v1/approvals/{approval_id}", json=body)

    async def events(self, run_id: str, *, starting_after: int = 0) -> AsyncIterator[ServerEvent]:
        """The run's events after `starting_after`, ending with `end` or `error`; resumes."""
        last = starting_after
        failures = 0
        while True:
            try:
                async for event in self._stream_once(run_id, last):
                    if event.id is not None:
                        last, failures = event.id, 0
                    if event.event != "metadata":
                        yield event
                    if event.event in TERMINAL_EVENTS:
                        return
            except _StreamOver:
                return
            except httpx2.TransportError as exc:
                failures += 1
                if failures > MAX_RECONNECTS:
                    raise ServiceUnreachable(
                        f"the event stream of run {run_id} kept dropping: {exc}"
                    ) from exc
                await anyio.sleep(RECONNECT_DELAY * failures)
                continue
            failures += 1
            if failures > MAX_RECONNECTS:
                raise ServiceUnreachable(f"the event stream of run {run_id} closed without an end")

    async def _stream_once(self, run_id: str, after: int) -> AsyncIterator[ServerEvent]:
        # No Last-Event-ID before the first event: the header alone marks a reconnect, which a
        # run that ended without any event answers with 204.
        headers = {"Last-Event-ID": str(after)} if after else {}
        url = f"/v1/runs/{run_id}/events"
        async with self._http.stream("GET", url, headers=headers, timeout=None) as response:
            if response.status_code == 204:
                raise _StreamOver
            if response.status_code != 200:
                await response.aread()
                _raise_for(response)
            async for event in parse_sse(response.aiter_lines()):
                yield event

    async def _call(self, method: str, url: str, **kwargs: Any) -> dict[str, Any]:
        try:
            response = await self._http.request(method, url, **kwargs)
        except httpx2.TransportError as exc:
            raise ServiceUnreachable(f"cannot reach the corral server: {exc}") from exc
        _raise_for(response)
        answer: dict[str, Any] = response.json()
        return answer


async def parse_sse(lines: AsyncIterator[str]) -> AsyncIterator[ServerEvent]:
    """Events from SSE lines; comments and `retry:` are skipped."""
    name, event_id = "message", None
    data: list[str] = []
    async for line in lines:
        if not line:
            if data:
                yield ServerEvent(name, json.loads("\n".join(data)), event_id)
            name, data, event_id = "message", [], None
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            name = value
        elif field == "data":
            data.append(value)
        elif field == "id":
            event_id = int(value)


def _raise_for(response: httpx2.Response) -> None:
    if response.status_code < 400:
        return
    try:
        detail: Any = response.json()
    except ValueError:
        detail = {"error": response.text}
    message = f"{response.status_code}: {detail.get('error', detail)}"
    if "/v1/approvals/" in response.url.path:
        _raise_for_answer(response.status_code, message)
    if response.status_code == 429:
        raise QueueFull(message, int(response.headers.get("Retry-After", "1")))
    if response.status_code in (409, 413, 422):
        raise RunRejected(message, detail.get("errors"))
    raise ServiceUnreachable(message)


def _raise_for_answer(status: int, message: str) -> None:
    if status == 404:
        raise UnknownApproval(message)
    if status == 409:
        raise ApprovalClosed(message)
