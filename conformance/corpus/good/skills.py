"""A skills folder that keeps every Agent Skills rule (data under ../skills/good/)."""

from pathlib import Path

from toolnexus_conformance.corpus import Entry
from toolnexus_ref.skills import load_skills

HERE = Path(__file__).resolve().parent.parent / "skills" / "good"

CORPUS = [
    Entry(load_skills(HERE), note="skills folder: front matter, name, folder, description, files"),
]
