"""Where payloads that travel by reference are kept: the `BlobStore` seam and its folder and
in-memory implementations (the PostgreSQL one is `_blobs_postgres`).

A blob is bytes under their SHA-256 (hex), referenced by the runs whose payloads named it.
`delete_run` drops one run's references and deletes every blob no run references any more, so
a blob shared by two runs lives until both are deleted. A blob written outside any run (a
payload with no workflow to belong to) is referenced by `NO_RUN`, which is never deleted. What a run
is, given a Temporal workflow id, is `run_of_workflow`'s answer.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import anyio.to_thread

from ._errors import PayloadBlobError

_CHILD_SUFFIX = re.compile(r"\.(?:item-[0-9]+|agent-[0-9a-f]{12})\Z")
"""How a child workflow's id ends: `{run_id}.item-N` (a fan-out item) or `{run_id}.{agent_id}`
(an agent of an exec run; agent ids are `agent-` and 12 hex digits)."""


_SHA256 = re.compile(r"[0-9a-f]{64}")


NO_RUN = ""
"""The reference of blobs written outside any run (no run id is empty): never deleted."""


def check_key(key: str) -> str:
    """`key` if it is a SHA-256 in hex: a store never takes another name (no `../` in a path)."""
    if not _SHA256.fullmatch(key):
        raise PayloadBlobError(f"a blob key must be 64 lowercase hex digits, not {key[:80]!r}")
    return key


def run_of_workflow(workflow_id: str) -> str:
    """The run a corral workflow belongs to: its id without a child workflow's suffix."""
    return _CHILD_SUFFIX.sub("", workflow_id)


class BlobStore(Protocol):
    """Bytes kept under their SHA-256 (hex), each referenced by the runs that wrote it; `where`
    names the store in messages. Every method may be called concurrently, from many processes."""

    @property
    def where(self) -> str: ...

    async def put(self, key: str, data: bytes, *, run_id: str | None = None) -> None:
        """Keep `data` under `key` (once: the same key is the same bytes), referenced by
        `run_id` when given."""
        ...

    async def get(self, key: str) -> bytes | None:
        """The bytes stored under `key`, or None when there are none."""
        ...

    async def delete_run(self, run_id: str) -> int:
        """Drop the run's references and delete the blobs no other run references; answers how
        many blobs were deleted. A run with no blobs is no error."""
        ...


@dataclass(frozen=True)
class FileBlobStore:
    """Blobs as files `<root>/sha256/<first two hex digits>/<hex>`, written atomically, so
    writers on several processes (or machines sharing the folder) never see half a blob.

    A run's references are empty files `<root>/runs/<sha256 of the run id>/<hex>`. A lock file
    (`flock`: shared to put, exclusive to delete) keeps a delete from removing a blob that a
    concurrent put has just referenced."""

    root: Path

    @property
    def where(self) -> str:
        return str(self.root)

    def path_of(self, key: str) -> Path:
        check_key(key)
        return self.root / "sha256" / key[:2] / key

    def refs_of(self, run_id: str) -> Path:
        return self.root / "runs" / hashlib.sha256(run_id.encode()).hexdigest()

    async def put(self, key: str, data: bytes, *, run_id: str | None = None) -> None:
        await anyio.to_thread.run_sync(self._put, key, data, run_id)

    async def get(self, key: str) -> bytes | None:
        return await anyio.to_thread.run_sync(self._get, key)

    async def delete_run(self, run_id: str) -> int:
        return await anyio.to_thread.run_sync(self._delete_run, run_id)

    def run_keys(self, run_id: str) -> list[str]:
        """The keys of the blobs `run_id` (`NO_RUN` for none) references, sorted."""
        refs = self.refs_of(run_id)
        if not refs.is_dir():
            return []
        return sorted(m.name for m in refs.iterdir() if _SHA256.fullmatch(m.name))

    def _put(self, key: str, data: bytes, run_id: str | None) -> None:
        check_key(key)
        with self._locked(fcntl.LOCK_SH):
            refs = self.refs_of(run_id or NO_RUN)  # before the blob: a delete then keeps it
            refs.mkdir(parents=True, exist_ok=True)
            (refs / key).touch()
            self._write(key, data)

    def _write(self, key: str, data: bytes) -> None:
        path = self.path_of(key)
        if path.exists():  # same key, same bytes: content-addressed
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{key[:12]}-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(temp, path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise

    def _get(self, key: str) -> bytes | None:
        try:
            return self.path_of(key).read_bytes()
        except FileNotFoundError:
            return None

    def _delete_run(self, run_id: str) -> int:
        if run_id == NO_RUN:
            return 0
        refs = self.refs_of(run_id)
        with self._locked(fcntl.LOCK_EX):
            if not refs.is_dir():
                return 0
            keys = [m.name for m in refs.iterdir() if _SHA256.fullmatch(m.name)]
            for marker in refs.iterdir():
                marker.unlink()
            refs.rmdir()
            others = [d for d in (self.root / "runs").iterdir() if d.is_dir()]
            orphans = [k for k in keys if not any((d / k).exists() for d in others)]
            for key in orphans:
                self.path_of(key).unlink(missing_ok=True)
        return len(orphans)

    @contextmanager
    def _locked(self, mode: int) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "a+b") as lock:
            fcntl.flock(lock, mode)
            yield  # the lock goes with the file's close


@dataclass
class MemoryBlobStore:
    """The in-memory twin of `FileBlobStore`, for tests and single-process use."""

    blobs: dict[str, bytes] = field(default_factory=dict)
    refs: dict[str, set[str]] = field(default_factory=dict)
    """Run id (`NO_RUN` for none) -> the keys of its blobs."""

    @property
    def where(self) -> str:
        return "the in-memory blob store"

    async def put(self, key: str, data: bytes, *, run_id: str | None = None) -> None:
        self.blobs.setdefault(check_key(key), data)
        self.refs.setdefault(run_id or NO_RUN, set()).add(key)

    async def get(self, key: str) -> bytes | None:
        return self.blobs.get(check_key(key))

    async def delete_run(self, run_id: str) -> int:
        if run_id == NO_RUN:
            return 0
        keys = self.refs.pop(run_id, set())
        kept = set().union(*self.refs.values())
        orphans = keys - kept
        for key in orphans:
            self.blobs.pop(key, None)
        return len(orphans)
