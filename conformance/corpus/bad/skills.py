"""Skills folders that break one Agent Skills rule each (data under ../skills/bad/)."""

from pathlib import Path

from toolnexus_conformance.corpus import Entry
from toolnexus_ref.skills import load_skills

HERE = Path(__file__).resolve().parent.parent / "skills" / "bad"

CORPUS = [
    Entry(load_skills(HERE / "front-matter"), frozenset({"TN260"}), "SKILL.md front matter is not valid YAML"),
    Entry(load_skills(HERE / "name-format"), frozenset({"TN161"}), "skill name with capitals and an underscore"),
    Entry(load_skills(HERE / "folder-name"), frozenset({"TN162"}), "skill named pdf-processing in folder pdf-tools"),
    Entry(load_skills(HERE / "name-unique"), frozenset({"TN163"}), "two skills named dup"),
    Entry(load_skills(HERE / "description"), frozenset({"TN261"}), "skill without a description"),
    Entry(load_skills(HERE / "references"), frozenset({"TN262"}), "skill pointing to files it does not ship"),
    Entry(load_skills(HERE / "optional-fields"), frozenset({"TN263"}), "unquoted metadata version, allowed-tools as a list"),
]
