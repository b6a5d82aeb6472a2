from collections.abc import Iterator

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """One throwaway PostgreSQL for the session (see tests/_postgres.py), stopped at its end."""
    from tests._postgres import throwaway_server

    with throwaway_server() as url:
        yield url


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """A fresh, empty database of its own for this test on the session's PostgreSQL."""
    from tests._postgres import fresh_database

    with fresh_database(postgres_server) as url:
        yield url
