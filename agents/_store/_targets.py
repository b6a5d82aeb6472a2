"""What names a journal: a PostgreSQL URL, `sqlite:PATH` or the path of an SQLite file."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Final

from ._errors import JournalUnreadable

if TYPE_CHECKING:
    from .._config import CorralConfig

JOURNAL_FILE: Final = "journal.sqlite"
_PG_SCHEMES: Final = ("postgresql://", "postgres://")

Target = str | Path
"""A PostgreSQL URL (str), `sqlite:PATH` (str) or the path of an SQLite journal."""


def is_postgres(target: Target) -> bool:
    return isinstance(target, str) and target.startswith(_PG_SCHEMES)


def parse_target(text: str) -> Target:
    """The journal a command-line argument names: a PostgreSQL URL, `sqlite:PATH` or a path."""
    if is_postgres(text):
        return text
    return Path(text.removeprefix("sqlite:")).expanduser()


def journal_target(config: CorralConfig) -> Target:
    """Where `config`'s journal lives: `[journal] url`, else the SQLite file in its home."""
    return config.journal.url or config.home / JOURNAL_FILE


def describe(target: Target) -> str:
    """The target for messages; a password in a URL is never shown."""
    from ._pg_schema import redact_url

    return redact_url(target) if isinstance(target, str) else str(target)


def need_driver(url: str) -> str:
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError as exc:
        raise JournalUnreadable(
            "the journal is in PostgreSQL but psycopg is not installed; "
            "pip install 'corral[postgres]'"
        ) from exc
    return url
