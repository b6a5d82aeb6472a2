"""The prose of a SKILL.md: what its author wrote for people, without the header and the code.

Skill matching reads a skill's body as a third BM25 field: the sections say in many more words
than the one-paragraph description what the skill covers (the scikit-learn skill's
description says "clustering"; only its body names k-means and DBSCAN), so a request in a
field's own vocabulary finds it. Fenced code is left out: its identifiers (`X_train`,
`npm install`) name no task and, in a field this long, would match requests on words like
`install` or `test` alone.
"""

from __future__ import annotations

from ._parse import split_frontmatter

# What of the prose is read: past this, a skill is indexed by its first 20,000 characters.
# Eight of the 145 real skills are longer; a hostile one cannot stuff in a megabyte of words to
# rank for everything, nor make every index build read it.
MAX_PROSE_CHARS = 20_000
_CODE_FENCES = ("```", "~~~")


def skill_prose(content: str) -> str:
    """`content` without its frontmatter and without its fenced code blocks, cut to
    `MAX_PROSE_CHARS`.

    A code fence that is never closed runs to the end of the file, as Markdown reads it. Works
    line by line, so a hostile file costs time in proportion to its length.
    """
    parts = split_frontmatter(content)
    lines = (parts[1] if parts is not None else content).splitlines()
    kept: list[str] = []
    size = 0
    fence = ""
    for line in lines:
        if size > MAX_PROSE_CHARS:
            break
        stripped = line.lstrip()
        if fence:
            if stripped.startswith(fence) and not stripped[len(fence) :].strip(fence[0]).strip():
                fence = ""
            continue
        opening = next((f for f in _CODE_FENCES if stripped.startswith(f)), "")
        if opening:
            fence = stripped[: len(stripped) - len(stripped.lstrip(opening[0]))]
            continue
        kept.append(line)
        size += len(line) + 1
    return "\n".join(kept)[:MAX_PROSE_CHARS]
