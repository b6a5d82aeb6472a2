"""A small OTLP/HTTP protobuf receiver on loopback, for tests that export from a subprocess.

It answers every POST with 200 and keeps the spans of `/v1/traces` requests, each with the
`service.name` of its resource.
"""

from __future__ import annotations

import gzip
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
from anyio.abc import SocketStream
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n"


@dataclass
class Received:
    span: Span
    service: str


@dataclass
class OtlpReceiver:
    port: int
    spans: list[Received] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)

    def take(self, path: str, body: bytes) -> None:
        self.paths.append(path)
        if path != "/v1/traces":
            return
        request = ExportTraceServiceRequest.FromString(body)
        for resource_spans in request.resource_spans:
            service = next(
                (
                    a.value.string_value
                    for a in resource_spans.resource.attributes
                    if a.key == "service.name"
                ),
                "",
            )
            for scope in resource_spans.scope_spans:
                self.spans.extend(Received(s, service) for s in scope.spans)


async def _serve_connection(stream: SocketStream, receiver: OtlpReceiver) -> None:
    buffer = b""
    async with stream:
        while True:
            while b"\r\n\r\n" not in buffer:
                try:
                    buffer += await stream.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    return
            head, _, buffer = buffer.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            pairs = (h.partition(":") for h in lines[1:])
            headers = {k.strip().lower(): v.strip() for k, _, v in pairs}
            length = int(headers.get("content-length", "0"))
            while len(buffer) < length:
                buffer += await stream.receive()
            body, buffer = buffer[:length], buffer[length:]
            if headers.get("content-encoding") == "gzip":
                body = gzip.decompress(body)
            receiver.take(lines[0].split(" ")[1], body)
            await stream.send(OK)


@asynccontextmanager
async def otlp_receiver() -> AsyncIterator[OtlpReceiver]:
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    receiver = OtlpReceiver(port=port)

    async def handle(stream: SocketStream) -> None:
        await _serve_connection(stream, receiver)

    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, handle)
        yield receiver
        tg.cancel_scope.cancel()
