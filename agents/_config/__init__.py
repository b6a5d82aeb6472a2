"""corral's configuration: built-in defaults, `$CORRAL_HOME/config.toml`, the project's
`.corral/config.toml`, `CORRAL_*` environment variables and flags, merged in that order.

Key names follow Codex's `config.toml` where Codex has them; Codex keys corral does not use are
skipped with one warning per file, and other unknown keys are errors. A project
file widens power (sandbox, MCP servers, endpoints, ...) only in a project the user trusted.
"""

from ._errors import ConfigError as ConfigError
from ._load import load_config as load_config
from ._loaded import LoadedConfig as LoadedConfig
from ._model import AgentsConfig as AgentsConfig
from ._model import BudgetConfig as BudgetConfig
from ._model import CompactionConfig as CompactionConfig
from ._model import CorralConfig as CorralConfig
from ._model import McpApprovalMode as McpApprovalMode
from ._model import McpServerConfig as McpServerConfig
from ._model import McpToolConfig as McpToolConfig
from ._model import MemoriesConfig as MemoriesConfig
from ._model import ModelPrice as ModelPrice
from ._model import ModelProviderConfig as ModelProviderConfig
from ._model import OtelConfig as OtelConfig
from ._model import ProjectTrust as ProjectTrust
from ._model import RateLimit as RateLimit
from ._model import RoleConfig as RoleConfig
from ._model import ServiceConfig as ServiceConfig
from ._model import ShellConfig as ShellConfig
from ._model import ShellEnvironmentPolicy as ShellEnvironmentPolicy
from ._model import SkillsConfig as SkillsConfig
from ._model import SkillToggle as SkillToggle
from ._model import TemporalConfig as TemporalConfig
from ._sources import ConfigLayer as ConfigLayer
from ._sources import corral_home as corral_home
from ._trust import SAFE_KEYS as SAFE_KEYS
from ._trust import WIDENING_KEYS as WIDENING_KEYS
from ._trust import ProjectVerdict as ProjectVerdict
from ._trust_file import TrustListing as TrustListing
from ._trust_file import TrustTarget as TrustTarget
from ._trust_file import list_trust as list_trust
from ._trust_file import trust_folder as trust_folder
from ._trust_file import trust_target as trust_target
from ._trust_file import user_config_file as user_config_file
from ._trust_file import write_trust as write_trust

__all__ = [
    "SAFE_KEYS",
    "WIDENING_KEYS",
    "AgentsConfig",
    "BudgetConfig",
    "CompactionConfig",
    "ConfigError",
    "ConfigLayer",
    "CorralConfig",
    "LoadedConfig",
    "McpApprovalMode",
    "McpServerConfig",
    "McpToolConfig",
    "MemoriesConfig",
    "ModelPrice",
    "ModelProviderConfig",
    "OtelConfig",
    "ProjectTrust",
    "ProjectVerdict",
    "RateLimit",
    "RoleConfig",
    "ServiceConfig",
    "ShellConfig",
    "ShellEnvironmentPolicy",
    "SkillToggle",
    "SkillsConfig",
    "TemporalConfig",
    "TrustListing",
    "TrustTarget",
    "corral_home",
    "list_trust",
    "load_config",
    "trust_folder",
    "trust_target",
    "user_config_file",
    "write_trust",
]
