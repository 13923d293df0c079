"""``skills:<folder>``: SKILL.md discovery, the ``skill`` tool, and the Agent Skills checks."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from _kit import run_kit, shown

from toolnexus_ref import ToolContext
from toolnexus_ref.skills import SkillsError, discover_skills, load_skills

CORPUS = Path(__file__).resolve().parents[2] / "conformance" / "corpus" / "skills"
GOOD = CORPUS / "good"


def write_skill(root: Path, folder: str, text: str) -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_discovery_reads_front_matter_and_keeps_broken_files_with_their_problem(
    tmp_path: Path,
) -> None:
    write_skill(tmp_path, "notes", "---\nname: notes\ndescription: Take notes.\n---\n\nWrite.\n")
    write_skill(tmp_path, "plain", "No front matter here.\n")
    write_skill(tmp_path, "listy", "---\n- a\n- b\n---\nBody\n")
    write_skill(tmp_path, ".hidden/secret", "---\nname: secret\ndescription: x\n---\n")
    skills = {s.folder.name: s for s in discover_skills(tmp_path)}
    assert set(skills) == {"notes", "plain", "listy"}
    assert (skills["notes"].name, skills["notes"].description) == ("notes", "Take notes.")
    assert skills["notes"].body.strip() == "Write."
    assert "does not start with YAML front matter" in str(skills["plain"].front_matter_problem)
    assert "a list, not a mapping" in str(skills["listy"].front_matter_problem)


@pytest.mark.anyio
async def test_the_skill_tool_lists_skills_and_loads_one_by_name() -> None:
    tool = load_skills(GOOD)
    assert (tool.name, tool.source) == ("skill", "skill")
    assert tool.annotations.read_only is True
    assert "- pdf-processing: Extract text and tables" in tool.description
    assert tool.input_schema["properties"]["name"]["enum"] == ["pdf-processing"]
    loaded = await tool.execute({"name": "pdf-processing"}, ToolContext())
    assert not loaded.is_error
    assert '<skill_content name="pdf-processing">' in loaded.output
    assert "<file>references/guide.md</file>" in loaded.output
    assert "Base directory for this skill: file://" in loaded.output
    unknown = await tool.execute({"name": "nope"})
    assert unknown.is_error


def test_a_folder_without_skills_is_refused_with_the_reason(tmp_path: Path) -> None:
    with pytest.raises(SkillsError, match=r"no SKILL\.md under"):
        load_skills(tmp_path)
    with pytest.raises(SkillsError, match="does not exist"):
        load_skills(tmp_path / "missing")


def test_through_the_plugin_a_good_folder_passes_and_bad_ones_are_named(
    pytester: pytest.Pytester,
) -> None:
    shutil.copytree(GOOD, pytester.path / "good_skills")
    shutil.copytree(CORPUS / "bad" / "folder-name", pytester.path / "bad_skills")
    run = run_kit(pytester, "skills:good_skills", "skills:bad_skills", "skills:no_such_folder")
    good = [r for r in run.failed(severity="error") if r["target"] == "skills:good_skills"]
    assert not good, shown(good)
    assert "TN601" in run.live_passed("skill")
    bad = {r["check"]: r["message"] for r in run.failed() if r["target"] == "skills:bad_skills"}
    assert set(bad) == {"TN162"}
    assert "named 'pdf-processing' but its folder is 'pdf-tools'" in bad["TN162"]
    missing = [r for r in run.records if r["target"] == "skills:no_such_folder"]
    assert [(r["check"], r["outcome"]) for r in missing] == [("TN001", "failed")]
    assert "does not exist" in missing[0]["message"]
