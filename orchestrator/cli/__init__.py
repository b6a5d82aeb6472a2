"""The `corral` command line: one module per subcommand, one error boundary in `_main`."""

from ._main import console as console
from ._main import main as main

__all__ = ["console", "main"]
