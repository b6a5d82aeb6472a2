"""Document vectors kept on disk between runs, keyed by the model and the exact texts.

Embedding every tool is most of an index build; the vectors depend only on the model and the
texts, so a file named by the SHA-256 of both is valid for as long as it exists. When a server's
tools change (a new tool, a reworded description, a renamed parameter) the texts change, the key
changes, and the next build embeds afresh and writes a new file; the least recently used files
beyond `KEEP_FILES` are deleted. The cache is best effort: any failure to read or write it only
costs the embedding it would have saved.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

logger = logging.getLogger(__name__)

KEEP_FILES = 32
CACHE_DIR_ENV = "CORRAL_CACHE_DIR"
Vectors = npt.NDArray[np.float32]


def default_cache_dir() -> Path:
    """`$CORRAL_CACHE_DIR`, else `$XDG_CACHE_HOME/corral/vectors`, else under `~/.cache`."""
    explicit = os.environ.get(CACHE_DIR_ENV)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "corral" / "vectors"


class VectorCache:
    """A folder of `<sha256>.npy` files, one per (model, list of texts)."""

    def __init__(self, folder: Path, keep: int = KEEP_FILES) -> None:
        self.folder = folder
        self.keep = keep

    def key(self, model: str, texts: Sequence[str]) -> str:
        digest = hashlib.sha256(model.encode())
        for text in texts:
            digest.update(b"\x00" + text.encode("utf-8", "surrogatepass"))
        return digest.hexdigest()

    def vectors(
        self, model: str, texts: Sequence[str], embed: Callable[[Sequence[str]], Vectors]
    ) -> Vectors:
        """The cached vectors of `texts`, or `embed(texts)`, stored for the next run."""
        path = self.folder / f"{self.key(model, texts)}.npy"
        cached = self._read(path, len(texts))
        if cached is not None:
            return cached
        fresh = np.asarray(embed(texts), dtype=np.float32)
        self._write(path, fresh)
        return fresh

    def _read(self, path: Path, rows: int) -> Vectors | None:
        try:
            loaded = np.load(path, allow_pickle=False)
            os.utime(path)
        except (OSError, ValueError):
            return None
        if loaded.ndim != 2 or loaded.shape[0] != rows or loaded.dtype != np.float32:
            return None
        return np.asarray(loaded, dtype=np.float32)

    def _write(self, path: Path, vectors: Vectors) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            # Written beside the target and renamed, so a reader never sees half a file.
            with tempfile.NamedTemporaryFile(dir=self.folder, suffix=".tmp", delete=False) as f:
                np.save(f, vectors, allow_pickle=False)
            os.replace(f.name, path)
            self._prune()
        except OSError as exc:
            logger.debug("vector cache not written to %s: %s", path, exc)

    def _prune(self) -> None:
        files = sorted(self.folder.glob("*.npy"), key=lambda p: p.stat().st_mtime, reverse=True)
        for stale in files[self.keep :]:
            stale.unlink(missing_ok=True)
