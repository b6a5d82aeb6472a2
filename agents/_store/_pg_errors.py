"""The PostgreSQL driver's errors as the journal's: which are worth another attempt, and what
each is called in corral's error hierarchy."""

from __future__ import annotations

from ._errors import DuplicateRecord, JournalFailed, JournalUnreadable, StoreError


def retryable(exc: BaseException) -> bool:
    import psycopg
    from psycopg import errors

    if isinstance(exc, errors.SerializationFailure | errors.DeadlockDetected):
        return True
    if isinstance(exc, errors.AdminShutdown | errors.CannotConnectNow):
        return True
    # A connection error leaves no SQLSTATE; an error the server sent about the query has one.
    return isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError) and not getattr(
        exc, "sqlstate", None
    )


def first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def translate(exc: BaseException, label: str) -> StoreError:
    """The store error for a driver error on the journal `label` (already redacted)."""
    from psycopg import errors

    text = first_line(exc)
    if isinstance(exc, errors.UniqueViolation):
        return DuplicateRecord(f"a record with that id already exists in {label} ({text})")
    if isinstance(exc, errors.UndefinedTable):
        return JournalUnreadable(
            f"{label} holds no corral journal ({text}); `corral journal migrate --url URL`"
        )
    return JournalFailed(
        f"journal {label} failed ({text}); the operation was rolled back, earlier ones are kept"
    )
