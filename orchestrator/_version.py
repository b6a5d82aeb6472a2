"""The installed distribution's version, as `corral --version` and `corral.__version__` say it."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

DISTRIBUTION = "corral"


def corral_version() -> str:
    """The version of the installed `corral` distribution ("0+unknown" when run uninstalled)."""
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "0+unknown"
