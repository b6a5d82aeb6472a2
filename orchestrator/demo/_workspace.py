"""The demo project: one module with an off-by-one bug and the test that catches it."""

from __future__ import annotations

from pathlib import Path

BUGGY_SOURCE = '''\
def total(prices):
    """Sum a list of prices."""
    result = 0
    for i in range(len(prices) - 1):
        result += prices[i]
    return result
'''

TEST_SOURCE = """\
import unittest

from shop import total


class TotalTest(unittest.TestCase):
    def test_sums_every_price(self):
        self.assertEqual(total([1, 2, 3]), 6)


if __name__ == "__main__":
    unittest.main()
"""

AGENTS_MD = "Run `python3 -m unittest -q` after every change; keep diffs small.\n"


def write_demo_project(root: Path) -> Path:
    """Write the project into `root` (created if needed) and return it."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "shop.py").write_text(BUGGY_SOURCE)
    (root / "test_shop.py").write_text(TEST_SOURCE)
    (root / "AGENTS.md").write_text(AGENTS_MD)
    return root
