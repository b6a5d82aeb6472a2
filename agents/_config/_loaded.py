"""The effective configuration with where each of its keys came from."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ._model import CorralConfig
from ._schema_keys import field_names
from ._sources import ConfigLayer, Key, parse_key
from ._trust import ProjectVerdict

DEFAULT_ORIGIN = "default"


@dataclass(frozen=True)
class LoadedConfig:
    """The effective config, the layers it came from, and which layer last set each key."""

    config: CorralConfig
    layers: tuple[ConfigLayer, ...]
    key_layers: Mapping[Key, int]
    """Index into `layers` of the layer that last set each key (tables included)."""
    project: ProjectVerdict | None = None
    """The project file's trust verdict; None when no project file applies."""

    def origin(self, dotted_key: str) -> str:
        """Where a key's value came from: "default", a file path, "env NAME" or "flag ...".

        Raises `KeyError` for a key that is not in the config's schema.
        """
        key = parse_key(dotted_key, "origin")
        names = field_names(key[:-1])
        if names is not None and key[-1] not in names:
            raise KeyError(dotted_key)
        index = self.key_layers.get(key)
        return DEFAULT_ORIGIN if index is None else self.layers[index].label(key)
