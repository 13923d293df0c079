"""The ``skill`` tool: one tool that loads a skill's instructions when the model asks.

Progressive disclosure, as the Agent Skills format intends: the model sees each
skill's name and description in the tool's description, and calls ``skill`` with
a name to read the instructions, the folder they are relative to, and the files
the skill ships.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from toolnexus_ref._context import ToolContext
from toolnexus_ref._naming import Source
from toolnexus_ref._result import ToolResult
from toolnexus_ref._tool import BaseTool, ToolAnnotations

from ._discover import SKILL_FILE, Skill, discover_skills

__all__ = ["SkillTool", "SkillsError", "load_skills"]

#: How many of a skill's files the tool lists.
MAX_LISTED_FILES = 20


class SkillsError(ValueError):
    """A skills folder that cannot be a source at all (missing, or no SKILL.md in it)."""


def _one_line(value: Any) -> str:
    return " ".join(str(value).split()) if value is not None else "(no description)"


def _files(skill: Skill) -> list[str]:
    listed = []
    for path in sorted(skill.folder.rglob("*")):
        if path.is_file() and path.name != SKILL_FILE:
            relative = path.relative_to(skill.folder)
            if not any(part.startswith(".") for part in relative.parts):
                listed.append(relative.as_posix())
    return listed


class SkillTool(BaseTool):
    """The skills of a folder behind one tool named ``skill`` (source ``skill``)."""

    name = "skill"
    source = Source.SKILL.value
    annotations = ToolAnnotations(
        read_only=True, destructive=False, idempotent=True, open_world=False
    )

    def __init__(self, skills: Sequence[Skill], *, folder: Path | None = None) -> None:
        self.skills = tuple(skills)
        self.folder = folder
        #: The skill each name loads; a later skill with a taken name does not replace it.
        self.by_name: dict[str, Skill] = {}
        for skill in self.skills:
            self.by_name.setdefault(skill.key, skill)
        listing = "\n".join(
            f"- {name}: {_one_line(skill.description)}" for name, skill in self.by_name.items()
        )
        self.description = (
            "Load a skill: its instructions and the files it ships. Call it when the task"
            " matches a skill below, with that skill's name.\n\nAvailable skills:\n" + listing
        )
        self.input_schema = {
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "enum": list(self.by_name),
                    "description": "The name of the skill to load",
                }
            },
            "required": ["name"],
            "additionalProperties": False,
        }

    def __repr__(self) -> str:
        return f"<SkillTool {len(self.by_name)} skills: {', '.join(self.by_name)}>"

    def conformance_extra(self) -> Mapping[str, Any]:
        """The skills themselves, for the Agent Skills checks."""
        return {"skills": self.skills, "skills_folder": self.folder}

    def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> ToolResult:
        name = args["name"]
        skill = self.by_name.get(name)
        if skill is None:  # only when validation is off; the enum refuses it otherwise
            return ToolResult.error(
                f"Unknown skill {name!r}. Available skills: {', '.join(self.by_name) or 'none'}",
                {"error_type": "UnknownSkill"},
                retryable=False,
            )
        files = _files(skill)
        lines = [
            f'<skill_content name="{name}">',
            skill.body.strip(),
            "",
            f"Base directory for this skill: {skill.folder.resolve().as_uri()}",
            "Relative paths in this skill are relative to that directory.",
        ]
        if files:
            shown = files[:MAX_LISTED_FILES]
            more = len(files) - len(shown)
            lines += ["", "<skill_files>", *(f"<file>{f}</file>" for f in shown)]
            if more > 0:
                lines.append(f"<!-- and {more} more -->")
            lines.append("</skill_files>")
        lines.append("</skill_content>")
        return ToolResult.ok("\n".join(lines), {"skill": name, "dir": str(skill.folder)})


def load_skills(folder: str | Path) -> SkillTool:
    """The ``skill`` tool for every ``SKILL.md`` under ``folder``; ``SkillsError`` if none."""
    root = Path(folder)
    if not root.is_dir():
        raise SkillsError(f"skills folder {str(root)!r} does not exist or is not a folder")
    skills = discover_skills(root)
    if not skills:
        raise SkillsError(f"no {SKILL_FILE} under {str(root)!r}: a skill is a folder holding one")
    return SkillTool(skills, folder=root)
