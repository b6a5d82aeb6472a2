"""corral's network proxy, the only way out of a sandbox whose network is restricted by domain.

`NetworkProxy` decides and relays (CONNECT and plain HTTP); `open_proxy_gate` serves it for one
confined command and says how the sandbox reaches it. The domain patterns are `_domains`'.
"""

from ._gate import PROXY_ENV as PROXY_ENV
from ._gate import PROXY_MOUNT as PROXY_MOUNT
from ._gate import ProxyGate as ProxyGate
from ._gate import open_proxy_gate as open_proxy_gate
from ._proxy import NetworkProxy as NetworkProxy
from ._proxy import Resolver as Resolver
from ._proxy import system_resolver as system_resolver

__all__ = [
    "PROXY_ENV",
    "PROXY_MOUNT",
    "NetworkProxy",
    "ProxyGate",
    "Resolver",
    "open_proxy_gate",
    "system_resolver",
]
