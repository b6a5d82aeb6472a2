"""A resumed agent that carries on with another model (`corral resume --model`).

As Codex does, the request's `instructions` stay as the agent started with them (the cached
prefix stays valid), and a marked `<model_switch>` developer fragment tells the model what
changed and gives the new model family's base instructions. The fragment goes through the
journal, so a replay shows it once; the agent's record is rewritten with the new model, so the
next resume carries on with it and says nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass

from corral.agents import (
    ROLES,
    AgentSpec,
    CorralConfig,
    Notify,
    Store,
    model_switch_fragment,
    resolve_base_instructions,
)
from corral.tools import InvalidInput

from .._run import AgentHandle


@dataclass(frozen=True)
class ModelSwitch:
    """One agent's switch: its spec on the new model, and what the model is told."""

    spec: AgentSpec
    previous: str
    instructions: str

    @classmethod
    def of(cls, spec: AgentSpec, model: str | None, config: CorralConfig) -> ModelSwitch | None:
        """The switch of `spec` to `model`; None when no model is asked or it is the same."""
        if model is not None and not model.strip():
            raise InvalidInput("the model name is empty; name the model to carry on with")
        if model is None or model == spec.model.model:
            return None
        roles = config.agents.roles
        # A role the config no longer has keeps the instructions journaled with it.
        gone = spec.role not in ROLES and spec.role not in roles
        instructions = resolve_base_instructions(
            override=None if gone else config.base_instructions,
            journaled=spec.instructions if gone else None,
            model=model,
            role=spec.role,
            personality=config.personality,
            roles=None if gone else roles,
        )
        moved = spec.model_copy(update={"model": spec.model.model_copy(update={"model": model})})
        return cls(spec=moved, previous=spec.model.model, instructions=instructions)

    async def tell(self, handle: AgentHandle, task: str, store: Store) -> None:
        """Journal the fragment for the agent's next request and keep the new model."""
        text = model_switch_fragment(self.previous, self.spec.model.model, self.instructions)
        await handle.runner.feed(Notify(text=text, role="developer"))
        config = {**self.spec.to_journal(), "task": task}
        await store.update_agent(self.spec.agent_id, config=config)
