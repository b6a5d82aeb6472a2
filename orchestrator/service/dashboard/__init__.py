"""The run dashboard `corral serve` shows at `/`: pages, sign-in, the run list's data, and the
static HTML, CSS and JavaScript it ships as package data.
"""

from ._pages import dashboard_paths as dashboard_paths
from ._pages import dashboard_routes as dashboard_routes
from ._runs_list import RunList as RunList

__all__ = ["RunList", "dashboard_paths", "dashboard_routes"]
