"""Finding skills: every ``SKILL.md`` under a folder, its YAML front matter and its body.

Discovery never raises for one bad skill: a file without front matter, with YAML
that does not parse, or with front matter that is not a mapping is still listed,
with the problem recorded, so the checks can say which file is wrong and why.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["SKILL_FILE", "Skill", "discover_skills", "parse_skill_file"]

SKILL_FILE = "SKILL.md"
#: ``---`` on the first line, the YAML, then ``---`` on a line of its own.
_FRONT_MATTER = re.compile(
    r"\A\ufeff?---[ \t]*\r?\n(.*?)(?:\r?\n)?^---[ \t]*(?:\r?\n|\Z)", re.S | re.M
)


@dataclass(frozen=True, slots=True)
class Skill:
    """One ``SKILL.md``: where it is, what its front matter says, and its instructions."""

    #: The folder holding ``SKILL.md`` (a skill is that folder).
    folder: Path
    #: ``name`` from the front matter, as written (may be missing or not a string).
    name: Any
    description: Any
    body: str
    front_matter: Mapping[str, Any] = field(default_factory=dict)
    #: Why the front matter could not be read, or ``None`` when it was.
    front_matter_problem: str | None = None

    @property
    def path(self) -> Path:
        return self.folder / SKILL_FILE

    @property
    def key(self) -> str:
        """The name the ``skill`` tool is called with: ``name``, else the folder's name."""
        return self.name if isinstance(self.name, str) and self.name else self.folder.name


def parse_skill_file(path: Path) -> Skill:
    """Read one ``SKILL.md``; problems are recorded on the ``Skill``, never raised."""
    import yaml

    folder = path.parent
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return Skill(folder, None, None, "", {}, f"cannot read {path.name}: {exc}")
    match = _FRONT_MATTER.match(text)
    if match is None:
        return Skill(
            folder,
            None,
            None,
            text,
            {},
            "it does not start with YAML front matter between --- lines",
        )
    body = text[match.end() :]
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" (line {where.line + 2})" if where is not None else ""
        reason = getattr(exc, "problem", None) or str(exc)
        return Skill(
            folder, None, None, body, {}, f"its front matter is not valid YAML{line}: {reason}"
        )
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        return Skill(
            folder,
            None,
            None,
            body,
            {},
            f"its front matter is a {type(data).__name__}, not a mapping",
        )
    return Skill(folder, data.get("name"), data.get("description"), body, dict(data))


def discover_skills(folder: Path) -> list[Skill]:
    """Every skill under ``folder`` (``folder`` itself may be one), in path order.

    Hidden folders (``.git``, ``.venv``) are not searched.
    """
    found = []
    for path in sorted(folder.rglob(SKILL_FILE)):
        relative = path.relative_to(folder).parts[:-1]
        if any(part.startswith(".") for part in relative) or not path.is_file():
            continue
        found.append(parse_skill_file(path))
    return found
