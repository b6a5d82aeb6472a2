"""A scripted model for the demo: it works the way a coding model would, one step per request.

The step is read off the request itself (how many tool outputs came back), so the policy is a
plain function of the request, like every policy of the scripted model server.
"""

from __future__ import annotations

import json
from typing import Any

FIX = """*** Begin Patch
*** Update File: shop.py
@@ def total(prices):
     result = 0
-    for i in range(len(prices) - 1):
-        result += prices[i]
+    for price in prices:
+        result += price
     return result
*** End Patch
"""


def fix_the_bug(request: dict[str, Any]) -> list[dict[str, Any]]:
    """Look around, read the code, plan, patch, run the tests, then report."""
    outputs = [i for i in request["input"] if i.get("type") == "function_call_output"]
    step = len(outputs)
    if step == 0:
        return [
            _call("c-list", "list_dir", {"path": "."}),
            _call("c-read", "read_file", {"path": "shop.py"}),
        ]
    if step == 2:
        plan = [
            {"step": "Fix the loop that skips the last price", "status": "in_progress"},
            {"step": "Run the tests", "status": "pending"},
        ]
        return [_call("c-plan", "update_plan", {"plan": plan})]
    if step == 3:
        return [_call("c-patch", "apply_patch", {"input": FIX})]
    if step == 4:
        return [_call("c-test", "shell", {"command": "python3 -m unittest -q"})]
    return [_say(_report(outputs[-1]["output"]))]


def _report(test_output: str) -> str:
    passed = "Exit code: 0" in test_output
    verdict = "The tests pass now." if passed else "The tests still fail; see the output above."
    return (
        "Fixed `total` in shop.py: the loop stopped one element early "
        f"(`range(len(prices) - 1)`), so the last price was never added. {verdict}"
    )


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function_call",
        "call_id": call_id,
        "name": name,
        "arguments": json.dumps(arguments),
    }


def _say(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text}],
    }
