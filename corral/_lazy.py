"""Public names that are imported when first used, so that `import corral` and the `corral`
command (whose entry point sits inside the package) pay only for what they touch: the model SDK,
the MCP SDK and the agent core cost most of a second to import."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, sources: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package` that imports each name from its module in
    `sources` (relative to `package`) on first use."""

    def __getattr__(name: str) -> Any:
        source = sources.get(name)
        if source is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(source, package), name)

    return __getattr__
