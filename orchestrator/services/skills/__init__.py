"""Skills: SKILL.md folders found on disk, validated, mentioned by `$name`, matched to tasks.

`discover_skills` builds a `SkillCatalog` from corral's, Codex's and Claude Code's skills
folders; broken skills become warnings on it. `mentioned_skills` and `render_skill` turn `$name`
mentions into `<skill>` fragments, and `SkillMatcher` ranks skills for a task and renders the
budgeted listing a worker sees. A skill whose required variables or commands are missing is
kept apart (`SkillCatalog.unavailable`): listed for people, never offered to a model. The
matcher (BM25 and NumPy) is imported on first use: a run that finds no skills never loads it.
"""

from typing import TYPE_CHECKING

from corral._lazy import lazy_exports

from ._discover import HOME_FOLDERS as HOME_FOLDERS
from ._discover import PROJECT_FOLDERS as PROJECT_FOLDERS
from ._discover import SkillRoot as SkillRoot
from ._discover import commands_environment as commands_environment
from ._discover import discover_skills as discover_skills
from ._discover import load_skills as load_skills
from ._discover import skill_roots as skill_roots
from ._errors import EmptySkillQuery as EmptySkillQuery
from ._errors import SkillInputError as SkillInputError
from ._errors import SkillsFolderMissing as SkillsFolderMissing
from ._listing import estimate_tokens as estimate_tokens
from ._listing import render_listing as render_listing
from ._listing import skills_budget as skills_budget
from ._mentions import mentioned_skills as mentioned_skills
from ._mentions import render_skill as render_skill
from ._model import MAX_DESCRIPTION_CHARS as MAX_DESCRIPTION_CHARS
from ._model import MAX_NAME_CHARS as MAX_NAME_CHARS
from ._model import Skill as Skill
from ._model import SkillCatalog as SkillCatalog
from ._model import SkillFrontmatter as SkillFrontmatter
from ._model import SkillWarning as SkillWarning
from ._model import UnavailableSkill as UnavailableSkill
from ._parse import SKILL_FILE as SKILL_FILE
from ._parse import parse_skill_file as parse_skill_file
from ._requirements import Requirements as Requirements

if TYPE_CHECKING:
    from ._match import Match as Match
    from ._match import MatchExplanation as MatchExplanation
    from ._match import MatchMethod as MatchMethod
    from ._match import SkillMatcher as SkillMatcher
else:
    __getattr__ = lazy_exports(
        __name__,
        {name: "._match" for name in ("Match", "MatchExplanation", "MatchMethod", "SkillMatcher")},
    )

__all__ = [
    "HOME_FOLDERS",
    "MAX_DESCRIPTION_CHARS",
    "MAX_NAME_CHARS",
    "PROJECT_FOLDERS",
    "SKILL_FILE",
    "EmptySkillQuery",
    "Match",
    "MatchExplanation",
    "MatchMethod",
    "Requirements",
    "Skill",
    "SkillCatalog",
    "SkillFrontmatter",
    "SkillInputError",
    "SkillMatcher",
    "SkillRoot",
    "SkillWarning",
    "SkillsFolderMissing",
    "UnavailableSkill",
    "commands_environment",
    "discover_skills",
    "estimate_tokens",
    "load_skills",
    "mentioned_skills",
    "parse_skill_file",
    "render_listing",
    "render_skill",
    "skill_roots",
    "skills_budget",
]
