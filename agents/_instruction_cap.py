"""The cap on how long an agent's instructions may be, checked before its turn is sent.

What counts is what a person or a project wrote for the agent to follow: the base
instructions (the request's `instructions`), `developer_instructions`, `user_instructions` and
each AGENTS.md file, in the order the request carries them, at four bytes a token. Corral's own
fragments (permissions, environment, subagent context) are not counted, and the skills listing
has its own budget. Rendering the fragments is left to `_assembly`.
"""

from __future__ import annotations

from collections.abc import Iterator

from corral.tools._errors import InvalidInput

from ._agents_md import AgentsMd
from ._tokens import ByteEstimator

DEFAULT_MAX_INSTRUCTION_TOKENS = 8_192
CAP_KEY = "instructions_max_tokens"


class InstructionsTooLong(InvalidInput):
    """The instructions are over the cap; the message names the source that pushed them over."""


def instruction_sources(
    *, base: str, developer: str | None, user: str | None, agents_md: AgentsMd
) -> Iterator[tuple[str, int]]:
    """Each counted source, in request order, with its size in tokens."""
    count = ByteEstimator().count_text
    yield "the base instructions", count(base)
    if developer and developer.strip():
        yield "`developer_instructions` in the config", count(developer)
    if user and user.strip():
        yield "`user_instructions` in the config", count(user)
    for part in agents_md.parts:
        yield str(part.path), count(part.text)


def check_instruction_cap(
    cap: int, *, base: str, developer: str | None, user: str | None, agents_md: AgentsMd
) -> None:
    """Raise `InstructionsTooLong` when the sources together are over `cap` tokens."""
    sources = list(
        instruction_sources(base=base, developer=developer, user=user, agents_md=agents_md)
    )
    total = sum(size for _, size in sources)
    if total <= cap:
        return
    running = 0
    for name, size in sources:
        running += size
        if running > cap:
            raise InstructionsTooLong(
                f"the agent's instructions come to {total:,} tokens, over the {cap:,}-token cap "
                f"(`{CAP_KEY}`); {name} ({size:,} tokens) took them past it: shorten it, put "
                f"what does not apply here in `@if` blocks, or raise `{CAP_KEY}`"
            )
