"""The errors of the Temporal executor and worker, under corral's roots::

    CorralError
    ├── InvalidInput
    │   └── TemporalSetupError      a Temporal binary or setting is missing: says what to install
    └── OperationFailed
        ├── TemporalUnavailable     the server cannot be reached at the address given
        ├── TemporalRunFailed       the run's workflow failed or was cancelled on the server
        └── PayloadBlobError        a payload sent by reference is missing from the blob store

Third-party errors (the SDK's `RuntimeError`s, `WorkflowFailureError`) are translated once, where
the executor or the worker talks to the server.
"""

from __future__ import annotations

from corral.tools import InvalidInput, OperationFailed


class TemporalSetupError(InvalidInput):
    """Something needed to use Temporal is not installed or not set."""


class TemporalUnavailable(OperationFailed):
    """No Temporal server answered at the address; nothing was started there."""


class TemporalRunFailed(OperationFailed):
    """The run's workflow ended without an outcome (failed, cancelled or terminated)."""


class PayloadBlobError(OperationFailed):
    """A payload that travelled by reference cannot be read back: its blob is missing or
    corrupt, or the reference is malformed."""
