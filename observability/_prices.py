"""The built-in price table: current OpenAI models in USD per million tokens.

Configured `[prices."MODEL"]` entries take precedence; a model found in neither is reported once
(`missing_price`), so a cost of $0 is never silently mistaken for a free run.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from corral.agents import ModelPrice

logger = logging.getLogger(__name__)


def _p(input_: float, cached: float, output: float) -> ModelPrice:
    return ModelPrice(input_per_mtok=input_, cached_input_per_mtok=cached, output_per_mtok=output)


DEFAULT_PRICES: Mapping[str, ModelPrice] = {
    "gpt-5.4": _p(2.50, 0.25, 15.00),
    "gpt-5.4-mini": _p(0.75, 0.075, 4.50),
    "gpt-5.4-nano": _p(0.20, 0.02, 1.25),
    "gpt-5.3-codex": _p(1.75, 0.175, 14.00),
    "gpt-5.2": _p(1.75, 0.175, 14.00),
    "gpt-5.2-codex": _p(1.75, 0.175, 14.00),
    "gpt-5.1": _p(1.25, 0.125, 10.00),
    "gpt-5": _p(1.25, 0.125, 10.00),
    "gpt-5-mini": _p(0.25, 0.025, 2.00),
    "gpt-5-nano": _p(0.05, 0.005, 0.40),
    "gpt-4.1": _p(2.00, 0.50, 8.00),
    "gpt-4.1-mini": _p(0.40, 0.10, 1.60),
    "gpt-4.1-nano": _p(0.10, 0.025, 0.40),
    "gpt-4o": _p(2.50, 1.25, 10.00),
    "gpt-4o-mini": _p(0.15, 0.075, 0.60),
    "o3": _p(2.00, 0.50, 8.00),
    "o4-mini": _p(1.10, 0.275, 4.40),
}
_reported: set[str] = set()


def price_table(configured: Mapping[str, ModelPrice]) -> dict[str, ModelPrice]:
    """The built-in prices overlaid with the configured ones (config wins per model)."""
    return {**DEFAULT_PRICES, **configured}


def missing_price(model: str, table: Mapping[str, ModelPrice]) -> bool:
    """Whether `model` has no price (exact or by prefix); warns once per model per process."""
    if model in table or any(model.startswith(name) for name in table):
        return False
    if model not in _reported:
        _reported.add(model)
        logger.warning(
            "model %s has no price: its cost counts as $0; add [prices.%r] to corral's config",
            model,
            model,
        )
    return True
