"""Attacks on the journal URL's password: every spelling libpq reads a password from.

`redact_url` labels the journal in every message, log line and `corral doctor`; the
password in `user:password@` was covered, but libpq also takes it from the query string
(`?password=`, `?sslpassword=`), with the parameter's name percent-encoded or not.
"""

from __future__ import annotations

import pytest

from corral.agents._store import JournalUnreadable, Target, open_journal, redact_url

pytestmark = [pytest.mark.hostile, pytest.mark.anyio]

SECRET = "s3cr3t-pw"
LEAKY = [
    f"postgresql://corral@db.internal/corral?password={SECRET}",
    f"postgresql://corral@db.internal/corral?sslmode=require&password={SECRET}",
    f"postgresql:///corral?host=/run/postgresql&user=corral&password={SECRET}",
    f"postgresql://corral@db.internal/corral?PASSWORD={SECRET}",
    f"postgresql://corral@db.internal/corral?%70assword={SECRET}",
    f"postgresql://corral@db.internal/corral?sslpassword={SECRET}&sslkey=/k.pem",
    f"postgresql://corral:{SECRET}@db.internal/corral?password={SECRET}",
    f"postgresql://corral@db.internal/corral#password={SECRET}",
    f"postgresql://corral@db.internal/corral?password={SECRET[:3]}%2D{SECRET[4:]}",
]


@pytest.mark.parametrize("url", LEAKY)
def test_a_password_anywhere_libpq_reads_one_is_redacted(url: str) -> None:
    shown = redact_url(url)
    assert SECRET not in shown and SECRET[4:] not in shown
    assert _head(shown) == _head(url).replace(SECRET, "***")


def _head(url: str) -> str:
    """The URL before its query and fragment: scheme, user, host and database."""
    return url.split("?")[0].split("#")[0]


def test_what_is_not_a_secret_in_a_journal_url_is_kept() -> None:
    url = "postgresql://corral@db.internal:5432/corral?sslmode=require&application_name=x"
    assert redact_url(url) == url


async def test_an_unreachable_journal_named_with_a_query_password_does_not_print_it() -> None:
    target: Target = f"postgresql://corral@127.0.0.1:1/nowhere?password={SECRET}"
    with pytest.raises(JournalUnreadable) as caught:
        async with open_journal(target):
            pass
    assert SECRET not in str(caught.value)
