"""The one error of the config package: a file, environment variable or flag is invalid.

Its message names where the bad setting came from, the dotted key, what was given and what is
allowed, so the CLI can print it as is (exit code 2, no traceback).
"""

from __future__ import annotations

from corral.tools import InvalidInput


class ConfigError(InvalidInput):
    """A config file, environment variable or flag is invalid; the message says which and why."""
