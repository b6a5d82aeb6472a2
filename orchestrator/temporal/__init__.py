"""Scale-out on Temporal: runs as workflows, worker agents as child workflows, I/O as activities.

`TemporalExecutor` starts a fan-out or an exec run (a supervisor and the workers it spawns) on
a Temporal server and waits for it; `answer_approval` answers an agent's pending approval (an
update on its workflow); `run_worker` is one
`corral worker` process hosting the workflows and activities, with tool activities pinned to its
own host queue. The agent core is the same `AgentCore` the local runner drives. Payloads of
`[temporal] payload_threshold_bytes` or more travel by reference (`BlobReferenceCodec`), and
`CorralTracingInterceptor` continues a run's trace through its workflows and activities.
Importing this package needs the optional `corral[temporal]` extra (`temporalio`).
"""

from ._activities import CorralActivities as CorralActivities
from ._agent_workflow import AgentWorkflow as AgentWorkflow
from ._agent_workflow import RunWorkflow as RunWorkflow
from ._approvals import ApprovalRejected as ApprovalRejected
from ._approvals import answer_approval as answer_approval
from ._approvals import pending_approvals as pending_approvals
from ._binaries import dev_server_path as dev_server_path
from ._binaries import test_server_path as test_server_path
from ._blobs import BlobStore as BlobStore
from ._blobs import FileBlobStore as FileBlobStore
from ._blobs import MemoryBlobStore as MemoryBlobStore
from ._blobs import run_of_workflow as run_of_workflow
from ._blobs_postgres import PostgresBlobStore as PostgresBlobStore
from ._codec import DEFAULT_PAYLOAD_THRESHOLD as DEFAULT_PAYLOAD_THRESHOLD
from ._codec import BlobReferenceCodec as BlobReferenceCodec
from ._connect import CONNECT_TIMEOUT as CONNECT_TIMEOUT
from ._connect import TemporalSettings as TemporalSettings
from ._connect import connect as connect
from ._connect import data_converter as data_converter
from ._errors import PayloadBlobError as PayloadBlobError
from ._errors import TemporalRunFailed as TemporalRunFailed
from ._errors import TemporalSetupError as TemporalSetupError
from ._errors import TemporalUnavailable as TemporalUnavailable
from ._executor import TemporalExecutor as TemporalExecutor
from ._executor import TemporalOutcome as TemporalOutcome
from ._executor import policy_from_config as policy_from_config
from ._tracing import CorralTracingInterceptor as CorralTracingInterceptor
from ._tracing import run_span as run_span
from ._wire import SHARED_QUEUE as SHARED_QUEUE
from ._wire import ActivityPolicy as ActivityPolicy
from ._wire import AgentOutput as AgentOutput
from ._wire import ApprovalAnswer as ApprovalAnswer
from ._wire import ApprovalAsk as ApprovalAsk
from ._wire import ExecOutput as ExecOutput
from ._wire import ItemResult as ItemResult
from ._wire import agent_workflow_id as agent_workflow_id
from ._wire import host_queue as host_queue
from ._worker import WorkerSettings as WorkerSettings
from ._worker import run_worker as run_worker
from ._worker import workflow_runner as workflow_runner
from ._workflows import FanoutWorkflow as FanoutWorkflow
from ._workflows import ItemWorkflow as ItemWorkflow

__all__ = [
    "CONNECT_TIMEOUT",
    "DEFAULT_PAYLOAD_THRESHOLD",
    "SHARED_QUEUE",
    "ActivityPolicy",
    "AgentOutput",
    "AgentWorkflow",
    "ApprovalAnswer",
    "ApprovalAsk",
    "ApprovalRejected",
    "BlobReferenceCodec",
    "BlobStore",
    "CorralActivities",
    "CorralTracingInterceptor",
    "ExecOutput",
    "FanoutWorkflow",
    "FileBlobStore",
    "ItemResult",
    "ItemWorkflow",
    "MemoryBlobStore",
    "PayloadBlobError",
    "PostgresBlobStore",
    "RunWorkflow",
    "TemporalExecutor",
    "TemporalOutcome",
    "TemporalRunFailed",
    "TemporalSettings",
    "TemporalSetupError",
    "TemporalUnavailable",
    "WorkerSettings",
    "agent_workflow_id",
    "answer_approval",
    "connect",
    "data_converter",
    "dev_server_path",
    "host_queue",
    "pending_approvals",
    "policy_from_config",
    "run_of_workflow",
    "run_span",
    "run_worker",
    "test_server_path",
    "workflow_runner",
]
