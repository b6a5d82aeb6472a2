"""A scripted OpenAI-compatible model server: Responses and Chat Completions over real HTTP.

Answers come from a policy (a Python function from the normalised request to output items), or
from a recorded cassette, or from a real upstream while recording one. Latency, a concurrency
limit and faults (500, 429, dropped connections) can be injected; every request is logged.
"""

from ._canonical import canonical_bytes as canonical_bytes
from ._canonical import shared_prefix_len as shared_prefix_len
from ._errors import PolicyFailed as PolicyFailed
from ._errors import PolicyLoadError as PolicyLoadError
from ._errors import PortInUse as PortInUse
from ._errors import ServerOptionsError as ServerOptionsError
from ._errors import ServerStartFailed as ServerStartFailed
from ._normalise import normalise_request as normalise_request
from ._options import FaultRates as FaultRates
from ._options import ModelServerOptions as ModelServerOptions
from ._options import Policy as Policy
from ._options import parse_fault_plan as parse_fault_plan
from ._policy import load_policy as load_policy
from ._server import RunningModelServer as RunningModelServer
from ._server import serve_model_server as serve_model_server

__all__ = [
    "FaultRates",
    "ModelServerOptions",
    "Policy",
    "PolicyFailed",
    "PolicyLoadError",
    "PortInUse",
    "RunningModelServer",
    "ServerOptionsError",
    "ServerStartFailed",
    "canonical_bytes",
    "load_policy",
    "normalise_request",
    "parse_fault_plan",
    "serve_model_server",
    "shared_prefix_len",
]
