"""Attacks on the run list's paging parameters: whatever `limit=` and `after=` hold, the
caller gets the 422 that says what to send (never a 500), and an error never echoes a huge
value back."""

from __future__ import annotations

from typing import Any

import pytest

from corral.orchestrator.service._paging import MAX_LIMIT, BadPage, page_of

pytestmark = pytest.mark.hostile

RUNS: list[dict[str, Any]] = [{"id": f"run-{n}", "created_at": n} for n in range(3)]

ODD_LIMITS = {
    "superscript-two": "²",
    "circled-one": "①",
    "kharosthi-digit": "\U00010a40",
    "fullwidth-ten": "\uff11\uff10",
    "arabic-indic-five": "\u0665",
    "past-int-conversion": "9" * 5000,
    "zeros-then-one": "0" * 5000 + "1",
}


@pytest.mark.parametrize("limit", ODD_LIMITS.values(), ids=ODD_LIMITS.keys())
def test_a_limit_that_is_not_plain_ascii_digits_is_the_callers_mistake(limit: str) -> None:
    with pytest.raises(BadPage) as refused:
        page_of(RUNS, {"limit": limit})
    message = str(refused.value)
    assert f"whole number from 1 to {MAX_LIMIT}" in message
    assert len(message) < 200


@pytest.mark.parametrize("after", ["x" * 100_000, "run-0" + "\n" * 5000])
def test_an_unknown_after_is_refused_without_echoing_all_of_it(after: str) -> None:
    with pytest.raises(BadPage) as refused:
        page_of(RUNS, {"after": after})
    assert "is no run in this list" in str(refused.value)
    assert len(str(refused.value)) < 200
