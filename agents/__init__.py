"""One agent: its sans-I/O core, context fragments, model adapters, journal and runner.

Imports only `tools`; `orchestrator` builds on it and `observability` plugs in through
`RunnerHooks`."""

from ._agents_md import AgentsMd as AgentsMd
from ._agents_md import AgentsMdError as AgentsMdError
from ._agents_md import load_agents_md as load_agents_md
from ._assembly import AgentsMdSettings as AgentsMdSettings
from ._assembly import AgentSpec as AgentSpec
from ._assembly import build_core as build_core
from ._assembly import build_tool_context as build_tool_context
from ._assembly import build_turn_context as build_turn_context
from ._assembly import model_settings_from_config as model_settings_from_config
from ._assembly import spec_from_config as spec_from_config
from ._compaction import DroppedItems as DroppedItems
from ._config import AgentsConfig as AgentsConfig
from ._config import BudgetConfig as BudgetConfig
from ._config import CompactionConfig as CompactionConfig
from ._config import ConfigError as ConfigError
from ._config import CorralConfig as CorralConfig
from ._config import LoadedConfig as LoadedConfig
from ._config import McpApprovalMode as McpApprovalMode
from ._config import McpServerConfig as McpServerConfig
from ._config import McpToolConfig as McpToolConfig
from ._config import MemoriesConfig as MemoriesConfig
from ._config import ModelPrice as ModelPrice
from ._config import OtelConfig as OtelConfig
from ._config import RateLimit as RateLimit
from ._config import RoleConfig as RoleConfig
from ._config import ServiceConfig as ServiceConfig
from ._config import ShellConfig as ShellConfig
from ._config import SkillsConfig as SkillsConfig
from ._config import TemporalConfig as TemporalConfig
from ._config import corral_home as corral_home
from ._config import list_trust as list_trust
from ._config import load_config as load_config
from ._config import trust_folder as trust_folder
from ._config import trust_target as trust_target
from ._config import user_config_file as user_config_file
from ._config import write_trust as write_trust
from ._core import AgentCore as AgentCore
from ._core import CoreConfig as CoreConfig
from ._core_config import Waiting as Waiting
from ._endpoint_keys import api_key_for as api_key_for
from ._environment import EnvironmentContext as EnvironmentContext
from ._environment import capture_environment as capture_environment
from ._errors import CoreStateError as CoreStateError
from ._events import INTERRUPTED_FOR_INPUT as INTERRUPTED_FOR_INPUT
from ._events import NOTE_KINDS as NOTE_KINDS
from ._events import RUN_CANCELLED as RUN_CANCELLED
from ._events import Action as Action
from ._events import AgentStatus as AgentStatus
from ._events import AwaitPreparedCompaction as AwaitPreparedCompaction
from ._events import BudgetExceeded as BudgetExceeded
from ._events import CallModel as CallModel
from ._events import Compact as Compact
from ._events import CompactionDone as CompactionDone
from ._events import CompactionFailed as CompactionFailed
from ._events import CompactionPrepared as CompactionPrepared
from ._events import CompactRequested as CompactRequested
from ._events import Event as Event
from ._events import Finish as Finish
from ._events import Interrupt as Interrupt
from ._events import ModelCompleted as ModelCompleted
from ._events import ModelFailed as ModelFailed
from ._events import ModelItem as ModelItem
from ._events import Notify as Notify
from ._events import OverBudget as OverBudget
from ._events import PrepareCompaction as PrepareCompaction
from ._events import Resume as Resume
from ._events import RunTools as RunTools
from ._events import ToolResult as ToolResult
from ._events import ToolsChanged as ToolsChanged
from ._events import TurnContext as TurnContext
from ._events import UserInput as UserInput
from ._events import WallTimeUp as WallTimeUp
from ._events import event_from_payload as event_from_payload
from ._events import event_to_payload as event_to_payload
from ._fragments import ALL_KINDS as ALL_KINDS
from ._fragments import COMPACTION_SUMMARY as COMPACTION_SUMMARY
from ._fragments import DEVELOPER_INSTRUCTIONS as DEVELOPER_INSTRUCTIONS
from ._fragments import ENVIRONMENT_CONTEXT as ENVIRONMENT_CONTEXT
from ._fragments import MEMORY_CONTEXT as MEMORY_CONTEXT
from ._fragments import MODEL_SWITCH as MODEL_SWITCH
from ._fragments import PERMISSIONS as PERMISSIONS
from ._fragments import SKILL as SKILL
from ._fragments import SKILLS_INSTRUCTIONS as SKILLS_INSTRUCTIONS
from ._fragments import SUBAGENT_CONTEXT as SUBAGENT_CONTEXT
from ._fragments import SUBAGENT_NOTIFICATION as SUBAGENT_NOTIFICATION
from ._fragments import TOOL_CALL_INTERRUPTED as TOOL_CALL_INTERRUPTED
from ._fragments import TURN_ABORTED as TURN_ABORTED
from ._fragments import USER_INSTRUCTIONS as USER_INSTRUCTIONS
from ._fragments import FragmentKind as FragmentKind
from ._fragments import fragment_kind_of as fragment_kind_of
from ._fragments import is_contextual as is_contextual
from ._fragments import model_switch_fragment as model_switch_fragment
from ._hooks import CompositeHooks as CompositeHooks
from ._hooks import RunnerHooks as RunnerHooks
from ._hooks import SafeHooks as SafeHooks
from ._host import Effects as Effects
from ._host import carry_out as carry_out
from ._instruction_cap import InstructionsTooLong as InstructionsTooLong
from ._instruction_cap import instruction_sources as instruction_sources
from ._instructions import PERSONALITIES as PERSONALITIES
from ._instructions import ROLES as ROLES
from ._instructions import base_instructions as base_instructions
from ._instructions import prompt_version as prompt_version
from ._instructions import resolve_base_instructions as resolve_base_instructions
from ._items import FunctionCall as FunctionCall
from ._items import FunctionCallOutput as FunctionCallOutput
from ._items import Item as Item
from ._items import Message as Message
from ._items import Reasoning as Reasoning
from ._items import Usage as Usage
from ._items import item_from_wire as item_from_wire
from ._lifecycle_hooks import HOOK_NOTE as HOOK_NOTE
from ._lifecycle_hooks import AgentHooks as AgentHooks
from ._lifecycle_hooks import hook_context_fragments as hook_context_fragments
from ._outputs import is_elided as is_elided
from ._outputs import journaled_result as journaled_result
from ._outputs import ledger_output as ledger_output
from ._outputs import lost_output as lost_output
from ._permissions_fragment import render_permissions as render_permissions
from ._preparations import CompactionGate as CompactionGate
from ._resume import continue_agent as continue_agent
from ._resume import replay_core as replay_core
from ._roles import ROLE_NAME as ROLE_NAME
from ._roles import check_role as check_role
from ._roles import config_role as config_role
from ._roles import role_descriptions as role_descriptions
from ._roles import role_names as role_names
from ._runner import AgentRunner as AgentRunner
from ._runner import RunnerLimits as RunnerLimits
from ._spend import AgentSpend as AgentSpend
from ._spend import SpendBreaker as SpendBreaker
from ._spend import cost_of as cost_of
from ._spend import format_cost as format_cost
from ._spend import request_overrun as request_overrun
from ._store import AgentRecord as AgentRecord
from ._store import ItemRecord as ItemRecord
from ._store import JournalEvent as JournalEvent
from ._store import LedgerEntry as LedgerEntry
from ._store import MemoryStore as MemoryStore
from ._store import RunRecord as RunRecord
from ._store import Store as Store
from ._store import StoreError as StoreError
from ._store import UnknownAgent as UnknownAgent
from ._store import UnknownRun as UnknownRun
from ._store import export_jsonl as export_jsonl
from ._store import journal_target as journal_target
from ._store import open_journal as open_journal
from ._store import open_sqlite_store as open_sqlite_store
from ._store import open_store as open_store
from ._tokens import ByteEstimator as ByteEstimator
from ._tokens import TokenCounter as TokenCounter
from .model import ModelClient as ModelClient
from .model import ModelError as ModelError
from .model import ModelRequest as ModelRequest
from .model import ModelResponse as ModelResponse
from .model import ModelSettings as ModelSettings
from .model import open_model_client as open_model_client

__all__ = [
    "ALL_KINDS",
    "COMPACTION_SUMMARY",
    "DEVELOPER_INSTRUCTIONS",
    "ENVIRONMENT_CONTEXT",
    "HOOK_NOTE",
    "INTERRUPTED_FOR_INPUT",
    "MEMORY_CONTEXT",
    "MODEL_SWITCH",
    "NOTE_KINDS",
    "PERMISSIONS",
    "PERSONALITIES",
    "ROLES",
    "ROLE_NAME",
    "RUN_CANCELLED",
    "SKILL",
    "SKILLS_INSTRUCTIONS",
    "SUBAGENT_CONTEXT",
    "SUBAGENT_NOTIFICATION",
    "TOOL_CALL_INTERRUPTED",
    "TURN_ABORTED",
    "USER_INSTRUCTIONS",
    "Action",
    "AgentCore",
    "AgentHooks",
    "AgentRecord",
    "AgentRunner",
    "AgentSpec",
    "AgentSpend",
    "AgentStatus",
    "AgentsConfig",
    "AgentsMd",
    "AgentsMdError",
    "AgentsMdSettings",
    "AwaitPreparedCompaction",
    "BudgetConfig",
    "BudgetExceeded",
    "ByteEstimator",
    "CallModel",
    "Compact",
    "CompactRequested",
    "CompactionConfig",
    "CompactionDone",
    "CompactionFailed",
    "CompactionGate",
    "CompactionPrepared",
    "CompositeHooks",
    "ConfigError",
    "CoreConfig",
    "CoreStateError",
    "CorralConfig",
    "DroppedItems",
    "Effects",
    "EnvironmentContext",
    "Event",
    "Finish",
    "FragmentKind",
    "FunctionCall",
    "FunctionCallOutput",
    "InstructionsTooLong",
    "Interrupt",
    "Item",
    "ItemRecord",
    "JournalEvent",
    "LedgerEntry",
    "LoadedConfig",
    "McpApprovalMode",
    "McpServerConfig",
    "McpToolConfig",
    "MemoriesConfig",
    "MemoryStore",
    "Message",
    "ModelClient",
    "ModelCompleted",
    "ModelError",
    "ModelFailed",
    "ModelItem",
    "ModelPrice",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "Notify",
    "OtelConfig",
    "OverBudget",
    "PrepareCompaction",
    "RateLimit",
    "Reasoning",
    "Resume",
    "RoleConfig",
    "RunRecord",
    "RunTools",
    "RunnerHooks",
    "RunnerLimits",
    "SafeHooks",
    "ServiceConfig",
    "ShellConfig",
    "SkillsConfig",
    "SpendBreaker",
    "Store",
    "StoreError",
    "TemporalConfig",
    "TokenCounter",
    "ToolResult",
    "ToolsChanged",
    "TurnContext",
    "UnknownAgent",
    "UnknownRun",
    "Usage",
    "UserInput",
    "Waiting",
    "WallTimeUp",
    "api_key_for",
    "base_instructions",
    "build_core",
    "build_tool_context",
    "build_turn_context",
    "capture_environment",
    "carry_out",
    "check_role",
    "config_role",
    "continue_agent",
    "corral_home",
    "cost_of",
    "event_from_payload",
    "event_to_payload",
    "export_jsonl",
    "format_cost",
    "fragment_kind_of",
    "hook_context_fragments",
    "instruction_sources",
    "is_contextual",
    "is_elided",
    "item_from_wire",
    "journal_target",
    "journaled_result",
    "ledger_output",
    "list_trust",
    "load_agents_md",
    "load_config",
    "lost_output",
    "model_settings_from_config",
    "model_switch_fragment",
    "open_journal",
    "open_model_client",
    "open_sqlite_store",
    "open_store",
    "prompt_version",
    "render_permissions",
    "replay_core",
    "request_overrun",
    "resolve_base_instructions",
    "role_descriptions",
    "role_names",
    "spec_from_config",
    "trust_folder",
    "trust_target",
    "user_config_file",
    "write_trust",
]
