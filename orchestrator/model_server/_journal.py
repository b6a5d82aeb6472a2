"""The request journal: one record per request, in memory and as JSON lines, plus `/stats`.

The records stay in memory only when asked (`keep`): the in-process server's callers read them,
the CLI's cannot, and thousands of parsed bodies kept alive make every full garbage collection
of the server's process walk them all. It also keeps the prompt-cache bookkeeping: the canonical
bytes of the last request seen for each `prompt_cache_key`, so each new request's `prefix_bytes`
is how much of it that one already had.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from ._canonical import canonical_bytes, shared_prefix_len
from ._errors import ServerOptionsError
from ._normalise import CHAT_COMPLETIONS, RESPONSES
from ._options import FAULT_KINDS, FaultKind


class RequestJournal:
    """Records requests as they arrive and counts what `/stats` reports."""

    def __init__(self, log_path: Path | None, *, keep: bool = True) -> None:
        self.records: list[dict[str, Any]] = []
        self._keep = keep
        self._total = 0
        self._models: dict[str, None] = {}
        self._log: IO[str] | None = _open_for_writing(log_path, "--log") if log_path else None
        self._last_by_key: dict[str, bytes] = {}
        self._per_endpoint = {RESPONSES: 0, CHAT_COMPLETIONS: 0}
        self._faults: dict[str, int] = dict.fromkeys(FAULT_KINDS, 0)
        self._input_bytes = 0
        self._prefix_bytes = 0
        self._in_flight = 0
        self._max_in_flight = 0
        self._throttled = 0

    def record(
        self,
        endpoint: str,
        body: dict[str, Any],
        normalised: dict[str, Any],
        fault: FaultKind | None,
        headers: dict[str, str],
        *,
        throttled: bool = False,
        query: str = "",
        plain: bool = False,
    ) -> tuple[dict[str, Any], bytes]:
        """Log one arriving request; returns its record and its canonical bytes.

        `throttled`: refused with a 429 by the server's `--rpm`/`--tpm` limits. Headers are kept
        (retry counts, idempotency keys are worth asserting on) with the credential in
        `authorization` (and Azure's `api-key`) cut down to its scheme and last four characters;
        `query` is the URL's query string as sent. `plain`: the body parsed as `_json.Checked`
        plain, so its canonical bytes may be written by orjson.
        """
        canonical = canonical_bytes(normalised, plain=plain)
        record = {
            "index": self._total,
            "time": time.time(),
            "endpoint": endpoint,
            "model": normalised["model"],
            "prompt_cache_key": normalised["prompt_cache_key"],
            "stream": bool(body.get("stream")),
            "fault": fault,
            "throttled": throttled,
            "headers": _redacted(headers),
            "query": query,
            "input_bytes": len(canonical),
            "prefix_bytes": self._prefix_for(normalised["prompt_cache_key"], canonical),
            "body": body,
            "normalised": normalised,
        }
        self._count(record, fault)
        self._throttled += throttled
        self._total += 1
        if isinstance(record["model"], str):
            self._models.setdefault(record["model"])
        if self._keep:
            self.records.append(record)
        if self._log is not None:
            # One short append per request; a thread hop would cost more and could reorder lines.
            self._log.write(json.dumps(record, ensure_ascii=False) + "\n")
            self._log.flush()
        return record, canonical

    @contextmanager
    def answering(self) -> Iterator[None]:
        """Counts a request as in flight while its answer is being produced and sent."""
        self._in_flight += 1
        self._max_in_flight = max(self._max_in_flight, self._in_flight)
        try:
            yield
        finally:
            self._in_flight -= 1

    def stats(self) -> dict[str, Any]:
        return {
            "requests": {"total": self._total, "per_endpoint": dict(self._per_endpoint)},
            "input_bytes": self._input_bytes,
            "prefix_shared_bytes": self._prefix_bytes,
            "in_flight": self._in_flight,
            "max_in_flight": self._max_in_flight,
            "faults": dict(self._faults),
            "throttled": self._throttled,
        }

    def models(self) -> list[str]:
        """The models asked for so far, in the order first asked for."""
        return list(self._models)

    def close(self) -> None:
        if self._log is not None:
            self._log.close()

    def _prefix_for(self, key: Any, canonical: bytes) -> int:
        if not isinstance(key, str) or not key:
            return 0
        previous = self._last_by_key.get(key)
        self._last_by_key[key] = canonical
        return 0 if previous is None else shared_prefix_len(previous, canonical)

    def _count(self, record: dict[str, Any], fault: FaultKind | None) -> None:
        self._per_endpoint[record["endpoint"]] += 1
        self._input_bytes += record["input_bytes"]
        self._prefix_bytes += record["prefix_bytes"]
        if fault is not None:
            self._faults[fault] += 1


def _redacted(headers: dict[str, str]) -> dict[str, str]:
    redacted = dict(headers)
    for name in ("authorization", "api-key"):
        if name in headers:
            scheme, _, secret = headers[name].rpartition(" ")
            redacted[name] = f"{scheme} ...{secret[-4:]}".strip()
    return redacted


def _open_for_writing(path: Path, flag: str) -> IO[str]:
    try:
        return path.open("w", encoding="utf-8")
    except OSError as exc:
        raise ServerOptionsError(f"cannot write {flag} file {path}: {exc.strerror}") from exc
