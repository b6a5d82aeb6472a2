"""Loading a policy from `PATH.py:FUNC` or `module:FUNC`, and calling it at one boundary.

The policy is code from outside: whatever it raises or returns is contained here and turned into
`PolicyFailed` (answered as HTTP 500), so it can never take the server down.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import logging
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from ._errors import PolicyFailed, PolicyLoadError
from ._options import Policy

logger = logging.getLogger(__name__)

_SPEC_HINT = "pass --policy path/to/file.py:function (or package.module:function)"


def load_policy(spec: str) -> Policy:
    """The callable named by `path/to/file.py:func` or `package.module:func`."""
    location, sep, name = spec.rpartition(":")
    if not sep or not location or not name:
        raise PolicyLoadError(f"policy {spec!r} is not of the form PATH.py:FUNC; {_SPEC_HINT}")
    module = _load_module(location)
    if not hasattr(module, name):
        defined = sorted(
            n for n, v in vars(module).items() if callable(v) and not n.startswith("_")
        )
        listing = ", ".join(defined) or "no public functions"
        raise PolicyLoadError(f"{location} has no function {name!r} (it defines: {listing})")
    policy = getattr(module, name)
    if not callable(policy):
        kind = type(policy).__name__
        raise PolicyLoadError(f"{location}:{name} is a {kind}, not a function; {_SPEC_HINT}")
    return policy  # type: ignore[no-any-return]


def _load_module(location: str) -> ModuleType:
    if location.endswith(".py") or "/" in location or "\\" in location:
        return _load_file(Path(location))
    try:
        return importlib.import_module(location)
    except ImportError as exc:
        raise PolicyLoadError(
            f"cannot import policy module {location!r}: {exc}; {_SPEC_HINT}"
        ) from exc


def _load_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise PolicyLoadError(f"policy file {path} does not exist; {_SPEC_HINT}")
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
    module_name = f"corral_policy_{path.stem}_{digest}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise PolicyLoadError(f"policy file {path} cannot be imported as Python; {_SPEC_HINT}")
    module = importlib.util.module_from_spec(spec)
    # Registered before running, as `import` does, so dataclasses and pickling in it work.
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the policy file is outside code: any error is a load failure
        del sys.modules[module_name]
        raise PolicyLoadError(
            f"policy file {path} failed to import: {type(exc).__name__}: {exc}"
        ) from exc
    return module


async def call_policy(policy: Policy, request: dict[str, Any]) -> Any:
    """The policy's raw result; anything it raises becomes `PolicyFailed`.

    A sync policy runs on the event loop: scripted policies are quick, and a thread hop per
    request would cost the benchmarks more than the policy itself. Make it async to wait.
    """
    try:
        result = policy(request)
        if inspect.isawaitable(result):
            result = await result
    except Exception as exc:  # the one boundary that contains the policy's failures
        logger.exception("model-server policy raised")
        raise PolicyFailed(f"the policy raised {type(exc).__name__}: {exc}") from exc
    return result
