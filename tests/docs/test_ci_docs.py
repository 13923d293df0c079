"""docs/ci.md's workflows are valid YAML, and their pytest command lines run.

The commands are taken from the YAML blocks as CI would run them (a ``run: |``
script with its line continuations, a GitLab ``script`` entry) and run, as they
are written, in a project whose ``pyproject.toml`` declares the bundled example
toolkit as its target, as the page tells users to declare theirs. The command
that updates the baseline runs first: it writes the baseline the check reads (the
check runs in a copy of the project as the update left it).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import Any

import yaml
from _sessions import RunningSession, Session, SessionAfter, early, run_environment

PAGE = Path(__file__).resolve().parents[2] / "docs" / "ci.md"
README = PAGE.parent.parent / "README.md"
_YAML = re.compile(r"^```yaml\n(.*?)^```", re.DOTALL | re.MULTILINE)
#: The project the page's commands run in: it declares the example toolkit as its target.
PYPROJECT = '[tool.pytest.ini_options]\ntoolnexus_targets = ["toolnexus_ref.examples:toolkit"]\n'
UPDATE = "--toolnexus-update-baseline"


def _strings(node: Any) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


def workflows() -> list[Any]:
    return [yaml.safe_load(block) for block in _YAML.findall(PAGE.read_text(encoding="utf-8"))]


def _lines(workflow: Any, start: str, values: Mapping[str, str] | None = None) -> list[list[str]]:
    """The command lines of a workflow's scripts that begin with ``start``, as argument
    lists, in order (line continuations joined); each ``${{ expression }}`` of
    ``values`` replaced first, as the CI does before the shell reads the line."""
    commands: list[list[str]] = []
    for script in _strings(workflow):
        for line in script.replace("\\\n", " ").splitlines():
            for expression, value in (values or {}).items():
                line = line.replace(f"${{{{ {expression} }}}}", value)
            if line.strip().startswith(start):
                commands.append(shlex.split(line))
    return commands


def pytest_commands() -> list[list[str]]:
    """Every pytest command line of the one-job workflows, as argument lists, in order."""
    github, gitlab, _sharded = workflows()
    return [line[1:] for workflow in (github, gitlab) for line in _lines(workflow, "pytest ")]


def test_the_page_has_a_github_workflow_and_a_gitlab_job() -> None:
    github, gitlab, _sharded = workflows()
    steps = github["jobs"]["conformance"]["steps"]
    uploads = [s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact")]
    assert any("toolnexus-report.html" in s["with"]["path"] for s in uploads)
    assert any("toolnexus-report.json" in s["with"]["path"] for s in uploads)
    triggers = github.get("on", github.get(True))  # YAML 1.1 reads the key on as true
    assert triggers["workflow_dispatch"]["inputs"]["update-baseline"]["type"] == "boolean"
    job = gitlab["toolnexus-conformance"]
    assert {"toolnexus-report.html", "toolnexus-report.json"} <= set(job["artifacts"]["paths"])
    assert job["artifacts"]["reports"]["junit"] == "toolnexus-junit.xml"
    assert {"when": "manual", "allow_failure": True} in gitlab["toolnexus-update-baseline"]["rules"]
    assert "docs/ci.md" in README.read_text(encoding="utf-8")


def commands_in_turn() -> list[list[str]]:
    """The page's distinct pytest commands, the baseline's update first: it writes the
    baseline the check then reads."""
    return [
        list(c)
        for c in sorted({tuple(c) for c in pytest_commands()}, key=lambda c: UPDATE not in c)
    ]


#: What each of the page's commands writes anew: not carried to the next one.
PRODUCED = ("toolnexus-report.json", "toolnexus-report.html")


@early
def page_runs(folder: Path) -> list[RunningSession | SessionAfter]:
    """The page's pytest commands (``commands_in_turn``), each once the one before has
    ended, in a copy of the project as that one left it (less the reports it wrote):
    what each left is still there when the test reads it. Started early: each needs
    only the one before, nothing the test sets up."""
    # Without GitHub's variables: a runner's would have the session write to the
    # job's summary.
    env = {k: v for k, v in run_environment().items() if not k.startswith("GITHUB_")}

    def start(project: Path, args: list[str]) -> RunningSession:
        return RunningSession([sys.executable, "-m", "pytest", *args], project, 900, env=env)

    def start_after(project: Path, args: list[str], ended: Session) -> RunningSession:
        shutil.copytree(ended.path, project, ignore=shutil.ignore_patterns(*PRODUCED))
        return start(project, args)

    runs: list[RunningSession | SessionAfter] = []
    for number, args in enumerate(commands_in_turn(), start=1):
        project = folder / str(number)
        if runs:
            runs.append(SessionAfter(runs[-1], partial(start_after, project, args)))
        else:
            project.mkdir()
            (project / "pyproject.toml").write_text(PYPROJECT)
            runs.append(start(project, args))
    return runs


def test_the_pages_pytest_commands_run_against_the_example_toolkit(
    page_runs: list[RunningSession | SessionAfter],
) -> None:
    commands = pytest_commands()
    assert len(commands) == 4, commands  # two per CI: the check, and the baseline's update
    # The update first: it writes the baseline the check then reads.
    ran = []
    for args, running in zip(commands_in_turn(), page_runs, strict=True):
        session = running.result()
        assert session.ret == 0, f"{args}\n{session.text()}"
        report = session.report("toolnexus-report.json")
        assert report["complete"] is True
        assert {r["target"] for r in report["results"]} == {"toolnexus_ref.examples:toolkit"}
        assert "get_weather" in (session.path / "toolnexus-report.html").read_text()
        ran.append(args)
    assert ran, "no command of the page ran"
    project = page_runs[-1].result().path  # as the last command left it
    assert (project / "toolnexus-baseline.toml").is_file()
    if "--junitxml" in ran[-1]:
        assert (project / "toolnexus-junit.xml").is_file()


#: The whole run the merged shards are compared with: static checks, as the shards'.
WHOLE = ["--toolnexus-conformance", "--toolnexus-only", "--toolnexus-execute", "none"]


def shard_commands() -> dict[str, list[str]]:
    """The sharded workflow's pytest command of each job, by its matrix value, as
    arguments (static checks only: the cut and the merge are what is shown)."""
    *_, sharded = workflows()
    job = sharded["jobs"]["conformance"]
    commands: dict[str, list[str]] = {}
    for shard in job["strategy"]["matrix"]["shard"]:
        [check] = _lines(job, "pytest ", {"matrix.shard": str(shard)})
        commands[str(shard)] = [*check[1:], "--toolnexus-execute", "none"]
    return commands


@early
def sharded_runs(folder: Path) -> dict[str, RunningSession]:
    """Each shard's job, in a project of its own as each job has its checkout, and the
    whole run the merged report is compared with. None reads another's files: started
    early, side by side, they run while other tests do."""
    started: dict[str, RunningSession] = {}
    runs = {f"shard {shard}": args for shard, args in shard_commands().items()}
    runs["whole"] = [*WHOLE, "--toolnexus-report", "one.json"]
    for name, args in runs.items():
        project = folder / name.replace(" ", "-")
        project.mkdir()
        (project / "pyproject.toml").write_text(PYPROJECT)
        # Without GitHub's variables: a runner's would have the session write to the
        # job's summary.
        env = {k: v for k, v in run_environment().items() if not k.startswith("GITHUB_")}
        command = [sys.executable, "-m", "pytest", *args]
        started[name] = RunningSession(command, project, 900, env=env)
    return started


def _ended(running: RunningSession, args: list[str]) -> Session:
    """The run of ``args``, ended; it passed."""
    session = running.result()
    assert session.ret == 0, f"{args}\n{session.text()}"
    return session


def test_the_pages_matrix_of_shards_merges_into_one_report_and_page(
    tmp_path: Path, sharded_runs: dict[str, RunningSession]
) -> None:
    """The sharded workflow's commands, each job's with its matrix value, then the merge
    job's: every shard passes, and the merged report and page hold the whole run."""
    *_, sharded = workflows()
    job = sharded["jobs"]["conformance"]
    shards = job["strategy"]["matrix"]["shard"]
    assert all("--toolnexus-shard" in line for line in _lines(job, "pytest "))
    # Every shard reads the one costs file the first job handed out, which the last keeps.
    [costs] = {line[line.index("--toolnexus-shard-costs") + 1] for line in _lines(job, "pytest ")}
    assert job["needs"] == "costs"
    assert costs in _strings(sharded["jobs"]["costs"])
    assert ["cp", "toolnexus-report.json", costs] in _lines(sharded["jobs"]["report"], "cp ")
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}

    def run(args: list[str]) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900
        )
        assert done.returncode == 0, f"{args}\n{done.stdout}\n{done.stderr}"
        return done

    commands = shard_commands()
    assert list(commands) == [str(shard) for shard in shards]
    for shard, check in commands.items():
        # Each job's report, handed to the merge job as the workflow's artifacts are.
        ended = _ended(sharded_runs[f"shard {shard}"], check)
        for produced in ended.path.glob("shard-*.json"):
            (tmp_path / produced.name).write_bytes(produced.read_bytes())
    merge_job = sharded["jobs"]["report"]
    for line in _lines(merge_job, "python -m pytest_toolnexus."):
        args = [sys.executable, *line[1:-1]]
        pattern = line[-1]
        found = sorted(p.name for p in tmp_path.glob(pattern)) if "*" in pattern else [pattern]
        run([*args, *found])
    report = json.loads((tmp_path / "toolnexus-report.json").read_text())
    assert report["complete"] is True
    whole = _ended(sharded_runs["whole"], [*WHOLE, "--toolnexus-report", "one.json"])
    one = whole.report("one.json")
    assert report["summary"] == one["summary"]
    assert report["summary"]["tools"] == 4  # the example toolkit's, each in one shard
    assert "get_weather" in (tmp_path / "toolnexus-report.html").read_text()
