"""A MiniLM embedder class of its own, for tests that load the model afresh."""

from __future__ import annotations

from typing import ClassVar

from corral.orchestrator.services import MiniLMEmbedder
from corral.orchestrator.services._minilm import Backend, _Model


class FreshMiniLM(MiniLMEmbedder):
    """`MiniLMEmbedder` with its own table of loaded models, so a test sees a first load (and
    its failures) without disturbing the models the rest of the process shares."""

    _models: ClassVar[dict[Backend, _Model]] = {}
    _onnx_broken = False

    @classmethod
    def forget(cls) -> None:
        """No model loaded yet, and no failure recorded."""
        cls._models.clear()
        cls._onnx_broken = False
