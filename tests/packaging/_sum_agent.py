"""Run as a script by the packaging tests: one agent with the caller's own function tool,
against corral's scripted model server, through nothing but `corral`'s public face."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio

import corral


def policy(request: dict[str, Any]) -> list[dict[str, Any]]:
    """Call `add` once, then answer with what it returned."""
    outputs = [item for item in request["input"] if item.get("type") == "function_call_output"]
    if outputs:
        text = f"the sum is {outputs[-1]['output']}"
        return [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text}],
            }
        ]
    return [{"type": "function_call", "name": "add", "arguments": json.dumps({"a": 2, "b": 3})}]


def add(a: int, b: int) -> int:
    """Adds two whole numbers."""
    return a + b


async def main() -> None:
    async with corral.serve_model_server(policy) as server:
        env = {**os.environ, "CORRAL_BASE_URL": server.base_url}
        outcomes = await corral.run_agents(["add 2 and 3", "add them again"], tools=[add], env=env)
    print(json.dumps([outcome.finish.message for outcome in outcomes]))


if __name__ == "__main__":
    anyio.run(main)
    sys.exit(0)
