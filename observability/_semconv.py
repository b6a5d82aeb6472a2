"""Every span name, attribute key, metric name and bucket boundary corral emits, in one place.

corral follows the GenAI semantic-convention layout of v1.37-v1.41 (`invoke_agent`, `chat`,
`execute_tool`), which backends read today; the constants are its own rather than imported from
`opentelemetry-semantic-conventions`, whose GenAI names are deprecated there.
"""

from __future__ import annotations

INSTRUMENTATION_NAME = "corral"

# -- operations and span names ---------------------------------------------------------------

OP_INVOKE_AGENT = "invoke_agent"
OP_INVOKE_WORKFLOW = "invoke_workflow"
OP_CHAT = "chat"
OP_EXECUTE_TOOL = "execute_tool"
WORKFLOW_NAME = "corral"
SPAN_FANOUT_ITEM = "corral.fanout_item"
SPAN_COMPACTION = "corral.compaction"
SPAN_RATE_LIMIT_WAIT = "corral.rate_limit.wait"
SPAN_APPROVAL_WAIT = "corral.approval.wait"
PROVIDER_OPENAI = "openai"

# -- GenAI attributes ------------------------------------------------------------------------

GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
GEN_AI_PROVIDER_NAME = "gen_ai.provider.name"
GEN_AI_REQUEST_MODEL = "gen_ai.request.model"
GEN_AI_RESPONSE_MODEL = "gen_ai.response.model"
GEN_AI_RESPONSE_ID = "gen_ai.response.id"
GEN_AI_USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS = "gen_ai.usage.cache_read.input_tokens"
GEN_AI_USAGE_REASONING_OUTPUT_TOKENS = "gen_ai.usage.reasoning.output_tokens"
GEN_AI_CONVERSATION_ID = "gen_ai.conversation.id"
GEN_AI_AGENT_ID = "gen_ai.agent.id"
GEN_AI_AGENT_NAME = "gen_ai.agent.name"
GEN_AI_WORKFLOW_NAME = "gen_ai.workflow.name"
GEN_AI_TOOL_NAME = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id"
GEN_AI_TOOL_TYPE = "gen_ai.tool.type"
GEN_AI_TOKEN_TYPE = "gen_ai.token.type"
GEN_AI_SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
GEN_AI_INPUT_MESSAGES = "gen_ai.input.messages"
GEN_AI_OUTPUT_MESSAGES = "gen_ai.output.messages"
GEN_AI_TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
GEN_AI_TOOL_CALL_RESULT = "gen_ai.tool.call.result"
ERROR_TYPE = "error.type"
ERROR_TOOL = "tool_error"
ERROR_INTERRUPTED = "interrupted"

# -- corral's own attributes -----------------------------------------------------------------

CORRAL_RUN_ID = "corral.run.id"
CORRAL_ITEM_INDEX = "corral.item.index"
CORRAL_DEPTH = "corral.agent.depth"
CORRAL_PARENT_AGENT = "corral.agent.parent_id"
CORRAL_TURN = "corral.agent.turn"
CORRAL_STATUS = "corral.agent.status"
CORRAL_PROMPT_VERSION = "corral.prompt.version"
"""`sha256:` and the digest of the request's base instructions (`prompt_version`)."""
CORRAL_RETRIES = "corral.model.retry_count"
CORRAL_COST = "corral.cost_usd"
CORRAL_DROPPED_ITEMS = "corral.compaction.dropped_items"
CORRAL_NETWORK_DENIED = "corral.network.denied"
"""On a tool span: the connections corral's network proxy refused (`host: reason`)."""
CORRAL_NETWORK_DENIED_COUNT = "corral.network.denied_count"
SPAN_HOOK = "hook"
CORRAL_HOOK_EVENT = "corral.hook.event"
CORRAL_HOOK_COMMAND = "corral.hook.command"
CORRAL_HOOK_DECISION = "corral.hook.decision"
CORRAL_HOOK_EXIT_CODE = "corral.hook.exit_code"
CORRAL_ENDPOINT = "corral.rate_limit.endpoint"
CORRAL_WAIT_SECONDS = "corral.wait.seconds"
CORRAL_APPROVAL_KIND = "corral.approval.kind"
CORRAL_APPROVAL_APPROVED = "corral.approval.approved"
# Per-turn totals on `invoke_agent` spans: not `gen_ai.usage.*`, so no backend adds them to the
# `chat` spans they sum.
CORRAL_TOTAL_INPUT_TOKENS = "corral.agent.total.input_tokens"
CORRAL_TOTAL_OUTPUT_TOKENS = "corral.agent.total.output_tokens"
CORRAL_TOTAL_CACHED_TOKENS = "corral.agent.total.cached_input_tokens"
CORRAL_TOTAL_COST = "corral.agent.total.cost_usd"
CORRAL_TOTAL_MODEL_CALLS = "corral.agent.total.model_calls"
CORRAL_TOTAL_TOOL_CALLS = "corral.agent.total.tool_calls"

# -- metrics ---------------------------------------------------------------------------------

METRIC_OPERATION_DURATION = "gen_ai.client.operation.duration"
METRIC_TOKEN_USAGE = "gen_ai.client.token.usage"
METRIC_AGENT_DURATION = "gen_ai.invoke_agent.duration"
METRIC_TOOL_DURATION = "gen_ai.execute_tool.duration"
METRIC_COST = "corral.cost"
METRIC_RATE_LIMIT_WAIT = "corral.rate_limit.wait.duration"
METRIC_QUEUE_WAIT = "corral.queue.wait.duration"
DURATION_BUCKETS = (
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
)  # fmt: skip
TOKEN_BUCKETS = (
    1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
)  # fmt: skip
AGENT_DURATION_BUCKETS = tuple(0.1 * 2**i for i in range(13))
