"""The cap on how long an agent's instructions may be, checked before its turn is sent.

What counts is what a person or a project wrote for the agent to follow: base instructions
of their own (`base_instructions`, `model_instructions_file`), a config role's part
(`agents.roles`, without the shipped text it is added to), `developer_instructions`,
`user_instructions` and each AGENTS.md file as kept, in the order the request carries them, at
four bytes a token. Corral's own texts are not counted: its shipped base instructions, its
fragments (permissions, environment, subagent context) and the marker that says an AGENTS.md
was cut; the skills listing has its own budget. So the default cap (8,192 tokens) is exactly
the AGENTS.md budget (`project_doc_max_bytes`, 32 KiB, as in Codex): a project's AGENTS.md
that Codex would send is never refused on its own. Rendering the fragments is `_assembly`'s.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

from corral.tools._errors import InvalidInput

from ._agents_md import AgentsMd, AgentsMdPart
from ._instructions import (
    PERSONALITIES,
    ROLES,
    _packaged_families,
    fill_personality,
    personality_text,
)
from ._prompt_files import prompt_exists, read_prompt
from ._roles import role_part
from ._tokens import ByteEstimator

DEFAULT_MAX_INSTRUCTION_TOKENS = 8_192
CAP_KEY = "instructions_max_tokens"
_CUT_MARKER = "[… truncated: "
"""How `_agents_md` starts the line it adds to a file cut at the budget."""


class InstructionsTooLong(InvalidInput):
    """The instructions are over the cap; the message names the source that pushed them over."""


def instruction_sources(
    *, base: str, developer: str | None, user: str | None, agents_md: AgentsMd
) -> Iterator[tuple[str, int]]:
    """Each counted source, in request order, with its size in tokens."""
    count = ByteEstimator().count_text
    shipped = shipped_base_instructions()
    role = role_part(base, shipped) if base not in shipped else None
    if role is not None:
        yield "the role's instructions (`agents.roles`)", count(role)
    elif base not in shipped:
        yield "the base instructions", count(base)
    if developer and developer.strip():
        yield "`developer_instructions` in the config", count(developer)
    if user and user.strip():
        yield "`user_instructions` in the config", count(user)
    for part in agents_md.parts:
        yield str(part.path), count(_as_written(part))


@cache
def shipped_base_instructions() -> frozenset[str]:
    """Every base text corral ships: each family's roles, with each personality."""
    return frozenset(
        fill_personality(read_prompt("base", family, f"{role}.md"), personality_text(kind))
        for family in _packaged_families()
        for role in ROLES
        if prompt_exists("base", family, f"{role}.md")
        for kind in PERSONALITIES
    )


def _as_written(part: AgentsMdPart) -> str:
    """The file's kept text, without the marker corral adds where it cut the file."""
    if not part.truncated:
        return part.text
    kept, found, _ = part.text.rpartition(_CUT_MARKER)
    return kept.removesuffix("\n\n") if found else part.text


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
