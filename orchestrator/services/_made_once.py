"""A value made on its first use, once, under a lock; where making it fails, a stand-in.

The embedders make their costly parts (a query adapter's graph, a second onnxruntime session)
only when a request first needs them. Several threads may ask at once; one makes the value and
the others wait for it. A failure is not retried on every request: the stand-in that
`failed` gives for it is kept in the value's place.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class MadeOnce(Generic[T]):
    """What `make` returns, made by the first `get`; where `make` raises one of `catching`,
    what `failed` returns for that exception, for good. Any other exception is the caller's,
    and the next `get` tries again."""

    def __init__(
        self,
        make: Callable[[], T],
        failed: Callable[[Exception], T],
        catching: tuple[type[Exception], ...] = (Exception,),
    ) -> None:
        self._make = make
        self._failed = failed
        self._catching = catching
        # Empty until the first `get`, then the one value made (which may itself be None).
        self._made: list[T] = []
        self._lock = threading.Lock()

    def get(self) -> T:
        with self._lock:
            if not self._made:
                try:
                    value = self._make()
                except self._catching as exc:
                    value = self._failed(exc)
                self._made.append(value)
            return self._made[0]
