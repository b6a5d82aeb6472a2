"""The offline demo: a small project with a bug, and a scripted model that fixes it."""

from ._policy import fix_the_bug as fix_the_bug
from ._workspace import BUGGY_SOURCE as BUGGY_SOURCE
from ._workspace import write_demo_project as write_demo_project

__all__ = ["BUGGY_SOURCE", "fix_the_bug", "write_demo_project"]
