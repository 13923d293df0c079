"""The quick start's test command keeps bytecode for its run, never in the tree."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("quick_start_run", ROOT / "scripts" / "run.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_under_dontwritebytecode_the_suite_caches_bytecode_outside_the_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    (tmp_path / "imported_here.py").write_text("VALUE = 1\n")
    with _script()._bytecode_kept() as env:
        assert env is not None
        assert "PYTHONDONTWRITEBYTECODE" not in env
        folder = Path(env["PYTHONPYCACHEPREFIX"])
        assert folder.is_dir()
        assert ROOT not in folder.parents
        subprocess.run(
            [sys.executable, "-c", "import imported_here"], cwd=tmp_path, env=env, check=True
        )
        cached = list(folder.rglob("imported_here.*.pyc"))
        assert cached, "the import wrote no bytecode under the run's folder"
    assert not (tmp_path / "__pycache__").exists()
    assert not folder.exists(), "the run's bytecode folder outlived the run"


def test_without_the_variable_python_keeps_its_own_bytecode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    with _script()._bytecode_kept() as env:
        assert env is None  # the environment as it is: Python caches as it always does
