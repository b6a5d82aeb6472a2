"""The offline demo: bundled issues and a sample repository, and rule-based stand-ins for models."""

from ._policy import demo_policy as demo_policy
from ._progress import DemoProgress as DemoProgress
from ._review_policy import review_the_change as review_the_change
from ._shop import write_shop_repo as write_shop_repo

__all__ = ["DemoProgress", "demo_policy", "review_the_change", "write_shop_repo"]
