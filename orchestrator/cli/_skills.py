"""`corral skills list` and `corral skills match TEXT`: the skills found here, and how they rank.

Skills are discovered from the working folder and the home folders, plus any `--dir` roots.
Skipped skills are reported on stderr, one line each, and never stop the command. `list` also
shows the skills whose required variables or commands are missing here, with what is missing;
`match` ranks only the usable ones, as an agent would see them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._json_out import json_text

if TYPE_CHECKING:
    from corral.orchestrator.services.skills import (
        Match,
        MatchExplanation,
        Skill,
        SkillCatalog,
        UnavailableSkill,
    )

_DESCRIPTION_WIDTH = 60
_NAME_WIDTH = 40


def add_parser(sub: Any) -> None:
    skills = sub.add_parser("skills", help="list the skills found here, or rank them for a task")
    actions = skills.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="list the skills found, by name")
    _add_common_flags(listing)
    listing.set_defaults(handler=list_skills)
    match = actions.add_parser("match", help="rank the skills for a task text, best first")
    match.add_argument("text", metavar="TEXT", help="the task to find skills for")
    match.add_argument("--limit", type=int, default=5, help="how many to show (default 5)")
    match.add_argument(
        "--explain",
        action="store_true",
        help="show why each skill ranked: each ranker's rank and each field's BM25 score",
    )
    _add_common_flags(match)
    match.set_defaults(handler=match_skills)


def _add_common_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print a JSON array")
    parser.add_argument(
        "--dir",
        dest="dirs",
        action="append",
        type=Path,
        default=[],
        metavar="DIR",
        help="also search this folder for skills (repeatable)",
    )


def list_skills(args: argparse.Namespace) -> int:
    catalog = _discover(args.dirs)
    if args.json:
        rows = [{**_skill_json(s), "available": True, "missing": []} for s in catalog]
        rows += [_unavailable_json(u) for u in catalog.unavailable]
        print(json_text(sorted(rows, key=lambda r: r["name"])))
    elif not catalog.skills and not catalog.unavailable:
        print("no skills found; add SKILL.md folders under .corral/skills or ~/.corral/skills")
    else:
        if catalog.skills:
            print(_table([(None, skill) for skill in catalog]))
        if catalog.unavailable:
            print(_unavailable_lines(catalog.unavailable))
    return 0


def _unavailable_json(unavailable: UnavailableSkill) -> dict[str, Any]:
    row = _skill_json(unavailable.skill)
    return {**row, "available": False, "missing": list(unavailable.missing)}


def _unavailable_lines(unavailable: Sequence[UnavailableSkill]) -> str:
    from ._approval import shown_lines

    lines = ["", "not offered to agents (missing where their commands run):"]
    for entry in unavailable:
        missing = ", ".join(entry.missing)
        lines.append(f"  {entry.skill.name}  missing: {missing}  {entry.skill.path}")
    return shown_lines("\n".join(lines))


def match_skills(args: argparse.Namespace) -> int:
    from corral.orchestrator.services import retrieval_embedder
    from corral.orchestrator.services.skills import EmptySkillQuery, SkillInputError, SkillMatcher

    if not args.text.strip():
        raise EmptySkillQuery('give the task to match, e.g. corral skills match "fill in a form"')
    if args.limit < 1:
        raise SkillInputError(f"--limit {args.limit}: give a number of skills of 1 or more")
    catalog = _discover(args.dirs)
    matcher = SkillMatcher(catalog, retrieval_embedder())
    if args.explain:
        print(_explained(matcher.explain(args.text, args.limit), as_json=args.json))
        return 0
    matches = matcher.match(args.text, args.limit)
    if args.json:
        print(json_text([_match_json(match) for match in matches]))
    elif not matches:
        print("no skills found to match")
    else:
        print(_table([(match.score, match.skill) for match in matches]))
    return 0


def _explained(explained: Sequence[MatchExplanation], *, as_json: bool) -> str:
    from ._approval import shown_lines
    from ._retrieval_explain import explanation_json, explanation_lines, query_lines

    if as_json:
        rows = [
            {**_match_json(e.match), "explain": explanation_json(e.query, e.why)} for e in explained
        ]
        return json_text(rows)
    if not explained:
        return "no skills found to match"
    lines = [*query_lines(explained[0].query, explained[0].why.embedding), ""]
    for rank, e in enumerate(explained, start=1):
        lines.append(f"{rank:>2}. {e.match.skill.name}  {e.match.score:.4f}  {e.match.skill.path}")
        lines.append(f"    {_shorten(e.match.skill.description, _DESCRIPTION_WIDTH * 2)}")
        lines.extend(f"    {line}" for line in explanation_lines(e.why))
    return shown_lines("\n".join(lines))


def _discover(dirs: Sequence[Path]) -> SkillCatalog:
    from corral.agents import load_config
    from corral.orchestrator.services.skills import (
        SkillsFolderMissing,
        commands_environment,
        discover_skills,
    )

    for folder in dirs:
        if not folder.is_dir():
            raise SkillsFolderMissing(f"--dir {folder}: no such folder; give one that holds skills")
    cwd = Path.cwd()
    config = load_config(cwd=cwd).config
    catalog = discover_skills(
        cwd,
        home=Path.home(),
        corral_home=config.home,
        # The config's folders too, so the listing is what agents here are offered.
        skills_dirs=[*config.skills.dirs, *(folder.resolve() for folder in dirs)],
        root_markers=config.project_root_markers,
        environment=commands_environment(config.shell_environment_policy.set),
        disabled=config.skills.disabled,
        disabled_names=config.skills.disabled_names,
    )
    from ._approval import shown_lines

    for warning in catalog.warnings:
        print(f"corral skills: warning: {shown_lines(str(warning))}", file=sys.stderr)
    return catalog


def _skill_json(skill: Skill) -> dict[str, Any]:
    return {
        "name": skill.name,
        "description": skill.description,
        "path": str(skill.path),
        "scope": skill.scope,
    }


def _match_json(match: Match) -> dict[str, Any]:
    return {**_skill_json(match.skill), "score": round(match.score, 6)}


def _table(rows: Sequence[tuple[float | None, Skill]]) -> str:
    """One line per skill; what a SKILL.md or its folder's name holds that a terminal would act
    on (escape sequences, bidi overrides) is spelled out."""
    from ._approval import shown_lines

    width = min(max(len(skill.name) for _, skill in rows), _NAME_WIDTH)
    scored = rows[0][0] is not None
    lines = [("SCORE   " if scored else "") + _row("NAME", width, "DESCRIPTION", "PATH")]
    for score, skill in rows:
        prefix = f"{score:.4f}  " if score is not None else ""
        description = _shorten(skill.description, _DESCRIPTION_WIDTH)
        lines.append(prefix + _row(skill.name, width, description, str(skill.path)))
    return shown_lines("\n".join(lines))


def _row(name: str, width: int, description: str, path: str) -> str:
    return f"{name:<{width}}  {description:<{_DESCRIPTION_WIDTH}}  {path}"


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3].rstrip() + "..."
