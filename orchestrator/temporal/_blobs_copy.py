"""Copying a home's payload blobs into another blob store, with the runs that reference them.

`corral journal copy` moves a journal from SQLite into PostgreSQL; Temporal histories of its runs
still hold references to payloads kept in the home's `blobs/` folder. Copying them into the
database's blob tables (same keys, same runs) lets those references resolve on any machine. A
blob whose bytes no longer match its key is left behind and counted, never copied.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import anyio.to_thread

from ._blobs import NO_RUN, BlobStore, FileBlobStore


@dataclass(frozen=True)
class BlobsCopied:
    """How many blobs were copied, and how many were left because they were corrupt."""

    copied: int
    corrupt: int


async def copy_blobs(
    source: FileBlobStore, dest: BlobStore, run_ids: Sequence[str], *, unowned: bool
) -> BlobsCopied:
    """Copy the blobs each of `run_ids` references (and with `unowned`, those written outside
    any run) from `source` into `dest`, each referenced by the same run as before."""
    owners = [*run_ids, NO_RUN] if unowned else list(run_ids)
    copied: set[str] = set()
    corrupt: set[str] = set()
    for run_id in owners:
        for key in await anyio.to_thread.run_sync(source.run_keys, run_id):
            data = await source.get(key)
            if data is None or hashlib.sha256(data).hexdigest() != key:
                corrupt.add(key)
                continue
            await dest.put(key, data, run_id=run_id or None)
            copied.add(key)
    return BlobsCopied(len(copied), len(corrupt - copied))
