"""The built-in price table and the warning for a model without a price."""

from __future__ import annotations

import pytest

from corral.agents import ModelPrice, Usage
from corral.observability import DEFAULT_PRICES, missing_price, price_table
from corral.orchestrator._run import cost_of, price_for


def test_the_default_model_and_dated_snapshots_have_prices() -> None:
    table = price_table({})
    mini = price_for(table, "gpt-5.4-mini")
    assert mini is not None and mini.output_per_mtok == 4.50
    dated = price_for(table, "gpt-5-mini-2025-08-07")
    assert dated is DEFAULT_PRICES["gpt-5-mini"]
    usage = Usage(input_tokens=1_000_000, cached_input_tokens=500_000, output_tokens=1_000_000)
    assert cost_of(usage, price_for(table, "gpt-5")) == pytest.approx(0.625 + 0.0625 + 10.0)


def test_a_configured_price_wins_over_the_built_in_one() -> None:
    mine = ModelPrice(input_per_mtok=1.0, output_per_mtok=2.0)
    assert price_for(price_table({"gpt-5": mine}), "gpt-5") is mine


def test_a_model_without_a_price_is_reported_once(caplog: pytest.LogCaptureFixture) -> None:
    table = price_table({})
    assert missing_price("local-llama-unpriced", table)
    assert missing_price("local-llama-unpriced", table)
    assert not missing_price("gpt-5.4", table)
    warnings = [r.getMessage() for r in caplog.records if "has no price" in r.getMessage()]
    assert warnings == [
        "model local-llama-unpriced has no price: its cost counts as $0; "
        "add [prices.'local-llama-unpriced'] to corral's config"
    ]
