"""Document vectors kept on disk between runs, keyed by the model and the exact texts.

Embedding every tool is most of an index build; the vectors depend only on the model and the
texts, so a file named by the SHA-256 of both is valid for as long as it exists. When a server's
tools change (a new tool, a reworded description, a renamed parameter) the texts change, the key
changes, and the next build writes a new file. Beside each `<key>.npy` a `<key>.keys` file holds
one SHA-256 per row (of the model and that row's text), so the new build takes every unchanged
text's vector from the files already there and embeds only the texts that are new. The least
recently used files beyond `KEEP_FILES` are deleted. The cache is best effort: any failure to
read or write it only costs the embedding it would have saved. A file another account could have
written (`_private_files`) counts as missing: the folder may be shared.
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

from ._private_files import open_private

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
        """The cached vectors of `texts`; texts no cached file holds are `embed`ded, and the
        whole is stored for the next run."""
        path = self.folder / f"{self.key(model, texts)}.npy"
        cached = self._read(path, len(texts))
        if cached is not None:
            return cached
        if not texts:
            return np.asarray(embed(texts), dtype=np.float32)
        digests = [_text_digest(model, text) for text in texts]
        known = self._known_rows(set(digests))
        missing = [row for row, digest in enumerate(digests) if digest not in known]
        fresh = np.asarray(embed([texts[row] for row in missing]), dtype=np.float32)
        widths = {v.shape[0] for v in known.values()} | ({fresh.shape[1]} if missing else set())
        if len(widths) > 1:
            # The files disagree with the model about the width: embed everything afresh.
            vectors = np.asarray(embed(texts), dtype=np.float32)
        else:
            vectors = np.zeros((len(texts), widths.pop()), dtype=np.float32)
            for row, digest in enumerate(digests):
                if digest in known:
                    vectors[row] = known[digest]
            vectors[missing] = fresh
        self._write(path, vectors, digests)
        return vectors

    def _known_rows(self, wanted: set[bytes]) -> dict[bytes, Vectors]:
        """Vectors of the `wanted` text digests found in earlier files, newest file first."""
        found: dict[bytes, Vectors] = {}
        for keys_path in self._newest_first("*.keys"):
            if len(found) == len(wanted):
                break
            keys = _load(keys_path)
            rows = _load(keys_path.with_suffix(".npy"))
            if keys is None or rows is None:
                continue
            if keys.dtype != np.uint8 or keys.shape[1:] != (_DIGEST_BYTES,):
                continue
            if rows.ndim != 2 or rows.shape[0] != keys.shape[0]:
                continue
            for row, digest in enumerate(map(bytes, keys)):
                if digest in wanted and digest not in found:
                    found[digest] = np.array(rows[row], dtype=np.float32)
        widths = {vector.shape[0] for vector in found.values()}
        # Rows of another width come from a file that does not match its keys: trust none.
        return found if len(widths) <= 1 else {}

    def _read(self, path: Path, rows: int) -> Vectors | None:
        loaded = _load(path, touch=True)
        if loaded is None:
            return None
        if loaded.ndim != 2 or loaded.shape[0] != rows or loaded.dtype != np.float32:
            return None
        return np.asarray(loaded, dtype=np.float32)

    def _write(self, path: Path, vectors: Vectors, digests: Sequence[bytes]) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            # The keys go first: a keys file without its vectors is skipped, never misread.
            keys = np.frombuffer(b"".join(digests), dtype=np.uint8).reshape(-1, _DIGEST_BYTES)
            self._write_atomically(path.with_suffix(".keys"), keys)
            self._write_atomically(path, vectors)
            self._prune()
        except OSError as exc:
            logger.debug("vector cache not written to %s: %s", path, exc)

    def _write_atomically(self, path: Path, array: npt.NDArray[np.generic]) -> None:
        # Written beside the target and renamed, so a reader never sees half a file.
        with tempfile.NamedTemporaryFile(dir=self.folder, suffix=".tmp", delete=False) as f:
            np.save(f, array, allow_pickle=False)
        os.replace(f.name, path)

    def _newest_first(self, pattern: str) -> list[Path]:
        dated: list[tuple[float, Path]] = []
        for path in self.folder.glob(pattern):
            try:
                dated.append((path.lstat().st_mtime, path))
            except OSError:
                continue  # gone since it was listed
        return [path for _, path in sorted(dated, reverse=True)]

    def _prune(self) -> None:
        for stale in self._newest_first("*.npy")[self.keep :]:
            stale.unlink(missing_ok=True)
            stale.with_suffix(".keys").unlink(missing_ok=True)


def _load(path: Path, *, touch: bool = False) -> npt.NDArray[np.generic] | None:
    """The array in `path` if it is this user's own file (see `open_private`), else None;
    `touch` marks it used, for the pruning."""
    file = open_private(path)
    if file is None:
        return None
    with file:
        try:
            loaded: npt.NDArray[np.generic] = np.load(file, allow_pickle=False)
            if touch:
                os.utime(file.fileno())
        except (OSError, ValueError, EOFError):
            return None
    return loaded


# A row's key: the SHA-256 of the model and the row's text, as 32 raw bytes.
_DIGEST_BYTES = 32


def _text_digest(model: str, text: str) -> bytes:
    return hashlib.sha256(model.encode() + b"\x00" + text.encode("utf-8", "surrogatepass")).digest()
