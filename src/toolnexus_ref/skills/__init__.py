"""Agent skills: folders holding a ``SKILL.md``, offered to a model through one ``skill`` tool.

``load_skills(folder)`` discovers every ``SKILL.md`` under ``folder`` (YAML front
matter with ``name`` and ``description``, then Markdown instructions) and returns
the ``skill`` tool; ``discover_skills`` gives the parsed skills themselves.
"""

from __future__ import annotations

from ._discover import SKILL_FILE, Skill, discover_skills, parse_skill_file
from ._tool import SkillsError, SkillTool, load_skills

__all__ = [
    "SKILL_FILE",
    "Skill",
    "SkillTool",
    "SkillsError",
    "discover_skills",
    "load_skills",
    "parse_skill_file",
]
