"""One BLAS thread for the calling thread while it runs small matrix products.

The MiniLM encoder multiplies a few rows by 384-wide weight matrices. Split over OpenBLAS's
thread pool, such products spend their time handing work between threads, and on a busy machine
a query took ten times as long as on one thread. OpenBLAS (0.3.27 on) can set the count for one
calling thread only, so nothing else in the process is affected. Where NumPy's BLAS is not the
OpenBLAS of its wheel, this does nothing.
"""

from __future__ import annotations

import ctypes
import functools
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

logger = logging.getLogger(__name__)


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Within the block, this thread's BLAS calls run on one thread."""
    setter = _local_thread_setter()
    if setter is None:
        yield
        return
    previous = setter(1)
    try:
        yield
    finally:
        setter(previous)


@functools.cache
def _local_thread_setter() -> Callable[[int], int] | None:
    import numpy

    # NumPy's wheels keep their OpenBLAS beside the package; it is loaded already, so opening
    # it again only returns the same library.
    folder = Path(numpy.__file__).parent.parent / "numpy.libs"
    for path in sorted(folder.glob("lib*openblas*.so*")):
        try:
            function = ctypes.CDLL(str(path)).openblas_set_num_threads_local
        except (OSError, AttributeError) as exc:
            logger.debug("no per-thread BLAS setting in %s: %s", path, exc)
            continue
        function.restype = ctypes.c_int
        function.argtypes = [ctypes.c_int]
        setter: Callable[[int], int] = function
        return setter
    return None
