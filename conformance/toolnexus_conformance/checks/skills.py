"""The Agent Skills rules, checked on every skill behind a ``skill`` tool.

A ``skill`` tool (source ``skill``) carries the skills it loads in its
``conformance_extra()["skills"]``; each check reads every skill and reports each
one that breaks its rule, by its ``SKILL.md`` path. The rules are the Agent Skills
specification's: YAML front matter with ``name`` and ``description``; a name of
1-64 lowercase letters, digits and single hyphens that is also the folder's name;
a description of at most 1024 characters; optional fields of the specified types
and limits; and the files the instructions point at must ship with the skill.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .._model import Category, Finding, Severity, Skip
from .._options import RunOptions
from .._registry import check
from .._subject import ToolSubject

SKILL = ("skill",)
SPEC = "https://agentskills.io/specification"
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
#: ``[text](target)`` links, and `scripts/...`-style paths written as code.
_LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_CODE_PATH = re.compile(r"`((?:scripts|references|assets)/[^`\s]+)`")


def _skills(subject: ToolSubject) -> Sequence[Any]:
    skills = subject.extra.get("skills")
    if not skills:
        raise Skip("the tool carries no skills to check (not a skills-folder tool)")
    return list(skills)


def _where(skill: Any) -> str:
    return str(skill.path)


def _readable(skills: Sequence[Any]) -> list[Any]:
    return [s for s in skills if s.front_matter_problem is None]


@check(
    "TN260",
    "skill-front-matter",
    title="Every SKILL.md starts with YAML front matter that parses to a mapping",
    category=Category.DESCRIPTION,
    severity=Severity.ERROR,
    why="Hosts read a skill's name and description from its front matter; a skill whose"
    " front matter is missing or broken is skipped, or shown to the model nameless.",
    fix="Start SKILL.md with '---', then 'name: ...' and 'description: ...' lines, then '---'.",
    reference=SPEC,
    sources=SKILL,
)
def skill_front_matter(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    return [
        Finding(f"{_where(s)}: {s.front_matter_problem}", path="SKILL.md")
        for s in _skills(subject)
        if s.front_matter_problem is not None
    ]


def _name_problem(name: Any) -> str | None:
    if name is None:
        return "has no name"
    if not isinstance(name, str):
        return f"has a name of type {type(name).__name__}, not a string"
    if not 1 <= len(name) <= MAX_NAME:
        return f"has a name of {len(name)} characters; the limit is 1-{MAX_NAME}"
    if not _NAME.fullmatch(name):
        return (
            f"has the name {name!r}: only lowercase letters, digits and hyphens, not at"
            " the start or end, never two in a row"
        )
    return None


@check(
    "TN161",
    "skill-name-format",
    title="Every skill's name is 1-64 lowercase letters, digits and single hyphens",
    category=Category.NAMING,
    severity=Severity.ERROR,
    why="The name is how a model asks for the skill and how hosts key it; the specification"
    " allows only this form, and hosts that follow it refuse others.",
    fix="Set 'name:' to lowercase words joined by single hyphens, e.g. 'pdf-processing'.",
    reference=SPEC,
    sources=SKILL,
)
def skill_name_format(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    findings = []
    for skill in _readable(_skills(subject)):
        problem = _name_problem(skill.name)
        if problem is not None:
            findings.append(Finding(f"{_where(skill)} {problem}", path="name"))
    return findings


@check(
    "TN162",
    "skill-folder-name",
    title="Every skill's folder is named after the skill",
    category=Category.NAMING,
    severity=Severity.ERROR,
    why="The specification requires the name to match the folder; hosts that find skills by"
    " folder load a different name than the one the model is shown.",
    fix="Rename the folder to the skill's name (or the name to the folder's).",
    reference=SPEC,
    sources=SKILL,
)
def skill_folder_name(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    return [
        Finding(
            f"{_where(s)}: the skill is named {s.name!r} but its folder is {s.folder.name!r}",
            path="name",
        )
        for s in _readable(_skills(subject))
        if isinstance(s.name, str) and s.name and s.name != s.folder.name
    ]


@check(
    "TN163",
    "skill-name-unique",
    title="No two skills share a name",
    category=Category.NAMING,
    severity=Severity.ERROR,
    why="A model asks for a skill by name; of two skills with one name, one can never be loaded.",
    fix="Rename one of the skills (and its folder).",
    reference=SPEC,
    sources=SKILL,
)
def skill_name_unique(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    first: dict[str, Any] = {}
    findings = []
    for skill in _skills(subject):
        earlier = first.setdefault(skill.key, skill)
        if earlier is not skill:
            findings.append(
                Finding(
                    f"{_where(skill)} is named {skill.key!r}, like {_where(earlier)};"
                    " only the first can be loaded",
                    path="name",
                )
            )
    return findings


@check(
    "TN261",
    "skill-description",
    title="Every skill has a description of 1-1024 characters",
    category=Category.DESCRIPTION,
    severity=Severity.ERROR,
    why="The description is all a model sees before it decides to load a skill; without one"
    " the skill is never chosen, and hosts cut or refuse one past 1024 characters.",
    fix="Set 'description:' to what the skill does and when to use it, in at most 1024 characters.",
    reference=SPEC,
    sources=SKILL,
)
def skill_description(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    findings = []
    for skill in _readable(_skills(subject)):
        text = skill.description
        if text is None:
            problem = "has no description"
        elif not isinstance(text, str):
            problem = f"has a description of type {type(text).__name__}, not a string"
        elif not text.strip():
            problem = "has a blank description"
        elif len(text) > MAX_DESCRIPTION:
            problem = f"has a description of {len(text)} characters; the limit is {MAX_DESCRIPTION}"
        else:
            continue
        findings.append(Finding(f"{_where(skill)} {problem}", path="description"))
    return findings


def _optional_field_problems(front_matter: Any) -> list[tuple[str, str]]:
    problems = []
    compatibility = front_matter.get("compatibility")
    if compatibility is not None:
        if not isinstance(compatibility, str):
            problems.append(("compatibility", f"is a {type(compatibility).__name__}, not a string"))
        elif len(compatibility) > MAX_COMPATIBILITY:
            problems.append(
                (
                    "compatibility",
                    f"has {len(compatibility)} characters; the limit is {MAX_COMPATIBILITY}",
                )
            )
    metadata = front_matter.get("metadata")
    if metadata is not None:
        if not isinstance(metadata, dict):
            problems.append(("metadata", f"is a {type(metadata).__name__}, not a mapping"))
        else:
            bad = sorted(
                str(k)
                for k, v in metadata.items()
                if not isinstance(k, str) or not isinstance(v, str)
            )
            if bad:
                problems.append(("metadata", f"has values that are not strings: {', '.join(bad)}"))
    allowed = front_matter.get("allowed-tools")
    if allowed is not None and not isinstance(allowed, str):
        problems.append(
            ("allowed-tools", f"is a {type(allowed).__name__}, not a space-separated string")
        )
    return problems


@check(
    "TN263",
    "skill-optional-fields",
    title="A skill's optional fields have the specified types and limits",
    category=Category.DESCRIPTION,
    severity=Severity.WARNING,
    why="Hosts that validate skills refuse a compatibility note past 500 characters, metadata"
    " that is not a map of strings, or allowed-tools that is not one string.",
    fix="Keep 'compatibility' to 500 characters, quote 'metadata' values (version: \"1.0\"),"
    " and write 'allowed-tools' as one space-separated string.",
    reference=SPEC,
    sources=SKILL,
)
def skill_optional_fields(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    return [
        Finding(f"{_where(skill)}: {field} {problem}", path=field)
        for skill in _readable(_skills(subject))
        for field, problem in _optional_field_problems(skill.front_matter)
    ]


def _references(body: str) -> list[str]:
    targets = [m.group(1) for m in _LINK.finditer(body)] + [
        m.group(1) for m in _CODE_PATH.finditer(body)
    ]
    local = []
    for target in targets:
        target = target.split("#", 1)[0].split("?", 1)[0]
        if not target or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("/"):
            continue  # an anchor, a URL (http:, mailto:, file:) or an absolute path
        local.append(target)
    return list(dict.fromkeys(local))


@check(
    "TN262",
    "skill-references-exist",
    title="Every file a skill's instructions point to ships with the skill",
    category=Category.DESCRIPTION,
    severity=Severity.ERROR,
    why="A model that follows the instructions opens the files they name; a missing one is a"
    " dead end in the middle of a task.",
    fix="Add the missing file under the skill's folder, or fix the path in SKILL.md (paths are"
    " relative to the skill's folder).",
    reference=SPEC,
    sources=SKILL,
)
def skill_references_exist(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    findings = []
    for skill in _skills(subject):
        folder = Path(skill.folder)
        for target in _references(skill.body):
            if not (folder / target).exists():
                findings.append(
                    Finding(f"{_where(skill)} points to {target!r}, which is not in {folder}")
                )
    return findings
