"""corral's configuration: built-in defaults, `$CORRAL_HOME/config.toml`, the project's
`.corral/config.toml`, `CORRAL_*` environment variables and flags, merged in that order.

Key names follow Codex's `config.toml` where Codex has them; unknown keys are errors.
"""

from ._errors import ConfigError as ConfigError
from ._load import LoadedConfig as LoadedConfig
from ._load import load_config as load_config
from ._model import AgentsConfig as AgentsConfig
from ._model import BudgetConfig as BudgetConfig
from ._model import CompactionConfig as CompactionConfig
from ._model import CorralConfig as CorralConfig
from ._model import McpServerConfig as McpServerConfig
from ._model import ModelPrice as ModelPrice
from ._model import OtelConfig as OtelConfig
from ._model import RateLimit as RateLimit
from ._model import RoleConfig as RoleConfig
from ._model import ServiceConfig as ServiceConfig
from ._model import ShellConfig as ShellConfig
from ._model import SkillsConfig as SkillsConfig
from ._model import TemporalConfig as TemporalConfig
from ._sources import ConfigLayer as ConfigLayer
from ._sources import corral_home as corral_home

__all__ = [
    "AgentsConfig",
    "BudgetConfig",
    "CompactionConfig",
    "ConfigError",
    "ConfigLayer",
    "CorralConfig",
    "LoadedConfig",
    "McpServerConfig",
    "ModelPrice",
    "OtelConfig",
    "RateLimit",
    "RoleConfig",
    "ServiceConfig",
    "ShellConfig",
    "SkillsConfig",
    "TemporalConfig",
    "corral_home",
    "load_config",
]
